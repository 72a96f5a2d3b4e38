/* ast.c: node construction and a debugging dump (--emit=ast). */
#include "front/ast.h"
#include "front/parse.h"

int type_bytes(Type t) { return t == TY_DOUBLE ? 8 : 4; }

const char *type_name(Type t)
{
  switch (t) {
  case TY_ERROR: return "<error>";
  case TY_VOID: return "void";
  case TY_BOOL: return "bool";
  case TY_INT: return "int";
  case TY_FLOAT: return "float";
  case TY_DOUBLE: return "double";
  case TY_LITFLOAT: return "double";
  }
  return "?";
}

/* Every node made since the last ast_release: the nodes are the arena's,
 * their lists are malloc'd. */
static NodeList made;

Node *ast_new(Arena *a, NodeKind kind, Span span)
{
  Node *n = arena_alloc(a, sizeof *n);
  n->kind = kind;
  n->span = span;
  vec_push(&made, n);
  return n;
}

void ast_release(Program *p)
{
  for (int i = 0; i < made.len; i++) {
    vec_free(&made.data[i]->list);
    vec_free(&made.data[i]->list2);
  }
  vec_free(&made);
  vec_free(&p->decls);
}

static const char *kind_names[] = {
  "int", "float", "string", "name", "index", "unary", "binary", "cond", "call", "cast",
  "block", "decl", "assign", "exprstmt", "if", "for", "while", "swap", "print", "timer",
  "write", "read", "break", "param", "const", "grid", "field", "kernel", "main", "func", "import", "region",
  "range", "reduce", "kparam",
};

static void dump(FILE *out, const Node *n, int depth, const Source *src)
{
  if (!n)
    return;
  int line, col;
  src_linecol(src, n->span.lo, &line, &col);
  fprintf(out, "%*s%s", depth * 2, "", kind_names[n->kind]);
  if (n->name)
    fprintf(out, " '%s'", n->name);
  if (n->kind == N_INT)
    fprintf(out, " %ld", n->ival);
  if (n->kind == N_FLOAT)
    fprintf(out, " %g", n->fval);
  if (n->op)
    fprintf(out, " op=%s", parse_op_name(n->op));
  if (n->ty && n->kind != N_INT && n->kind != N_FLOAT)
    fprintf(out, " type=%s", type_name(n->ty));
  fprintf(out, " <%d:%d>\n", line, col);
  dump(out, n->a, depth + 1, src);
  dump(out, n->b, depth + 1, src);
  dump(out, n->c, depth + 1, src);
  for (int i = 0; i < n->list.len; i++)
    dump(out, n->list.data[i], depth + 1, src);
  for (int i = 0; i < n->list2.len; i++)
    dump(out, n->list2.data[i], depth + 1, src);
}

void ast_dump(FILE *out, const Program *p, const Source *src)
{
  for (int i = 0; i < p->decls.len; i++)
    dump(out, p->decls.data[i], 0, src);
}
