/* lower.c: the checked AST to IR.
 *
 * Kernel bodies become one DAG per kernel. Locals are SSA values bound in
 * an environment; `if` is if-converted (both arms lowered under a
 * predicate, differing locals merged with SELECT). A field written at the
 * current point and read again later in the body yields the value just
 * written; all other reads are loads of the value before the kernel. */
#include "ir/ir.h"
#include "front/parse.h"
#include "parser.tab.h"
#include <math.h>
#include <float.h>
#include <limits.h>
#include <string.h>

typedef struct Binding { Sym *sym; int val; } Binding;

enum { WRITTEN_ALWAYS = -2, UNWRITTEN = -1 };

typedef struct Lower {
  Sema *s;
  IrProgram *p;
  IrNodes *pool;           /* where new nodes go: a kernel's DAG or the host pool */
  IrKernel *k;             /* NULL in main */
  Span at;                 /* span given to new nodes */
  Vec(Binding) env;
  int *fcur, *fwp;         /* per field: current value, written-predicate */
  Vec(int) forder;         /* fields in order of first write */
  int *rval;               /* per reduction: combined contribution or -1 */
  int pred;                /* current predicate, -1: always */
  int *table_of;           /* const sym id -> table index */
  int *var_of;             /* sema var id -> IR var */
} Lower;

static int mk(Lower *L, Op op, Type ty, int a, int b, int c)
{
  IrNode n = { .op = op, .ty = ty, .arg = { a, b, c }, .span = L->at, .level = -1 };
  return ir_add(L->pool, n);
}

static Type concrete(Type t) { return t == TY_LITFLOAT ? TY_DOUBLE : t; }

static int convert(Lower *L, int id, Type to)
{
  to = concrete(to);
  IrNode *n = &L->pool->data[id];
  if (n->ty == to)
    return id;
  if (n->op == OP_CONST)
    return ir_const(L->pool, to, n->f);
  if (to == TY_BOOL) /* C's (bool)x: x != 0, not a truncation */
    return mk(L, OP_NE, TY_BOOL, id, ir_const(L->pool, n->ty, 0), -1);
  return mk(L, OP_CAST, to, id, -1, -1);
}

static int lower_expr(Lower *L, Node *n);

static int field_value(Lower *L, Sym *f)
{
  int id = f->id;
  if (L->fcur && L->fwp[id] == WRITTEN_ALWAYS)
    return L->fcur[id];
  IrNode ld = { .op = OP_LOAD, .ty = f->ty, .ref = id, .span = L->at, .level = -1 };
  int load = ir_add(L->pool, ld);
  if (L->fcur && L->fwp[id] != UNWRITTEN)
    return mk(L, OP_SELECT, f->ty, L->fwp[id], L->fcur[id], load);
  return load;
}

static int binding_of(Lower *L, Sym *sym)
{
  for (int i = L->env.len - 1; i >= 0; i--)
    if (L->env.data[i].sym == sym)
      return i;
  return -1;
}

static int lower_name(Lower *L, Node *n)
{
  Sym *sym = n->sym;
  switch (sym->kind) {
  case SYM_PARAM: {
    IrNode q = { .op = OP_PARAM, .ty = sym->ty, .ref = sym->id, .span = L->at, .level = -1 };
    return ir_add(L->pool, q);
  }
  case SYM_CONST: {
    int id = ir_const(L->pool, sym->ty, sym->vals[0]);
    L->pool->data[id].name = sym->name;
    return id;
  }
  case SYM_KPARAM: {
    IrNode q = { .op = OP_ARG, .ty = sym->ty, .ref = sym->id, .span = L->at, .level = -1 };
    return ir_add(L->pool, q);
  }
  case SYM_INDEX: {
    IrNode q = { .op = OP_INDEX, .ty = TY_INT, .ref = sym->dim, .span = L->at, .level = -1 };
    return ir_add(L->pool, q);
  }
  case SYM_LOCAL: {
    int b = binding_of(L, sym);
    if (b < 0)
      ice("local '%s' has no value", sym->name);
    return L->env.data[b].val;
  }
  case SYM_FIELD:
    return field_value(L, sym);
  case SYM_LOOP:
    if (sym->unrolled)
      return ir_const(L->pool, TY_INT, (double)sym->uval);
    /* fall through */
  case SYM_VAR: {
    IrNode q = { .op = OP_VAR, .ty = sym->ty, .ref = L->var_of[sym->id], .span = L->at, .level = -1 };
    return ir_add(L->pool, q);
  }
  default:
    ice("lower_name: %s has unexpected kind %d", sym->name, sym->kind);
  }
}

