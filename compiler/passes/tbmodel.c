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
 *             again; in 3-D also the T (2r + 1) planes a block computes
 *             before its first own one, over its march;
 *   chip      picoseconds per point and step on chip: a constant per
 *             computed point, the shared-memory loads and stores it
 *             issues (a float or a double each: one instruction; the
 *             neighbours outside the thread's own rows or columns, and
 *             its own newest value; with partial sums the newest row's
 *             neighbours once), its flops (doubles twice), its divisions
 *             and functions (many instructions each), the loads of
 *             read-only fields it issues (from the cache after a pass's
 *             first step, whose bytes the memory term counts once a pass),
 *             and, past a number of them, the registers that hold every
 *             step's planes (spills; in 3-D per 64 of the kernel's register
 *             budget); in 2-D, times 1 + kw warm: the rows a block
 *             computes before its first own one over the rows it marches
 *             (IrTbCand.warm; in 3-D the recompute has them);
 *
 * (T = 1 is the single-step kernel, or where --tb=auto takes one-step
 * passes of the strip kernel, tb_strip_single: a block computes its
 * whole tile, IrTb.whole, and loads its planes padded by the reach, and
 * the chip term has its own constants, p0 a point, pf a flop, ps a
 * shared-memory wavefront, a double's load two)
 * and a step takes the larger of bytes over the bandwidth a kernel of its
 * kind reaches (single steps ~90% of the copy bandwidth, fused passes, paced
 * by a barrier per plane, ~45-60%) and chip. The constants are each
 * GPU's own (--gpu; the H200's below, at h200_2d). The H100's are a
 * least-squares fit (in log time) by bench/an5d/fitmodel.py to the 724
 * rates of bench/an5d/measured.csv (AN5D's suite on an H100, sweeps and
 * default builds, docs/benchmarks.md 2026-11-25 to 28) and, since
 * 2026-11-28 05:30, bench/unseen/measured.csv's 164 rates of 04:46 and
 * later (today's rules), less six held-out programs (the one-step
 * passes' rows from 2026-11-26 12:39, on whole tiles; the 3-D fused
 * passes at the march each ran with, --march=64 before 13:36), the
 * default builds weighted 20: the predicted time is off the measured one
 * by a median of 10% per row (AN5D's 48 default rows: 45 within 15%,
 * worst star3d3r and j2d9pt.double +16%; bench/unseen's 19: 10, worst
 * aniso3d.double +40% and aniso2di2.double -34% and aniso2di -29%, whose
 * reach of 2 and 3 along the march no term explains; the held-out six,
 * predicted unseen: 5, box2dnl off by 42%, its divisions' slow path
 * depending on the data; docs/benchmarks.md 2026-11-28 05:53 and 08:10;
 * worst the doubles' spill cliffs in sweeps). Single steps count the
 * loads a point issues (with vec points a thread, a row's vector and its
 * columns beyond, over vec), and where --report has ptxas's registers,
 * the warps they leave an SM (tb_model_occupancy): below w0 the memory
 * term's bandwidth falls in proportion (star3d3r at 4 points a thread,
 * 103 registers, 16 warps: 4.77 ps a point measured, 5.52 modelled, 4.10
 * without; 2026-11-27). A kernel compiled in variants (passes/gpu.c) is
 * modelled as the variant ptxas's registers pick (report.c,
 * tb_model_single_variant), or without ptxas as the first. --tb=auto does not follow it: it follows the measured
 * rules of passes/tblock.c, which the sweep of 2026-11-26 found within
 * 4% of the best schedule on all 27 stencils it timed, where the
 * model's own best was up to 1.6 times slower (star3d1r.double at 6
 * steps: 185 GCells/s against 297 at 4), and --report prints the model
 * beside the choice (report.c). */
#include "passes/passes.h"
#include "../runtime/stn_tb_march.h" /* the run time's march, which the warm rows divide by */
#include <stdlib.h>
#include <string.h>

