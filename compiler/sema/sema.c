/* sema.c: name resolution, type checking and the language's rules.
 *
 * Scopes nest: builtins, then the program's declarations, then a kernel's
 * indices, parameters and reductions (or main's variables), then blocks.
 * Kernel bodies record every field read (with its offset) and write, so
 * that the read/write hazard, region and halo rules can be checked once
 * the body is known. */
#include "sema/sema.h"
#include "front/parse.h"
#include "parser.tab.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Scope {
  struct Scope *up;
  Vec(Sym *) syms;
} Scope;

typedef enum Where { IN_GLOBAL, IN_KERNEL, IN_HOST, IN_BOUNDARY /* a field's boundary(value) */ } Where;

typedef struct Access { Sym *field; int off[MAX_RANK]; Span span; const Inline *inl; } Access;

typedef struct Ctx {
  Sema *s;
  Scope *scope;
  Scope *globals;          /* the program's declarations (up: the builtins) */
  Where where;
  Sym *kernel;             /* IN_KERNEL */
  Sym *grid;               /* IN_KERNEL: the grid the kernel runs over */
  int loops;               /* IN_HOST: nesting depth of for/while */
  Vec(Access) reads, writes;
  Vec(Scope *) all_scopes;
  int depth;               /* expression nesting, to refuse pathological input */
  int too_deep;            /* reported once */
  long unrolled_iters;     /* IN_KERNEL: product of the enclosing unrolled loops' trip counts */
} Ctx;

static const char *index_names[MAX_RANK] = { "i", "j", "k" };

static const struct { const char *name; int nargs; } builtins[] = {
  { "sqrt", 1 }, { "exp", 1 }, { "log", 1 }, { "fabs", 1 }, { "abs", 1 }, { "sin", 1 },
  { "cos", 1 }, { "tan", 1 }, { "tanh", 1 }, { "floor", 1 }, { "ceil", 1 },
  { "pow", 2 }, { "fmin", 2 }, { "fmax", 2 }, { "min", 2 }, { "max", 2 },
};

/* ---- scopes ------------------------------------------------------------ */

static Scope *push_scope(Ctx *c)
{
  Scope *sc = arena_alloc(c->s->arena, sizeof *sc);
  sc->up = c->scope;
  c->scope = sc;
  vec_push(&c->all_scopes, sc);
  return sc;
}

static void pop_scope(Ctx *c) { c->scope = c->scope->up; }

static Sym *lookup_in(Scope *sc, const char *name)
{
  for (int i = 0; i < sc->syms.len; i++)
    if (streq(sc->syms.data[i]->name, name))
      return sc->syms.data[i];
  return NULL;
}

static Sym *lookup(Ctx *c, const char *name)
{
  for (Scope *sc = c->scope; sc; sc = sc->up) {
    Sym *s = lookup_in(sc, name);
    if (s)
      return s;
  }
  return NULL;
}

/* A name in code inlined from a func binds to a global (or the grid
 * index), never to the caller's locals, variables or parameters. */
static Sym *lookup_node(Ctx *c, const Node *n)
{
  Sym *s = lookup(c, n->name);
  if (n->inl && s && (s->kind == SYM_LOCAL || s->kind == SYM_VAR || s->kind == SYM_LOOP || s->kind == SYM_KPARAM ||
                      s->kind == SYM_RED)) {
    s = NULL;
    for (Scope *sc = c->globals; sc && !s; sc = sc->up)
      s = lookup_in(sc, n->name);
  }
  return s;
}

static const char *sym_what(const Sym *s)
{
  switch (s->kind) {
  case SYM_PARAM: return "param";
  case SYM_CONST: return "const";
  case SYM_GRID: return "grid";
  case SYM_FIELD: return "field";
  case SYM_KERNEL: return "kernel";
  case SYM_KPARAM: return "kernel parameter";
  case SYM_LOCAL: return "variable";
  case SYM_INDEX: return "grid index";
  case SYM_RED: return "reduction variable";
  case SYM_VAR: return "variable";
  case SYM_LOOP: return "loop variable";
  case SYM_BUILTIN: return "builtin function";
  }
  return "name";
}

static Sym *declare(Ctx *c, SymKind kind, const char *name, Span at, Type ty, Node *decl)
{
  Sema *s = c->s;
  size_t n = strlen(name);
  if (n > 0 && name[n - 1] == '_')
    diag_error(s->diag, at, "names ending in '_' are reserved for generated code");
  else if (strncmp(name, "stn_", 4) == 0)
    diag_error(s->diag, at, "names starting with 'stn_' are reserved for the runtime");
  /* Within a kernel or main, names may not shadow each other (a shadowed
   * field would silently stop being read); globals may shadow builtins. */
  Sym *prev = NULL;
  for (Scope *sc = c->scope; sc; sc = sc->up) {
    if ((prev = lookup_in(sc, name)))
      break;
    /* Globals may shadow builtins; inside a kernel, the grid indices i j k
     * shadow any global of that name (docs/language.md). */
    if (c->where == IN_GLOBAL || kind == SYM_INDEX)
      break;
  }
  if (prev && prev->kind != SYM_BUILTIN) {
    diag_error(s->diag, at, "redefinition of '%s'", name);
    diag_note(s->diag, prev->span, "previous definition of '%s' (a %s) is here", name, sym_what(prev));
  }
  Sym *sym = arena_alloc(s->arena, sizeof *sym);
  sym->kind = kind;
  sym->name = name;
  sym->span = at;
  sym->ty = ty;
  sym->decl = decl;
  vec_push(&c->scope->syms, sym);
  return sym;
}

/* Levenshtein distance, for "did you mean" hints. */
static int edit_distance(const char *a, const char *b)
{
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la > 32 || lb > 32)
    return 99;
  int d[33][33];
  for (int i = 0; i <= la; i++)
    d[i][0] = i;
  for (int j = 0; j <= lb; j++)
    d[0][j] = j;
  for (int i = 1; i <= la; i++)
    for (int j = 1; j <= lb; j++) {
      int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best)
        best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best)
        best = d[i][j - 1] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

static const char *suggest(Ctx *c, const char *name, int want_kernel)
{
  const char *best = NULL;
  int bestd = 3;
  for (Scope *sc = c->scope; sc; sc = sc->up)
    for (int i = 0; i < sc->syms.len; i++) {
      Sym *s = sc->syms.data[i];
      if (want_kernel && s->kind != SYM_KERNEL)
        continue;
      int d = edit_distance(name, s->name);
      if (d < bestd && d < (int)strlen(name)) {
        bestd = d;
        best = s->name;
      }
    }
  return best;
}

static void undeclared(Ctx *c, Node *n)
{
  const char *hint = suggest(c, n->name, 0);
  if (hint)
    diag_error(c->s->diag, n->name_span, "use of undeclared identifier '%s'; did you mean '%s'?", n->name, hint);
  else
    diag_error(c->s->diag, n->name_span, "use of undeclared identifier '%s'", n->name);
}

/* ---- types ------------------------------------------------------------- */

static int is_numeric(Type t) { return t == TY_INT || t == TY_FLOAT || t == TY_DOUBLE || t == TY_LITFLOAT; }
static int is_floating(Type t) { return t == TY_FLOAT || t == TY_DOUBLE || t == TY_LITFLOAT; }

/* The usual arithmetic conversions, with untyped floating literals taking
 * the type of their partner (so `0.5 * f` stays float when f is float). */
Type sema_arith_type(Type a, Type b)
{
  if (a == TY_ERROR || b == TY_ERROR)
    return TY_ERROR;
  if (a == TY_LITFLOAT && b == TY_LITFLOAT)
    return TY_LITFLOAT;
  if (a == TY_LITFLOAT)
    return b == TY_INT ? TY_DOUBLE : b;
  if (b == TY_LITFLOAT)
    return a == TY_INT ? TY_DOUBLE : a;
  if (a == TY_DOUBLE || b == TY_DOUBLE)
    return TY_DOUBLE;
  if (a == TY_FLOAT || b == TY_FLOAT)
    return TY_FLOAT;
  return TY_INT;
}

/* Can a value of type `from` be stored in `to` without a cast? Widening
 * and double->float (as in C numerics) are implicit; anything that drops
 * a fraction or turns a comparison into a number needs a cast. */
static int check_convert(Sema *s, Type from, Type to, Span at, const char *what)
{
  if (from == TY_ERROR || to == TY_ERROR || from == to)
    return 1;
  if (to == TY_BOOL || from == TY_BOOL) {
    diag_error(s->diag, at, "cannot use a value of type '%s' as %s of type '%s'",
               type_name(from), what, type_name(to));
    return 0;
  }
  if (to == TY_INT && is_floating(from)) {
    diag_error(s->diag, at, "implicit conversion from '%s' to 'int' in %s loses the fraction; "
               "write (int)(...) if that is intended", type_name(from), what);
    return 0;
  }
  return 1;
}

static int const_eval(Ctx *c, Node *n, double *out, Node **culprit);

int sema_eval(Node *n, double *out)
{
  return const_eval(NULL, n, out, NULL);
}

/* ---- expressions ------------------------------------------------------- */

static Type check_expr(Ctx *c, Node *n);

static Sym *reduction_target(Ctx *c, Node *n)
{
  if (n->kind != N_NAME)
    return NULL;
  Sym *s = lookup(c, n->name);
  return s && s->kind == SYM_RED ? s : NULL;
}

static void red_misuse(Ctx *c, Sym *r, Span at)
{
  if (r->redop == RED_SUM)
    diag_error(c->s->diag, at, "reduction variable '%s' can only be updated, as '%s += <expr>'", r->name, r->name);
  else
    diag_error(c->s->diag, at, "reduction variable '%s' can only be updated, as '%s = %s(%s, <expr>)'",
               r->name, r->name, r->redop == RED_MAX ? "max" : "min", r->name);
}