/* A compile-time int that sema checked; unrolled loop variables have
 * their current iteration's value. */
static int const_int(Node *e)
{
  double v;
  if (!sema_eval(e, &v))
    ice("'%s' (bytes %d..%d) should be a compile-time constant", e->name ? e->name : "an expression",
        e->span.lo, e->span.hi);
  return (int)v;
}

/* The field an access names: itself, or f[q]'s component for the
 * current iteration of the unrolled loops around it. */
static Sym *field_of(Node *n)
{
  Sym *f = n->sym;
  if (f->ncomp && n->kind == N_INDEX)
    return f->comp[const_int(n->list2.data[0])];
  return f;
}

static int lower_index(Lower *L, Node *n)
{
  Sym *sym = n->sym;
  if (sym->kind == SYM_CONST) {
    int ix = lower_expr(L, n->list.data[0]);
    double v;
    if (ir_is_const(L->pool, ix, &v))
      return ir_const(L->pool, sym->ty, sym->vals[(int)v]);
    IrNode t = { .op = OP_TABLE, .ty = sym->ty, .ref = L->table_of[sym->id], .arg = { ix, -1, -1 },
                 .span = L->at, .level = -1 };
    return ir_add(L->pool, t);
  }
  int zero = 1;
  sym = field_of(n);
  IrNode ld = { .op = OP_LOAD, .ty = sym->ty, .ref = sym->id, .span = L->at, .level = -1 };
  for (int d = 0; d < n->list.len; d++) {
    ld.off[d] = const_int(n->list.data[d]);
    zero &= ld.off[d] == 0;
  }
  if (zero)
    return field_value(L, sym);
  return ir_add(L->pool, ld);
}

static Op binop_of(int tok)
{
  switch (tok) {
  case '+': return OP_ADD;
  case '-': return OP_SUB;
  case '*': return OP_MUL;
  case '/': return OP_DIV;
  case '%': return OP_MOD;
  case '<': return OP_LT;
  case '>': return OP_GT;
  case LE: return OP_LE;
  case GE: return OP_GE;
  case EQ: return OP_EQ;
  case NE: return OP_NE;
  case ANDAND: return OP_AND;
  case OROR: return OP_OR;
  }
  ice("binop_of: token %d", tok);
}

/* Integer division in a predicated arm must not trap when the arm is not
 * taken: divide by 1 there instead. */
static int arith(Lower *L, Op op, Type ty, int a, int b)
{
  if ((op == OP_DIV || op == OP_MOD) && ty == TY_INT && L->pred >= 0)
    b = mk(L, OP_SELECT, TY_INT, L->pred, b, ir_const(L->pool, TY_INT, 1));
  return mk(L, op, ty, a, b, -1);
}