/* picoseconds; kw and cr above; single steps (c1, cl: per load a point issues off the
 * marching axis, in 4-byte words; w0: the warps an SM past which they
 * reach their bandwidth, 3-D only), fused passes (c0, cs: per shared-memory
 * load or store; ks per register past rcap; em: the fraction of the copy bandwidth
 * their barrier-paced streams reach), per flop (cf) and per division or
 * function (cx), and for single steps per neighbour and thousand flops
 * (cq: an empirical term for the registers of large stencils, which the
 * stream kernel's single steps run out of: box3d4r.double at 255
 * registers, 3.9 GCells/s where the linear terms said 6; 3-D only, no
 * 2-D row asks for it), and the one-step passes' p0, pf, ps and pd (a
 * double's flop costs pd times two of a float's: the H100 issues half as
 * many double FMAs a cycle, and the doubles' sums take twice the
 * registers; box3d4r.double ran 3.5 times slower than box3d4r, where
 * twice the flops and wavefronts said 2; 3-D only), and xd, the same for
 * the fused passes (a double's flop costs 1 + xd times two of a float's;
 * fitted on the H200 in 2-D, 0 elsewhere, see h200_2d):
 * bench/an5d/fitmodel.py's fit, 2026-11-26 (refitted at 12:45 with the
 * one-step passes on whole tiles, and at 13:50 with the march; 2026-11-27
 * with the single steps' vector loads and warps, and with their variants;
 * on 2026-11-27 20:20 with the 2-D boxes of reach 3 and 4 with partial
 * sums on 256 threads: bench/an5d/measured.csv's rows of them built on
 * 128 relabelled --block=128, and box2d3r's new default row; at 23:30
 * with AN5D's 2-D sweep of the 2-D loop that computes its steady range
 * once, 104 rows; 2026-11-28 with gradient2d's rows of the reciprocal
 * square root, passes/hoist.c, its older rows relabelled -fno-rsqrt, and
 * at 03:10 with its unscaled form, stn_rsqrtf_normal; at 05:30 with
 * bench/unseen's rows and two terms: kw for the 2-D march's warm rows, cr
 * for the read-only fields' loads; at 05:53 with kw fixed at 1.0, as the
 * marches measured at 05:41 give it; at 08:10 with the rates of four
 * rows a thread in 3-D, the older rows relabelled --tb-rows=2, and the
 * 3-D shared loads counted as a thread issues them, each value its rows
 * read once (smem_words_3d): box3d1r's default -13% -> -3%, --tb-rows=1
 * +21% -> +6%; a term for a thread's iteration over its rows, fitted
 * beside it, came out at 0 and went; at 16:56 with gradient2d's default
 * row of 8 steps relabelled --tb=8, its default being 6 since). The fit
 * leaves the one-step passes' wavefronts (ps) near 0 (0.019): over the
 * rows of such passes their cost follows the flops and a constant a
 * computed point (p0). */
