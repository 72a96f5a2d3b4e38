/* gpu.c: how each kernel runs on a GPU (--target=cuda); the CUDA printer
 * only prints this decision.
 *
 * Heuristic, from the block/march sweep of bench/gpu.sh on an H100
 * (docs/benchmarks.md, 2026-11-22): streaming pays when the loads it can
 * reuse along dimension 0 outnumber the fields the kernel reads
 * (diffusion3d: 2 neighbour loads along i for 1 field, stream 72% vs naive
 * 67% of copy bandwidth; jacobi2d: 2 for 2, 86% vs 67%). Himeno reads 13
 * fields and could reuse only p's planes: naive wins (81% vs 76%). Rank 1
 * has nothing to march over. --cuda-strategy forces one.
 *
 * Block shapes and marching lengths are the sweep's best: naive 3-D 128x4,
 * or 128x1 with reductions (the block-wide combine waits for every warp of
 * the block; Himeno L 97.4% of copy bandwidth at 128x1 against 96.2% at
 * 128x4, bench/exp sweep of 2026-11-22 in docs/benchmarks.md), naive 2-D 64x8 (for symmetry with 3-D; 2-D kernels stream), stream 3-D
 * 128x2 marching 4 planes, stream 2-D 512 threads marching 4 rows; 256
 * threads for rank 1. With V points per thread (points_per_thread) a
 * 3-D stream block keeps its 128 columns (32x2 at V = 4) and a 3-D naive
 * block is 256/V x 2, or 64x4 at V = 4 (Himeno M and L's best with
 * programmatic launches, two runs of bench/gpu.sh's shapes section).
 * Stream kernels in 2-D, and in 3-D reading one field, go in bursts of
 * 2 planes (decide_burst; 3-D blocks of 256 threads); 3-D ones shaped
 * like CG's apply are pipelined under a register cap (decide_tight).
 * 3-D stream kernels of one field and a wide reach are compiled in
 * variants, one picked at run time (decide_variants).
 * --block, --march, --vec and --burst override. */
#include "passes/passes.h"
#include <stdlib.h>
#include <string.h>

/* The fields a kernel reads. */
static int fields_read(const IrProgram *p, const IrKernel *k)
{
  int n = 0;
  for (int f = 0; f < p->fields.len; f++)
    n += ir_reads_field(k, f);
  return n;
}

/* Kernels of more than 64 loads (3-D boxes of reach 2 and more: box3d2r
 * reads 125 points) spill when a thread computes several points or a
 * burst of planes: box3d2r's stream kernel, 4 points a thread in bursts
 * of 2 planes, spilled 2.9 KB a thread and ran 4.2 GCells/s on the H100
 * (docs/benchmarks.md 2026-11-25 13:34); ptxas (sm_90): 1.1 KB at one
 * point in bursts, 0.4 KB at 4 points plane by plane, none (40
 * registers) at one point plane by plane; box2d4r (81 loads, 2-D) in
 * bursts of 2 rows 180 bytes at 128 registers, none plane by plane. Such
 * kernels get one point a thread, plane by plane. */
static int many_loads(const IrKernel *k)
{
  int loads = 0;
  for (int i = 0; i < k->nodes.len; i++)
    loads += k->nodes.data[i].op == OP_LOAD;
  return loads > 64;
}

/* A stream kernel's burst (IrKernel.gpu_burst): its thread issues the
 * loads of all its M planes (the march), then computes them, so that the
 * later planes' loads need not wait for the earlier planes' stores. By
 * default M = 2 in 2-D, and in 3-D for kernels that read one field:
 * diffusion3d 0.409 -> 0.394 ms per step (V = 4, 32x8), jacobi2d 0.546
 * -> 0.534 ms. CG's apply (3-D, two double fields) measured slower with
 * every burst, 0.169 -> 0.167-0.222 ms at V = 1 and 2 (H100,
 * docs/benchmarks.md 2026-11-23). --burst=M chooses (1: plane by
 * plane), and its march is M whatever --march says; --march without
 * --burst, and -fstream-pipeline, turn the default off. A burst goes
 * through the lanes printer. */