static int lower_call(Lower *L, Node *n)
{
  static const struct { const char *name; Op op; } fns[] = {
    { "sqrt", OP_SQRT }, { "exp", OP_EXP }, { "log", OP_LOG }, { "fabs", OP_FABS },
    { "sin", OP_SIN }, { "cos", OP_COS }, { "tan", OP_TAN }, { "tanh", OP_TANH },
    { "floor", OP_FLOOR }, { "ceil", OP_CEIL }, { "pow", OP_POW }, { "fmin", OP_FMIN },
    { "fmax", OP_FMAX },
  };
  Type ty = concrete(n->ty);
  int args[2] = { -1, -1 };
  for (int i = 0; i < n->list.len; i++)
    args[i] = convert(L, lower_expr(L, n->list.data[i]), ty);
  Op op = OP__COUNT;
  if (streq(n->name, "abs"))
    op = ty == TY_INT ? OP_IABS : OP_FABS;
  else if (streq(n->name, "min"))
    op = ty == TY_INT ? OP_IMIN : OP_FMIN;
  else if (streq(n->name, "max"))
    op = ty == TY_INT ? OP_IMAX : OP_FMAX;
  for (size_t i = 0; op == OP__COUNT && i < sizeof fns / sizeof fns[0]; i++)
    if (streq(n->name, fns[i].name))
      op = fns[i].op;
  if (op == OP__COUNT)
    ice("lower_call: unknown builtin '%s'", n->name);
  return mk(L, op, ty, args[0], args[1], -1);
}

static int lower_expr(Lower *L, Node *n)
{
  Span saved = L->at;
  L->at = n->span;
  int r;
  switch (n->kind) {
  case N_INT: r = ir_const(L->pool, TY_INT, (double)n->ival); break;
  case N_FLOAT: r = ir_const(L->pool, concrete(n->ty), n->fval); break;
  case N_NAME: r = lower_name(L, n); break;
  case N_INDEX: r = lower_index(L, n); break;
  case N_CALL: r = lower_call(L, n); break;
  case N_CAST: r = convert(L, lower_expr(L, n->a), n->ty); break;
  case N_UNARY: {
    int a = lower_expr(L, n->a);
    r = n->op == '!' ? mk(L, OP_NOT, TY_BOOL, a, -1, -1) : mk(L, OP_NEG, concrete(n->ty), a, -1, -1);
    break;
  }
  case N_BINARY: {
    Op op = binop_of(n->op);
    int a = lower_expr(L, n->a), b = lower_expr(L, n->b);
    if (op == OP_AND || op == OP_OR) {
      r = mk(L, op, TY_BOOL, a, b, -1);
      break;
    }
    Type t = concrete(sema_arith_type(n->a->ty, n->b->ty));
    a = convert(L, a, t);
    b = convert(L, b, t);
    r = op_info[op].flags & F_CMP ? mk(L, op, TY_BOOL, a, b, -1) : arith(L, op, t, a, b);
    break;
  }
  case N_COND: {
    /* Both arms are computed; each under its own predicate, so that an
     * integer division in the arm not taken cannot trap. */
    int c = lower_expr(L, n->a);
    Type t = concrete(n->ty);
    int saved = L->pred;
    L->pred = saved < 0 ? c : mk(L, OP_AND, TY_BOOL, saved, c, -1);
    int a = convert(L, lower_expr(L, n->b), t);
    int notc = mk(L, OP_NOT, TY_BOOL, c, -1, -1);
    L->pred = saved < 0 ? notc : mk(L, OP_AND, TY_BOOL, saved, notc, -1);
    int b = convert(L, lower_expr(L, n->c), t);
    L->pred = saved;
    r = mk(L, OP_SELECT, t, c, a, b);
    break;
  }
  default:
    ice("lower_expr: unexpected node kind %d", n->kind);
  }
  L->at = saved;
  return r;
}

/* ---- kernels ----------------------------------------------------------- */

static void lower_kstmt(Lower *L, Node *n);

static void lower_kblock(Lower *L, Node *b)
{
  int mark = L->env.len;
  for (int i = 0; i < b->list.len; i++)
    lower_kstmt(L, b->list.data[i]);
  L->env.len = mark;
}

static int and_pred(Lower *L, int p, int c) { return p < 0 ? c : mk(L, OP_AND, TY_BOOL, p, c, -1); }

static void name_value(Lower *L, int id, const char *name)
{
  IrNode *n = &L->pool->data[id];
  if (!n->name && (op_info[n->op].form != LEAF || n->op == OP_LOAD))
    n->name = name;
}