typedef struct Consts { double c1, cl, cf, c0, cs, ks, rcap, em, cx, cq, p0, pf, ps, pd, w0, kw, cr, xd; } Consts;
static const Consts h100_2d = { 1.17, 0.363, 0.0174, 0.141, 0.112, 0.00596, 80.0, 0.573, 0.321, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.452, 0.0 };
static const Consts h100_3d = { 2.74, 0.111, 0.0257, 0.0, 0.239, 0.051, 50.2, 0.537, 0.295, 0.337, 1.41, 0.0206, 0.019, 1.65, 29.6, 0.0, 0.0, 0.0 };
/* The H200 (--gpu=h200): the same terms fitted to one sweep of AN5D's
 * suite on it, bench/an5d/measured.h200.csv's 232 rows at its 4250 GB/s
 * (docs/benchmarks.md 2026-11-28 20:35-20:43); bench/unseen's 92 rows of
 * the same sweep are predicted, not fitted. It has the H100's
 * multiprocessors and L2 and 1.4x its memory bandwidth, yet the H100's
 * constants, at this bandwidth, have 24 of AN5D's 40 default builds
 * within 15% (j2d5pt 20% too slow, star3d1r.double 21% too fast); a
 * bandwidth term alone does not carry a fit to another GPU (2026-11-28
 * 16:45). With these: 34 of 40 (median 4%; the misses are 2-D boxes of
 * reach 2 to 4 and 2-D doubles of reach 3 and 4, 17-23% off either
 * way), and 11 of bench/unseen's 23 (13 with the H100's constants: the
 * shapes the terms miss on the H100 too). On 132 builds the fit never
 * saw, measured afterwards: 85 within 15% (84 with the H100's constants
 * at 4250 GB/s, 72 at 3000). Refitted on 2026-11-29 with box3d4r's
 * default (00:45, the table; its sweep was too slow to run): the
 * one-step passes' p0, pf, ps, pd moved (pd had come out at the fit's
 * bound, 4, and box3d4r 27% too fast; now 1.62 and 3% off), the rest
 * not: 35 of AN5D's 41 default rows within 15%, bench/unseen's as
 * before. Refitted on 2026-11-29 03:50 with xd, the 2-D fused passes'
 * cost of a double's flop beyond two of a float's (0.426: a double's flop
 * costs 2.85 of a float's, where the H200 issues half as many double
 * FMAs): the 2-D doubles of reach 3 and 4 had run 17-23% slower than
 * predicted, and to fit them the float boxes of reach 2 to 4 had come out
 * 13-22% too slow. With it: 152 of the 233 rows within 15% (138), 39 of
 * the 41 defaults (the misses box2d2r.double +30% and j2d9pt-gol.double
 * +16%), bench/unseen's 49 of 92 and 13 of 23 defaults, predicted (47 and
 * 11). cr, which no row of this fit constrains (none reads a read-only
 * field), is the H100's. On the H100 a fit with xd had 50 of its 66
 * defaults within 15% against 55 without, so there it is 0. Refitted on
 * 2026-11-29 06:20, once hoist distributed a constant scale over a
 * sum's coefficients (j2d5pt's / 118: a flop a point fewer), with the 60
 * rows of j2d5pt, j2d9pt, j2d9pt-gol, j3d27pt and their doubles measured
 * again (06:14): 152 of the 233 rows within 15%, 40 of the 41 defaults
 * (the miss box2d2r.double, +32%; j2d9pt-gol.double now within).
 * Refitted on 2026-11-29 17:45 with the 24 2-D defaults measured again
 * (17:07: the passes without the store of step T - 1, 1.03x; their other
 * rows predate it): 153 of the 233 rows within 15%, 40 of the 41 defaults
 * (box2d2r.double +31%), where the constants before had 39 (box2d1r.double
 * +16% too) and ran j2d5pt 16% faster than predicted at 1000 steps.
 * Refitted on 2026-11-29 20:10 with 15 defaults measured again (19:20-19:34:
 * the edge warps on the steady code, 1.01-1.15x in 2-D, 1.03-1.07x in
 * 3-D; their other rows predate it): with the constants before j2d9pt and
 * star2d2r ran 21% faster than predicted; now the 41 defaults' median is
 * 4%, 39 within 15% (box2d2r.double +32%, box2d1r.double +16%), and the
 * rows that predate the change pull the whole to 143 of 233.
 * Refitted on 2026-11-29 22:15 with the 16 2-D stencils of the sweep of
 * 21:47 (every schedule of the build with the fast instance; 100 rows
 * replaced, 41 added; their defaults two columns where the fast
 * instance runs, tblock.c fast_pair): the 41 defaults' median 3%, 40
 * within 15% (box2d2r.double +28%), 189 of the 274 rows; with the
 * constants before 38 (star2d4r +19%, box2d1r.double +38%). 3-D takes
 * the 2-D cx, so only its cx moved (0.275 to 0.272).
 * Refitted on 2026-11-30 01:00 with the 2-D sweep of 00:17 (star2d1r,
 * star2d1r.double, j2d9pt-gol.double, star2d3r.double: their defaults
 * two columns since 21:47; 21 rows replaced, 7 added): 193 of the 281
 * rows within 15%, the defaults' median 3%, 39 of 41 within 15%
 * (box2d2r.double +28%, star2d3r.double -16%, the latter -17% with the
 * constants before); bench/unseen's 23 defaults, predicted, 9 within
 * 15% (divisions, stencils long along i, two pairs: docs/benchmarks.md
 * 2026-11-30 00:32). */