static void decide_burst(const IrProgram *p, IrKernel *k, const PassOptions *o)
{
  size_t blen;
  const char *bv = pass_option_for_kernel(o->burst, k->name, &blen);
  int m = bv ? atoi(bv) : o->stream_pipeline || o->march || (k->rank == 3 && fields_read(p, k) > 1) || many_loads(k) ? 0
                                                                                                            : 2;
  k->gpu_burst = k->gpu == GPU_STREAM && m > 1 ? m : 0;
}

/* Loads at a nonzero offset along dimension 0 (what marching reuses),
 * against the number of fields read. */
static int stream_pays(const IrProgram *p, const IrKernel *k, int *along_out, int *fields_out)
{
  int along = 0;
  for (int i = 0; i < k->nodes.len; i++)
    along += k->nodes.data[i].op == OP_LOAD && k->nodes.data[i].off[0] != 0;
  int fields = fields_read(p, k);
  if (along_out)
    *along_out = along, *fields_out = fields;
  return along > 0 && along >= fields;
}

/* The column range [lo, hi] of field f's loads at (d, 0, 0); 0 if it has
 * fewer than two such loads (nothing to reuse). */
static int column_range(const IrKernel *k, int f, int *lo, int *hi)
{
  int n = 0;
  *lo = 1 << 20, *hi = -(1 << 20);
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *nd = &k->nodes.data[i];
    if (nd->op != OP_LOAD || nd->ref != f)
      continue;
    int column = 1;
    for (int d = 1; d < k->rank; d++)
      column &= nd->off[d] == 0;
    if (!column)
      continue;
    n++;
    if (nd->off[0] < *lo)
      *lo = nd->off[0];
    if (nd->off[0] > *hi)
      *hi = nd->off[0];
  }
  return n >= 2 && *hi > *lo;
}

/* The widest element a kernel loads or stores, in bytes (4 or 8). */
static int elem_bytes(const IrProgram *p, const IrKernel *k)
{
  for (int i = 0; i < k->nodes.len; i++)
    if (k->nodes.data[i].op == OP_LOAD && p->fields.data[k->nodes.data[i].ref].ty == TY_DOUBLE)
      return 8;
  for (int e = 0; e < k->effects.len; e++)
    if (k->effects.data[e].kind == EFF_STORE && p->fields.data[k->effects.data[e].ref].ty == TY_DOUBLE)
      return 8;
  return 4;
}

/* Points per thread along the contiguous dimension, read with vector
 * loads: `want` (--vec), or by default 4 for 3-D kernels whose fields are
 * all 4 bytes wide, else 1; then at most a 16-byte vector of the widest
 * field the kernel touches, and its lanes' reach within the 16 elements of
 * padding before each row (lanes outside the region read there).
 * Measured on the H100 (`SECTIONS=vec bench/gpu.sh`, docs/benchmarks.md
 * 2026-11-23 02:47), % of copy bandwidth by --profile: Himeno L 94.4 ->
 * 96.9 (4 points, 64x2), M 87.5 -> 90.4, without its residual 96.0 ->
 * 96.6; diffusion3d 81.3 -> 86.9 (4 points, 32x2); two points gain
 * little (82.7), and CG's apply (double) loses with two (78.8 -> 74.1). */
static int points_per_thread(const IrProgram *p, const IrKernel *k, int want)
{
  int es = elem_bytes(p, k), reach = 0, last = k->rank - 1;
  for (int i = 0; i < k->nodes.len; i++)
    if (k->nodes.data[i].op == OP_LOAD && abs(k->nodes.data[i].off[last]) > reach)
      reach = abs(k->nodes.data[i].off[last]);
  if (!want)
    want = k->rank == 3 && es == 4 && !many_loads(k) ? 4 : 1;
  while (want > 1 && (want * es > 16 || want - 1 + 2 * reach > 16))
    want /= 2;
  return want;
}

/* Whether k reads across a periodic boundary. */
static int reads_wrap(const IrProgram *p, const IrKernel *k)
{
  for (int j = 0; j < k->nodes.len; j++)
    for (int d = 0; d < k->rank; d++)
      if (k->nodes.data[j].op == OP_LOAD && k->nodes.data[j].off[d] && p->grids.data[k->grid].periodic[d])
        return 1;
  return 0;
}