static Type check_offsets(Ctx *c, Node *n, Sym *f)
{
  Sema *s = c->s;
  int rank = f->grid->rank;
  if (n->list.len != rank) {
    diag_error(s->diag, n->span, "field '%s' on %d-D grid '%s' needs %d offset%s, got %d",
               f->name, rank, f->grid->name, rank, rank == 1 ? "" : "s", n->list.len);
    return TY_ERROR;
  }
  Access acc = { .field = f, .span = n->span };
  int ok = 1;
  for (int d = 0; d < rank; d++) {
    Node *e = n->list.data[d];
    double v;
    Node *culprit = NULL;
    if (check_expr(c, e) == TY_ERROR) {
      ok = 0;
      continue;
    }
    if (!const_eval(c, e, &v, &culprit)) {
      if (culprit && culprit->sym && culprit->sym->kind == SYM_INDEX) {
        diag_error(s->diag, e->span, "offsets are relative to the current point: write %s[+1, 0, 0] "
                   "for the neighbour, not %s[i+1, j, k]", f->name, f->name);
        return TY_ERROR; /* once per access */
      }
      else if (culprit && culprit->sym && culprit->sym->kind == SYM_PARAM)
        diag_error(s->diag, culprit->span, "offset must be a compile-time integer constant; "
                   "param '%s' is only known at run time", culprit->name);
      else
        diag_error(s->diag, culprit ? culprit->span : e->span,
                   "offset must be a compile-time integer constant");
      ok = 0;
      continue;
    }
    if (v != floor(v) || fabs(v) > 64) {
      diag_error(s->diag, e->span, "offset %g is not a small integer", v);
      ok = 0;
      continue;
    }
    acc.off[d] = (int)v;
    e->ival = (int)v;
  }
  acc.inl = c->s->diag->inl;
  if (ok)
    vec_push(&c->reads, acc);
  return ok ? f->ty : TY_ERROR;
}

/* Can this kernel read field f here? Reports why not. */
static int field_readable(Ctx *c, Node *n, Sym *f)
{
  if (!f->grid)
    return 0; /* its grid was unknown: reported at the declaration */
  if (c->where == IN_BOUNDARY) {
    diag_error(c->s->diag, n->span, "a boundary value cannot read field '%s'; it may use the ghost point's "
               "indices, params and consts", n->name);
    return 0;
  }
  if (c->where != IN_KERNEL) {
    diag_error(c->s->diag, n->span, "field '%s' can only be read inside a kernel; "
               "use a reduction kernel to bring values to main", n->name);
    return 0;
  }
  if (f->grid != c->grid) {
    diag_error(c->s->diag, n->span, "field '%s' is on grid '%s' but kernel '%s' runs over grid '%s'",
               n->name, f->grid->name, c->kernel->name, c->grid->name);
    return 0;
  }
  return 1;
}

/* The component of multi-component field f that n (f[q] or f[q][offsets])
 * names, for the current iterations of any unrolled loops; NULL after
 * reporting an error. A one-bracket f[q] names the component at the
 * current point: its offsets list moves to list2. */
static Sym *component(Ctx *c, Node *n, Sym *f)
{
  Sema *s = c->s;
  if (!f->ncomp) {
    diag_error(s->diag, n->span, "field '%s' has no components; write %s[offsets] for a neighbour",
               f->name, f->name);
    return NULL;
  }
  if (!n->list2.len) {
    n->list2 = n->list;
    n->list = (NodeList){0};
  }
  if (n->list2.len != 1) {
    diag_error(s->diag, n->span, "a component of field '%s' takes one index, got %d", f->name, n->list2.len);
    return NULL;
  }
  Node *e = n->list2.data[0];
  Type t = check_expr(c, e);
  if (t == TY_ERROR)
    return NULL;
  double v;
  if (t != TY_INT || !const_eval(c, e, &v, NULL)) {
    diag_error(s->diag, e->span, "the component of '%s' must be a compile-time int (a literal, a const, or "
               "the variable of a 'for' loop in the kernel)", f->name);
    return NULL;
  }
  if (v < 0 || v >= f->ncomp) {
    diag_error(s->diag, e->span, "component %g is outside field '%s' of %d components", v, f->name, f->ncomp);
    return NULL;
  }
  return f->comp[(int)v];
}

static Type check_name(Ctx *c, Node *n)
{
  Sema *s = c->s;
  Sym *sym = lookup_node(c, n);
  n->sym = sym;
  if (!sym) {
    undeclared(c, n);
    return TY_ERROR;
  }
  switch (sym->kind) {
  case SYM_INDEX:
    for (Scope *sc = c->scope; sc; sc = sc->up) {
      Sym *g = lookup_in(sc, n->name);
      if (g && g != sym && g->kind != SYM_BUILTIN) {
        diag_warning(s->diag, n->span, "'%s' here is the grid index along dimension %d; the %s '%s' is "
                     "hidden inside kernels", n->name, sym->dim, sym_what(g), n->name);
        break;
      }
    }
    return sym->ty;
  case SYM_PARAM:
  case SYM_LOCAL:
  case SYM_VAR:
  case SYM_LOOP:
  case SYM_KPARAM:
    return sym->ty;
  case SYM_CONST:
    if (sym->is_array) {
      diag_error(s->diag, n->span, "const array '%s' needs an index", n->name);
      return TY_ERROR;
    }
    return sym->ty;
  case SYM_FIELD:
    if (sym->ncomp) {
      diag_error(s->diag, n->span, "field '%s' has %d components; write %s[q] for one of them", n->name,
                 sym->ncomp, n->name);
      return TY_ERROR;
    }
    if (!field_readable(c, n, sym))
      return TY_ERROR;
    {
      Access acc = { .field = sym, .span = n->span, .inl = c->s->diag->inl };
      vec_push(&c->reads, acc);
    }
    return sym->ty;
  case SYM_RED:
    red_misuse(c, sym, n->span);
    return TY_ERROR;
  case SYM_GRID:
  case SYM_KERNEL:
  case SYM_BUILTIN:
    diag_error(s->diag, n->span, "%s '%s' cannot be used as a value", sym_what(sym), n->name);
    return TY_ERROR;
  }
  return TY_ERROR;
}

static Type check_index(Ctx *c, Node *n)
{
  Sema *s = c->s;
  Sym *sym = lookup_node(c, n);
  n->sym = sym;
  if (!sym) {
    undeclared(c, n);
    for (int i = 0; i < n->list.len; i++)
      check_expr(c, n->list.data[i]);
    return TY_ERROR;
  }
  if (sym->kind == SYM_FIELD && (sym->ncomp || n->list2.len)) {
    Sym *f = component(c, n, sym);
    if (!f || !field_readable(c, n, f))
      return TY_ERROR;
    if (!n->list.len) {
      Access acc = { .field = f, .span = n->span, .inl = c->s->diag->inl };
      vec_push(&c->reads, acc);
      return f->ty;
    }
    return check_offsets(c, n, f);
  }
  if (sym->kind == SYM_FIELD) {
    if (!field_readable(c, n, sym))
      return TY_ERROR;
    return check_offsets(c, n, sym);
  }
  if (sym->kind == SYM_CONST && sym->is_array) {
    if (!sym->vals)
      return TY_ERROR; /* its declaration failed and was reported */
    if (n->list.len != 1) {
      diag_error(s->diag, n->span, "const array '%s' takes one index, got %d", n->name, n->list.len);
      return TY_ERROR;
    }
    Type t = check_expr(c, n->list.data[0]);
    if (t != TY_INT && t != TY_ERROR) {
      diag_error(s->diag, n->list.data[0]->span, "array index must be an int, not '%s'", type_name(t));
      return TY_ERROR;
    }
    double v;
    if (const_eval(c, n->list.data[0], &v, NULL) && (v < 0 || v >= sym->len)) {
      diag_error(s->diag, n->list.data[0]->span, "index %g is outside const array '%s' of length %d",
                 v, n->name, sym->len);
      return TY_ERROR;
    }
    return sym->ty;
  }
  if (sym->kind == SYM_RED) {
    red_misuse(c, sym, n->span);
    return TY_ERROR;
  }
  diag_error(s->diag, n->span, "%s '%s' cannot be indexed", sym_what(sym), n->name);
  return TY_ERROR;
}

