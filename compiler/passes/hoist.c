/* hoist.c: loop-invariant code motion and division by invariants.
 *
 * Each node gets the loop depth that must compute it: 0 for values of
 * params, arguments and constants (once per kernel call), d+1 for values
 * depending on index d at most, the rank for loads. Printers emit a node
 * in the loop of its level, so invariant work leaves the inner loops.
 *
 * A floating division x / y whose divisor is computed at a shallower
 * level than the division becomes x * (1/y) with 1/y hoisted (the
 * directive-compiler prior work gained 1.3x from this); so does one whose
 * divisor divides more than once (LBM's u = jx / rho, v = jy / rho: one
 * division and two products, cse merges the reciprocals). The result may
 * differ from the division in the last bit; -fno-recip keeps divisions.
 *
 * On the GPU a division by a square root, x / sqrt(y), becomes x *
 * rsqrt(y) (1 / sqrt(y) becomes rsqrt(y)): the device's reciprocal square
 * root refined by a Newton step (runtime/stn.h, stn_rsqrtf), 11
 * instructions with the denormal scaling and the select for zeros and
 * infinities, where the correctly rounded square root and division each
 * branch to a slow path (32 instructions against 120 for y[i] = 1 /
 * sqrt(x[i]), SASS on sm_90; gradient2d: 652 -> 840 GCells/s, 950
 * where pass_gpu knows the argument is a normal float and the printer drops the
 * denormal scaling, ir_at_least_normal and stn_rsqrtf_normal;
 * H100, docs/benchmarks.md 2026-11-28). For every float it is within 1
 * ulp of 1 / sqrt(y) rounded once, 13% of them 1 ulp off, against 26% for
 * the two roundings of 1.0f / sqrtf(y) (bench/rsqrt.cu); it differs from
 * the division by up to 2 ulp, and x * rsqrt(y) adds the product's
 * rounding. Doubles take CUDA's rsqrt (1 ulp). -fno-rsqrt keeps the
 * division, and so does -fno-recip. */
#include "passes/passes.h"

static int leaf_level(const IrKernel *k, const IrNode *n)
{
  switch (n->op) {
  case OP_INDEX: return n->ref + 1;
  case OP_LOAD: return k->rank;
  default: return 0;
  }
}

static void set_levels(IrKernel *k)
{
  for (int i = 0; i < k->nodes.len; i++) {
    IrNode *n = &k->nodes.data[i];
    int lv = op_info[n->op].form == LEAF ? leaf_level(k, n) : 0;
    for (int a = 0; a < op_info[n->op].nargs; a++)
      if (k->nodes.data[n->arg[a]].level > lv)
        lv = k->nodes.data[n->arg[a]].level;
    n->level = lv;
  }
}

static int is_float_div(const IrNode *n)
{
  return n->op == OP_DIV && (n->ty == TY_FLOAT || n->ty == TY_DOUBLE);
}

/* Rebuilds K's nodes in order: each node with its arguments remapped to
 * the new nodes, then `rewrite` (which may add nodes before it and change
 * it; `i` is its old index), then the node itself; the roots follow. */
typedef void (*Rewrite)(IrNodes *out, IrNode *n, int i, const void *ctx);
static void rebuild(IrKernel *k, Rewrite rewrite, const void *ctx)
{
  IrNodes old = k->nodes;
  IrNodes out = { 0 };
  int *map = xrealloc(NULL, sizeof(int) * (size_t)(old.len + 1));
  for (int i = 0; i < old.len; i++) {
    IrNode n = old.data[i];
    for (int a = 0; a < op_info[n.op].nargs; a++)
      n.arg[a] = map[n.arg[a]];
    rewrite(&out, &n, i, ctx);
    map[i] = ir_add(&out, n);
  }
  pass_remap_roots(k, map);
  free(map);
  vec_free(&old);
  k->nodes = out;
}

/* x / y becomes x * (1 / y), 1 / y of y's level, where y is computed at a
 * shallower level than the division or divides more than once (shared[i]
 * for division i). */