static void store_field(Lower *L, Sym *f, int v)
{
  int id = f->id;
  if (L->fwp[id] == UNWRITTEN)
    vec_push(&L->forder, id);
  if (L->pred < 0) {
    L->fcur[id] = v;
    L->fwp[id] = WRITTEN_ALWAYS;
  } else if (L->fwp[id] == UNWRITTEN) {
    L->fcur[id] = v;
    L->fwp[id] = L->pred;
  } else {
    L->fcur[id] = mk(L, OP_SELECT, f->ty, L->pred, v, L->fcur[id]);
    if (L->fwp[id] != WRITTEN_ALWAYS)
      L->fwp[id] = mk(L, OP_OR, TY_BOOL, L->fwp[id], L->pred, -1);
  }
}

static double red_identity(RedOp op, Type ty)
{
  if (op == RED_SUM)
    return 0;
  if (ty == TY_INT)
    return op == RED_MAX ? INT_MIN : INT_MAX;
  return op == RED_MAX ? -INFINITY : INFINITY;
}

static void reduce_into(Lower *L, Sym *r, Node *contribution)
{
  Type ty = r->ty;
  int v = convert(L, lower_expr(L, contribution), ty);
  if (L->pred >= 0)
    v = mk(L, OP_SELECT, ty, L->pred, v, ir_const(L->pool, ty, red_identity(r->redop, ty)));
  int prev = L->rval[r->id];
  if (prev < 0) {
    L->rval[r->id] = v;
    return;
  }
  Op op = r->redop == RED_SUM ? OP_ADD : r->redop == RED_MAX ? (ty == TY_INT ? OP_IMAX : OP_FMAX)
                                                             : (ty == TY_INT ? OP_IMIN : OP_FMIN);
  L->rval[r->id] = mk(L, op, ty, prev, v, -1);
}

static void lower_kassign(Lower *L, Node *n)
{
  Node *lhs = n->list2.data[0];
  Sym *sym = lhs->sym->kind == SYM_FIELD ? field_of(lhs) : lhs->sym;
  if (sym->kind == SYM_RED) {
    Node *e = n->a;
    if (sym->redop != RED_SUM) {
      Node *x = e->list.data[0], *y = e->list.data[1];
      e = x->sym == sym ? y : x;
    }
    reduce_into(L, sym, e);
    return;
  }
  int v = lower_expr(L, n->a);
  if (n->op != '=') {
    int cur = sym->kind == SYM_FIELD ? field_value(L, sym) : L->env.data[binding_of(L, sym)].val;
    Type t = concrete(sema_arith_type(sym->ty, n->a->ty));
    v = arith(L, binop_of(n->op), t, convert(L, cur, t), convert(L, v, t));
  }
  v = convert(L, v, sym->ty);
  if (sym->kind == SYM_FIELD) {
    store_field(L, sym, v);
    return;
  }
  int b = binding_of(L, sym);
  if (L->pred >= 0)
    v = mk(L, OP_SELECT, sym->ty, L->pred, v, L->env.data[b].val);
  name_value(L, v, sym->name);
  L->env.data[b].val = v;
}