static const Consts h200_2d = { 0.799, 0.495, 0.0166, 0.118, 0.0874, 0.0162, 192.0, 0.724, 0.27, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.452, 0.508 };
static const Consts h200_3d = { 2.3, 0.0456, 0.0233, 0.0, 0.207, 0.0249, 36.0, 0.431, 0.27, 0.785, 1.48, 0.0183, 0.0658, 1.62, 35.5, 0.0, 0.0, 0.0 };

/* The GPUs the model knows (--gpu): each one's measured copy bandwidth,
 * the default of --report's --bandwidth, and its constants. The
 * generated code is the same for all: the model predicts, the measured
 * rules of passes/tblock.c choose. */
typedef struct Machine {
  const char *name, *what;
  double bandwidth;
  const Consts *c2, *c3;
  const char *fit; /* how far the model is from the rates its constants were fitted to (fitmodel.py --no-fit) */
} Machine;
static const Machine machines[] = {
  { "h100", "H100", 3000, &h100_2d, &h100_3d,
    "a median of 10% per row (583 of 894 within 15%, 55 of the 66 default builds: bench/an5d/measured.csv, bench/unseen/measured.csv)" },
  { "h200", "H200", 4250, &h200_2d, &h200_3d,
    "a median of 9% per row (193 of 281 within 15%, 39 of the 41 default builds: bench/an5d/measured.h200.csv)" },
};
enum { NMACHINES = sizeof machines / sizeof machines[0] };

int tb_model_gpu(const char *name)
{
  for (int i = 0; i < NMACHINES; i++)
    if (!strcmp(machines[i].name, name))
      return i;
  return -1;
}

/* The machine a device's name (nvidia-smi's "NVIDIA H200", "NVIDIA H100
 * 80GB HBM3") is, by the model's short name in it, or -1. */
int tb_model_gpu_of_device(const char *device)
{
  for (int i = 0; i < NMACHINES; i++)
    if (strstr(device, machines[i].what))
      return i;
  return -1;
}

const char *tb_model_gpu_what(int gpu) { return machines[gpu].what; }
double tb_model_gpu_bandwidth(int gpu) { return machines[gpu].bandwidth; }
const char *tb_model_gpu_fit(int gpu) { return machines[gpu].fit; }


/* How much of a read at offset off is the thread's own (no shared memory):
 * 2-D: vec columns per thread along j; 3-D: `rows` rows along j of one k. */
static double owned(const IrKernel *k, const int *off, int vec, int rows)
{
  if (k->rank == 2)
    return off[1] == 0 ? 1.0 : abs(off[1]) < vec ? (double)(vec - abs(off[1])) / vec : 0.0;
  if (off[2] != 0)
    return 0.0;
  return abs(off[1]) < rows ? (double)(rows - abs(off[1])) / rows : 0.0;
}

/* Shared-memory loads and stores a computed point issues in a fused step
 * at `vec` columns a thread (a double's count once, one instruction as a
 * float's; when they counted as two 4-byte words the fit missed the 2-D
 * doubles by 20-30%, docs/benchmarks.md 2026-11-25 19:10): the
 * neighbours' values that are not the thread's own
 * (with partial sums, those of the newest row or plane only, each once),
 * and each pair's newest value, written once (2-D with vec at least twice
 * the reach: only the thread's first and last r columns, IrTb.xedge).
 * 3-D: a thread loads each value its rows read once, so a plane's column
 * at k + dk costs the rows its points' reads cover, but for the thread's
 * own rows at dk = 0 (registers), over the rows: box3d1r's partial sums
 * 14 / 4 at four rows, 10 / 2 at two, 8 at one. */
