/* tbmodel.c: what a step of a time loop costs on the GPU, per point of
 * the kernel's region, for each number of fused steps T = 1..8 of the
 * strip kernels (passes/tblock.c; docs/tblock.md "How"). The terms:
 *
 *   bytes     global memory per point and step: a single step reads and
 *             writes each field once (a perfect cache); a fused pass reads
 *             its tile with T x reach of halo at each side and writes what
 *             it owns, once for T steps;
 *   recompute points computed per point owned: the halo shrinks by the
 *             reach at every step, and the neighbouring blocks compute it
 *             again;
 *   chip      picoseconds per point and step on chip: a constant per
 *             computed point, the shared-memory words it moves (the
 *             neighbours outside the thread's own rows or columns, and
 *             its own newest value), its flops (doubles at half the rate),
 *             and, past a number of them, the registers that hold every
 *             step's planes (spills);
 *
 * and a step takes the larger of bytes over the bandwidth a kernel of its
 * kind reaches (single steps ~90% of the copy bandwidth, fused passes, paced
 * by a barrier per plane, 50-70%) and chip. The
 * constants are a least-squares fit (in log time) to the sweep of AN5D's
 * suite on an H100 (docs/benchmarks.md, 2026-11-25); the fit is off by a
 * median of 19% (2-D) and 13% (3-D) per row and its lowest candidate is
 * often not the fastest measured (the 3-D strip runs 4 steps 1.4x faster
 * per computed point than 2 or 3, which no term here explains), so
 * --tb=auto does not follow it yet: --report prints it beside the choice
 * (report.c). */
#include "passes/passes.h"
#include <stdlib.h>

/* picoseconds; single steps (c1, cl: per distinct neighbour off the
 * marching axis), fused passes (c0, cs: per shared-memory word; ks per
 * register past rcap; em: the fraction of the copy bandwidth their
 * barrier-paced streams reach), and per flop (cf) */
typedef struct Consts { double c1, cl, cf, c0, cs, ks, rcap, em; } Consts;
static const Consts fit2d = { 2.0, 0.05, 0.06, 0.0, 0.06, 0.0, 16, 0.7 };
static const Consts fit3d = { 2.0, 0.1, 0.04, 1.5, 0.06, 0.05, 24, 0.5 };

static int size_of(Type t) { return t == TY_DOUBLE ? 8 : 4; }

/* How much of a read at offset off is the thread's own (no shared memory):
 * 2-D: vec columns per thread along j; 3-D: two rows along j of one k. */
static double owned(const IrKernel *k, const int *off, int vec)
{
  if (k->rank == 2)
    return off[1] == 0 ? 1.0 : abs(off[1]) < vec ? (double)(vec - abs(off[1])) / vec : 0.0;
  if (off[2] != 0)
    return 0.0;
  return off[1] == 0 ? 1.0 : abs(off[1]) == 1 ? 0.5 : 0.0;
}