static Type check_call(Ctx *c, Node *n, int kernel_ok)
{
  Sema *s = c->s;
  Sym *sym = lookup_node(c, n);
  n->sym = sym;
  if (!sym) {
    for (int i = 0; i < n->list.len; i++)
      check_expr(c, n->list.data[i]);
    /* A call statement in main names a kernel; a call in an expression
     * names a function. */
    const char *what = c->where == IN_HOST && kernel_ok ? "kernel" : "function";
    const char *hint = suggest(c, n->name, c->where == IN_HOST && kernel_ok);
    if (hint)
      diag_error(s->diag, n->name_span, "call to undefined %s '%s'; did you mean '%s'?", what, n->name, hint);
    else
      diag_error(s->diag, n->name_span, "call to undefined %s '%s'", what, n->name);
    return TY_ERROR;
  }
  if (sym->kind == SYM_BUILTIN) {
    Type t = TY_ERROR;
    int ok = 1;
    if (n->list.len != sym->nargs) {
      diag_error(s->diag, n->span, "'%s' takes %d argument%s, got %d", n->name, sym->nargs,
                 sym->nargs == 1 ? "" : "s", n->list.len);
      ok = 0;
    }
    for (int i = 0; i < n->list.len; i++) {
      Type at = check_expr(c, n->list.data[i]);
      if (at != TY_ERROR && !is_numeric(at)) {
        diag_error(s->diag, n->list.data[i]->span, "argument of '%s' must be a number, not '%s'",
                   n->name, type_name(at));
        ok = 0;
      }
      t = i == 0 ? at : sema_arith_type(t, at);
    }
    if (!ok)
      return TY_ERROR;
    /* abs/min/max keep int; the C math functions work on floating values. */
    int keeps_int = streq(n->name, "abs") || streq(n->name, "min") || streq(n->name, "max");
    if (t == TY_INT && !keeps_int)
      t = TY_DOUBLE;
    return t;
  }
  if (sym->kind == SYM_KERNEL) {
    if (c->where != IN_HOST) {
      diag_error(s->diag, n->span, "kernel '%s' can only be called from main", n->name);
      return TY_ERROR;
    }
    if (!kernel_ok) {
      diag_error(s->diag, n->span, "a kernel call must be a statement or the whole right-hand side "
                 "of an assignment");
      return TY_ERROR;
    }
    int np = sym->kparams.len;
    if (n->list.len != np) {
      diag_error(s->diag, n->span, "kernel '%s' takes %d argument%s, got %d", n->name, np,
                 np == 1 ? "" : "s", n->list.len);
      diag_note(s->diag, sym->span, "'%s' is declared here", n->name);
      return TY_ERROR;
    }
    for (int i = 0; i < np; i++) {
      Type at = check_expr(c, n->list.data[i]);
      char what[128];
      snprintf(what, sizeof what, "argument '%s' of kernel '%s'", sym->kparams.data[i]->name, n->name);
      check_convert(s, at, sym->kparams.data[i]->ty, n->list.data[i]->span, what);
    }
    return TY_VOID;
  }
  diag_error(s->diag, n->name_span, "%s '%s' is not a function or kernel", sym_what(sym), n->name);
  return TY_ERROR;
}

static Type check_expr_inner(Ctx *c, Node *n);

enum { MAX_EXPR_DEPTH = 2000 };

static Type check_expr(Ctx *c, Node *n)
{
  if (c->depth >= MAX_EXPR_DEPTH) {
    if (!c->too_deep++)
      diag_error(c->s->diag, n->span, "expression is nested too deeply (more than %d levels)", MAX_EXPR_DEPTH);
    n->ty = TY_ERROR;
    return TY_ERROR;
  }
  c->depth++;
  const Inline *save = c->s->diag->inl;
  if (n->inl)
    c->s->diag->inl = n->inl;
  Type t = check_expr_inner(c, n);
  c->s->diag->inl = save;
  c->depth--;
  return t;
}

static Type check_expr_inner(Ctx *c, Node *n)
{
  Sema *s = c->s;
  Type t = TY_ERROR;
  switch (n->kind) {
  case N_INT:
    t = TY_INT;
    if (n->ival > 2147483647L) {
      diag_error(s->diag, n->span, "integer constant %s does not fit in an int", n->name);
      t = TY_ERROR;
    }
    break;
  case N_FLOAT:
    t = n->ty;
    if (isinf(n->fval) || (n->ty == TY_FLOAT && isinf((float)n->fval))) {
      diag_error(s->diag, n->span, "floating constant %s is too large for a %s", n->name,
                 n->ty == TY_FLOAT ? "float" : "double");
      t = TY_ERROR;
    }
    break;
  case N_STRING:
    diag_error(s->diag, n->span, "a string can only appear in print or write");
    break;
  case N_NAME:
    t = check_name(c, n);
    break;
  case N_INDEX:
    t = check_index(c, n);
    break;
  case N_CALL:
    t = check_call(c, n, 0);
    break;
  case N_CAST: {
    Type a = check_expr(c, n->a);
    if (a != TY_ERROR && !is_numeric(a) && a != TY_BOOL) {
      diag_error(s->diag, n->span, "cannot cast '%s' to '%s'", type_name(a), type_name(n->ty));
      break;
    }
    t = n->ty;
    break;
  }
  case N_UNARY: {
    Type a = check_expr(c, n->a);
    if (a == TY_ERROR)
      break;
    if (n->op == '!') {
      if (a != TY_BOOL)
        diag_error(s->diag, n->span, "operand of '!' must be a comparison (bool), not '%s'", type_name(a));
      else
        t = TY_BOOL;
    } else if (!is_numeric(a)) {
      diag_error(s->diag, n->span, "operand of unary '-' must be a number, not '%s'", type_name(a));
    } else {
      t = a;
    }
    break;
  }
  case N_BINARY: {
    Type a = check_expr(c, n->a), b = check_expr(c, n->b);
    if (a == TY_ERROR || b == TY_ERROR)
      break;
    const char *op = parse_op_name(n->op);
    if (n->op == ANDAND || n->op == OROR) {
      if (a != TY_BOOL || b != TY_BOOL)
        diag_error(s->diag, n->name_span, "operands of '%s' must be comparisons (bool), not '%s' and '%s'",
                   op, type_name(a), type_name(b));
      else
        t = TY_BOOL;
      break;
    }
    if (!is_numeric(a) || !is_numeric(b)) {
      diag_error(s->diag, n->name_span, "invalid operands to '%s' ('%s' and '%s')", op,
                 type_name(a), type_name(b));
      break;
    }
    if (n->op == '%' && (a != TY_INT || b != TY_INT)) {
      diag_error(s->diag, n->name_span, "operator '%%' needs int operands, not '%s' and '%s'; "
                 "use fmod-free arithmetic or a cast", type_name(a), type_name(b));
      break;
    }
    t = sema_arith_type(a, b);
    double zero;
    if ((n->op == '/' || n->op == '%') && t == TY_INT && const_eval(c, n->b, &zero, NULL) && zero == 0) {
      diag_error(s->diag, n->span, "integer division by zero");
      t = TY_ERROR;
      break;
    }
    if (n->op == EQ || n->op == NE || n->op == '<' || n->op == '>' || n->op == LE || n->op == GE)
      t = TY_BOOL;
    break;
  }
  case N_COND: {
    Type k = check_expr(c, n->a);
    Type a = check_expr(c, n->b), b = check_expr(c, n->c);
    if (k != TY_ERROR && k != TY_BOOL)
      diag_error(s->diag, n->a->span, "condition of '?:' must be a comparison (bool), not '%s'", type_name(k));
    else if (a != TY_ERROR && b != TY_ERROR) {
      if (a == TY_BOOL && b == TY_BOOL)
        t = TY_BOOL;
      else if (is_numeric(a) && is_numeric(b))
        t = sema_arith_type(a, b);
      else
        diag_error(s->diag, n->span, "the arms of '?:' have incompatible types '%s' and '%s'",
                   type_name(a), type_name(b));
    }
    break;
  }
  default:
    ice("check_expr: unexpected node kind %d", n->kind);
  }
  n->ty = t;
  return t;
}

/* Compile-time evaluation of constant expressions (literals, consts and
 * arithmetic on them). On failure *culprit points at the first
 * non-constant leaf, for the message. */
static int const_eval(Ctx *c, Node *n, double *out, Node **culprit)
{
  double a, b, k;
  switch (n->kind) {
  case N_INT:
    *out = (double)n->ival;
    return 1;
  case N_FLOAT:
    *out = n->fval;
    return 1;
  case N_NAME: {
    Sym *s = n->sym ? n->sym : c ? lookup(c, n->name) : NULL;
    n->sym = s;
    if (s && s->kind == SYM_CONST && !s->is_array && s->vals) {
      *out = s->vals[0];
      return 1;
    }
    if (s && s->kind == SYM_LOOP && s->unrolled) {
      *out = (double)s->uval;
      return 1;
    }
    if (culprit && !*culprit)
      *culprit = n;
    return 0;
  }
  case N_INDEX: {
    Sym *s = n->sym ? n->sym : c ? lookup(c, n->name) : NULL;
    if (s && s->kind == SYM_CONST && s->is_array && n->list.len == 1 &&
        const_eval(c, n->list.data[0], &a, culprit) && a >= 0 && a < s->len) {
      *out = s->vals[(int)a];
      return 1;
    }
    if (culprit && !*culprit)
      *culprit = n;
    return 0;
  }
  case N_CAST:
    if (!const_eval(c, n->a, &a, culprit))
      return 0;
    *out = n->ty == TY_INT ? trunc(a) : n->ty == TY_FLOAT ? (double)(float)a : a;
    return 1;
  case N_UNARY:
    if (!const_eval(c, n->a, &a, culprit))
      return 0;
    *out = n->op == '-' ? -a : !a;
    return 1;
  case N_BINARY: {
    if (!const_eval(c, n->a, &a, culprit) | !const_eval(c, n->b, &b, culprit))
      return 0;
    int ints = n->a->ty == TY_INT && n->b->ty == TY_INT;
    switch (n->op) {
    case '+': *out = a + b; break;
    case '-': *out = a - b; break;
    case '*': *out = a * b; break;
    case '/':
      if (b == 0) {
        if (culprit && !*culprit)
          *culprit = n;
        return 0;
      }
      *out = ints ? trunc(a / b) : a / b;
      break;
    case '%':
      if (b == 0)
        return 0;
      *out = fmod(a, b);
      break;
    case '<': *out = a < b; break;
    case '>': *out = a > b; break;
    case LE: *out = a <= b; break;
    case GE: *out = a >= b; break;
    case EQ: *out = a == b; break;
    case NE: *out = a != b; break;
    case ANDAND: *out = a && b; break;
    case OROR: *out = a || b; break;
    default: return 0;
    }
    return 1;
  }
  case N_COND:
    if (!const_eval(c, n->a, &k, culprit) || !const_eval(c, n->b, &a, culprit) ||
        !const_eval(c, n->c, &b, culprit))
      return 0;
    *out = k ? a : b;
    return 1;
  default:
    if (culprit && !*culprit)
      *culprit = n;
    return 0;
  }
}