static void lower_kif(Lower *L, Node *n)
{
  int c = lower_expr(L, n->a);
  int mark = L->env.len;
  int *before = xrealloc(NULL, sizeof(int) * (size_t)(mark + 1));
  int *then_vals = xrealloc(NULL, sizeof(int) * (size_t)(mark + 1));
  for (int i = 0; i < mark; i++)
    before[i] = L->env.data[i].val;
  int saved = L->pred;

  L->pred = and_pred(L, saved, c);
  lower_kstmt(L, n->b);
  L->env.len = mark;
  for (int i = 0; i < mark; i++) {
    then_vals[i] = L->env.data[i].val;
    L->env.data[i].val = before[i];
  }
  if (n->c) {
    L->pred = and_pred(L, saved, mk(L, OP_NOT, TY_BOOL, c, -1, -1));
    lower_kstmt(L, n->c);
    L->env.len = mark;
  }
  L->pred = saved;
  /* Assignments under a predicate already select against the old value;
   * a local set in both arms selects between the arms. */
  for (int i = 0; i < mark; i++) {
    int e = L->env.data[i].val;
    if (then_vals[i] != before[i] && e != before[i]) {
      Sym *sym = L->env.data[i].sym;
      /* Undo the nested selects' fallbacks by choosing on c directly. */
      L->env.data[i].val = mk(L, OP_SELECT, sym->ty, c, then_vals[i], e);
      name_value(L, L->env.data[i].val, sym->name);
    } else if (then_vals[i] != before[i]) {
      L->env.data[i].val = then_vals[i];
    }
  }
  free(before);
  free(then_vals);
}

static void lower_kstmt(Lower *L, Node *n)
{
  L->at = n->span;
  switch (n->kind) {
  case N_BLOCK:
    lower_kblock(L, n);
    return;
  case N_DECL:
    for (int i = 0; i < n->list.len; i++) {
      Node *it = n->list.data[i];
      int v = convert(L, lower_expr(L, it->a), n->ty);
      name_value(L, v, it->name);
      Binding b = { it->sym, v };
      vec_push(&L->env, b);
    }
    return;
  case N_ASSIGN:
    lower_kassign(L, n);
    return;
  case N_IF:
    lower_kif(L, n);
    return;
  case N_FOR: {
    /* Unrolled: the body once per iteration, the variable a constant. */
    Sym *v = n->sym;
    double lo, hi;
    if (!sema_eval(n->a, &lo) || !sema_eval(n->b, &hi))
      ice("kernel loop bounds should be constant");
    for (long q = (long)lo; q < (long)hi; q++) {
      v->uval = q;
      lower_kstmt(L, n->c);
    }
    return;
  }
  default:
    ice("lower_kstmt: unexpected node kind %d", n->kind);
  }
}

static IrKernel *lower_kernel(Lower *L, Sym *ks)
{
  Node *kd = ks->kernel;
  Node *region = kd->a;
  Sym *g = region->sym;
  IrKernel *k = arena_alloc(L->p->arena, sizeof *k);
  k->name = ks->name;
  k->span = kd->name_span;
  k->grid = g->id;
  k->rank = g->rank;
  k->region = (RegionKind)region->ival;
  k->width = (int)region->fval;
  for (int i = 0; i < ks->kparams.len; i++) {
    IrArg a = { ks->kparams.data[i]->name, ks->kparams.data[i]->ty };
    vec_push(&k->args, a);
  }
  for (int i = 0; i < ks->reds.len; i++) {
    IrRed r = { ks->reds.data[i]->name, ks->reds.data[i]->redop, ks->reds.data[i]->ty };
    vec_push(&k->reds, r);
  }
  L->k = k;
  L->pool = &k->nodes;
  L->pred = -1;
  L->env.len = 0;
  L->forder.len = 0;
  int nf = L->s->fields.len;
  for (int i = 0; i < nf; i++) {
    L->fcur[i] = -1;
    L->fwp[i] = UNWRITTEN;
  }
  L->rval = xrealloc(NULL, sizeof(int) * (size_t)(ks->reds.len + 1));
  for (int i = 0; i < ks->reds.len; i++)
    L->rval[i] = -1;

  L->at = region->span;
  for (int d = 0; d < k->rank; d++) {
    IrNode ext = { .op = OP_EXTENT, .ty = TY_INT, .ref = g->id, .imm = d, .span = L->at, .level = -1 };
    if (k->region == REG_WHOLE) {
      k->lo[d] = ir_const(L->pool, TY_INT, 0);
      k->hi[d] = ir_add(L->pool, ext);
    } else if (k->region == REG_INTERIOR) {
      k->lo[d] = ir_const(L->pool, TY_INT, k->width);
      k->hi[d] = mk(L, OP_SUB, TY_INT, ir_add(L->pool, ext), ir_const(L->pool, TY_INT, k->width), -1);
    } else {
      Node *rg = region->list.data[d];
      k->lo[d] = lower_expr(L, rg->a);
      k->hi[d] = lower_expr(L, rg->b);
    }
  }

  lower_kblock(L, kd->b);

  for (int i = 0; i < L->forder.len; i++) {
    int f = L->forder.data[i];
    IrEffect e = { EFF_STORE, f, L->fcur[f], L->fwp[f] == WRITTEN_ALWAYS ? -1 : L->fwp[f], kd->span };
    vec_push(&k->effects, e);
  }
  for (int i = 0; i < ks->reds.len; i++) {
    if (L->rval[i] < 0)
      continue;
    IrEffect e = { EFF_REDUCE, i, L->rval[i], -1, kd->span };
    vec_push(&k->effects, e);
  }
  free(L->rval);
  L->rval = NULL;
  L->k = NULL;
  return k;
}