static void recip_node(IrNodes *out, IrNode *n, int i, const void *ctx)
{
  const char *shared = ctx;
  double c;
  if (!is_float_div(n) || (ir_is_const(out, n->arg[0], &c) && c == 1) ||
      !(out->data[n->arg[1]].level < n->level || shared[i]))
    return;
  IrNode one = { .op = OP_CONST, .ty = n->ty, .f = 1, .span = n->span, .level = 0 };
  int c1 = ir_add(out, one);
  IrNode rc = { .op = OP_DIV, .ty = n->ty, .arg = { c1, n->arg[1], -1 }, .span = n->span,
                .level = out->data[n->arg[1]].level };
  int r = ir_add(out, rc);
  n->op = OP_MUL;
  n->arg[1] = r;
}

static void recip_kernel(IrKernel *k)
{
  const IrNodes *nd = &k->nodes;
  /* How many divisions each node is the divisor of; 1 / y is the
   * reciprocal itself and does not count. */
  int *divides = xrealloc(NULL, sizeof(int) * (size_t)(nd->len + 1));
  char *shared = xrealloc(NULL, (size_t)nd->len + 1);
  for (int i = 0; i < nd->len; i++)
    divides[i] = 0;
  for (int i = 0; i < nd->len; i++) {
    double c;
    if (is_float_div(&nd->data[i]) && !(ir_is_const(nd, nd->data[i].arg[0], &c) && c == 1))
      divides[nd->data[i].arg[1]]++;
  }
  for (int i = 0; i < nd->len; i++)
    shared[i] = is_float_div(&nd->data[i]) && divides[nd->data[i].arg[1]] > 1;
  rebuild(k, recip_node, shared);
  free(divides);
  free(shared);
}

/* CUDA: x / sqrt(y) becomes x * rsqrt(y), and 1 / sqrt(y) rsqrt(y), of
 * the level of sqrt(y); the square root stays where something else uses
 * it. */
static void rsqrt_node(IrNodes *out, IrNode *n, int i, const void *ctx)
{
  (void)i, (void)ctx;
  const IrNode *d = is_float_div(n) ? &out->data[n->arg[1]] : NULL;
  if (!d || d->op != OP_SQRT || d->ty != n->ty)
    return;
  IrNode rs = { .op = OP_RSQRT, .ty = n->ty, .arg = { d->arg[0], -1, -1 }, .span = d->span, .level = d->level };
  double c;
  if (ir_is_const(out, n->arg[0], &c) && c == 1) {
    n->op = OP_RSQRT;
    n->arg[0] = rs.arg[0], n->arg[1] = -1;
    n->level = rs.level;
  } else {
    n->op = OP_MUL;
    n->arg[1] = ir_add(out, rs);
  }
}

void pass_hoist(IrProgram *p, const PassOptions *o)
{
  for (int i = 0; i < p->kernels.len; i++) {
    IrKernel *k = p->kernels.data[i];
    set_levels(k);
    if (o->no_hoist) {
      /* Everything is computed at every point, except what the region
       * bounds need (they are computed before the loops). */
      char *bound = xrealloc(NULL, (size_t)k->nodes.len + 1);
      for (int j = 0; j < k->nodes.len; j++)
        bound[j] = 0;
      for (int d = 0; d < k->rank; d++)
        bound[k->lo[d]] = bound[k->hi[d]] = 1;
      for (int j = k->nodes.len - 1; j >= 0; j--)
        if (bound[j])
          for (int a = 0; a < op_info[k->nodes.data[j].op].nargs; a++)
            bound[k->nodes.data[j].arg[a]] = 1;
      /* The kernel's inputs (params, arguments, extents) stay where they
       * are given: on the device they are the kernel's arguments. */
      for (int j = 0; j < k->nodes.len; j++) {
        int op = k->nodes.data[j].op;
        int input = op == OP_PARAM || op == OP_ARG || op == OP_EXTENT;
        k->nodes.data[j].level = bound[j] || input ? 0 : k->rank;
      }
      free(bound);
      continue;
    }
    if (!o->no_recip)
      recip_kernel(k);
    if (!o->no_recip && !o->no_rsqrt && o->target == TARGET_CUDA)
      rebuild(k, rsqrt_node, NULL);
  }
}