static double smem_words_3d(const IrKernel *k, const IrTb *tb, int rows, int psum)
{
  enum { MAXOFF = 1024 };
  int seen[MAXOFF][3], nseen = 0;
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    if (n->op != OP_LOAD || ir_tb_pair_of_cur(tb, n->ref) < 0)
      continue;
    int o[3] = { psum ? 0 : n->off[0], n->off[1], n->off[2] }, dup = 0;
    for (int s = 0; s < nseen && !dup; s++)
      dup = !memcmp(seen[s], o, sizeof o);
    if (!dup && nseen < MAXOFF)
      memcpy(seen[nseen++], o, sizeof o);
  }
  double loads = 0;
  for (int s = 0; s < nseen; s++) {
    int first = 1; /* the first offset of its column (di, dk) counts the column's rows */
    for (int t = 0; t < s && first; t++)
      first = !(seen[t][0] == seen[s][0] && seen[t][2] == seen[s][2]);
    if (!first)
      continue;
    int lo = seen[s][1], hi = seen[s][1];
    for (int t = s; t < nseen; t++)
      if (seen[t][0] == seen[s][0] && seen[t][2] == seen[s][2]) {
        lo = seen[t][1] < lo ? seen[t][1] : lo;
        hi = seen[t][1] > hi ? seen[t][1] : hi;
      }
    /* rows lo .. hi + rows - 1 (a reach's reads cover every row between) */
    for (int r = lo; r <= hi + rows - 1; r++) {
      int need = 0;
      for (int t = s; t < nseen && !need; t++)
        need = seen[t][0] == seen[s][0] && seen[t][2] == seen[s][2] && r - seen[t][1] >= 0 && r - seen[t][1] < rows;
      loads += need && !(seen[s][2] == 0 && r >= 0 && r < rows);
    }
  }
  return tb->npairs + loads / rows;
}

static double smem_words(const IrKernel *k, const IrTb *tb, int vec, int rows, int psum)
{
  if (k->rank == 3)
    return smem_words_3d(k, tb, rows, psum);
  int seen[256][2], nseen = 0;
  double smem = tb->npairs * (tb_edge_columns(k, tb, vec) ? 2.0 * tb->reach[1] / vec : 1.0);
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    if (n->op != OP_LOAD || ir_tb_pair_of_cur(tb, n->ref) < 0)
      continue;
    if (!psum) {
      smem += 1.0 - owned(k, n->off, vec, rows);
      continue;
    }
    int a = n->off[1], b = n->off[k->rank - 1], dup = 0;
    for (int s = 0; s < nseen && !dup; s++)
      dup = seen[s][0] == a && seen[s][1] == b;
    if (dup || nseen == 256)
      continue;
    seen[nseen][0] = a, seen[nseen][1] = b, nseen++;
    int off[MAX_RANK] = { 0 };
    off[1] = a;
    off[k->rank - 1] = b;
    smem += 1.0 - owned(k, off, vec, rows);
  }
  return smem;
}

/* The loads of read-only fields (not a blocked pair's) a point issues,
 * at distinct offsets: a fused step reads them at every step. */
static double readonly_loads(const IrKernel *k, const IrTb *tb)
{
  double n = 0;
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *a = &k->nodes.data[i];
    if (a->op != OP_LOAD || a->level == 0 || ir_tb_pair_of_cur(tb, a->ref) >= 0)
      continue;
    int dup = 0;
    for (int j = 0; j < i && !dup; j++) {
      const IrNode *b = &k->nodes.data[j];
      dup = b->op == OP_LOAD && b->ref == a->ref && !memcmp(b->off, a->off, sizeof a->off);
    }
    n += !dup;
  }
  return n;
}

/* The loads a point of a single step issues off the marching axis: its
 * distinct neighbours there, or with vec points a thread, a vector and
 * the columns beyond it for each row of them, over vec (passes/gpu.c). */
static double single_loads(const IrKernel *k, int vec1)
{
  int last = k->rank - 1;
  int seen[256][MAX_RANK], nseen = 0;
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    if (n->op != OP_LOAD)
      continue;
    int dup = 0;
    for (int s = 0; s < nseen && !dup; s++)
      dup = seen[s][1] == n->off[1] && seen[s][2] == n->off[2];
    if (!dup && nseen < 256) {
      seen[nseen][1] = n->off[1];
      seen[nseen][2] = n->off[2];
      nseen++;
    }
  }
  double loads1 = nseen;
  if (vec1 > 1) { /* a row: the offset between the marching axis and the contiguous one (3-D) */
    loads1 = 0;
    for (int s = 0; s < nseen; s++) {
      int row = k->rank == 3 ? seen[s][1] : 0, lo = seen[s][last], hi = lo, first = 1;
      for (int t = 0; t < nseen; t++)
        if ((k->rank == 3 ? seen[t][1] : 0) == row) {
          first &= t >= s; /* the row's first neighbour counts it */
          lo = seen[t][last] < lo ? seen[t][last] : lo;
          hi = seen[t][last] > hi ? seen[t][last] : hi;
        }
      loads1 += first ? (1.0 + hi - lo) / vec1 : 0;
    }
  }
  return loads1;
}