static int fits_type(Sema *s, Type t, double v, Span at)
{
  if (t == TY_INT && (v > 2147483647.0 || v < -2147483648.0)) {
    diag_error(s->diag, at, "the value %.0f does not fit in an int", v);
    return 0;
  }
  return 1;
}

static double round_to(Type t, double v)
{
  return t == TY_INT ? trunc(v) : t == TY_FLOAT ? (double)(float)v : v;
}

/* ---- declarations ------------------------------------------------------ */

static void check_param(Ctx *c, Node *d)
{
  Sema *s = c->s;
  for (int i = 0; i < d->list.len; i++) {
    Node *it = d->list.data[i];
    if (d->ty == TY_BOOL)
      diag_error(s->diag, d->span, "params must be int, float or double");
    Type t = check_expr(c, it->a);
    check_convert(s, t, d->ty, it->a->span, "the default of a param");
    Sym *sym = declare(c, SYM_PARAM, it->name, it->name_span, d->ty, it);
    sym->id = s->params.len;
    vec_push(&s->params, sym);
    double v = 0;
    Node *culprit = NULL;
    if (t != TY_ERROR && !const_eval(c, it->a, &v, &culprit))
      diag_error(s->diag, culprit ? culprit->span : it->a->span,
                 "the default of param '%s' must be a constant", it->name);
    if (t != TY_ERROR && !culprit)
      fits_type(s, d->ty, v, it->a->span);
    sym->vals = arena_alloc(s->arena, sizeof(double));
    sym->vals[0] = round_to(d->ty, v);
    /* in lo..hi: constant bounds of the param's type, the default inside */
    Node *bound[2] = { it->b, it->c };
    for (int e = 0; e < 2; e++) {
      if (!bound[e])
        continue;
      Type bt = check_expr(c, bound[e]);
      check_convert(s, bt, d->ty, bound[e]->span, "a param's range");
      double bv = 0;
      Node *bc = NULL;
      if (bt == TY_ERROR)
        continue;
      if (!const_eval(c, bound[e], &bv, &bc)) {
        diag_error(s->diag, bc ? bc->span : bound[e]->span, "the range of param '%s' must be constant", it->name);
        continue;
      }
      *(e ? &sym->has_hi : &sym->has_lo) = 1;
      *(e ? &sym->hi : &sym->lo) = round_to(d->ty, bv);
    }
    if (sym->has_lo && sym->has_hi && sym->lo > sym->hi)
      diag_error(s->diag, it->b->span, "the range of param '%s' is empty: %g is above %g", it->name, sym->lo, sym->hi);
    else if ((sym->has_lo && sym->vals[0] < sym->lo) || (sym->has_hi && sym->vals[0] > sym->hi))
      diag_error(s->diag, it->a->span, "the default %g of param '%s' is outside its range", sym->vals[0], it->name);
  }
}

static void check_const(Ctx *c, Node *d)
{
  Sema *s = c->s;
  for (int i = 0; i < d->list.len; i++) {
    Node *it = d->list.data[i];
    Sym *sym = declare(c, SYM_CONST, it->name, it->name_span, d->ty, it);
    sym->id = s->consts.len;
    vec_push(&s->consts, sym);
    if (d->ty == TY_BOOL)
      diag_error(s->diag, it->name_span, "consts must be int, float or double");
    if (!it->has_init) {
      Type t = check_expr(c, it->a);
      check_convert(s, t, d->ty, it->a->span, "a const");
      double v;
      Node *culprit = NULL;
      if (t == TY_ERROR)
        continue;
      if (!const_eval(c, it->a, &v, &culprit)) {
        diag_error(s->diag, culprit ? culprit->span : it->a->span,
                   "the value of const '%s' must be known at compile time", it->name);
        continue;
      }
      if (!fits_type(s, d->ty, v, it->a->span))
        continue;
      sym->vals = arena_alloc(s->arena, sizeof(double));
      sym->vals[0] = round_to(d->ty, v);
      sym->len = 1;
      continue;
    }
    sym->is_array = 1;
    int n = it->list.len;
    if (it->b) {
      double len;
      if (check_expr(c, it->b) != TY_INT || !const_eval(c, it->b, &len, NULL) || len < 1) {
        diag_error(s->diag, it->b->span, "the length of const array '%s' must be a positive int constant",
                   it->name);
        continue;
      }
      if ((int)len != n) {
        diag_error(s->diag, it->name_span, "const array '%s' has length %d but %d value%s given",
                   it->name, (int)len, n, n == 1 ? " is" : "s are");
        continue;
      }
    }
    sym->len = n;
    sym->vals = arena_alloc(s->arena, sizeof(double) * (size_t)n);
    for (int k = 0; k < n; k++) {
      Node *e = it->list.data[k];
      Type t = check_expr(c, e);
      if (t == TY_ERROR)
        continue;
      check_convert(s, t, d->ty, e->span, "a const array element");
      double v;
      if (!const_eval(c, e, &v, NULL))
        diag_error(s->diag, e->span, "const array elements must be known at compile time");
      else
        sym->vals[k] = round_to(d->ty, v);
    }
  }
}

static void check_grid(Ctx *c, Node *d)
{
  Sema *s = c->s;
  Sym *sym = declare(c, SYM_GRID, d->name, d->name_span, TY_VOID, d);
  sym->id = s->grids.len;
  vec_push(&s->grids, sym);
  if (d->list.len > MAX_RANK) {
    diag_error(s->diag, d->span, "grid '%s' has %d dimensions; at most %d are supported",
               d->name, d->list.len, MAX_RANK);
    sym->rank = MAX_RANK;
  } else {
    sym->rank = d->list.len;
  }
  for (int i = 0; i < sym->rank; i++) {
    Node *e = d->list.data[i];
    Type t = check_expr(c, e);
    if (t != TY_ERROR && t != TY_INT)
      diag_error(s->diag, e->span, "grid size must be an int, not '%s'", type_name(t));
    sym->dims[i] = e;
    double v;
    if (t == TY_INT && const_eval(c, e, &v, NULL) && v < 1)
      diag_error(s->diag, e->span, "grid size must be positive, got %g", v);
  }
  /* grid G[..][..] periodic(i, k): the named dimensions wrap around. */
  if (d->a) {
    if (!streq(d->a->name, "periodic")) {
      diag_error(s->diag, d->a->span, "unknown grid property '%s'; the only one is periodic(dimensions)",
                 d->a->name);
      return;
    }
    for (int i = 0; i < d->list2.len; i++) {
      Node *x = d->list2.data[i];
      int dim = -1;
      for (int q = 0; q < sym->rank; q++)
        if (streq(x->name, index_names[q]))
          dim = q;
      if (dim < 0) {
        diag_error(s->diag, x->span, "'%s' is not a dimension of %d-D grid '%s'; name dimensions by their "
                   "index: %s", x->name, sym->rank, sym->name, sym->rank == 1 ? "i" : sym->rank == 2 ? "i, j" : "i, j, k");
        continue;
      }
      if (sym->periodic[dim])
        diag_error(s->diag, x->span, "dimension '%s' is already periodic", x->name);
      sym->periodic[dim] = 1;
    }
  }
}

/* field ... on G boundary(e): e gives the value of each ghost point (the
 * halo outside the grid) from its indices i, j, k, params and consts. */
static Node *check_boundary(Ctx *c, Node *d, Sym *g)
{
  Sema *s = c->s;
  if (!streq(d->a->name, "boundary")) {
    diag_error(s->diag, d->a->span, "unknown field property '%s'; the only one is boundary(value)", d->a->name);
    return NULL;
  }
  if (!g)
    return NULL;
  push_scope(c);
  for (int q = 0; q < g->rank; q++) {
    Sym *ix = declare(c, SYM_INDEX, index_names[q], d->a->span, TY_INT, NULL);
    ix->dim = q;
  }
  Where saved = c->where;
  c->where = IN_BOUNDARY;
  Type t = check_expr(c, d->b);
  c->where = saved;
  pop_scope(c);
  if (t == TY_ERROR)
    return NULL;
  if (!is_numeric(t)) {
    diag_error(s->diag, d->b->span, "a boundary value must be a number, not '%s'", type_name(t));
    return NULL;
  }
  if (d->ty == TY_INT && is_floating(t)) {
    diag_error(s->diag, d->b->span, "the boundary value of an int field must be an int, not '%s'; write "
               "(int)(...) if that is intended", type_name(t));
    return NULL;
  }
  return d->b;
}

