/* sema.h: names, types, shapes and halo extents. Sema resolves every name
 * in the AST to a Sym, gives every expression a type, checks the rules of
 * the language (docs/language.md) and infers each grid's halo from the
 * offsets its kernels read. Lowering to IR trusts what sema accepted. */
#ifndef STN_SEMA_H
#define STN_SEMA_H
#include "front/ast.h"

enum { MAX_RANK = 3 };

typedef enum SymKind {
  SYM_PARAM, SYM_CONST, SYM_GRID, SYM_FIELD, SYM_KERNEL, SYM_KPARAM, SYM_LOCAL,
  SYM_INDEX, SYM_RED, SYM_VAR, SYM_LOOP, SYM_BUILTIN,
} SymKind;

typedef enum RedOp { RED_SUM, RED_MAX, RED_MIN } RedOp;

struct Sym {
  SymKind kind;
  const char *name;
  Span span;
  Type ty;
  Node *decl;
  int id;                  /* index in its table: params, fields, kernels, vars, ... */
  /* SYM_CONST */
  int is_array, len;
  double *vals;            /* folded values (array or scalar) */
  /* SYM_GRID */
  int rank;
  Node *dims[MAX_RANK];
  int halo_lo[MAX_RANK], halo_hi[MAX_RANK];
  int periodic[MAX_RANK];  /* reads past the edge wrap around */
  /* SYM_FIELD */
  Sym *grid;
  int ncomp;               /* a multi-component field (f[9]): its components, */
  Sym **comp;              /* each a field of its own (name "f[3]", id in fields) */
  const char *cident;      /* the C identifier of a field ("f_3_" for f[3]) */
  Node *boundary;          /* boundary(value): what its ghost points hold, or NULL (0) */
  /* SYM_LOOP in a kernel: unrolled; the iteration being checked or lowered */
  int unrolled;
  long uval;
  /* SYM_KERNEL */
  Node *kernel;
  Vec(Sym *) kparams;
  Vec(Sym *) reds;
  /* SYM_INDEX */
  int dim;
  /* SYM_RED */
  RedOp redop;
  /* SYM_BUILTIN */
  int nargs;
  /* SYM_PARAM: `in lo..hi`, bounds included (has_lo, has_hi: given) */
  int has_lo, has_hi;
  double lo, hi;
};

typedef struct Sema {
  Arena *arena;
  Diag *diag;
  Program *prog;
  Vec(Sym *) params, consts, grids, fields, kernels, vars;
  Node *main;
} Sema;

/* The usual arithmetic conversions; untyped literals take their partner's type. */
Type sema_arith_type(Type a, Type b);

/* The value of a compile-time constant expression already checked by
 * sema (kernel 'for' variables take their current iteration's value);
 * 0 if it is not one. For the lowering of unrolled loops. */
int sema_eval(Node *n, double *out);

/* Checks prog; returns the number of errors. A program needs a main; a
 * library (--emit=lib, need_main 0) may leave it out. */
int sema_check(Sema *s, Arena *arena, Diag *diag, Program *prog, int need_main);
/* Frees what sema_check allocated outside the arena (a process that
 * compiles one file needs not). */
void sema_release(Sema *s);
/* Funcs inlined at their calls (sema/inline.c), before the checks;
 * returns the errors reported. */
int sema_inline(Arena *arena, Diag *diag, Program *prog);
#endif
