/* fold.c: constant folding and algebraic simplification.
 *
 * Exact: x*1, x/1, x-0, x*-1 (a negation), x+-y (x-y), casts of constants, selects on
 * constant conditions, and x*0, x+0 for ints.
 *
 * Zeros (floats, -fno-fold-zeros keeps them): x*0 becomes 0, x+0 and 0+x
 * become x, 0-x becomes -x. After unrolling, tables of lattice
 * velocities and weights multiply by many zeros (D2Q9's cx[q] * f);
 * C may not drop them, since they differ when x is infinite or NaN and
 * in the sign of a zero result, so the language does it. */
#include "passes/passes.h"
#include <math.h>

/* Float math folds with the float functions the generated code calls. */
static double eval_float_fn(Op op, const double *v)
{
  float a = (float)v[0], b = (float)v[1];
  switch (op) {
  case OP_SQRT: return sqrtf(a);
  case OP_EXP: return expf(a);
  case OP_LOG: return logf(a);
  case OP_SIN: return sinf(a);
  case OP_COS: return cosf(a);
  case OP_TAN: return tanf(a);
  case OP_TANH: return tanhf(a);
  case OP_POW: return powf(a, b);
  default: return NAN;
  }
}

static double eval(const IrNode *n, const double *v)
{
  int ints = n->ty == TY_INT;
  if (n->ty == TY_FLOAT && op_info[n->op].form == FUNC && !isnan(eval_float_fn(n->op, v)))
    return eval_float_fn(n->op, v);
  switch (n->op) {
  case OP_NEG: return -v[0];
  case OP_NOT: return !v[0];
  case OP_CAST: return v[0];
  case OP_ADD: return v[0] + v[1];
  case OP_SUB: return v[0] - v[1];
  case OP_MUL: return v[0] * v[1];
  case OP_DIV: return ints ? trunc(v[0] / v[1]) : v[0] / v[1];
  case OP_MOD: return fmod(v[0], v[1]);
  case OP_LT: return v[0] < v[1];
  case OP_LE: return v[0] <= v[1];
  case OP_GT: return v[0] > v[1];
  case OP_GE: return v[0] >= v[1];
  case OP_EQ: return v[0] == v[1];
  case OP_NE: return v[0] != v[1];
  case OP_AND: return v[0] && v[1];
  case OP_OR: return v[0] || v[1];
  case OP_SELECT: return v[0] ? v[1] : v[2];
  case OP_SQRT: return sqrt(v[0]);
  case OP_EXP: return exp(v[0]);
  case OP_LOG: return log(v[0]);
  case OP_FABS: return fabs(v[0]);
  case OP_SIN: return sin(v[0]);
  case OP_COS: return cos(v[0]);
  case OP_TAN: return tan(v[0]);
  case OP_TANH: return tanh(v[0]);
  case OP_FLOOR: return floor(v[0]);
  case OP_CEIL: return ceil(v[0]);
  case OP_POW: return pow(v[0], v[1]);
  case OP_FMIN: case OP_IMIN: return fmin(v[0], v[1]);
  case OP_FMAX: case OP_IMAX: return fmax(v[0], v[1]);
  case OP_IABS: return fabs(v[0]);
  default: ice("fold: cannot evaluate %s", op_info[n->op].name);
  }
}

/* Float arithmetic must round like the target: evaluate float ops on
 * floats so that folding never changes a result. */
static double round_as(Type t, double x)
{
  return t == TY_FLOAT ? (double)(float)x : t == TY_INT ? trunc(x) : t == TY_BOOL ? (x != 0) : x;
}

int pass_const_value(const IrNodes *nd, int id, double *v)
{
  const IrNode *n = &nd->data[id];
  const OpInfo *oi = &op_info[n->op];
  if (ir_is_const(nd, id, v))
    return 1;
  if (oi->form == LEAF || n->op == OP_TABLE)
    return 0;
  double a[3];
  for (int k = 0; k < oi->nargs; k++)
    if (!pass_const_value(nd, n->arg[k], &a[k]))
      return 0;
  if ((n->op == OP_DIV || n->op == OP_MOD) && n->ty == TY_INT && a[1] == 0)
    return 0;
  *v = round_as(n->ty, eval(n, a));
  return 1;
}

/* Rewrites node id, which computes x * -1 or 0 - x, in place into -x:
 * appending would break the topological order. */
static int negate(IrKernel *k, int id, int x)
{
  IrNode *n = &k->nodes.data[id];
  n->op = OP_NEG;
  n->arg[0] = x;
  n->arg[1] = n->arg[2] = -1;
  return id;
}

/* Rewrites node id, an addition, in place into x - y. */
static int subtract(IrKernel *k, int id, int x, int y)
{
  IrNode *n = &k->nodes.data[id];
  n->op = OP_SUB;
  n->arg[0] = x;
  n->arg[1] = y;
  return id;
}

