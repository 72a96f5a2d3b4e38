/* ast.h: the syntax tree built by the parser. Grammar actions only build
 * these nodes; names are resolved and types checked later, in sema, which
 * fills the fields marked "sema". */
#ifndef STN_AST_H
#define STN_AST_H
#include "diag.h"
#include "util.h"

typedef enum Type { TY_ERROR, TY_VOID, TY_BOOL, TY_INT, TY_FLOAT, TY_DOUBLE,
                    TY_LITFLOAT /* a floating literal that takes its partner's type */ } Type;
const char *type_name(Type t);
/* The bytes a field point of type t takes: 8 for doubles, else 4. */
int type_bytes(Type t);

typedef enum NodeKind {
  /* expressions */
  N_INT, N_FLOAT, N_STRING, N_NAME, N_INDEX, N_UNARY, N_BINARY, N_COND,
  N_CALL, N_CAST,
  /* statements */
  N_BLOCK, N_DECL, N_ASSIGN, N_EXPRSTMT, N_IF, N_FOR, N_WHILE, N_SWAP,
  N_PRINT, N_TIMER, N_WRITE, N_READ, N_BREAK,
  /* declarations */
  N_PARAM, N_CONST, N_GRID, N_FIELD, N_KERNEL, N_MAIN, N_FUNC, N_IMPORT,
  /* pieces */
  N_REGION, N_RANGE, N_REDUCE, N_KPARAM,
} NodeKind;

typedef enum RegionKind { REG_WHOLE, REG_INTERIOR, REG_BOX } RegionKind;

typedef struct Node Node;
typedef Vec(Node *) NodeList;
typedef struct Sym Sym;

struct Node {
  NodeKind kind;
  Span span;
  Node *a, *b, *c;       /* operands, children, bodies */
  NodeList list;         /* call args, offsets, block items, print items, names */
  NodeList list2;        /* kernel params, reductions, assignment targets */
  const char *name;      /* identifier, string literal, reduction op */
  Span name_span;
  long ival;             /* int literal; region kind; array length */
  double fval;           /* floating literal */
  int op;                /* operator token for unary/binary/assign */
  Type ty;               /* declared type (decls, casts); sema: expression type */
  int has_init;          /* const array written with { } */
  Sym *sym;              /* sema: what a name refers to */
  const struct Inline *inl; /* a copy inlined from a func's body: the call it came from (sema/inline.c) */
};

typedef struct Program {
  NodeList decls;
  Source src;
} Program;

Node *ast_new(Arena *a, NodeKind kind, Span span);
/* Frees the lists of every node made so far and p's declarations, before
 * the nodes' arena goes (a process that compiles one file needs not). */
void ast_release(Program *p);
void ast_dump(FILE *out, const Program *p, const Source *src);
#endif