static void check_field(Ctx *c, Node *d)
{
  Sema *s = c->s;
  Sym *g = lookup(c, d->name);
  if (!g) {
    diag_error(s->diag, d->name_span, "unknown grid '%s'", d->name);
  } else if (g->kind != SYM_GRID) {
    diag_error(s->diag, d->name_span, "'%s' is a %s, not a grid", d->name, sym_what(g));
    g = NULL;
  }
  if (d->ty == TY_BOOL)
    diag_error(s->diag, d->span, "fields must be int, float or double");
  Node *boundary = d->a ? check_boundary(c, d, g) : NULL;
  for (int i = 0; i < d->list.len; i++) {
    Node *it = d->list.data[i];
    Sym *f = declare(c, SYM_FIELD, it->name, it->name_span, d->ty, it);
    f->grid = g;
    f->cident = f->name;
    f->boundary = boundary;
    if (it->b) {
      /* f[n]: n fields of their own, stored one after the other (structure
       * of arrays); f itself is only a name for them. */
      double v;
      Type t = check_expr(c, it->b);
      if (t != TY_ERROR && (t != TY_INT || !const_eval(c, it->b, &v, NULL) || v < 1 || v > 64)) {
        diag_error(s->diag, it->b->span, "the number of components of '%s' must be a constant int from 1 to 64",
                   it->name);
        continue;
      }
      if (t == TY_ERROR)
        continue;
      f->ncomp = (int)v;
      f->id = -1;
      f->comp = arena_alloc(s->arena, sizeof(Sym *) * (size_t)f->ncomp);
      for (int q = 0; q < f->ncomp; q++) {
        Sym *cf = arena_alloc(s->arena, sizeof *cf);
        *cf = *f;
        cf->ncomp = 0;
        cf->comp = NULL;
        cf->name = arena_printf(s->arena, "%s[%d]", f->name, q);
        cf->cident = arena_printf(s->arena, "%s_%d_", f->name, q);
        cf->id = s->fields.len;
        f->comp[q] = cf;
        if (g)
          vec_push(&s->fields, cf);
      }
      continue;
    }
    f->id = s->fields.len;
    if (g)
      vec_push(&s->fields, f);
  }
}

/* ---- kernel bodies ----------------------------------------------------- */

static void check_block(Ctx *c, Node *b);
static void check_stmt(Ctx *c, Node *n);

static int is_red_update(Ctx *c, Node *assign, Sym **red)
{
  /* r += e  (sum)   |   r = max(r, e) / max(e, r) / fmax / min / fmin */
  if (assign->list2.len != 1)
    return 0;
  Sym *r = reduction_target(c, assign->list2.data[0]);
  if (!r)
    return 0;
  *red = r;
  if (r->redop == RED_SUM)
    return assign->op == '+';
  if (assign->op != '=' || assign->a->kind != N_CALL || assign->a->list.len != 2)
    return 0;
  const char *fn = assign->a->name;
  int want = r->redop == RED_MAX ? (streq(fn, "max") || streq(fn, "fmax"))
                                 : (streq(fn, "min") || streq(fn, "fmin"));
  if (!want)
    return 0;
  Node *x = assign->a->list.data[0], *y = assign->a->list.data[1];
  return reduction_target(c, x) == r || reduction_target(c, y) == r;
}

static void check_red_update(Ctx *c, Node *n, Sym *r)
{
  n->list2.data[0]->sym = r;
  if (r->redop == RED_SUM) {
    Type t = check_expr(c, n->a);
    if (t != TY_ERROR && !is_numeric(t))
      diag_error(c->s->diag, n->a->span, "reduction needs a number, not '%s'", type_name(t));
    return;
  }
  Node *call = n->a;
  Node *x = call->list.data[0], *y = call->list.data[1];
  Node *other = reduction_target(c, x) == r ? y : x;
  Node *self = other == y ? x : y;
  self->sym = r;
  self->ty = r->ty;
  Type t = check_expr(c, other);
  if (t != TY_ERROR && !is_numeric(t))
    diag_error(c->s->diag, other->span, "reduction needs a number, not '%s'", type_name(t));
  call->sym = lookup(c, call->name);
  call->ty = r->ty;
}

static void check_kernel_assign(Ctx *c, Node *n)
{
  Sema *s = c->s;
  Sym *red = NULL;
  if (is_red_update(c, n, &red)) {
    check_red_update(c, n, red);
    return;
  }
  if (red) {
    red_misuse(c, red, n->span);
    return;
  }
  if (n->list2.len != 1) {
    diag_error(s->diag, n->span, "only a kernel call can assign several values at once");
    return;
  }
  Node *lhs = n->list2.data[0];
  Type vt = check_expr(c, n->a);
  Sym *sym = lookup(c, lhs->name);
  lhs->sym = sym;
  if (!sym) {
    undeclared(c, lhs);
    return;
  }
  if (sym->kind == SYM_FIELD && sym->ncomp && lhs->kind == N_NAME) {
    diag_error(s->diag, lhs->span, "field '%s' has %d components; assign one of them, %s[q] = ...", sym->name,
               sym->ncomp, sym->name);
    return;
  }
  if (sym->kind == SYM_FIELD && lhs->kind == N_INDEX && (sym->ncomp || lhs->list2.len)) {
    sym = component(c, lhs, sym);
    if (!sym)
      return;
  }
  if (lhs->kind == N_INDEX) {
    if (sym->kind != SYM_FIELD) {
      diag_error(s->diag, lhs->span, "cannot assign to an element of %s '%s'", sym_what(sym), sym->name);
      return;
    }
    for (int d = 0; d < lhs->list.len; d++) {
      double v;
      if (!const_eval(c, lhs->list.data[d], &v, NULL) || v != 0) {
        diag_error(s->diag, lhs->span, "a kernel writes fields at the current point only; "
                   "write '%s = ...' instead", sym->name);
        return;
      }
    }
  }
  Type tt;
  switch (sym->kind) {
  case SYM_FIELD:
    if (!sym->grid)
      return;
    if (sym->grid != c->grid) {
      diag_error(s->diag, lhs->span, "field '%s' is on grid '%s' but kernel '%s' runs over grid '%s'",
                 sym->name, sym->grid->name, c->kernel->name, c->grid->name);
      return;
    }
    {
      Access acc = { .field = sym, .span = lhs->span };
      vec_push(&c->writes, acc);
      if (n->op != '=') {
        Access rd = { .field = sym, .span = lhs->span };
        vec_push(&c->reads, rd);
      }
    }
    tt = sym->ty;
    break;
  case SYM_LOCAL:
    tt = sym->ty;
    break;
  default:
    diag_error(s->diag, lhs->span, "cannot assign to %s '%s' inside a kernel", sym_what(sym), sym->name);
    return;
  }
  lhs->ty = tt;
  if (n->op != '=' && vt != TY_ERROR && !is_numeric(vt)) {
    diag_error(s->diag, n->a->span, "invalid operand of '%c=' ('%s')", n->op, type_name(vt));
    return;
  }
  check_convert(s, vt, tt, n->a->span, sym->kind == SYM_FIELD ? "a field" : "a variable");
}

static void check_host_assign(Ctx *c, Node *n)
{
  Sema *s = c->s;
  int call = n->a->kind == N_CALL && n->op == '=';
  Sym *ksym = call ? lookup(c, n->a->name) : NULL;
  if (ksym && ksym->kind == SYM_KERNEL) {
    check_call(c, n->a, 1);
    int nr = ksym->reds.len;
    if (nr == 0) {
      diag_error(s->diag, n->a->span, "kernel '%s' has no reduction, so it returns no value", ksym->name);
      return;
    }
    if (n->list2.len != nr) {
      diag_error(s->diag, n->span, "kernel '%s' returns %d value%s (its reductions), but %d %s assigned",
                 ksym->name, nr, nr == 1 ? "" : "s", n->list2.len, n->list2.len == 1 ? "is" : "are");
      return;
    }
  } else {
    if (n->list2.len != 1) {
      diag_error(s->diag, n->span, "only a kernel call with several reductions can assign several values");
      return;
    }
    check_expr(c, n->a);
  }
  for (int i = 0; i < n->list2.len; i++) {
    Node *lhs = n->list2.data[i];
    Sym *sym = lookup(c, lhs->name);
    lhs->sym = sym;
    if (!sym) {
      undeclared(c, lhs);
      continue;
    }
    for (int j = 0; j < i; j++)
      if (n->list2.data[j]->sym == sym) {
        diag_error(s->diag, lhs->span, "'%s' is assigned twice in one statement", sym->name);
        break;
      }
    if (lhs->kind == N_INDEX || sym->kind != SYM_VAR) {
      if (sym->kind == SYM_FIELD)
        diag_error(s->diag, lhs->span, "fields cannot be assigned in main; write them in a kernel");
      else
        diag_error(s->diag, lhs->span, "cannot assign to %s '%s'", sym_what(sym), sym->name);
      continue;
    }
    lhs->ty = sym->ty;
    Type vt = ksym && ksym->kind == SYM_KERNEL ? ksym->reds.data[i]->ty : n->a->ty;
    if (n->op != '=' && vt != TY_ERROR && !is_numeric(vt)) {
      diag_error(s->diag, n->a->span, "invalid operand of '%c=' ('%s')", n->op, type_name(vt));
      continue;
    }
    check_convert(s, vt, sym->ty, n->a->span, "a variable");
  }
}

static void check_decl_stmt(Ctx *c, Node *n)
{
  Sema *s = c->s;
  for (int i = 0; i < n->list.len; i++) {
    Node *it = n->list.data[i];
    Type vt = TY_VOID;
    if (it->a) {
      Sym *k = it->a->kind == N_CALL ? lookup(c, it->a->name) : NULL;
      if (k && k->kind == SYM_KERNEL && c->where == IN_HOST) {
        check_call(c, it->a, 1);
        if (k->reds.len == 0)
          diag_error(s->diag, it->a->span, "kernel '%s' has no reduction, so it returns no value", k->name);
        else if (k->reds.len != 1)
          diag_error(s->diag, it->a->span, "kernel '%s' returns %d values; declare the variables first and "
                     "assign them all at once", k->name, k->reds.len);
        else
          vt = k->reds.data[0]->ty;
      } else {
        vt = check_expr(c, it->a);
      }
      check_convert(s, vt, n->ty, it->a->span, "a variable");
    } else if (c->where == IN_KERNEL) {
      diag_error(s->diag, it->span, "kernel variable '%s' needs an initial value", it->name);
    }
    Sym *sym = declare(c, c->where == IN_KERNEL ? SYM_LOCAL : SYM_VAR, it->name, it->name_span, n->ty, it);
    it->sym = sym;
    it->ty = n->ty;
    if (c->where == IN_HOST) {
      sym->id = s->vars.len;
      vec_push(&s->vars, sym);
    }
  }
}