/* A thread of V lanes loads its row as one vector plus single columns
 * beyond it (k - 1, k + V, ...). At the region's ends those columns are
 * read only for lanes outside the region, whose points are computed and
 * dropped; loading them costs one 32-byte sector per row and field at
 * each end. In stream kernels the columns load only for a lane that
 * needs them (IrKernel.gpu_guard_sides): CG's apply (256^3 double, V = 2)
 * read 272.7 MB from DRAM instead of 289.3 (ncu) and ran at 88.0-88.9%
 * of the copy bandwidth instead of 84.9-85.2% (H100, docs/benchmarks.md,
 * 2026-11-24). Naive kernels keep plain loads: Himeno M (only p has such
 * columns, 1 field of 14) ran 2% slower with the guards. */
static int guard_sides(const IrKernel *k, int vec) { return k->gpu == GPU_STREAM && vec > 1; }

/* The 32-bit words a thread of a 3-D stream kernel that reads one field
 * holds at `vec` points a thread in bursts of 2 planes (decide_burst): its
 * column's planes (the queue, one more for the burst) and both planes'
 * other loads, as vectors; 0 for kernels of any other kind, or shaped by
 * an option (--cuda-strategy other than stream, --vec, --burst, --block,
 * --march, --max-regs, -fstream-pipeline). */
static int burst_words(const IrProgram *p, const IrKernel *k, const PassOptions *o, int vec)
{
  size_t len;
  const char *sv = pass_option_for_kernel(o->cuda_strategy, k->name, &len);
  if (k->rank != 3 || (sv && !(len == 6 && strncmp(sv, "stream", 6) == 0)) || reads_wrap(p, k) ||
      !stream_pays(p, k, NULL, NULL) || fields_read(p, k) != 1 || many_loads(k) || o->stream_pipeline ||
      o->block[0] || o->march || pass_option_for_kernel(o->vec, k->name, &len) ||
      pass_option_for_kernel(o->burst, k->name, &len) || pass_option_for_kernel(o->max_regs, k->name, &len))
    return 0;
  int words = 0;
  for (int f = 0; f < p->fields.len; f++) {
    int lo, hi, w = p->fields.data[f].ty == TY_DOUBLE ? 2 : 1, column = column_range(k, f, &lo, &hi);
    if (column)
      words += (hi - lo + 2) * vec * w;
    for (int i = 0; i < k->nodes.len; i++) {
      const IrNode *n = &k->nodes.data[i];
      if (n->op == OP_LOAD && n->ref == f && !(column && n->off[1] == 0 && n->off[2] == 0))
        words += 2 * vec * w;
    }
  }
  return words;
}

/* Variants (IrKernel.variant). A 3-D stream kernel that reads one field
 * goes in bursts of 2 planes at 4 points a thread (floats): with a wide
 * reach its planes fill the registers, and an SM holds fewer warps,
 * which single steps need to keep enough loads in flight. Which shape
 * keeps enough depends on what ptxas makes of the kernel (star3d3r: 103
 * registers, 16 warps an SM; at 2 points a thread 61, 32 warps; plane by
 * plane at 4 points 77; star3d4r: 128 and spills, 81, 64), so such a
 * kernel is compiled three ways: the widest vector (16 bytes) in bursts,
 * half of it in bursts, and plane by plane in 32x4 blocks (4 floats, or 1
 * double). The program's first call runs the first if the registers of
 * the GPU's own build leave an SM 24 warps, else the one that leaves the
 * most (runtime/stn_cuda.cu, stn_cuda_pick_variant). Single steps on the
 * H100, GCells/s and warps an SM (docs/benchmarks.md, 2026-11-27 09:40
 * and 10:05; * the one picked):
 *
 *                     widest, burst   half, burst   plane by plane 32x4
 *   star3d2r          301.7 (24) *    269.5 (40)    299.6 (36)
 *   star3d3r          209.8 (16)      257.7 (32) *  225.2 (24)
 *   star3d4r          195.3 (16)      156.7 (16)    244.0 (32) *
 *   box3d1r --tb=1    199.3 (16)      186.7 (24)    249.6 (48) *
 *   star3d2r.double   167.6 (32) *    132.8 (32)    121.0 (36)
 *   star3d3r.double   124.4 (16)       99.7 (24)    131.1 (48) *
 *   star3d4r.double    70.9 (spills)   68.6 (16)    101.5 (32) *
 *
 * Kernels whose words (burst_words) at the widest vector are at most 64
 * (diffusion3d, star3d1r: 48) keep one version; doubles there keep one
 * point a thread (star3d1r.double: 175.5 GCells/s, 180.4 at two). */