/* ---- main -------------------------------------------------------------- */

static void lower_hblock(Lower *L, Node *b, IrBlock *out);

static IrStmt *hstmt(Lower *L, HostKind kind, Span at)
{
  IrStmt *s = arena_alloc(L->p->arena, sizeof *s);
  s->kind = kind;
  s->span = at;
  return s;
}

static int host_expr(Lower *L, Node *n, Type to)
{
  int v = lower_expr(L, n);
  return to ? convert(L, v, to) : v;
}

static IrStmt *host_call(Lower *L, Node *call, Span at)
{
  Sym *k = call->sym;
  IrStmt *s = hstmt(L, H_CALL, at);
  s->kernel = k->id;
  for (int i = 0; i < call->list.len; i++)
    vec_push(&s->args, host_expr(L, call->list.data[i], k->kparams.data[i]->ty));
  return s;
}

static void lower_hstmt(Lower *L, Node *n, IrBlock *out)
{
  L->at = n->span;
  IrStmt *s = NULL;
  switch (n->kind) {
  case N_BLOCK:
    lower_hblock(L, n, out);
    return;
  case N_DECL:
    for (int i = 0; i < n->list.len; i++) {
      Node *it = n->list.data[i];
      int var = L->var_of[it->sym->id];
      if (!it->a) {
        /* A declaration without a value gives 0 each time it runs. */
        s = hstmt(L, H_ASSIGN, n->span);
        s->var = var;
        s->expr = ir_const(L->pool, n->ty, 0);
        vec_push(out, s);
        continue;
      }
      if (it->a->kind == N_CALL && it->a->sym->kind == SYM_KERNEL) {
        s = host_call(L, it->a, n->span);
        vec_push(&s->results, var);
      } else {
        s = hstmt(L, H_ASSIGN, n->span);
        s->var = var;
        s->expr = host_expr(L, it->a, n->ty);
      }
      vec_push(out, s);
    }
    return;
  case N_ASSIGN:
    if (n->a->kind == N_CALL && n->a->sym->kind == SYM_KERNEL) {
      s = host_call(L, n->a, n->span);
      for (int i = 0; i < n->list2.len; i++)
        vec_push(&s->results, L->var_of[n->list2.data[i]->sym->id]);
    } else {
      Sym *v = n->list2.data[0]->sym;
      s = hstmt(L, H_ASSIGN, n->span);
      s->var = L->var_of[v->id];
      int val = lower_expr(L, n->a);
      if (n->op != '=') {
        Type t = concrete(sema_arith_type(v->ty, n->a->ty));
        IrNode q = { .op = OP_VAR, .ty = v->ty, .ref = s->var, .span = n->span, .level = -1 };
        val = mk(L, binop_of(n->op), t, convert(L, ir_add(L->pool, q), t), convert(L, val, t), -1);
      }
      s->expr = convert(L, val, v->ty);
    }
    break;
  case N_EXPRSTMT:
    s = host_call(L, n->a, n->span);
    for (int i = 0; i < n->a->sym->reds.len; i++)
      vec_push(&s->results, -1);
    break;
  case N_IF:
    s = hstmt(L, H_IF, n->span);
    s->expr = host_expr(L, n->a, 0);
    lower_hstmt(L, n->b, &s->body);
    if (n->c)
      lower_hstmt(L, n->c, &s->els);
    break;
  case N_FOR:
    s = hstmt(L, H_FOR, n->span);
    s->var = L->var_of[n->sym->id];
    s->expr = host_expr(L, n->a, TY_INT);
    s->expr2 = host_expr(L, n->b, TY_INT);
    lower_hstmt(L, n->c, &s->body);
    break;
  case N_WHILE:
    s = hstmt(L, H_WHILE, n->span);
    s->expr = host_expr(L, n->a, 0);
    lower_hstmt(L, n->b, &s->body);
    break;
  case N_BREAK:
    s = hstmt(L, H_BREAK, n->span);
    break;
  case N_SWAP:
    if (n->a->sym->ncomp) {
      /* Multi-component fields swap component by component. */
      for (int q = 0; q < n->a->sym->ncomp; q++) {
        s = hstmt(L, H_SWAP, n->span);
        s->field = n->a->sym->comp[q]->id;
        s->field2 = n->b->sym->comp[q]->id;
        if (q + 1 < n->a->sym->ncomp)
          vec_push(out, s);
      }
      break;
    }
    s = hstmt(L, H_SWAP, n->span);
    s->field = n->a->sym->id;
    s->field2 = n->b->sym->id;
    break;
  case N_PRINT:
    s = hstmt(L, H_PRINT, n->span);
    for (int i = 0; i < n->list.len; i++) {
      Node *it = n->list.data[i];
      IrPrintItem item = { NULL, -1 };
      if (it->kind == N_STRING)
        item.str = it->name;
      else
        item.expr = host_expr(L, it, 0);
      vec_push(&s->items, item);
    }
    break;
  case N_TIMER:
    s = hstmt(L, H_TIMER, n->span);
    s->var = L->var_of[n->sym->id];
    lower_hstmt(L, n->a, &s->body);
    break;
  case N_WRITE:
    s = hstmt(L, H_WRITE, n->span);
    s->field = field_of(n->a)->id;
    s->path = n->name;
    s->expr = s->expr2 = s->expr3 = -1;
    for (int i = 0; i < n->list2.len; i++) /* a numbered file's values */
      vec_push(&s->args, host_expr(L, n->list2.data[i], 0));
    for (int i = 0; i < n->list.len; i++) {
      Node *o = n->list.data[i];
      if (streq(o->name, "scale")) {
        s->expr = host_expr(L, o->list.data[0], TY_DOUBLE);
        s->expr2 = host_expr(L, o->list.data[1], TY_DOUBLE);
      } else if (streq(o->name, "time")) {
        s->expr3 = host_expr(L, o->list.data[0], TY_DOUBLE);
      } else {
        s->colormap = o->list.data[0]->name;
      }
    }
    break;
  case N_READ: {
    s = hstmt(L, H_READ, n->span);
    Sym *f = n->a->sym;
    if (f->ncomp && n->a->kind != N_INDEX) { /* every component */
      for (int q = 0; q < f->ncomp; q++)
        vec_push(&s->comps, f->comp[q]->id);
      s->field = s->comps.data[0];
    } else {
      s->field = field_of(n->a)->id;
    }
    s->path = n->name;
    s->expr = s->expr2 = s->expr3 = -1;
    for (int i = 0; i < n->list.len; i++) {
      Node *o = n->list.data[i];
      if (streq(o->name, "scale")) {
        s->expr = host_expr(L, o->list.data[0], TY_DOUBLE);
        s->expr2 = host_expr(L, o->list.data[1], TY_DOUBLE);
      } else if (streq(o->name, "threshold")) {
        s->expr3 = host_expr(L, o->list.data[0], TY_DOUBLE);
      } else {
        s->allow_nonfinite = 1;
      }
    }
    break;
  }
  default:
    ice("lower_hstmt: unexpected node kind %d", n->kind);
  }
  vec_push(out, s);
}