IrTbModel *tb_model(const IrProgram *p, const IrKernel *k, const IrTb *tb, const PassOptions *o, Arena *a)
{
  if (k->rank < 2)
    return NULL;
  const Consts *c = k->rank == 2 ? &fit2d : &fit3d;
  IrTbModel *m = arena_alloc(a, sizeof *m);
  int esz = 4;
  for (int q = 0; q < tb->npairs; q++)
    if (size_of(p->fields.data[tb->cur[q]].ty) > esz)
      esz = size_of(p->fields.data[tb->cur[q]].ty);
  double flops = k->flops * (esz == 8 ? 2.0 : 1.0);
  /* distinct neighbours off the marching axis (single steps load them);
   * shared-memory words a computed point moves (fused passes) */
  int seen[64][MAX_RANK], nseen = 0, vec = k->rank == 2 ? (o->tb_vec ? o->tb_vec : 1) : 1;
  double smem = tb->npairs; /* each pair's newest value, written once */
  int psum = !o->no_tb_psum && tb_psum_chain(k, tb) >= 0;
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    if (n->op != OP_LOAD)
      continue;
    int dup = 0;
    for (int s = 0; s < nseen && !dup; s++)
      dup = seen[s][1] == n->off[1] && seen[s][2] == n->off[2];
    if (!dup && nseen < 64) {
      seen[nseen][1] = n->off[1];
      seen[nseen][2] = n->off[2];
      nseen++;
    }
    if (ir_tb_pair_of_cur(tb, n->ref) >= 0 && !psum)
      smem += 1.0 - owned(k, n->off, vec);
  }
  /* Partial sums: a step reads the newest row's or plane's neighbours
   * once, whatever the rows they serve (IrTb.psum). */
  for (int s = 0; s < nseen && psum; s++) {
    int off[MAX_RANK] = { 0 };
    off[1] = seen[s][1];
    off[k->rank - 1] = seen[s][k->rank - 1];
    smem += 1.0 - owned(k, off, vec);
  }
  int pair_bytes = tb->npairs * esz, other = k->bytes_read + k->bytes_written - 2 * pair_bytes;
  if (other < 0)
    other = 0;
  m->n = 8;
  for (int T = 1; T <= 8; T++) {
    IrTbCand *e = &m->c[T - 1];
    e->steps = T;
    if (T == 1) {
      e->own = 1;
      e->recompute = 1.0;
      e->bytes = k->bytes_read + k->bytes_written;
      e->mem_eff = 0.9; /* single steps reach ~90% of the copy bandwidth */
      e->chip_ps = c->c1 + c->cl * nseen + c->cf * flops;
      e->regs = 0;
      continue;
    }
    double area, own, computed = 0;
    if (k->rank == 2) {
      int w = (o->block[0] ? (o->block[0] + 31) / 32 * 32 : 128) * vec, h = T * tb->reach[1];
      h = (h + vec - 1) / vec * vec;
      area = w;
      own = w - 2 * h;
      for (int t = 1; t <= T; t++)
        computed += w - 2 * tb->reach[1] * t;
      e->regs = (double)T * (2 * tb->reach[0] + 1) * vec * esz / 4 * tb->npairs * (psum ? 2 : 1);
    } else {
      int x = o->block[0] ? o->block[0] : 32, y = o->block[1] ? o->block[1] : 32;
      area = (double)x * y;
      own = (double)(x - 2 * T * tb->reach[2]) * (y - 2 * T * tb->reach[1]);
      if (x - 2 * T * tb->reach[2] <= 0 || y - 2 * T * tb->reach[1] <= 0)
        own = 0;
      for (int t = 1; t <= T; t++)
        computed += (double)(x - 2 * tb->reach[2] * t) * (y - 2 * tb->reach[1] * t);
      e->regs = (double)T * (2 * tb->reach[0] + 1) * 2 * esz / 4 * tb->npairs * (psum ? 2 : 1);
    }
    e->own = own > 0;
    if (!e->own)
      continue;
    e->recompute = computed / (T * own);
    e->bytes = (pair_bytes * area / own + pair_bytes) / T + other;
    e->mem_eff = c->em;
    double spill = e->regs > c->rcap ? 1 + c->ks * (e->regs - c->rcap) : 1;
    e->chip_ps = e->recompute * (c->c0 + c->cs * smem * esz / 4 + c->cf * flops) * spill;
  }
  return m;
}

double tb_model_mem_ps(const IrTbCand *e, double bandwidth_gbs)
{
  return e->bytes / (bandwidth_gbs * e->mem_eff) * 1e3; /* bytes / (GB/s) = ns; in ps */
}

double tb_model_ps(const IrTbCand *e, double bandwidth_gbs)
{
  double mem = tb_model_mem_ps(e, bandwidth_gbs);
  return mem > e->chip_ps ? mem : e->chip_ps;
}