/* A single step's on-chip time from its loads and flops. */
static double single_chip_ps(const Consts *c, const IrTbCand *e)
{
  return c->c1 + c->cl * e->neighbours + c->cf * e->flops + c->cx * e->special + c->cq * e->neighbours * e->flops / 1000;
}

/* T fused steps on chip: per computed point a constant, its shared-memory
 * accesses, flops and specials, slowed past rcap registers of planes and,
 * in 2-D, by kw per warm row a marched row (IrTbCand.warm). */
static double fused_chip_ps(const Consts *c, const IrTbCand *e)
{
  double spill = e->regs > c->rcap ? 1 + c->ks * (e->regs - c->rcap) : 1;
  double cf = c->cf * (e->esz == 8 ? 1 + c->xd : 1); /* xd: a double's flop beyond two of a float's */
  return e->recompute * (c->c0 + c->cs * e->smem + cf * e->flops + c->cx * e->special + c->cr * e->roloads) * spill *
         (1 + c->kw * e->warm);
}

/* The 2-D march rule's time for a candidate (passes/tblock.c, area_march):
 * the constants of 2026-11-27 20:20 it was measured with, and neither the
 * warm rows nor the cache's read-only fields. */
static double area_ps_of(const IrTbCand *e)
{
  static const Consts area2d = { 1.3, 0.398, 0.0185, 0.0449, 0.143, 0.0078, 76.6, 0.602, 0.405, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 };
  IrTbCand f = *e;
  f.warm = 0;
  f.mem_eff = area2d.em;
  f.chip_ps = fused_chip_ps(&area2d, &f);
  return tb_model_ps(&f, 3000);
}