/* fold_zeros: floating x*0, x+0, 0-x too (not -fno-fold-zeros). */
static int fold_node(IrKernel *k, int id, int fold_zeros)
{
  IrNode *n = &k->nodes.data[id];
  const OpInfo *oi = &op_info[n->op];
  if (oi->form == LEAF || n->op == OP_TABLE)
    return id;
  double v[3];
  int all = 1;
  for (int a = 0; a < oi->nargs; a++)
    all &= ir_is_const(&k->nodes, n->arg[a], &v[a]);
  int ints = n->ty == TY_INT;
  if (all) {
    if ((n->op == OP_DIV || n->op == OP_MOD) && ints && v[1] == 0)
      return id;  /* leave the run-time trap where the user wrote it */
    /* Rewrite in place: appending would break the topological order. A
     * named CONST prints as a declared const, so the local's name goes. */
    n->f = round_as(n->ty, eval(n, v));
    n->op = OP_CONST;
    n->name = NULL;
    n->arg[0] = n->arg[1] = n->arg[2] = -1;
    return id;
  }
  double c;
  int a0 = n->arg[0], a1 = n->arg[1];
  int zeros = ints || (fold_zeros && (n->ty == TY_FLOAT || n->ty == TY_DOUBLE));
  switch (n->op) {
  case OP_MUL:
    if (ir_is_const(&k->nodes, a1, &c) && c == 1) return a0;
    if (ir_is_const(&k->nodes, a0, &c) && c == 1) return a1;
    if (zeros && ir_is_const(&k->nodes, a1, &c) && c == 0) return a1;
    if (zeros && ir_is_const(&k->nodes, a0, &c) && c == 0) return a0;
    if (!ints && ir_is_const(&k->nodes, a1, &c) && c == -1) return negate(k, id, a0);
    if (!ints && ir_is_const(&k->nodes, a0, &c) && c == -1) return negate(k, id, a1);
    break;
  case OP_DIV:
    if (ir_is_const(&k->nodes, a1, &c) && c == 1) return a0;
    break;
  case OP_SUB:
    if (ir_is_const(&k->nodes, a1, &c) && c == 0) return a0;
    if (zeros && !ints && ir_is_const(&k->nodes, a0, &c) && c == 0) return negate(k, id, a1);
    break;
  case OP_ADD:
    if (zeros && ir_is_const(&k->nodes, a1, &c) && c == 0) return a0;
    if (zeros && ir_is_const(&k->nodes, a0, &c) && c == 0) return a1;
    /* x + -y is x - y, exactly; reads as written. */
    if (k->nodes.data[a1].op == OP_NEG) return subtract(k, id, a0, k->nodes.data[a1].arg[0]);
    if (k->nodes.data[a0].op == OP_NEG) return subtract(k, id, a1, k->nodes.data[a0].arg[0]);
    break;
  case OP_SELECT:
    if (ir_is_const(&k->nodes, a0, &c)) return c ? a1 : n->arg[2];
    if (a1 == n->arg[2]) return a1;
    break;
  case OP_CAST:
    if (k->nodes.data[a0].ty == n->ty) return a0;
    break;
  default:
    break;
  }
  return id;
}

/* Nodes are in topological order, so one forward sweep sees operands
 * already folded. Replaced nodes become dead and pass_compact drops them. */
static void fold_kernel(IrKernel *k, int fold_zeros)
{
  int n = k->nodes.len;
  int *map = xrealloc(NULL, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    IrNode *nd = &k->nodes.data[i];
    for (int a = 0; a < op_info[nd->op].nargs; a++)
      nd->arg[a] = map[nd->arg[a]];
    int r = fold_node(k, i, fold_zeros);
    map[i] = r;
    if (r != i && k->nodes.data[i].name && !k->nodes.data[r].name && op_info[k->nodes.data[r].op].form != LEAF)
      k->nodes.data[r].name = k->nodes.data[i].name;
  }
  for (int i = 0; i < k->effects.len; i++) {
    IrEffect *e = &k->effects.data[i];
    e->val = map[e->val];
    if (e->pred >= 0) {
      e->pred = map[e->pred];
      double c;
      if (ir_is_const(&k->nodes, e->pred, &c) && c != 0)
        e->pred = -1;
    }
  }
  for (int d = 0; d < k->rank; d++) {
    k->lo[d] = map[k->lo[d]];
    k->hi[d] = map[k->hi[d]];
  }
  free(map);
  /* A store whose predicate folded to false never happens. */
  int w = 0;
  for (int i = 0; i < k->effects.len; i++) {
    IrEffect *e = &k->effects.data[i];
    double c;
    if (e->pred >= 0 && ir_is_const(&k->nodes, e->pred, &c) && c == 0)
      continue;
    k->effects.data[w++] = *e;
  }
  k->effects.len = w;
  pass_compact(k);
}

void pass_fold(IrProgram *p, const PassOptions *o)
{
  if (o->no_fold)
    return;
  for (int i = 0; i < p->kernels.len; i++)
    fold_kernel(p->kernels.data[i], !o->no_fold_zeros);
}