/* The first variant's points a thread (the widest vector) where k is
 * compiled in variants, else 0: pass_gpu decides by it, and the time
 * model (gpu_single_step_vec), which runs before it. */
static int variants_vec(const IrProgram *p, const IrKernel *k, const PassOptions *o)
{
  int wide = 16 / elem_bytes(p, k);
  return points_per_thread(p, k, wide) == wide && burst_words(p, k, o, wide) > 64 ? wide : 0;
}

static void decide_variants(const IrProgram *p, IrKernel *k, const PassOptions *o)
{
  k->nvariants = 0;
  int wide = variants_vec(p, k, o);
  if (!wide || k->gpu != GPU_STREAM) /* burst_words has asked for a stream kernel */
    return;
  int vecs[3] = { wide, wide / 2, elem_bytes(p, k) == 4 ? 4 : 1 };
  for (int v = 0; v < 3; v++) {
    int bx = v == 2 ? 32 : 128 / vecs[v], by = v == 2 ? 4 : 256 / bx;
    k->variant[v].vec = vecs[v];
    k->variant[v].burst = v == 2 ? 0 : 2;
    k->variant[v].bx = bx;
    k->variant[v].by = by;
    k->variant[v].march = v == 2 ? 4 : 2;
    k->variant[v].guard_sides = guard_sides(k, vecs[v]);
  }
  k->nvariants = 3;
  k->vec = k->variant[0].vec;
  k->block[0] = k->variant[0].bx;
  k->block[1] = k->variant[0].by;
}

/* A naive or stream kernel's points a thread: --vec, else the default. */
static int vec_for(const IrProgram *p, const IrKernel *k, const PassOptions *o)
{
  size_t len;
  const char *vv = pass_option_for_kernel(o->vec, k->name, &len);
  return points_per_thread(p, k, vv ? atoi(vv) : 0);
}

/* The points a thread of k's single-step kernel will take (what pass_gpu
 * decides: 1 where a read wraps or --cuda-strategy=smem), for the time
 * model (passes/tbmodel.c), which runs before it. */
int gpu_single_step_vec(const IrProgram *p, const IrKernel *k, const PassOptions *o)
{
  size_t len;
  const char *sv = pass_option_for_kernel(o->cuda_strategy, k->name, &len);
  if (k->rank < 2 || reads_wrap(p, k) || (sv && len == 4 && strncmp(sv, "smem", 4) == 0 && k->rank == 3))
    return 1;
  int wide = variants_vec(p, k, o); /* decide_variants' first */
  return wide ? wide : vec_for(p, k, o);
}

/* CG's apply (3-D stream, two fields read, one written, 14 loads) waits
 * on its loads with too few warps in flight. Software pipelined at 16
 * bytes per row load (two doubles), in 32x4 blocks, under a cap of 72
 * registers (seven such blocks an SM, the hand-written harness's
 * occupancy) it reaches 83.3-83.9% of the copy bandwidth against
 * 78.4-78.9% plane by plane; pipelined without the cap 80.1-80.4%, at
 * 32x8 82.4-82.6%, 32x2 80.6-82.4% (H100, --profile, docs/benchmarks.md
 * 2026-11-23). Only for kernels of that shape (at most 16 loads: larger
 * ones may spill under the cap) and when no option given says otherwise
 * (--vec, --block, --march, --max-regs, --burst, -fstream-pipeline). */