IrTbModel *tb_model(const IrProgram *p, const IrKernel *k, const IrTb *tb, const PassOptions *o, Arena *a)
{
  if (k->rank < 2)
    return NULL;
  const Machine *g = &machines[o->gpu];
  const Consts *c = k->rank == 2 ? g->c2 : g->c3;
  IrTbModel *m = arena_alloc(a, sizeof *m);
  m->gpu = o->gpu;
  int esz = 4;
  for (int q = 0; q < tb->npairs; q++)
    if (type_bytes(p->fields.data[tb->cur[q]].ty) > esz)
      esz = type_bytes(p->fields.data[tb->cur[q]].ty);
  double flops = k->flops * (esz == 8 ? 2.0 : 1.0);
  int vec1 = gpu_single_step_vec(p, k, o);
  double loads1 = single_loads(k, vec1);
  /* division, square roots and the other functions: many instructions
   * each (gradient2d: a division and a square root a point), counted
   * apart from the flops; not those computed once a call (level 0: the
   * reciprocal of j2d5pt's / 118) */
  double special = tb_point_specials(k) * (esz == 8 ? 2.0 : 1.0);
  int psum = tb_psum_for(p, k, tb, o) >= 0;
  int pair_bytes = tb->npairs * esz, other = k->bytes_read + k->bytes_written - 2 * pair_bytes;
  if (other < 0)
    other = 0;
  /* --tb=auto's single steps of a 3-D box of reach 2 and more: a one-step
   * pass of the strip kernel, costed like its fused passes */
  int strip1 = tb_strip_single(p, k, tb, o);
  m->n = 8;
  for (int T = 1; T <= 8; T++) {
    IrTbCand *e = &m->c[T - 1];
    e->steps = T;
    e->strip = T > 1 || strip1;
    e->flops = flops;
    e->special = special;
    e->neighbours = loads1 * esz / 4.0;
    e->vec = vec1;
    e->esz = esz;
    if (T == 1 && !strip1) {
      e->own = 1;
      e->recompute = 1.0;
      e->bytes = k->bytes_read + k->bytes_written;
      e->mem_eff = 0.9; /* single steps reach ~90% of the copy bandwidth, with w0 warps an SM */
      e->w0 = c->w0;
      e->chip_ps = single_chip_ps(c, e);
      e->regs = 0;
      continue;
    }
    int vec = k->rank == 2 ? tb_strip_vec(p, tb, T, psum, o) : 1;
    int rows = k->rank == 3 ? tb_strip_rows(p, k, tb, o, T) : 2;
    /* 3-D: the registers a thread may have (passes/tblock.c IrTb.regs: 64
     * for floats, 128 for doubles or four rows, --max-regs); the cap of the
     * planes' registers past which spills cost scales with it */
    double budget = k->rank == 3 ? tb_strip_regs(p, k, tb, o, rows) / 64.0 : 1.0;
    e->smem = smem_words(k, tb, vec, rows, psum);
    e->roloads = readonly_loads(k, tb);
    double area, own, computed = 0;
    if (k->rank == 2) {
      /* TB_STRIP: tb_model is not called for --tb-exchange=shfl. Not
       * seen: choose_shape's 128 threads where 256 would not fit shared
       * memory. */
      int w = tb_strip_threads(p, tb, k, TB_STRIP, o) * vec, h = T * tb->reach[1];
      h = (h + vec - 1) / vec * vec;
      area = w;
      own = w - 2 * h;
      for (int t = 1; t <= T; t++)
        computed += w - 2 * tb->reach[1] * t;
      e->regs = (double)T * (2 * tb->reach[0] + 1) * vec * esz / 4 * tb->npairs * (psum ? 2 : 1);
    } else {
      int x = o->block[0] ? o->block[0] : 32;
      int y = tb_strip_tile_rows(p, k, tb, o, T);
      area = (double)x * y;
      own = (double)(x - 2 * T * tb->reach[2]) * (y - 2 * T * tb->reach[1]);
      if (x - 2 * T * tb->reach[2] <= 0 || y - 2 * T * tb->reach[1] <= 0)
        own = 0;
      for (int t = 1; t <= T; t++)
        computed += (double)(x - 2 * tb->reach[2] * t) * (y - 2 * tb->reach[1] * t);
      /* one-step passes: the block computes its whole tile and loads
       * the planes padded by the reach (IrTb.whole) */
      if (T == 1 && strip1) {
        own = computed = area;
        area = (double)(x + 2 * tb->reach[2]) * (y + 2 * tb->reach[1]);
      }
      /* the planes' registers: a queue of each pair's own values and,
       * with partial sums, as many sums; one-step passes keep the sums
       * only (IrTb.whole) */
      int per = (psum ? 2 : 1) - (T == 1 && strip1);
      e->regs = (double)T * (2 * tb->reach[0] + 1) * rows * esz / 4 * tb->npairs * per / budget;
      e->rows = T > 1 ? rows : 0;
    }
    e->own = own > 0;
    if (!e->own)
      continue;
    e->recompute = computed / (T * own);
    /* 3-D: a block computes T (2r + 1) planes before its first own one,
     * its iterations in whole groups of the ring's, over a march of M
     * planes (IrTb.march; at 64, 72 iterations for box3d1r's 2 steps) */
    if (k->rank == 3) {
      int M = tb_strip_march(k, tb, o, T), ns = 2 * tb->reach[0] + 1 + tb->predicated;
      e->recompute *= (double)((M + T * (2 * tb->reach[0] + 1) + ns - 1) / ns * ns) / M;
    }
    e->bytes = (pair_bytes * area / own + pair_bytes) / T + other;
    e->mem_eff = c->em;
    if (k->rank == 2 && T >= 2) {
      /* the march rule reads the time without the terms below (its
       * constants were measured without them) */
      e->area_ps = area_ps_of(e);
      /* read-only fields: read at every step, but the steps after the
       * first find them in the cache (vardiff2d.double: 265 GCells/s
       * measured where a read each step said 180; bench/unseen, 2026-11-28) */
      e->bytes = (pair_bytes * area / own + pair_bytes) / T + (double)other / T;
      double lo0, hi0, lo1, hi1;
      if (ir_eval_default(p, &k->nodes, k->lo[0], &lo0) && ir_eval_default(p, &k->nodes, k->hi[0], &hi0) &&
          ir_eval_default(p, &k->nodes, k->lo[1], &lo1) && ir_eval_default(p, &k->nodes, k->hi[1], &hi1) && hi0 > lo0 &&
          hi1 > lo1) {
        int warm = T * (2 * tb->reach[0] + 1);
        e->warm = (double)warm / (o->march ? o->march : stn_tb_march_area((long)(hi0 - lo0), (long)(hi1 - lo1), warm,
                                                                        tb_model_area_light(e)));
      }
    }
    if (T == 1 && strip1) /* one-step passes: their own constants, shared memory in wavefronts */
      e->chip_ps = e->recompute * (c->p0 + c->ps * e->smem * esz / 4 + c->pf * flops * (esz == 8 ? c->pd : 1.0) +
                                   c->cx * special);
    else
      e->chip_ps = fused_chip_ps(c, e);
  }
  return m;
}

