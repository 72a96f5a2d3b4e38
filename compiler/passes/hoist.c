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
 * it; `i` is its old index), then the node itself, keeping its use count;
 * the roots follow. */
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
    out.data[map[i]].uses = old.data[i].uses;  /* as counted before, if they were */
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

/* Distributing an invariant scale over a weighted sum: (a x + b y + z) *
 * s, with s and at least two coefficients a, b computed once per call,
 * becomes (a s) x + (b s) y + s z. The products a s, b s are constants
 * where a, b and s are (folded as the generated code would round them)
 * and per-call values otherwise. It saves the product by s at every
 * point where the sum's first two terms are both products, which an FMA
 * cannot both absorb, and where no addition takes the scaled sum into an
 * FMA already: j2d5pt's (5.1f u[-1,0] + ... + 5.2f u[1,0]) / 118 computes
 * 5 instead of 6 flops a point (1.02x on an H200, j3d27pt 1.04x; but
 * j2d9pt-gol 0.98x, whose shorter steady row ptxas schedules worse:
 * docs/benchmarks.md, 2026-11-29). Each term is rounded once more or less
 * than before, so the result may differ from the written order in the
 * last bits, as with the reciprocal; -fno-distribute keeps the written
 * form, and so does a sum the program names (a local), which the
 * generated code keeps. */

/* Whether node id belongs to the sum tree of a product at level lv: an
 * addition or subtraction of that type and level used only there. */
static int sum_node(const IrNodes *nd, int id, Type ty, int lv)
{
  const IrNode *n = &nd->data[id];
  return (n->op == OP_ADD || n->op == OP_SUB) && n->ty == ty && n->level == lv && n->uses == 1;
}

/* A leaf's invariant coefficient: c where the leaf is c * x or x * c
 * with c computed once per call and x not (*x set), else -1. */
static int leaf_coef(const IrNodes *nd, int id, int *x)
{
  const IrNode *n = &nd->data[id];
  if (n->op != OP_MUL || n->level == 0)
    return -1;
  for (int a = 0; a < 2; a++)
    if (nd->data[n->arg[a]].level == 0 && nd->data[n->arg[1 - a]].level > 0) {
      *x = n->arg[1 - a];
      return n->arg[a];
    }
  return -1;
}

/* Counts the tree's operations whose two operands are both products
 * before (*before, a deep product leaf each) and after distributing
 * (*after: every leaf that is not per-call becomes one), and its leaves
 * with a coefficient (*coefs); 0 where a leaf is a product of two varying
 * values, which would need a product more. */
static int sum_shape(const IrNodes *nd, int id, Type ty, int lv, int *before, int *after, int *coefs)
{
  const IrNode *n = &nd->data[id];
  int prod[2], deep[2];
  for (int a = 0; a < 2; a++) {
    int c = n->arg[a], x;
    const IrNode *m = &nd->data[c];
    if (sum_node(nd, c, ty, lv)) {
      if (!sum_shape(nd, c, ty, lv, before, after, coefs))
        return 0;
      prod[a] = deep[a] = 0;
      continue;
    }
    if (m->op == OP_MUL && m->level > 0 && leaf_coef(nd, c, &x) < 0)
      return 0;
    prod[a] = m->op == OP_MUL && m->level > 0;
    deep[a] = m->level > 0;
    *coefs += prod[a];
  }
  *before += prod[0] && prod[1];
  *after += deep[0] && deep[1];
  return 1;
}

/* Rebuilds the tree at id in OUT with every leaf multiplied by s, the
 * constant products folded (fold: not -fno-fold); returns the new node. */
static int scale_tree(IrNodes *out, int id, int s, Type ty, int lv, int fold)
{
  IrNode n = out->data[id];
  if (sum_node(out, id, ty, lv)) {
    n.arg[0] = scale_tree(out, n.arg[0], s, ty, lv, fold);
    n.arg[1] = scale_tree(out, n.arg[1], s, ty, lv, fold);
    n.name = NULL;
    n.uses = 0;
    return ir_add(out, n);
  }
  int x = id, c = leaf_coef(out, id, &x), coef = s;
  if (c >= 0 || n.level == 0) {
    /* the new coefficient: c s, or the per-call term times s */
    int f = c >= 0 ? c : id;
    double cv;
    if (pass_const_value(out, f, &cv) && cv == 1) {
      coef = s;
    } else {
      IrNode k = { .op = OP_MUL, .ty = ty, .arg = { f, s, -1 }, .span = n.span, .level = 0 };
      coef = ir_add(out, k);
      if (fold && pass_const_value(out, coef, &cv)) {
        IrNode *m = &out->data[coef];
        m->op = OP_CONST, m->f = cv, m->arg[0] = m->arg[1] = -1;
      }
    }
    if (n.level == 0)
      return coef;
  }
  IrNode m = { .op = OP_MUL, .ty = ty, .arg = { coef, x, -1 }, .span = n.span, .level = out->data[x].level };
  return ir_add(out, m);
}

/* fused[i]: node i's one use adds it to something, so an FMA takes its
 * product for free and distributing it would save nothing there. */
typedef struct Distribute { const char *fused; int fold, *done; } Distribute;
static void distribute_node(IrNodes *out, IrNode *n, int i, const void *ctx)
{
  const Distribute *d = ctx;
  const char *fused = d->fused;
  if (n->op != OP_MUL || (n->ty != TY_FLOAT && n->ty != TY_DOUBLE) || n->level == 0)
    return;
  for (int a = 0; a < 2; a++) {
    int e = n->arg[a], s = n->arg[1 - a], before = !fused[i], after = 0, coefs = 0;
    if (out->data[s].level != 0 || !sum_node(out, e, n->ty, n->level) || out->data[e].name ||
        !sum_shape(out, e, n->ty, n->level, &before, &after, &coefs) || after >= before || coefs < 2)
      continue;
    int r = scale_tree(out, e, s, n->ty, n->level, d->fold);
    (*d->done)++;
    /* n becomes the new tree's root (the copy appended last is dead) */
    n->op = out->data[r].op;
    n->arg[0] = out->data[r].arg[0];
    n->arg[1] = out->data[r].arg[1];
    return;
  }
}

static void distribute_kernel(IrKernel *k, int fold)
{
  const IrNodes *nd = &k->nodes;
  char *fused = xrealloc(NULL, (size_t)nd->len + 1);
  ir_count_uses(k);
  for (int i = 0; i < nd->len; i++)
    fused[i] = 0;
  for (int i = 0; i < nd->len; i++) {
    const IrNode *n = &nd->data[i];
    if (n->op == OP_ADD || n->op == OP_SUB)
      for (int a = 0; a < 2; a++)
        fused[n->arg[a]] |= nd->data[n->arg[a]].uses == 1 && nd->data[n->arg[a]].ty == n->ty;
  }
  int done = 0;
  rebuild(k, distribute_node, &(Distribute){ fused, fold, &done });
  if (done)
    pass_compact(k);  /* the sums as written */
  k->distributed = done;
  free(fused);
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
    if (!o->no_distribute)
      distribute_kernel(k, !o->no_fold);
  }
}