static int decide_tight(const IrProgram *p, IrKernel *k, const PassOptions *o)
{
  size_t len;
  if (k->gpu != GPU_STREAM || k->rank != 3 || k->gpu_burst || o->stream_pipeline || o->block[0] || o->march ||
      k->max_regs || pass_option_for_kernel(o->vec, k->name, &len) || pass_option_for_kernel(o->burst, k->name, &len))
    return 0;
  int writes = 0, loads = 0;
  for (int f = 0; f < p->fields.len; f++)
    writes += ir_stores_field(k, f);
  for (int i = 0; i < k->nodes.len; i++)
    loads += k->nodes.data[i].op == OP_LOAD;
  if (fields_read(p, k) < 2 || writes != 1 || loads > 16)
    return 0;
  k->vec = points_per_thread(p, k, 4);
  k->max_regs = 72;
  return 1;
}

/* Fields that a loop of main may write (moved[f] = 1): those a kernel
 * called inside a loop stores, those swapped, and temporal blocking's
 * rotated buffers. The rest change only between loops (Himeno's
 * coefficients, set once by init). */
static void mark_moved(const IrProgram *p, const IrBlock *blk, int in_loop, char *moved)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    for (int f = 0; s->kind == H_CALL && in_loop && f < p->fields.len; f++)
      moved[f] |= ir_stores_field(p->kernels.data[s->kernel], f);
    if (s->kind == H_SWAP)
      moved[s->field] = moved[s->field2] = 1;
    if (s->kind == H_READ && in_loop) {
      moved[s->field] = 1;
      for (int q = 0; q < s->comps.len; q++)
        moved[s->comps.data[q]] = 1;
    }
    if (s->kind == H_FOR && s->tb)
      for (int q = 0; q < s->tb->npairs; q++)
        moved[s->tb->cur[q]] = moved[s->tb->next[q]] = moved[s->tb->scratch[q]] = 1;
    int loop = in_loop || s->kind == H_FOR || s->kind == H_WHILE;
    mark_moved(p, &s->body, loop, moved);
    mark_moved(p, &s->els, loop, moved);
  }
}

/* IrKernel.gpu_guard_sides: guard_sides, above. */
static void decide_guard_sides(IrKernel *k)
{
  k->gpu_guard_sides = guard_sides(k, k->vec);
}

/* Programmatic dependent launch (runtime/stn_cuda.h): a naive
 * single-step kernel on sm_90 and later waits for the launch before it at
 * its top, before any load or store. What a launch in flight may write it
 * reads through coherent loads (plain pointers); the fields it reads that
 * no loop writes (pdl_ro) keep the read-only path (const __restrict__,
 * ld.global.nc), which ptxas may move above the wait, so the program
 * launches it programmatically only when no launch in flight wrote them.
 * Measured on the H100 (docs/benchmarks.md, 04:37-05:00): Himeno M
 * 89.6% -> 92.6% of the copy bandwidth with the coefficients read-only,
 * 91.0% with every read coherent; lbm +0.4; Himeno L within the spread.
 * The marching strategies lose more to coherent loads than they gain
 * (jacobi2d 94.6% -> 92.7%). Loading the read-only fields before the wait
 * measured slower (bench/pdl.cu, 04:33). */
static void decide_pdl(IrProgram *p, IrKernel *k, const PassOptions *o, const char *moved)
{
  k->pdl = 0;
  k->pdl_ro = NULL;
  if (o->no_pdl) {
    k->pdl_why = "plain: -fno-pdl";
    return;
  }
  if (k->gpu != GPU_NAIVE) {
    k->pdl_why = "plain: marching kernels measured slower with the coherent loads a programmatic launch needs "
                 "(jacobi2d 94.6% -> 92.7% of copy, docs/benchmarks.md)";
    return;
  }
  if (o->arch < 90) {
    k->pdl_why = o->arch ? arena_printf(p->arena, "plain: programmatic launches need sm_90 or later, not sm_%d", o->arch)
                         : "plain: --arch names no version (programmatic launches need sm_90 or later)";
    return;
  }
  k->pdl = 1;
  k->pdl_ro = arena_alloc(p->arena, (size_t)p->fields.len + 1);
  Buf names = { 0 };
  for (int f = 0; f < p->fields.len; f++) {
    k->pdl_ro[f] = ir_reads_field(k, f) && !ir_stores_field(k, f) && !moved[f];
    if (k->pdl_ro[f])
      buf_printf(&names, "%s%s", names.len ? ", " : "", p->fields.data[f].label);
  }
  k->pdl_why = names.len ? arena_printf(p->arena, "programmatic: starts while the launch before it finishes, waits for it "
                                        "before its first access; %s (no loop writes them) through the read-only path, "
                                        "so programmatic only when no launch in flight wrote them", names.s)
                         : "programmatic: starts while the launch before it finishes, and waits for it before its "
                           "first access";
  buf_free(&names);
}