double tb_model_mem_ps(const IrTbCand *e, double bandwidth_gbs)
{
  /* a single step with fewer than w0 warps an SM has fewer loads in flight */
  double occ = e->warps > 0 && e->w0 > 0 && e->warps < e->w0 ? e->warps / e->w0 : 1.0;
  return e->bytes / (bandwidth_gbs * e->mem_eff * occ) * 1e3; /* bytes / (GB/s) = ns; in ps */
}

/* The warps an SM holds of a kernel of `regs` registers a thread in
 * blocks of `threads`. H100 (sm_90): 65536 registers a multiprocessor,
 * allocated 256 a warp; at most 64 warps and 32 blocks. */
int tb_model_warps(int regs, int threads)
{
  if (regs <= 0 || threads <= 0)
    return 0;
  int per_warp = (regs * 32 + 255) / 256 * 256, wpb = (threads + 31) / 32;
  int blocks = 65536 / (per_warp * wpb);
  if (blocks > 64 / wpb)
    blocks = 64 / wpb;
  if (blocks > 32)
    blocks = 32;
  return blocks * wpb;
}

void tb_model_occupancy(IrTbModel *m, int regs, int threads)
{
  IrTbCand *e = &m->c[0];
  if (!m->n || e->strip || regs <= 0 || threads <= 0)
    return;
  e->warps = tb_model_warps(regs, threads);
}

/* The single step as the variant the program will run (passes/gpu.c,
 * decide_variants): vec points a thread, and its warps an SM. */
void tb_model_single_variant(IrTbModel *m, const IrKernel *k, int vec, int regs, int threads)
{
  IrTbCand *e = &m->c[0];
  if (!m->n || e->strip || k->rank < 2)
    return;
  e->vec = vec;
  e->neighbours = single_loads(k, vec) * e->esz / 4.0;
  e->chip_ps = single_chip_ps(k->rank == 2 ? machines[m->gpu].c2 : machines[m->gpu].c3, e);
  tb_model_occupancy(m, regs, threads);
}

/* The 2-D fused passes' time at 3000 GB/s with the constants of the fit
 * the light/heavy march rule was measured with (2026-11-27 20:20,
 * b321126; passes/tblock.c, area_march): a later fit moves every
 * prediction, and must not move a schedule that no measurement moved
 * (the 23:30 fit put box2d2r below the rule's 1.6 ps, whose light march
 * then ran it 5% slower at 8192^2). Light: below 1.6 ps a point and
 * step, the march rule's line (the run time's TB_AREA_LIGHT; the warm
 * rows divide by that march too). */
int tb_model_area_light(const IrTbCand *e) { return e->area_ps < 1.6; }

double tb_model_ps(const IrTbCand *e, double bandwidth_gbs)
{
  double mem = tb_model_mem_ps(e, bandwidth_gbs);
  return mem > e->chip_ps ? mem : e->chip_ps;
}