static void lower_hblock(Lower *L, Node *b, IrBlock *out)
{
  for (int i = 0; i < b->list.len; i++)
    lower_hstmt(L, b->list.data[i], out);
}

IrProgram *ir_lower(Sema *s, Arena *arena, const Source *src)
{
  IrProgram *p = arena_alloc(arena, sizeof *p);
  p->arena = arena;
  p->src = src;
  const char *base = strrchr(src->name, '/');
  base = base ? base + 1 : src->name;
  size_t len = strlen(base);
  if (len > 4 && streq(base + len - 4, ".stn"))
    len -= 4;
  p->name = arena_strndup(arena, base, len);

  Lower L = { .s = s, .p = p, .pool = &p->host, .pred = -1 };
  L.table_of = xrealloc(NULL, sizeof(int) * (size_t)(s->consts.len + 1));
  L.var_of = xrealloc(NULL, sizeof(int) * (size_t)(s->vars.len + 1));
  L.fcur = xrealloc(NULL, sizeof(int) * (size_t)(s->fields.len + 1));
  L.fwp = xrealloc(NULL, sizeof(int) * (size_t)(s->fields.len + 1));

  for (int i = 0; i < s->params.len; i++) {
    Sym *q = s->params.data[i];
    IrParam ip = { q->name, q->ty, q->vals ? q->vals[0] : 0, q->span, q->has_lo, q->has_hi, q->lo, q->hi };
    vec_push(&p->params, ip);
  }
  for (int i = 0; i < s->consts.len; i++) {
    Sym *c = s->consts.data[i];
    L.table_of[i] = -1;
    if (!c->is_array)
      continue;
    IrTable t = { c->name, c->ty, c->len, c->vals, c->span };
    L.table_of[i] = p->tables.len;
    vec_push(&p->tables, t);
  }
  for (int i = 0; i < s->vars.len; i++) {
    Sym *v = s->vars.data[i];
    /* Variables of different blocks may share a name; C needs one each. */
    const char *name = v->name;
    for (int j = 0, n = 2; j < p->vars.len; j++)
      if (streq(p->vars.data[j].name, name)) {
        name = arena_printf(arena, "%s__%d", v->name, n++);
        j = -1;
      }
    IrVar iv = { name, v->ty, v->span };
    L.var_of[i] = p->vars.len;
    vec_push(&p->vars, iv);
  }
  for (int i = 0; i < s->grids.len; i++) {
    Sym *g = s->grids.data[i];
    IrGrid ig = { .name = g->name, .rank = g->rank, .span = g->span };
    for (int d = 0; d < g->rank; d++) {
      ig.dims[d] = host_expr(&L, g->dims[d], TY_INT);
      ig.halo_lo[d] = g->halo_lo[d];
      ig.halo_hi[d] = g->halo_hi[d];
      ig.periodic[d] = g->periodic[d];
    }
    vec_push(&p->grids, ig);
  }
  for (int i = 0; i < s->fields.len; i++) {
    Sym *f = s->fields.data[i];
    IrField fl = { f->cident, f->ty, f->grid->id, f->span, f->name, -1, -1 };
    if (f->boundary)
      fl.boundary = host_expr(&L, f->boundary, f->ty);
    vec_push(&p->fields, fl);
  }
  for (int i = 0; i < s->kernels.len; i++)
    vec_push(&p->kernels, lower_kernel(&L, s->kernels.data[i]));
  L.pool = &p->host;
  if (s->main)
    lower_hblock(&L, s->main->a, &p->main);
  p->has_main = s->main != NULL;

  free(L.table_of);
  free(L.var_of);
  free(L.fcur);
  free(L.fwp);
  vec_free(&L.env);
  vec_free(&L.forder);
  return p;
}