void pass_gpu(IrProgram *p, const PassOptions *o)
{
  if (o->target != TARGET_CUDA)
    return;
  char *moved = xrealloc(NULL, (size_t)p->fields.len + 1);
  memset(moved, !p->has_main, (size_t)p->fields.len + 1); /* a library: its caller's loops are unknown */
  mark_moved(p, &p->main, 0, moved);
  for (int i = 0; i < p->kernels.len; i++) {
    IrKernel *k = p->kernels.data[i];
    k->gpu_atomic = o->atomic_reductions;
    /* a float reciprocal square root of a normal float needs no denormal
     * scaling (runtime/stn.h, stn_rsqrtf_normal) */
    for (int j = 0; j < k->nodes.len; j++) {
      IrNode *n = &k->nodes.data[j];
      if (n->op == OP_RSQRT)
        n->imm = n->ty == TY_FLOAT && ir_at_least_normal(&k->nodes, n->arg[0]);
    }
    int wraps = reads_wrap(p, k);
    /* --cuda-strategy=S, or K=S,... for some kernels (pass_option_for_kernel) */
    size_t slen;
    const char *sv = pass_option_for_kernel(o->cuda_strategy, k->name, &slen);
    const char *strat = sv ? arena_printf(p->arena, "%.*s", (int)slen, sv) : NULL;
    if (strat && streq(strat, "naive")) {
      k->gpu = GPU_NAIVE;
      k->gpu_why = "naive: chosen with --cuda-strategy";
    } else if (wraps) {
      /* The marching strategies keep planes and tiles that assume no wrap. */
      k->gpu = GPU_NAIVE;
      k->gpu_why = "naive: it reads across a periodic boundary (stream and smem do not wrap yet)";
    } else if (strat && streq(strat, "smem") && k->rank == 3) {
      k->gpu = GPU_SMEM;
      k->gpu_why = "smem: chosen with --cuda-strategy";
    } else if (strat && streq(strat, "smem")) {
      k->gpu = k->rank == 2 ? GPU_STREAM : GPU_NAIVE;
      k->gpu_why = "smem is for 3-D kernels; this one streams or runs naive (--cuda-strategy=smem ignored)";
    } else if (strat && streq(strat, "stream") && k->rank >= 2) {
      k->gpu = GPU_STREAM;
      k->gpu_why = "stream: chosen with --cuda-strategy";
    } else if (strat && streq(strat, "stream")) {
      k->gpu = GPU_NAIVE;
      k->gpu_why = "naive: a 1-D kernel has no plane to march over (--cuda-strategy=stream ignored)";
    } else if (k->rank >= 2 && stream_pays(p, k, NULL, NULL)) {
      k->gpu = GPU_STREAM;
      k->gpu_why = "stream: its neighbour reads along dimension 0 outnumber its fields, and marching reuses them";
    } else {
      int along = 0, fields = 0;
      stream_pays(p, k, &along, &fields);
      k->gpu = GPU_NAIVE;
      k->gpu_why = k->rank == 1 ? "naive: 1-D"
                   : along == 0 ? "naive: one thread per point (nothing read at an offset along dimension 0 to reuse)"
                   : "naive: too few neighbour reads along dimension 0 per field to pay for marching";
    }
    /* Why not the others (--report). */
    int along = 0, fields = 0;
    stream_pays(p, k, &along, &fields);
    int forced = strat != NULL;
    for (int s = 0; s < 4; s++)
      k->gpu_rejected[s] = NULL;
    if (k->gpu != GPU_NAIVE)
      k->gpu_rejected[GPU_NAIVE] = forced ? "--cuda-strategy chose another"
                                          : "one thread per point loads again the planes that marching keeps";
    if (k->gpu != GPU_STREAM)
      k->gpu_rejected[GPU_STREAM] = k->rank == 1 ? "a 1-D kernel has no plane to march over"
                                    : wraps ? "it reads across a periodic boundary, and marching does not wrap yet"
                                    : forced ? "--cuda-strategy chose another"
                                    : along == 0 ? "it reads nothing at an offset along i: marching has nothing to reuse"
                                    : arena_printf(p->arena, "%d reads at an offset along i against %d fields read: too few "
                                                   "for marching to pay (H100 sweep, docs/benchmarks.md)", along, fields);
    if (k->gpu != GPU_SMEM)
      k->gpu_rejected[GPU_SMEM] = k->rank != 3 ? "staging planes is for 3-D kernels"
                                  : wraps ? "it reads across a periodic boundary, and the staged tile does not wrap yet"
                                  : forced ? "--cuda-strategy chose another"
                                  : "staging in shared memory measured slower than L1 hits on the H100 "
                                    "(docs/benchmarks.md), so it is never the default";
    if (k->gpu == GPU_SMEM) {
      /* Stage the field with the most loads; its reach sizes the halo. */
      int best = -1, bestn = 0;
      for (int f = 0; f < p->fields.len; f++) {
        int n = 0;
        for (int j = 0; j < k->nodes.len; j++)
          n += k->nodes.data[j].op == OP_LOAD && k->nodes.data[j].ref == f;
        if (n > bestn)
          best = f, bestn = n;
      }
      k->smem_field = best;
      for (int d = 0; d < MAX_RANK; d++)
        k->smem_r[d] = 0;
      for (int j = 0; j < k->nodes.len; j++)
        if (k->nodes.data[j].op == OP_LOAD && k->nodes.data[j].ref == best)
          for (int d = 0; d < k->rank; d++) {
            int a = abs(k->nodes.data[j].off[d]);
            if (a > k->smem_r[d])
              k->smem_r[d] = a;
          }
      if (best < 0)
        k->gpu = GPU_STREAM, k->gpu_why = "stream: no field to stage (smem ignored)";
    }
    /* --autotune runs a kernel several times: only safe when it does not
     * read a field it writes; smem's tile is fixed at compile time. */
    k->untunable = NULL;
    for (int f = 0; f < p->fields.len && !k->untunable; f++)
      if (ir_stores_field(k, f) && ir_reads_field(k, f))
        k->untunable = "it reads a field it writes, so trial runs would change it";
    if (k->gpu == GPU_SMEM)
      k->untunable = "the smem tile is sized at compile time; use --block and --march";
    {
      size_t rlen;
      const char *rv = pass_option_for_kernel(o->max_regs, k->name, &rlen);
      k->max_regs = rv ? atoi(rv) : 0;
    }
    k->vec = (k->gpu == GPU_NAIVE || k->gpu == GPU_STREAM) && k->rank >= 2 && !wraps ? vec_for(p, k, o) : 1;
    decide_burst(p, k, o);
    int tight = decide_tight(p, k, o);
    int stream = k->gpu == GPU_STREAM || k->gpu == GPU_SMEM;
    int def_x = k->rank == 1 ? 256 : stream ? (k->rank == 2 ? 512 : 128 / k->vec) : (k->rank == 2 ? 64 : 128);
    int def_y = k->rank == 1 ? 1 : stream ? (k->rank == 2 ? 1 : 2) : (k->rank == 2 ? 8 : k->reds.len ? 1 : 4);
    if (k->gpu == GPU_NAIVE && k->rank == 3 && k->vec > 1) /* Himeno L and M's best, launched programmatically */
      def_x = 256 / k->vec, def_y = k->vec == 4 ? 4 : 2;
    if (k->gpu_burst && k->rank == 3) /* 256 threads: diffusion3d's best at V = 4, 32x8 */
      def_y = 256 / def_x;
    if (tight)
      def_x = 32, def_y = 4;
    k->block[0] = o->block[0] ? o->block[0] : def_x;
    k->block[1] = k->rank >= 2 ? (o->block[1] ? o->block[1] : (o->block[0] ? 1 : def_y)) : 1;
    k->block[2] = 1;
    decide_variants(p, k, o);
    if (k->gpu == GPU_SMEM) {
      /* The staged planes are static shared memory, at most 48 KiB a
       * block: narrower blocks until they fit, else stream (a 3-D box of
       * reach 3 over doubles at 128x2 needed 60 KB: tests/fuzz/diff --gpu,
       * seeds 34, 50, 56). */
      size_t el = (size_t)type_bytes(p->fields.data[k->smem_field].ty);
      int ri = k->smem_r[0], rj = k->smem_r[1], rk = k->smem_r[2];
#define SMEM_BYTES() ((size_t)(2 * ri + 1) * (size_t)(k->block[0] + 2 * rk) * (size_t)(k->block[1] + 2 * rj) * el)
      while (SMEM_BYTES() > 49152 && !o->block[0] && (k->block[1] > 1 || k->block[0] > 32)) {
        if (k->block[1] > 1)
          k->block[1] /= 2;
        else
          k->block[0] /= 2;
      }
      if (SMEM_BYTES() > 49152) {
        k->gpu_why = arena_printf(p->arena, "stream: the smem tile of %s (%zu bytes at reach %d:%d:%d%s) is more than the "
                                            "48 KiB of static shared memory a block may have",
                                  p->fields.data[k->smem_field].name, SMEM_BYTES(), ri, rj, rk,
                                  o->block[0] ? ", with --block" : " even at 32x1");
        k->gpu_rejected[GPU_SMEM] = k->gpu_why;
        k->gpu = GPU_STREAM;
      }
#undef SMEM_BYTES
    }
    k->march = k->gpu_burst ? k->gpu_burst : stream ? (o->march ? o->march : 4) : 1;
    /* Launch bounds: the block's threads, but at least 512 (the register
     * budget the H100 sweep measured, and room for --autotune to try
     * larger blocks) unless a shared-memory tile fixes the block. With
     * --max-regs=R, ptxas keeps to R registers (spilling beyond), blocks
     * up to 64K / R threads fit an SM, and --autotune tries no larger
     * (main.c refuses a block that does not fit). */
    int nthreads = k->block[0] * k->block[1];
    k->max_threads = k->gpu != GPU_SMEM && nthreads < 512 ? 512 : nthreads;
    if (k->max_regs) {
      int room = 65536 / k->max_regs / 32 * 32; /* whole warps */
      k->max_threads = room > 1024 ? 1024 : room;
    }
    /* Streaming keeps a field's own column (loads at (d, 0, 0) for two or
     * more d) in registers: one load per plane instead of one per use. */
    k->gpu_queue = NULL;
    if (k->gpu == GPU_STREAM) {
      k->gpu_queue = arena_alloc(p->arena, (size_t)p->fields.len + 1);
      k->gpu_queue_lo = arena_alloc(p->arena, sizeof(int) * (size_t)(p->fields.len + 1));
      k->gpu_queue_hi = arena_alloc(p->arena, sizeof(int) * (size_t)(p->fields.len + 1));
      for (int f = 0; f < p->fields.len; f++)
        k->gpu_queue[f] = !o->no_queue && column_range(k, f, &k->gpu_queue_lo[f], &k->gpu_queue_hi[f]);
    }
    /* Software pipelining goes through the vector-lanes printer (one lane
     * at V = 1), which knows no wrapped indices: nor do stream kernels. */
    k->gpu_pipeline = (o->stream_pipeline || tight) && k->gpu == GPU_STREAM && !k->gpu_burst;
    k->gpu_tight = tight;
    decide_pdl(p, k, o, moved);
    decide_guard_sides(k);
  }
  free(moved);
}