static void check_cond(Ctx *c, Node *e, const char *what)
{
  Type t = check_expr(c, e);
  if (t != TY_ERROR && t != TY_BOOL)
    diag_error(c->s->diag, e->span, "the condition of '%s' must be a comparison (bool), not '%s'",
               what, type_name(t));
}

/* Do two fields' boundary clauses say the same (the same declaration, or
 * the same text up to white space)? */
static int same_boundary(Sema *s, const Sym *a, const Sym *b)
{
  if (a->boundary == b->boundary)
    return 1;
  if (!a->boundary || !b->boundary)
    return 0;
  const char *t = s->prog->src.text;
  int i = a->boundary->span.lo, j = b->boundary->span.lo;
  int ie = a->boundary->span.hi, je = b->boundary->span.hi;
  for (;;) {
    while (i < ie && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
      i++;
    while (j < je && (t[j] == ' ' || t[j] == '\t' || t[j] == '\n' || t[j] == '\r'))
      j++;
    if (i == ie || j == je)
      return i == ie && j == je;
    if (t[i++] != t[j++])
      return 0;
  }
}

static Sym *field_operand(Ctx *c, Node *n)
{
  Sym *f = lookup(c, n->name);
  n->sym = f;
  if (!f) {
    undeclared(c, n);
    return NULL;
  }
  if (f->kind != SYM_FIELD) {
    diag_error(c->s->diag, n->span, "'%s' is a %s, not a field", n->name, sym_what(f));
    return NULL;
  }
  return f;
}

/* A 'for' inside a kernel is unrolled: its bounds must be compile-time
 * ints, and its body is checked once per iteration with the variable
 * bound to that iteration's value, so that f[q][-cx[q], -cy[q]] is an
 * ordinary access each time (halos and hazards see every offset). */
enum { MAX_UNROLL = 1024 };
/* write f to "x.png" scale(lo, hi) colormap(name): how values become
 * colours. Only images take options. */
static const char *colormaps[] = { "viridis", "gray", "coolwarm" };

static void check_write_opts(Ctx *c, Node *n)
{
  Sema *s = c->s;
  size_t len = strlen(n->name);
  int png = len >= 4 && streq(n->name + len - 4, ".png");
  int seen_scale = 0, seen_map = 0;
  for (int i = 0; i < n->list.len; i++) {
    Node *o = n->list.data[i];
    int scale = streq(o->name, "scale"), map = streq(o->name, "colormap");
    if (streq(o->name, "time")) {
      if (!n->list2.len) {
        diag_error(s->diag, o->name_span, "time(...) is for numbered files (write u to \"u_%%04d.vtk\" %% n time(t))");
        continue;
      }
      if (o->list.len != 1) {
        diag_error(s->diag, o->span, "time takes one value: the time of this file in the series");
        continue;
      }
      Type t = check_expr(c, o->list.data[0]);
      if (t != TY_ERROR && !is_numeric(t))
        diag_error(s->diag, o->list.data[0]->span, "a time must be a number, not '%s'", type_name(t));
      continue;
    }
    if (!scale && !map) {
      diag_error(s->diag, o->name_span, "unknown write option '%s'; images take scale(lo, hi) and colormap(name)",
                 o->name);
      continue;
    }
    if (!png) {
      diag_error(s->diag, o->name_span, "%s(...) is for images, and \"%s\" is not a .png file", o->name, n->name);
      continue;
    }
    if ((scale && seen_scale++) || (map && seen_map++)) {
      diag_error(s->diag, o->name_span, "%s(...) is given twice", o->name);
      continue;
    }
    if (scale) {
      if (o->list.len != 2) {
        diag_error(s->diag, o->span, "scale takes two values, the ones shown as the first and last colour: "
                   "scale(lo, hi)");
        continue;
      }
      for (int a = 0; a < 2; a++) {
        Type t = check_expr(c, o->list.data[a]);
        if (t != TY_ERROR && !is_numeric(t))
          diag_error(s->diag, o->list.data[a]->span, "a scale bound must be a number, not '%s'", type_name(t));
      }
      continue;
    }
    Node *m = o->list.len == 1 ? o->list.data[0] : NULL;
    int known = 0;
    for (size_t q = 0; m && m->kind == N_NAME && q < sizeof colormaps / sizeof colormaps[0]; q++)
      known |= streq(m->name, colormaps[q]);
    if (!known)
      diag_error(s->diag, m ? m->span : o->span, "unknown colormap; choose viridis, gray or coolwarm");
  }
}

/* write u to "out/u_%06d.vtk" % n: a C-style conversion per value (d, i,
 * u, x for ints; f, e, g for any number; %% for a percent sign). */
static void check_write_format(Ctx *c, Node *n)
{
  Sema *s = c->s;
  int nconv = 0;
  for (const char *p = n->name; *p; p++) {
    if (*p != '%')
      continue;
    if (p[1] == '%') {
      p++;
      continue;
    }
    const char *q = p + 1;
    while (*q && strchr("-+ 0#", *q))
      q++;
    while (*q >= '0' && *q <= '9')
      q++;
    if (*q == '.')
      for (q++; *q >= '0' && *q <= '9'; q++)
        ;
    if (!*q || !strchr("diuxXfFeEgG", *q)) {
      Span at = n->name_span;
      at.lo += 1 + (int)(p - n->name);
      at.hi = at.lo + 1;
      if (!n->list2.len)
        return; /* a plain name with a percent sign: no conversions meant */
      diag_error(s->diag, at, "'%%%.*s' is not a conversion a file name can have; use %%d (ints), %%f, %%e or %%g "
                 "(numbers), with flags and a width (%%06d), or %%%% for a percent sign", (int)(q - p), p + 1);
      return;
    }
    if (n->list2.len) {
      if (nconv < n->list2.len) {
        Node *v = n->list2.data[nconv];
        Type t = check_expr(c, v);
        if (t != TY_ERROR && !is_numeric(t))
          diag_error(s->diag, v->span, "a value in a file name must be a number, not '%s'", type_name(t));
        else if (t != TY_ERROR && t != TY_INT && strchr("diuxX", *q))
          diag_error(s->diag, v->span, "'%%%c' takes an int, but this is a '%s'; use %%g or (int)(...)", *q,
                     type_name(t));
      }
    }
    nconv++;
    p = q;
  }
  if (n->list2.len && nconv != n->list2.len)
    diag_error(s->diag, n->list2.len > nconv ? n->list2.data[nconv]->span : n->name_span,
               "the file name has %d conversion%s but %d value%s follow%s it", nconv, nconv == 1 ? "" : "s",
               n->list2.len, n->list2.len == 1 ? "" : "s", n->list2.len == 1 ? "s" : "");
}

/* read u from "x.png" threshold(0.5) | scale(lo, hi) | nonfinite(allow) */
static void check_read_opts(Ctx *c, Node *n)
{
  Sema *s = c->s;
  size_t len = strlen(n->name);
  int png = len >= 4 && streq(n->name + len - 4, ".png");
  int seen[3] = { 0, 0, 0 };
  for (int i = 0; i < n->list.len; i++) {
    Node *o = n->list.data[i];
    int which = streq(o->name, "threshold") ? 0 : streq(o->name, "scale") ? 1 : streq(o->name, "nonfinite") ? 2 : -1;
    if (which < 0) {
      diag_error(s->diag, o->name_span, "unknown read option '%s'; reads take threshold(t) and scale(lo, hi) "
                 "(images) and nonfinite(allow)", o->name);
      continue;
    }
    if (seen[which]++) {
      diag_error(s->diag, o->name_span, "%s(...) is given twice", o->name);
      continue;
    }
    if (which == 2) {
      if (o->list.len != 1 || o->list.data[0]->kind != N_NAME || !streq(o->list.data[0]->name, "allow"))
        diag_error(s->diag, o->span, "write nonfinite(allow) to accept NaN and inf in the file");
      continue;
    }
    if (!png) {
      diag_error(s->diag, o->name_span, "%s(...) is for images, and \"%s\" is not a .png file", o->name, n->name);
      continue;
    }
    if (which == 0 && seen[1]) {
      diag_error(s->diag, o->name_span, "threshold(...) and scale(...) exclude each other: a threshold gives 0 or 1");
      continue;
    }
    if (which == 1 && seen[0]) {
      diag_error(s->diag, o->name_span, "threshold(...) and scale(...) exclude each other: a threshold gives 0 or 1");
      continue;
    }
    int want = which == 0 ? 1 : 2;
    if (o->list.len != want) {
      diag_error(s->diag, o->span, which == 0 ? "threshold takes one value: gray values (0 to 1) below it read as 1"
                                              : "scale takes two values: what black and white read as, scale(lo, hi)");
      continue;
    }
    for (int a = 0; a < want; a++) {
      Type t = check_expr(c, o->list.data[a]);
      if (t != TY_ERROR && !is_numeric(t))
        diag_error(s->diag, o->list.data[a]->span, "a %s must be a number, not '%s'", which ? "scale bound" : "threshold",
                   type_name(t));
    }
  }
}

static void check_kernel_for(Ctx *c, Node *n)
{
  Sema *s = c->s;
  Type lt = check_expr(c, n->a), ht = check_expr(c, n->b);
  double lo, hi;
  if (lt == TY_ERROR || ht == TY_ERROR)
    return;
  if (lt != TY_INT || ht != TY_INT) {
    diag_error(s->diag, span_join(n->a->span, n->b->span), "loop bounds must be ints");
    return;
  }
  if (!const_eval(c, n->a, &lo, NULL) || !const_eval(c, n->b, &hi, NULL)) {
    diag_error(s->diag, span_join(n->a->span, n->b->span), "a 'for' loop in a kernel is unrolled: its bounds "
               "must be compile-time ints (literals and consts)");
    return;
  }
  c->unrolled_iters = (c->unrolled_iters ? c->unrolled_iters : 1) * (hi > lo ? (long)(hi - lo) : 1);
  if (c->unrolled_iters > MAX_UNROLL) {
    diag_error(s->diag, n->span, "unrolling this loop would repeat its body more than %d times", MAX_UNROLL);
    return;
  }
  if (hi <= lo)
    diag_warning(s->diag, span_join(n->a->span, n->b->span), "this loop runs no iterations (%g..%g), so its body is "
                 "neither checked nor run", lo, hi);
  push_scope(c);
  Sym *v = declare(c, SYM_LOOP, n->name, n->name_span, TY_INT, n);
  v->unrolled = 1;
  n->sym = v;
  int errors = s->diag->nerrors;
  for (long q = (long)lo; q < (long)hi && s->diag->nerrors == errors; q++) {
    v->uval = q;
    check_stmt(c, n->c);
  }
  pop_scope(c);
  c->unrolled_iters /= hi > lo ? (long)(hi - lo) : 1;
}

static void check_stmt(Ctx *c, Node *n)
{
  Sema *s = c->s;
  int host = c->where == IN_HOST;
  switch (n->kind) {
  case N_BLOCK:
    push_scope(c);
    check_block(c, n);
    pop_scope(c);
    return;
  case N_DECL:
    check_decl_stmt(c, n);
    return;
  case N_ASSIGN:
    if (host)
      check_host_assign(c, n);
    else
      check_kernel_assign(c, n);
    return;
  case N_EXPRSTMT:
    if (!host) {
      diag_error(s->diag, n->span, "a call is not a statement inside a kernel");
      return;
    }
    check_call(c, n->a, 1);
    if (n->a->sym && n->a->sym->kind == SYM_BUILTIN)
      diag_error(s->diag, n->span, "the result of '%s' is not used", n->a->name);
    return;
  case N_IF:
    check_cond(c, n->a, "if");
    check_stmt(c, n->b);
    if (n->c)
      check_stmt(c, n->c);
    return;
  case N_FOR:
    if (!host) {
      check_kernel_for(c, n);
      return;
    }
    break;
  case N_WHILE:
  case N_BREAK:
  case N_SWAP:
  case N_PRINT:
  case N_TIMER:
  case N_WRITE:
  case N_READ:
    if (!host) {
      diag_error(s->diag, n->span, "this statement is only allowed in main, not inside a kernel");
      return;
    }
    break;
  default:
    ice("check_stmt: unexpected node kind %d", n->kind);
  }
  switch (n->kind) {
  case N_FOR: {
    Type lo = check_expr(c, n->a), hi = check_expr(c, n->b);
    if ((lo != TY_ERROR && lo != TY_INT) || (hi != TY_ERROR && hi != TY_INT))
      diag_error(s->diag, span_join(n->a->span, n->b->span), "loop bounds must be ints");
    push_scope(c);
    Sym *v = declare(c, SYM_LOOP, n->name, n->name_span, TY_INT, n);
    v->id = s->vars.len;
    vec_push(&s->vars, v);
    n->sym = v;
    c->loops++;
    check_stmt(c, n->c);
    c->loops--;
    pop_scope(c);
    return;
  }
  case N_WHILE:
    check_cond(c, n->a, "while");
    c->loops++;
    check_stmt(c, n->b);
    c->loops--;
    return;
  case N_BREAK:
    if (c->loops == 0)
      diag_error(s->diag, n->span, "'break' outside a loop");
    return;
  case N_SWAP: {
    Sym *a = field_operand(c, n->a), *b = field_operand(c, n->b);
    if (a && b && a->grid && b->grid) {
      if (a == b)
        diag_error(s->diag, n->span, "cannot swap field '%s' with itself", a->name);
      else if (a->ty != b->ty || a->grid != b->grid || a->ncomp != b->ncomp) {
        diag_error(s->diag, n->span, "cannot swap '%s' (%s on %s) and '%s' (%s on %s): fields must have "
                   "the same type, grid and number of components", a->name, type_name(a->ty), a->grid ? a->grid->name : "?",
                   b->name, type_name(b->ty), b->grid ? b->grid->name : "?");
      } else if (!same_boundary(s, a, b)) {
        /* swap exchanges whole allocations, ghost points included. */
        diag_error(s->diag, n->span, "cannot swap '%s' and '%s': their boundary values differ, and swapping "
                   "would exchange them", a->name, b->name);
        diag_note(s->diag, (a->boundary ? a : b)->boundary->span, "give both fields the same boundary(...), for "
                  "example by declaring them together");
      }
    }
    return;
  }
  case N_PRINT:
    for (int i = 0; i < n->list.len; i++) {
      Node *it = n->list.data[i];
      if (it->kind == N_STRING)
        continue;
      Type t = check_expr(c, it);
      if (t == TY_VOID)
        diag_error(s->diag, it->span, "this has no value to print");
    }
    return;
  case N_TIMER: {
    c->loops += 0;
    check_stmt(c, n->a);
    Sym *t = declare(c, SYM_VAR, n->name, n->name_span, TY_DOUBLE, n);
    t->id = s->vars.len;
    vec_push(&s->vars, t);
    n->sym = t;
    return;
  }
  case N_WRITE: {
    Sym *f = field_operand(c, n->a);
    if (f && n->a->kind == N_INDEX && !f->ncomp) {
      diag_error(s->diag, n->a->span, "write takes a whole field; '%s' has no components to choose from", f->name);
    } else if (f && n->a->kind == N_INDEX) {
      component(c, n->a, f);
    } else if (f && f->ncomp) {
      diag_error(s->diag, n->a->span, "field '%s' has %d components; write one of them, %s[q]", f->name,
                 f->ncomp, f->name);
    }
    if (!n->name[0])
      diag_error(s->diag, n->name_span, "empty file name");
    check_write_format(c, n);
    check_write_opts(c, n);
    return;
  }
  case N_READ: {
    Sym *f = field_operand(c, n->a);
    if (f && n->a->kind == N_INDEX && !f->ncomp)
      diag_error(s->diag, n->a->span, "read takes a whole field; '%s' has no components to choose from", f->name);
    else if (f && n->a->kind == N_INDEX)
      component(c, n->a, f);
    if (!n->name[0])
      diag_error(s->diag, n->name_span, "empty file name");
    check_read_opts(c, n);
    return;
  }
  default:
    return;
  }
}

static void check_block(Ctx *c, Node *b)
{
  for (int i = 0; i < b->list.len; i++)
    check_stmt(c, b->list.data[i]);
}

/* Reads at a nonzero offset of a field the same kernel writes would see
 * other points' new or old values depending on the schedule: an error.
 * Reads must also stay inside the grid when the region is the interior. */
static void check_kernel_accesses(Ctx *c, Sym *k, Node *region, int margin_lo[], int margin_hi[], int checked)
{
  Sema *s = c->s;
  for (int i = 0; i < c->reads.len; i++) {
    Access *r = &c->reads.data[i];
    int nonzero = 0;
    for (int d = 0; d < MAX_RANK; d++)
      nonzero |= r->off[d] != 0;
    if (nonzero) {
      for (int w = 0; w < c->writes.len; w++) {
        if (c->writes.data[w].field != r->field)
          continue;
        char off[64];
        int len = 0;
        for (int d = 0; d < r->field->grid->rank; d++)
          len += snprintf(off + len, sizeof off - (size_t)len, "%s%+d", d ? ", " : "", r->off[d]);
        const Inline *save = s->diag->inl;
        s->diag->inl = r->inl; /* a read in a func: where it was called from */
        diag_error(s->diag, r->span, "kernel '%s' reads field '%s' at offset [%s] but also writes it; "
                   "neighbours would see a mix of old and new values", k->name, r->field->name, off);
        s->diag->inl = save;
        diag_note(s->diag, c->writes.data[w].span, "'%s' is written here; write to a second field and "
                  "'swap' them in main", r->field->name);
        break;
      }
    }
    if (!checked)
      continue;
    for (int d = 0; d < r->field->grid->rank; d++) {
      int o = r->off[d];
      if (r->field->grid->periodic[d])
        continue; /* wraps around */
      if ((o < 0 && -o > margin_lo[d]) || (o > 0 && o > margin_hi[d])) {
        diag_error(s->diag, r->span, "offset %+d along dimension %d (%s) reaches outside grid '%s' "
                   "from the region of kernel '%s'", o, d, index_names[d], c->grid->name, k->name);
        diag_note(s->diag, region->span, "the region leaves %d point%s at this side; use interior(%s, %d) "
                  "or a smaller box", o < 0 ? margin_lo[d] : margin_hi[d],
                  (o < 0 ? margin_lo[d] : margin_hi[d]) == 1 ? "" : "s", c->grid->name, o < 0 ? -o : o);
        break;
      }
    }
  }
  /* Halo widths: the largest offset read on each side, per grid. */
  for (int i = 0; i < c->reads.len; i++) {
    Access *r = &c->reads.data[i];
    Sym *g = r->field->grid;
    for (int d = 0; d < g->rank; d++) {
      if (-r->off[d] > g->halo_lo[d])
        g->halo_lo[d] = -r->off[d];
      if (r->off[d] > g->halo_hi[d])
        g->halo_hi[d] = r->off[d];
    }
  }
}

/* Box bounds are computed once per call: they may use params, consts and
 * kernel parameters, not indices, locals or fields. */
static void check_invariant(Ctx *c, Node *e)
{
  if (!e)
    return;
  if ((e->kind == N_NAME || e->kind == N_INDEX) && e->sym &&
      (e->sym->kind == SYM_INDEX || e->sym->kind == SYM_FIELD || e->sym->kind == SYM_LOCAL)) {
    diag_error(c->s->diag, e->span, "a box bound is computed once per kernel call and cannot use %s '%s'",
               sym_what(e->sym), e->name);
    return;
  }
  check_invariant(c, e->a);
  check_invariant(c, e->b);
  check_invariant(c, e->c);
  for (int i = 0; i < e->list.len; i++)
    check_invariant(c, e->list.data[i]);
}

/* A margin as an int, when it is one a grid can have (|v| < 2^20); a
 * constant that does not fit (an int literal too large, reported by
 * itself, or a product that overflows) is left to the run-time check
 * (libFuzzer found the cast's undefined behaviour: tests/lit/diag/box-huge.stn). */
static int margin_of(double v, int *margin)
{
  if (!(fabs(v) < (double)(1 << 20)))
    return 0;
  *margin = (int)v;
  return 1;
}

/* For a box bound `e`: is it `c` (a constant) or `<the grid's size> - c`? */
static int box_margin(Ctx *c, Node *e, Node *dim, int upper, int *margin)
{
  double v;
  if (!upper)
    return const_eval(c, e, &v, NULL) && margin_of(v, margin);
  if (dim->kind == N_NAME && e->kind == N_NAME && streq(e->name, dim->name))
    return *margin = 0, 1;
  if (dim->kind == N_NAME && e->kind == N_BINARY && e->op == '-' && e->a->kind == N_NAME &&
      streq(e->a->name, dim->name) && const_eval(c, e->b, &v, NULL))
    return margin_of(v, margin);
  if (dim->kind != N_NAME) {
    double n;
    if (const_eval(c, dim, &n, NULL) && const_eval(c, e, &v, NULL))
      return margin_of(n - v, margin);
  }
  return 0;
}

static void check_kernel(Ctx *c, Node *kd)
{
  Sema *s = c->s;
  Sym *k = declare(c, SYM_KERNEL, kd->name, kd->name_span, TY_VOID, kd);
  k->kernel = kd;
  k->id = s->kernels.len;
  vec_push(&s->kernels, k);

  Node *region = kd->a;
  Sym *g = lookup(c, region->name);
  region->sym = g;
  int bad_grid = !g || g->kind != SYM_GRID;
  if (!g)
    diag_error(s->diag, region->name_span, "unknown grid '%s'", region->name);
  else if (bad_grid)
    diag_error(s->diag, region->name_span, "'%s' is a %s, not a grid", region->name, sym_what(g));
  c->where = IN_KERNEL;
  c->kernel = k;
  c->grid = bad_grid ? NULL : g;
  c->reads.len = c->writes.len = 0;
  push_scope(c);
  for (int d = 0; !bad_grid && d < g->rank; d++) {
    Sym *ix = declare(c, SYM_INDEX, index_names[d], region->name_span, TY_INT, NULL);
    ix->dim = d;
  }
  for (int i = 0; i < kd->list2.len; i++) {
    Node *p = kd->list2.data[i];
    if (p->ty == TY_BOOL)
      diag_error(s->diag, p->span, "kernel parameters must be int, float or double");
    Sym *ps = declare(c, SYM_KPARAM, p->name, p->name_span, p->ty, p);
    ps->id = i;
    p->sym = ps;
    vec_push(&k->kparams, ps);
  }
  for (int i = 0; i < kd->list.len; i++) {
    Node *r = kd->list.data[i];
    const char *op = r->a->name;
    RedOp ro = RED_SUM;
    if (streq(op, "+"))
      ro = RED_SUM;
    else if (streq(op, "max"))
      ro = RED_MAX;
    else if (streq(op, "min"))
      ro = RED_MIN;
    else
      diag_error(s->diag, r->a->span, "unknown reduction '%s'; use +, max or min", op);
    Type t = r->ty ? r->ty : TY_DOUBLE;
    if (t == TY_BOOL)
      diag_error(s->diag, r->span, "a reduction must be int, float or double");
    Sym *rs = declare(c, SYM_RED, r->name, r->name_span, t, r);
    rs->redop = ro;
    rs->id = i;
    r->sym = rs;
    r->ty = t;
    vec_push(&k->reds, rs);
  }

  if (bad_grid) {
    /* Parameters and reductions are known, so calls are checked; the body
     * is not (its fields and indices depend on the grid). */
    pop_scope(c);
    c->where = IN_GLOBAL;
    return;
  }
  /* The region: its bounds and how far reads may reach past them. */
  int margin_lo[MAX_RANK] = { 0 }, margin_hi[MAX_RANK] = { 0 };
  int checked = 1;
  Ctx hostc = *c;
  hostc.where = IN_GLOBAL;
  if (region->ival == REG_WHOLE) {
    checked = 0;  /* reads past the edge read the halo */
  } else if (region->ival == REG_INTERIOR) {
    int w = 1;
    if (region->a) {
      double v;
      if (check_expr(&hostc, region->a) != TY_INT || !const_eval(c, region->a, &v, NULL) || !(v >= 0 && v < 1 << 20))
        diag_error(s->diag, region->a->span, "the width of interior(...) must be a non-negative int constant");
      else
        w = (int)v;
    }
    region->ival = REG_INTERIOR;
    region->fval = w;
    for (int d = 0; d < MAX_RANK; d++)
      margin_lo[d] = margin_hi[d] = w;
  } else {
    if (region->list.len != g->rank) {
      diag_error(s->diag, region->span, "grid '%s' has %d dimension%s but the box gives %d range%s",
                 g->name, g->rank, g->rank == 1 ? "" : "s", region->list.len, region->list.len == 1 ? "" : "s");
      checked = 0;
    }
    for (int d = 0; d < region->list.len && d < g->rank; d++) {
      Node *rg = region->list.data[d];
      Type a = check_expr(&hostc, rg->a), b = check_expr(&hostc, rg->b);
      if ((a != TY_ERROR && a != TY_INT) || (b != TY_ERROR && b != TY_INT))
        diag_error(s->diag, rg->span, "box bounds must be ints");
      check_invariant(c, rg->a);
      check_invariant(c, rg->b);
      if (!box_margin(c, rg->a, g->dims[d], 0, &margin_lo[d]) ||
          !box_margin(c, rg->b, g->dims[d], 1, &margin_hi[d]))
        margin_lo[d] = margin_hi[d] = 1 << 20; /* unknown: checked at run time */
    }
  }

  check_block(c, kd->b);
  pop_scope(c);
  check_kernel_accesses(c, k, region, margin_lo, margin_hi, checked);
  c->where = IN_GLOBAL;
}

int sema_check(Sema *s, Arena *arena, Diag *diag, Program *prog, int need_main)
{
  memset(s, 0, sizeof *s);
  s->arena = arena;
  s->diag = diag;
  s->prog = prog;
  int before = diag->nerrors;
  Ctx c = { .s = s };
  push_scope(&c);
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
    Sym *b = declare(&c, SYM_BUILTIN, builtins[i].name, (Span){ 0, 0 }, TY_VOID, NULL);
    b->nargs = builtins[i].nargs;
  }
  c.globals = push_scope(&c);
  c.where = IN_GLOBAL;
  if (sema_inline(arena, diag, prog))
    return diag->nerrors - before;
  for (int i = 0; i < prog->decls.len; i++) {
    Node *d = prog->decls.data[i];
    switch (d->kind) {
    case N_PARAM: check_param(&c, d); break;
    case N_CONST: check_const(&c, d); break;
    case N_GRID: check_grid(&c, d); break;
    case N_FIELD: check_field(&c, d); break;
    case N_KERNEL: check_kernel(&c, d); break;
    case N_FUNC: break; /* inlined at its calls (sema/inline.c) */
    case N_MAIN:
      if (s->main) {
        diag_error(diag, d->span, "redefinition of 'main'");
        diag_note(diag, s->main->span, "previous definition of 'main' is here");
        break;
      }
      s->main = d;
      c.where = IN_HOST;
      push_scope(&c);
      check_block(&c, d->a);
      pop_scope(&c);
      c.where = IN_GLOBAL;
      break;
    default:
      ice("sema: unexpected declaration kind %d", d->kind);
    }
  }
  if (!s->main && need_main && diag->nerrors == before)
    diag_error(diag, (Span){ prog->src.len, prog->src.len },
               "the program has no 'main { ... }' block (only a library, --emit=lib, can do without)");
  for (int i = 0; i < c.all_scopes.len; i++)
    vec_free(&c.all_scopes.data[i]->syms);
  vec_free(&c.all_scopes);
  vec_free(&c.reads);
  vec_free(&c.writes);
  return diag->nerrors - before;
}

void sema_release(Sema *s)
{
  Vec(Sym *) *all[] = { (void *)&s->params, (void *)&s->consts, (void *)&s->grids, (void *)&s->fields,
                        (void *)&s->kernels, (void *)&s->vars };
  for (int i = 0; i < s->kernels.len; i++) {
    vec_free(&s->kernels.data[i]->kparams);
    vec_free(&s->kernels.data[i]->reds);
  }
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    vec_free(all[i]);
}
