/* tblock.c: temporal blocking. Finds time loops of main,
 *     for n in a..b { K(args); swap cur, next; ... }
 * and decides whether, and with how many fused steps per pass, they run
 * temporally blocked (ir.h, IrTb, says what a pass computes). The
 * printers only print this decision: CUDA as a 2.5-D pipeline of time
 * levels in shared memory (cg_cuda.c), C/OpenMP as overlapped tiles in
 * private buffers (cg_c.c).
 *
 * Legality (each failure is the loop's tb_why, shown in --emit=ir and,
 * when --tb asked for blocking, as a note):
 *   - a counted `for` whose body is one kernel call followed by swaps;
 *   - every field the kernel writes is swapped with a field it reads, and
 *     it reads none of the fields it writes (no second time level);
 *   - the call's arguments do not change inside the loop (no loop
 *     variable, no result of the call);
 *   - the kernel is 2-D or 3-D.
 * The fused steps compute every point the kernel's region covers exactly
 * as the single steps do, so reductions are those of the pass's last step,
 * which is the loop's last step: the remainder runs first.
 *
 * --tb=N fuses N steps (1: none); --tb=NAME=N for one kernel; --tb=auto
 * chooses per target and rank (auto_steps). The default is no temporal
 * blocking. */
#include "passes/passes.h"
#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

/* Does host expression id read variable v? */
static int reads_var(const IrProgram *p, int id, int v)
{
  if (id < 0)
    return 0;
  const IrNode *n = &p->host.data[id];
  if (n->op == OP_VAR && n->ref == v)
    return 1;
  for (int a = 0; a < op_info[n->op].nargs; a++)
    if (reads_var(p, n->arg[a], v))
      return 1;
  return 0;
}

/* Is the loop fusable? Fills tb's kernel and pairs; returns why not, or NULL. */
static const char *legal(IrProgram *p, const IrStmt *loop, IrTb *tb)
{
  const IrBlock *b = &loop->body;
  if (b->len < 2 || b->data[0]->kind != H_CALL)
    return "its body is not a kernel call followed by swaps";
  const IrStmt *call = b->data[0];
  const IrKernel *k = p->kernels.data[call->kernel];
  tb->kernel = call->kernel;
  tb->npairs = 0;
  for (int i = 1; i < b->len; i++) {
    const IrStmt *s = b->data[i];
    if (s->kind != H_SWAP)
      return "its body is not a kernel call followed by swaps";
    int a = s->field, c = s->field2;
    int next = ir_stores_field(k, a) ? a : ir_stores_field(k, c) ? c : -1;
    if (next < 0)
      return arena_printf(p->arena, "it swaps %s and %s, but kernel %s writes neither", p->fields.data[a].label,
                          p->fields.data[c].label, k->name);
    int cur = next == a ? c : a;
    if (ir_stores_field(k, cur))
      return arena_printf(p->arena, "kernel %s writes both %s and %s", k->name, p->fields.data[a].label,
                          p->fields.data[c].label);
    if (!ir_reads_field(k, cur))
      return arena_printf(p->arena, "kernel %s writes %s but does not read %s, the field it is swapped with", k->name,
                          p->fields.data[next].label, p->fields.data[cur].label);
    if (tb->npairs == MAX_TB_PAIRS)
      return "it swaps more field pairs than temporal blocking supports (32)";
    for (int q = 0; q < tb->npairs; q++)
      if (tb->cur[q] == cur || tb->next[q] == next)
        return arena_printf(p->arena, "it swaps %s twice", p->fields.data[cur].label);
    tb->cur[tb->npairs] = cur;
    tb->next[tb->npairs] = next;
    tb->npairs++;
  }
  for (int e = 0; e < k->effects.len; e++) {
    if (k->effects.data[e].kind != EFF_STORE)
      continue;
    int f = k->effects.data[e].ref, paired = 0;
    for (int q = 0; q < tb->npairs; q++)
      paired |= tb->next[q] == f;
    if (!paired)
      return arena_printf(p->arena, "kernel %s writes %s, which the loop does not swap", k->name,
                          p->fields.data[f].label);
  }
  for (int q = 0; q < tb->npairs; q++)
    if (ir_reads_field(k, tb->next[q]))
      return arena_printf(p->arena, "kernel %s reads %s, which it also writes (a second time level)", k->name,
                          p->fields.data[tb->next[q]].label);
  for (int a = 0; a < call->args.len; a++) {
    if (reads_var(p, call->args.data[a], loop->var))
      return arena_printf(p->arena, "the argument %s of %s changes with the loop variable", k->args.data[a].name,
                          k->name);
    for (int r = 0; r < call->results.len; r++)
      if (call->results.data[r] >= 0 && reads_var(p, call->args.data[a], call->results.data[r]))
        return arena_printf(p->arena, "the argument %s of %s reads a result of the same call", k->args.data[a].name,
                            k->name);
  }
  if (k->rank < 2)
    return "its kernel is 1-D (temporal blocking is for 2-D and 3-D kernels)";
  for (int e = 0; e < k->effects.len; e++)
    tb->predicated |= k->effects.data[e].kind == EFF_STORE && k->effects.data[e].pred >= 0;
  for (int d = 0; d < MAX_RANK; d++)
    tb->reach[d] = 0;
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    if (n->op != OP_LOAD)
      continue;
    for (int q = 0; q < tb->npairs; q++)
      if (n->ref == tb->cur[q])
        for (int d = 0; d < k->rank; d++)
          if (abs(n->off[d]) > tb->reach[d])
            tb->reach[d] = abs(n->off[d]);
  }
  return NULL;
}

/* Does any statement of blk (from index `from`) mention field f? */
static int mentions(const IrProgram *p, const IrBlock *blk, int from, int f)
{
  for (int i = from; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if ((s->kind == H_SWAP || s->kind == H_WRITE || s->kind == H_READ) && (s->field == f || s->field2 == f))
      return 1;
    for (int q = 0; s->kind == H_READ && q < s->comps.len; q++)
      if (s->comps.data[q] == f)
        return 1;
    if (s->kind == H_CALL) {
      const IrKernel *k = p->kernels.data[s->kernel];
      if (ir_reads_field(k, f))
        return 1;
    }
    if (mentions(p, &s->body, 0, f) || mentions(p, &s->els, 0, f))
      return 1;
  }
  return 0;
}

/* Is field f read-only in K's loop: no pair's, never stored by K? */
static int readonly_field(const IrKernel *k, const IrTb *tb, int f)
{
  if (ir_tb_pair_of_cur(tb, f) >= 0 || ir_tb_pair_of_next(tb, f) >= 0)
    return 0;
  for (int e = 0; e < k->effects.len; e++)
    if (k->effects.data[e].kind == EFF_STORE && k->effects.data[e].ref == f)
      return 0;
  return 1;
}

/* Fields that only K's own point reads (no pair's, never stored), at
 * most max of them into out: what a 3-D pass on the GPU can load once
 * instead of once per step. Returns how many. */
static int readonly_point_fields(const IrKernel *k, const IrTb *tb, int *out, int max)
{
  int n = 0;
  for (int i = 0; i < k->nodes.len && n < max; i++) {
    const IrNode *a = &k->nodes.data[i];
    if (a->op != OP_LOAD || a->off[0] || a->off[1] || a->off[2])
      continue;
    int skip = !readonly_field(k, tb, a->ref);
    for (int j = 0; j < n; j++)
      skip |= out[j] == a->ref;
    if (!skip)
      out[n++] = a->ref;
  }
  return n;
}

/* Does K read a read-only field (readonly_field) at an offset from its
 * point (one a pass would load again each step)? */
static int readonly_offset_reads(const IrKernel *k, const IrTb *tb)
{
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *a = &k->nodes.data[i];
    if (a->op == OP_LOAD && (a->off[0] || a->off[1] || a->off[2]) && readonly_field(k, tb, a->ref))
      return 1;
  }
  return 0;
}

/* CUDA 2-D strip passes of more than two pairs, one column a thread,
 * without partial sums: each step reads its own column of step t - 1
 * from the rows in shared memory, where the pairs read by neighbours keep
 * them, instead of from registers (IrTb.own_smem). lbm_d2q9: 128
 * registers instead of 200 at 4 steps, so two blocks of 256 threads an
 * SM; 4096^2 at 4 steps 0.1436 ms a step against 0.1690 (1.18x), and
 * against 6 steps in registers (one block an SM) 0.1537 (1.07x); at 6
 * steps the rows' shared memory keeps one block an SM, and it ran as
 * before (H200, docs/benchmarks.md 2026-11-28). Not for a predicated
 * store, whose step t keeps step t - 2 where it does not fire (from the
 * registers). -fno-tb-own-smem: not. */
static int own_smem_fits(const IrKernel *k, const IrTb *t, const PassOptions *o)
{
  int across = 0; /* a pair read across the strip: its rows are in shared memory */
  for (int n = 0; n < k->nodes.len && !across; n++) {
    const IrNode *nd = &k->nodes.data[n];
    across = k->rank == 2 && nd->op == OP_LOAD && ir_tb_pair_of_cur(t, nd->ref) >= 0 && nd->off[1];
  }
  return across && t->npairs > 2 && !t->predicated && !o->no_tb_own_smem && !o->tb_shfl && o->tb_vec <= 1;
}

static int tb_own_smem(const IrKernel *k, const IrTb *t, const PassOptions *o)
{
  return t->cuda == TB_STRIP && t->vec == 1 && t->psum < 0 && own_smem_fits(k, t, o);
}

/* --tb=auto: measured choices (docs/benchmarks.md, 2026-11-23 and
 * 2026-11-25). CUDA 2-D: 8 steps for one or two pairs of reach 1
 * (bench/jacobi5.stn 4.6x), 4 at reach 2 and more, 6 for more pairs
 * (lbm_d2q9's nine: 1.52x at 2 steps, 2.08x at 4, 2.31x at 6, 2.00x at 8,
 * 08:50 UTC), 4 where their own columns come from shared memory
 * (tb_own_smem: two blocks an SM; lbm_d2q9 1.07x over 6 steps in
 * registers, 2026-11-28); CUDA 3-D: the strip (no read-only fields) 4 steps for float
 * stars of reach 1 (diffusion3d 1.23x at 2, 1.00x at 3, 1.70x at 4, 1.23x
 * at 5, 09:40 UTC), 2 for float boxes of reach 1, none at a larger reach
 * or for doubles (auto_steps says why); 2 when read-only fields read at
 * the point outnumber the pairs 4 to 1 (Himeno, 12 coefficient arrays
 * kept in registers: 1.40x), else none. CPU: 8 for 2-D kernels (jacobi5,
 * 2 cores: 1.5x); 8 for 3-D kernels that read no read-only field at their
 * points, on grids that wrap along k at most (tiles marching along i:
 * diffusion3d 256^3 1.23x at 8, 1.2x at 4, 2026-11-23 12:20), else none
 * (Himeno M: 0.5-0.6x; overlapped 3-D tiles lost at every T tried). */
/* CPU, 3-D: does the tile march along i (IrTb.cpu_march)? Not on grids
 * periodic along i or j (overlapped tiles). A predicated store marches too:
 * its points start each step as step t - 2 (cg_c_tb.c: print_body). */
static int cpu_marches(const IrProgram *p, const IrKernel *k, const IrTb *tb, const PassOptions *o)
{
  const IrGrid *g = &p->grids.data[k->grid];
  return o->target != TARGET_CUDA && k->rank == 3 && !g->periodic[0] && !g->periodic[1];
}

/* Does K read a cur field at an offset off the axes reaching beyond r
 * points along some dimension? r = 0: any (a box stencil's corners,
 * reads_diagonal); r = 1: a box's outer corners of reach 2 and more, not
 * a biharmonic's near ones. */
static int reads_diagonal_beyond(const IrKernel *k, const IrTb *tb, int r)
{
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *a = &k->nodes.data[i];
    if (a->op == OP_LOAD && ir_tb_pair_of_cur(tb, a->ref) >= 0 &&
        (a->off[0] != 0) + (a->off[1] != 0) + (a->off[2] != 0) > 1 &&
        (abs(a->off[0]) > r || abs(a->off[1]) > r || abs(a->off[2]) > r))
      return 1;
  }
  return 0;
}

static int reads_diagonal(const IrKernel *k, const IrTb *tb) { return reads_diagonal_beyond(k, tb, 0); }

/* Partial sums (IrTb.psum). A term of the chain: no field but cur at one
 * offset `*row` along dimension 0 (INT_MIN: none yet), no index, and no value the
 * printers would give a line of its own at the point (a local, or one used
 * twice): the terms are printed whole where their row arrives. */
static int psum_term(const IrKernel *k, const IrTb *t, int id, int *row)
{
  const IrNode *n = &k->nodes.data[id];
  if (n->level >= 1 && (n->name || n->uses > 1) && n->op != OP_LOAD)
    return 0;
  switch (n->op) {
  case OP_LOAD:
    if (ir_tb_pair_of_cur(t, n->ref) < 0 || (*row != INT_MIN && *row != n->off[0]))
      return 0;
    *row = n->off[0];
    return 1;
  case OP_INDEX: /* (a value of an index alone gets a line of its own at its loop level) */
  case OP_VAR:
    return 0;
  case OP_CONST: case OP_PARAM: case OP_ARG: case OP_EXTENT:
    return 1;
  default:
    break;
  }
  for (int a = 0; a < op_info[n->op].nargs; a++)
    if (!psum_term(k, t, n->arg[a], row))
      return 0;
  return 1;
}

static int reads_cur(const IrKernel *k, const IrTb *t, int id)
{
  const IrNode *n = &k->nodes.data[id];
  if (n->op == OP_LOAD)
    return ir_tb_pair_of_cur(t, n->ref) >= 0;
  for (int a = 0; a < op_info[n->op].nargs; a++)
    if (reads_cur(k, t, n->arg[a]))
      return 1;
  return 0;
}

/* The chain of K's store (tb_psum_for), whatever the target and options. */
static int tb_psum_chain(const IrProgram *p, const IrKernel *k, const IrTb *t)
{
  if (t->npairs != 1 || t->predicated || k->effects.len != 1 || k->effects.data[0].kind != EFF_STORE ||
      k->effects.data[0].pred >= 0)
    return -1;
  /* Grids that wrap: the strip kernels wrap their reads, but partial sums
   * on such grids have not run on a GPU yet (bench/an5d's stencils and the
   * run tests' boxes have fixed borders), so they keep the plain steps. */
  const IrGrid *g = &p->grids.data[k->grid];
  for (int d = 0; d < k->rank; d++)
    if (g->periodic[d])
      return -1;
  /* It pays where a neighbouring plane is read off the thread's own
   * column (a box): then each of those planes' points is read once, not
   * once for every row it serves. */
  int box = 0;
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    box |= n->op == OP_LOAD && n->off[0] != 0 && (n->off[1] != 0 || n->off[k->rank - 1] != 0);
  }
  if (!box)
    return -1;
  ir_count_uses((IrKernel *)k);
  /* Down from the value to the chain: one operand reads cur, the others
   * read no field (j3d27pt's (...) / 159). */
  int id = k->effects.data[0].val;
  for (;;) {
    const IrNode *n = &k->nodes.data[id];
    if (n->op == OP_ADD || n->op == OP_SUB)
      break;
    if (n->level >= 1 && (n->name || n->uses > 1))
      return -1;
    int down = -1, none = INT_MIN;
    for (int a = 0; a < op_info[n->op].nargs; a++) {
      if (!reads_cur(k, t, n->arg[a])) {
        if (!psum_term(k, t, n->arg[a], &none))
          return -1;
        continue;
      }
      if (down >= 0)
        return -1;
      down = n->arg[a];
    }
    if (down < 0)
      return -1;
    id = down;
  }
  /* A sum with a name of its own (a local) is printed whole at the point. */
  if (k->nodes.data[id].name || k->nodes.data[id].uses > 1)
    return -1;
  /* Along its left spine, from the last term back: rows never increase.
   * The spine stops at a value computed once per call (level 0: passed
   * to the kernel whole) and at one the printers name. */
  int x = id, last = INT_MAX, rows = 0, terms = 0;
  for (;;) {
    const IrNode *n = &k->nodes.data[x];
    int spine = ir_psum_spine(k, id, x);
    if (++terms > IR_PSUM_TERMS)
      return -1;
    int row = INT_MIN;
    if (!psum_term(k, t, spine ? n->arg[1] : x, &row))
      return -1;
    if (row != INT_MIN) {
      if (row > last)
        return -1;
      rows += row != last;
      last = row;
    }
    if (!spine)
      break;
    x = n->arg[0];
  }
  return rows > 1 ? id : -1;
}

/* Whether a 2-D pass of K could run a fast instance: not where a store
 * is predicated (a point keeps step t - 2), the grid wraps, or every pass
 * writes step T - 1 (prev_live: the fast instance would never run).
 * Known before the pass's shape (fast_pair decides its columns by it). */
static int fast_2d_loop(const IrProgram *p, const IrKernel *k, const IrTb *t)
{
  const IrGrid *g = &p->grids.data[k->grid];
  return k->rank == 2 && !t->predicated && !t->prev_live && !g->periodic[0] && !g->periodic[1];
}

/* 2-D strip passes get the fast instance too (IrTb.fast_instance), for
 * the steady iterations of the warps at the grid's edges (cg_cuda_tb.c
 * edge_steady): where the loop allows it (fast_2d_loop) and the own
 * columns do not come from shared memory (not in the registers whose
 * values the fast instance keeps). */
static int fast_2d(const IrProgram *p, const IrKernel *k, const IrTb *t)
{
  return fast_2d_loop(p, k, t) && t->cuda == TB_STRIP && !t->own_smem;
}

int tb_psum_for(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o)
{
  if (o->target != TARGET_CUDA || o->no_tb_psum || (k->rank == 2 && o->tb_shfl))
    return -1;
  return tb_psum_chain(p, k, t);
}

/* Does a pair hold doubles? */
static int pairs_double(const IrProgram *p, const IrTb *tb)
{
  for (int q = 0; q < tb->npairs; q++)
    if (p->fields.data[tb->cur[q]].ty == TY_DOUBLE)
      return 1;
  return 0;
}

/* The largest reach of K's stencil along any dimension. */
static int reach_max(const IrKernel *k, const IrTb *tb)
{
  int rmax = 0;
  for (int d = 0; d < k->rank; d++)
    if (tb->reach[d] > rmax)
      rmax = tb->reach[d];
  return rmax;
}

/* 4-byte words of a plane's (2r + 1)^2 in-plane neighbours: past 64 the
 * one-step passes of doubles take one row a thread (tb_strip_single_rows) */
static int plane_words(const IrProgram *p, const IrTb *t)
{
  return (2 * t->reach[1] + 1) * (2 * t->reach[2] + 1) * (pairs_double(p, t) ? 2 : 1);
}

static const char *tb_option(const PassOptions *o);
static int tb_auto(const PassOptions *o, const IrKernel *k);

/* A 3-D star of reach 1 in the plane and more along the marching axis i
 * (auto_steps, tb_strip_tile_rows). */
static int axis_star(const IrKernel *k, const IrTb *tb)
{
  return k->rank == 3 && tb->reach[0] > 1 && tb->reach[1] <= 1 && tb->reach[2] <= 1 && !reads_diagonal(k, tb);
}

/* --block or --max-regs gives the strip kernel's shape: the one-step
 * passes then keep two rows a thread (what those options were measured
 * with), never one */
static int shape_asked(const IrKernel *k, const PassOptions *o)
{
  size_t len;
  return o->block[0] || o->block[1] || pass_option_for_kernel(o->max_regs, k->name, &len);
}

/* --tb=auto's single steps of a 3-D box of a reach of 2 and more on the
 * GPU: one step a pass of the strip kernel with partial sums, each plane's
 * in-plane neighbours loaded once from shared memory for the 2r + 1 sums
 * it serves, instead of the stream kernel's (2r + 1)^3 loads a point
 * (box3d2r 104 GCells/s against 51 single steps and 83 at 2 steps,
 * box3d3r 42 against 18 and 19, box3d2r.double 42 against 27; H100,
 * docs/benchmarks.md 2026-11-25 15:41-15:46). Doubles of a reach of 3
 * (a plane of 98 words of neighbours) spill at two rows a thread
 * (box3d3r.double: 2000 bytes, 6.4 against 9.3 single steps) and take
 * one (tb_strip_single_rows), whose sums only the points the block keeps
 * compute (IrTb.sums_owned: no spills, box3d3r.double 14.4 against 11.5
 * with every point's sums and 9.3 single steps; a reach of 4, 162 words,
 * 5.7 against 3.8 single steps; H100, docs/benchmarks.md 2026-11-26
 * 01:45), so doubles stop at 162 words (64 where --block or --max-regs
 * asks for a shape); floats of reach 4 do not spill (box3d4r: 62
 * registers).
 * A reach of 1 stays with the stream kernel (j3d27pt 183 against 199). */
int tb_strip_single(const IrProgram *p, const IrKernel *k, const IrTb *tb, const PassOptions *o)
{
  if (o->target != TARGET_CUDA || o->mpi || k->rank != 3 || !tb_auto(o, k))
    return 0;
  int rmax = reach_max(k, tb);
  int dbl = pairs_double(p, tb), words = plane_words(p, tb);
  /* doubles past 64 words only at one row a thread (tb_strip_single_rows) */
  return rmax >= 2 && (!dbl || words <= 64 || (words <= 162 && !shape_asked(k, o))) && tb_psum_for(p, k, tb, o) >= 0;
}

/* The tile of the one-step passes (IrTb.whole: a block computes all of
 * it): 32x32, and 32x16 for doubles at two rows a thread (a reach of 2:
 * 256 threads; box3d2r.double 54.1 GCells/s against 49.6 on 32x32 and
 * 21.2 on 32x64; floats at two rows: box3d3r 61.0 on 32x32 against 55.9
 * on 32x64, box3d4r 27.8 / 28.2; H100, docs/benchmarks.md 2026-11-26
 * 12:28). Overlapped tiles had paid for 32x64 (the floats of a reach of
 * 3 and 4 kept (32 - 2r)(64 - 2r) points of 2048 instead of (32 - 2r)^2
 * of 1024: box3d4r 16.6 against 13.9, 2026-11-25 21:05). Not where
 * --block gives the tile, nor for fused passes. */
int tb_strip_tile_rows(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o, int steps)
{
  if (o->block[0] || o->block[1])
    return o->block[1] ? o->block[1] : 32;
  if (steps > 1 && axis_star(k, t)) /* aniso3d at 2 steps: 321.5 against 291.6 on 32x32, .double 224.6 / 217.4 */
    return 16;
  return steps == 1 && pairs_double(p, t) && tb_strip_single(p, k, t, o) && tb_strip_single_rows(p, k, t, o) == 2
             ? 16 : 32;
}

/* 2-D strip passes march a length from the grid's area where the kernel
 * has two blocks or more a multiprocessor (the run time asks its
 * occupancy; IrTb.march_area, stn_tb_march_area), 32 to 384 rows: steps
 * the time model puts below 1.6 ps a point and step (at 3000 GB/s, at
 * the steps chosen, with the constants of the fit it was measured with:
 * tb_model_area_light) 128 rows at 8192^2 points, as sqrt(rows x
 * columns)^1.5 (TB_AREA_LIGHT); heavier ones sqrt(rows x columns) / 48
 * (TB_AREA_HEAVY). The waves' model times a block by its rows alone,
 * whatever shares its multiprocessor, and kept such passes at 180-256
 * rows where other marches ran faster (H100, docs/benchmarks.md
 * 2026-11-27 15:55-17:12): j2d5pt 878 GCells/s at 8192^2 against 1240 at
 * 128 rows, 492 at 4096^2 against 845 at 48, 1520 at 16384^2 against
 * 1543 at 384; box2d1r, star2d2r, j2d5pt.double, gs2d, aniso2dj4 alike,
 * rectangles as squares of their area. Heavier steps (pm2d, biharm2d,
 * box2ddiv, sqrt2d.double, gs2d.double, vardiff2d.double) ran best at
 * 64-96 rows at 4096^2, at 192 or the waves' 180-240 at 8192^2, and
 * past 256 rows at 16384^2 (j2d9pt.double 508 -> 550, star2d4r 537 ->
 * 564). lbm_d2q9 (one block a multiprocessor) is best at the waves'
 * choice at 2048^2 to 8192^2. */
static int area_march(const IrKernel *k, const IrTb *t, const IrTbModel *m)
{
  if (k->rank != 2 || t->cuda != TB_STRIP || !m || t->steps < 2 || t->steps > m->n)
    return TB_AREA_NONE;
  return tb_model_area_light(&m->c[t->steps - 1]) ? TB_AREA_LIGHT : TB_AREA_HEAVY;
}

/* The planes a block of the 3-D strip kernel marches at most (the run
 * time picks fewer where they fill the GPU's waves better,
 * stn_cuda_tb_march). One-step passes of a reach of 3 and more march up
 * to 128 planes, of 2 up to 64: a block loads 2r planes past its own, 12.5% more at r = 4 over 64
 * (box3d4r 17.8 -> 19.3 GCells/s, box3d4r.double 5.7 -> 6.3,
 * box3d3r 43.7 -> 44.8, box3d3r.double 14.4 -> 14.9; a reach of 2
 * loses, box3d2r 109.6 -> 107.8; H100, docs/benchmarks.md 2026-11-26
 * 02:38). Fused passes march up to 96: each block computes T (r + LAG)
 * planes before its first own one, and its iterations come in whole
 * groups of the ring's (box3d1r 305 -> 320 GCells/s fixed at 96,
 * 303 at 128, j3d27pt 304 -> 319, star3d1r 557 -> 590,
 * box3d1r.double 196 -> 210, star3d1r.double 299 -> 314; H100,
 * docs/benchmarks.md 2026-11-26 13:36). */
int tb_strip_march(const IrKernel *k, const IrTb *t, const PassOptions *o, int steps)
{
  if (o->march)
    return o->march;
  return steps == 1 ? (reach_max(k, t) >= 3 ? 128 : 64) : 96;
}

/* Rows a thread computes along j in the one-step passes --tb=auto takes
 * (tb_strip_single), on whole tiles (IrTb.whole; H100,
 * docs/benchmarks.md 2026-11-26 12:28, GCells/s): four for floats of a
 * reach of 2, at 128 registers (box3d2r 130.8 against 125.8 with two and
 * 87.6 with one); one for doubles past 64 words of neighbours a plane,
 * 32x32 threads (box3d3r.double 18.0 against 7.6 with two, which spill
 * 2220 bytes; box3d4r.double 7.9 against 3.0); else two (box3d4r, 81
 * words, 27.8 against 22.5 with one; box3d3r 61.0 / 44.8;
 * box3d2r.double 54.1 / 48.7 on a 32x16 tile), and two where --block or
 * --max-regs is given (what they were measured with). */
int tb_strip_single_rows(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o)
{
  if (shape_asked(k, o) || !tb_strip_single(p, k, t, o))
    return 2;
  if (pairs_double(p, t) && plane_words(p, t) > 64)
    return 1;
  return reach_max(k, t) == 2 && !pairs_double(p, t) ? 4 : 2;
}

/* Rows a thread computes along j in the 3-D strip kernel at `steps` steps
 * a pass (before a tile of fewer rows narrows it, choose_shape):
 * --tb-rows, else tb_strip_single_rows for one step, and for the fused
 * passes of a float box of reach 1 with partial sums four, on 32x8
 * threads of 116 registers, two blocks an SM: each thread's iteration
 * (the next plane's loads, the barrier, the stores, the march's tests)
 * serves four points instead of two, and a plane's in-plane neighbours
 * cost 3.5 shared loads a point instead of 5 (box3d1r 361 GCells/s
 * against 318 with two rows, j3d27pt 354 / 316; star3d1r, 4 steps
 * without sums, loses, 557 / 576; doubles spill at four, 900 bytes at 3
 * steps; H100, docs/benchmarks.md 2026-11-28 07:40). Two otherwise, and
 * where --block or --max-regs gives the shape (what they were measured
 * with). */
int tb_strip_rows(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o, int steps)
{
  if (o->tb_rows)
    return o->tb_rows;
  if (steps == 1)
    return tb_strip_single_rows(p, k, t, o);
  return !shape_asked(k, o) && !pairs_double(p, t) && reach_max(k, t) == 1 && tb_psum_for(p, k, t, o) >= 0 ? 4 : 2;
}

/* A 2-D star of reach 2 across the strip (no diagonal reads; a reach of 2
 * along i only is reach 1's case, aniso2di2.double 557 GCells/s at one
 * column against 396 at two, docs/benchmarks.md 2026-11-27 13:48) with
 * one pair: 6 steps under
 * --tb=auto (doubles 8), and two columns a thread at 6 steps (doubles
 * also at 8), asked for or not (j2d9pt 991 GCells/s against 914 at 4,
 * star2d2r 1015 / 927, j2d9pt.double 507 / 474, star2d2r.double 512 /
 * 476; at reach 3 and 4, 4 steps stay the fastest: star2d3r 724 against
 * 619 at 6; docs/benchmarks.md 2026-11-25 18:09 UTC; the doubles' 8:
 * star2d2r.double 536, j2d9pt.double 516, 2026-11-26 09:37). */
static int star2(const IrKernel *k, const IrTb *tb)
{
  return k->rank == 2 && tb->npairs == 1 && tb->reach[0] <= 2 && tb->reach[1] == 2 && !reads_diagonal(k, tb);
}

/* A 2-D stencil of reach 1 along the marching axis i and 3 or more across
 * the strip (j; 2 is a star of reach 2's, star2), one float pair, no
 * partial sums: its rows in registers are reach 1's (three a step), its
 * halo T r1 columns a side. On 256 threads (tb_strip_threads), where the
 * halo is a smaller part of the strip (aniso2d, r1 = 3: 722 GCells/s
 * against 610 on 128 threads; H100, docs/benchmarks.md 2026-11-27 12:59,
 * bench/unseen). Up to r1 = 4, 8 steps of two columns a thread
 * (auto_steps, tb_strip_vec), which halve the halo's share again:
 * aniso2d 765 GCells/s at 8192^2 and 910 at 16384^2 against 722 and 802
 * at one column, aniso2dj4 (r1 = 4) 757 and 948 against 743 and 905 at
 * 4 steps of two (2026-11-27 19:01-19:04); past r1 = 4, 4 steps of two
 * (not measured). */
static int wide_halo(const IrProgram *p, const IrKernel *k, const IrTb *tb)
{
  return k->rank == 2 && tb->reach[0] == 1 && tb->reach[1] >= 3 && tb->npairs == 1 && !pairs_double(p, tb) &&
         !reads_diagonal(k, tb);
}

/* A division or function computed at every point (not of
 * level 0, computed once a call): many instructions each (gradient2d: a
 * division and a square root a point, before passes/hoist.c made them one
 * reciprocal square root on the GPU, which counts once). fabs, fmin, fmax,
 * floor and ceil are one instruction and do not count. */
static int point_special(const IrNode *n)
{
  Op op = n->op;
  return n->level != 0 && (op == OP_DIV || op == OP_RSQRT ||
                           (op_info[op].form == FUNC && op != OP_FABS && op != OP_FMIN && op != OP_FMAX &&
                            op != OP_FLOOR && op != OP_CEIL));
}

/* Whether every division or function K computes at every point is a
 * float reciprocal square root of an argument known to be a normal float
 * (stn_rsqrtf_normal, 7 instructions: nearer a flop than a division or an
 * exp). The test pass_gpu marks IrNode.imm by, which it does after this
 * pass; not in hoist, which makes the RSQRT: the squares it recognises
 * (x * x) are one value only after cse. */
static int rsqrt_normal_only(const IrKernel *k)
{
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    if (point_special(n) && !(n->op == OP_RSQRT && n->ty == TY_FLOAT && ir_at_least_normal(&k->nodes, n->arg[0])))
      return 0;
  }
  return 1;
}

/* A 2-D step of one float pair of reach 1 computing fewer than six
 * divisions or functions a point (tb_point_specials): the steps the two
 * rules below were measured on (auto_steps). */
static int special_point(const IrProgram *p, const IrKernel *k, const IrTb *tb)
{
  return k->rank == 2 && tb_point_specials(k) < 6 && reach_max(k, tb) <= 1 && tb->npairs == 1 &&
         !pairs_double(p, tb);
}
/* Three to five of them, not all light: 4 steps of two columns. */
static int heavy_point(const IrProgram *p, const IrKernel *k, const IrTb *tb)
{
  return special_point(p, k, tb) && tb_point_specials(k) >= 3 && !rsqrt_normal_only(k);
}
/* One to five, all light (normal reciprocal square roots,
 * rsqrt_normal_only): 6 steps of one column. */
static int rsqrt_point(const IrProgram *p, const IrKernel *k, const IrTb *tb)
{
  return special_point(p, k, tb) && tb_point_specials(k) >= 1 && rsqrt_normal_only(k);
}

/* --tb=auto on CUDA for the strip kernels, from the sweep of AN5D's suite
 * on the H100 (bench/an5d/run.sh AN5D_SWEEP=1, docs/benchmarks.md
 * 2026-11-25, GCells/s at --tb=1, 2, 4, 8 and with two columns per
 * thread). What decides is what a fused pass recomputes and holds: T x r
 * points of halo at each side of a strip or tile, computed again by the
 * neighbouring block, and T x (2r + 1) planes or rows of registers per
 * thread.
 *   2-D, reach 1: 8 steps (j2d5pt 1513 against 1041 at 4; box2d1r,
 *     j2d9pt-gol, gradient2d within 8% of their best).
 *   2-D, reach 2 and more: 4 steps (star2d3r 660 against 410 at 8,
 *     star2d4r 439 / 221, box2d2r 305 / 236, box2d3r 133 / 71), with two
 *     columns per thread for one float pair (tb_strip_vec: star2d3r 724,
 *     star2d4r 539); stars of reach 2, 6 steps and two columns, doubles
 *     8 (star2);
 *     boxes with partial sums, about 9 / r steps (below).
 *   3-D strip: 4 steps only for float stars of reach 1 (star3d1r 552
 *     against 335 single, 391 at 2; diffusion3d 1.70x); float boxes of
 *     reach 1, 2 steps (box3d1r 207 against 199 single and 172 at 4,
 *     j3d27pt 201 / 199 / 175: their 26 in-plane reads a step through
 *     shared memory cost more than the bytes they save); reach 2 and more,
 *     or doubles, single steps (star3d2r 302 single, 237 at 2, 123 at 4;
 *     star3d3r 210 / 185 / 14; star3d1r.double 175 single, 151 at 3, 125
 *     at 4; box3d1r.double 74 / 71 / 56: the registers of the planes;
 *     boxes of reach 2 and more with partial sums: one-step passes of the
 *     strip kernel instead, tb_strip_single).
 * Shapes outside the suite (bench/unseen, docs/benchmarks.md 2026-11-27
 * 12:59-13:26) added: reach taken per dimension (along i: the rows or
 * planes in registers; across: the recomputed halo), single steps for a
 * 2-D point with six divisions or functions and more, for a 3-D box's
 * point with any, and for a 3-D loop of two pairs and more; each only as
 * far as it was measured, and none with --tb-exchange=shfl. */
static int auto_steps(const IrProgram *p, const IrKernel *k, const IrTb *tb, const PassOptions *o, const char **why)
{
  int rmax = reach_max(k, tb);
  if (k->rank == 3) { /* GPU: 2 steps pay when read-only fields dominate the traffic (Himeno 1.40x) */
    int fields[MAX_TB_KEEP], ro = readonly_point_fields(k, tb, fields, MAX_TB_KEEP);
    if (o->target != TARGET_CUDA) {
      *why = "--tb=auto: on the CPU, 3-D blocking pays only for kernels that read no read-only field at their points, "
             "on grids that wrap along k at most (docs/benchmarks.md)";
      return !ro && cpu_marches(p, k, tb, o) ? 8 : 1;
    }
    if (ro) {
      *why = "--tb=auto: on the GPU, 3-D temporal blocking of a kernel with read-only fields pays when they dominate "
             "the traffic or are read at the point only (docs/benchmarks.md)";
      /* read at the point only, a pass loads them once for its steps
       * (diff3dc, one such field, one float pair of reach 1 without
       * divisions or functions: 2 steps 272 GCells/s against 228
       * single); read at offsets too, each step loads them again
       * (vardiff3d: 157 at 2 steps against 218 single; H100,
       * docs/benchmarks.md 2026-11-27 13:00 and 13:48, bench/unseen) */
      int point_only = tb->npairs == 1 && rmax <= 1 && !pairs_double(p, tb) && !tb_point_specials(k) &&
                       !readonly_offset_reads(k, tb); /* what diff3dc is */
      return !o->no_tb_reuse && (ro >= 4 * tb->npairs || point_only) ? 2 : 1;
    }
    /* A box with a division or a function at every point: the fused
     * kernel's 64 registers a thread do not hold it with every step's
     * planes, and a step bound on chip gains nothing from fewer bytes
     * (box3dexp, a box of reach 1 and an exp: 239 GCells/s single, 191 at
     * 2 steps with partial sums, where box3d1r without the exp runs 318
     * fused; H100, docs/benchmarks.md 2026-11-27 13:24, bench/unseen).
     * Stars were not measured so: they keep their rule. */
    if (tb_point_specials(k) > 0 && reads_diagonal(k, tb)) {
      *why = "--tb=auto: on the GPU, 3-D temporal blocking of a box that divides or calls a function at every point "
             "ran slower than single steps (docs/benchmarks.md, bench/unseen)";
      return 1;
    }
    /* Two pairs and more: every step's planes of each in registers (gs3d,
     * two float pairs of reach 1: 142 GCells/s single, 74 at 2 steps, 103
     * at 3, 95 at 4; H100, docs/benchmarks.md 2026-11-27 13:18,
     * bench/unseen) */
    if (tb->npairs > 1) {
      *why = "--tb=auto: on the GPU, 3-D temporal blocking of a loop that swaps two pairs or more ran slower than "
             "single steps (every step's planes of each pair in registers; docs/benchmarks.md, bench/unseen)";
      return 1;
    }
    *why = "--tb=auto: on the GPU, 3-D temporal blocking of a reach above 1 (or of a double box without partial sums) "
           "ran slower than single steps (the registers of every step's planes and the recomputed halo; "
           "docs/benchmarks.md, the sweep of AN5D's suite)";
    /* Partial sums (tb_psum_chain) change the boxes: box3d1r 2 steps 304
     * GCells/s (207 without), box3d1r.double 3 steps 197 at 128 registers
     * (74 single); stars of reach 1 in
     * double 4 steps (star3d1r.double 298 against 176 single; docs/benchmarks.md
     * 2026-11-25 13:28-13:34). */
    int psum = tb_psum_for(p, k, tb, o) >= 0;
    /* A star of reach 1 in the plane and r0 > 1 along the marching axis
     * (axis_star): its recomputed halo is reach 1's, its registers T (2 r0
     * + 1) planes; about the 12 planes of reach 1's 4 steps, on a 32x16
     * tile (tb_strip_tile_rows; aniso3d.double, r0 = 2: 2 steps 224.6
     * GCells/s, 217.4 on 32x32, 3: 212, 4: 139, single 149; aniso3d 321.5,
     * 291.6 on 32x32, 3: 205, single 305; H100, docs/benchmarks.md
     * 2026-11-27 12:59-13:07, bench/unseen). */
    int axis_steps = 12 / (2 * tb->reach[0] + 1); /* r0 = 2: 2 steps; 3 and more: single, below */
    if (axis_star(k, tb) && axis_steps >= 2)
      return axis_steps;
    if (rmax > 1) /* boxes with partial sums: one step a pass of the strip (tb_strip_single) */
      return 1;
    if (pairs_double(p, tb))
      return psum ? 3 : reads_diagonal(k, tb) ? 1 : 4;
    return reads_diagonal(k, tb) ? 2 : 4;
  }
  if (o->target != TARGET_CUDA)
    return 8;
  if (tb->npairs > 2) /* 4 where the own columns come from shared memory (tb_own_smem) and two blocks fit (sm_90) */
    return own_smem_fits(k, tb, o) && o->arch >= 90 ? 4 : 6;
  /* Six divisions or functions a point and more: a single step is bound
   * on chip already, and a fused pass only adds its recomputed halo
   * (tv2d, eight: 247 GCells/s single, 223 at 4 steps, 197 at 8;
   * gradient2d, two: 317 single, 650 at 8; their costs a point, fitted
   * linearly in the count, cross near six; H100, docs/benchmarks.md
   * 2026-11-27 12:59, bench/unseen) */
  if (tb_point_specials(k) >= 6) {
    *why = "--tb=auto: on the GPU, a 2-D step with six divisions or functions a point or more is bound on chip already; "
           "fused steps would only add the recomputed halo (docs/benchmarks.md, bench/unseen)";
    return 1;
  }
  /* 2-D boxes with partial sums: about 9 / r steps, T x r points of halo
   * at each side (box2d2r 4 steps 702, 8: 480; box2d3r 3 steps 340, 4:
   * 317; box2d4r 2 steps 223, 3: 183, 4: 112; box2d1r 8 steps 1238) */
  if (tb_psum_for(p, k, tb, o) >= 0) {
    if (rmax >= 9) {
      *why = "--tb=auto: on the GPU, a 2-D box of reach 9 or more recomputes more halo than fused steps save";
      return 1;
    }
    return 9 / rmax > 8 ? 8 : 9 / rmax < 2 ? 2 : 9 / rmax;
  }
  /* stars of reach 2: 6 steps at two columns; doubles 8 (star2d2r.double
   * 536 GCells/s against 505 at 6, j2d9pt.double 516 / 500; floats lose
   * at 8, star2d2r 899 / 1004; H100, docs/benchmarks.md 2026-11-26 09:37) */
  if (star2(k, tb)) /* --tb-exchange=shfl: 6 (8 not measured) */
    return pairs_double(p, tb) && !o->tb_shfl ? 8 : 6;
  /* Three to five divisions or functions a point at reach 1 (six and
   * more: single steps, above): half the steps, as the recomputed halo
   * costs more on chip, and two columns a thread (tb_strip_vec) for the
   * independent work between barriers (pm2d, four exps: 442 GCells/s at
   * 8192^2 and 504 at 16384^2 against 407 and 441 at 8 steps, 373 and
   * 400 at 4 of one column; gradient2d, two: 645 at 8, 591 at 4; H100,
   * docs/benchmarks.md 2026-11-27 18:56-19:04, bench/unseen). Floats, as
   * measured. */
  if (heavy_point(p, k, tb) && !o->tb_shfl)
    return 4;
  /* One to five reciprocal square roots of normal floats, 7
   * instructions each: 6 steps of one column (tv2d, four: 486.9 GCells/s
   * against 450.3 at 4 of two columns, 466.9 at 5, 441.8 at 8, 417.8 at 6
   * of two; H100, docs/benchmarks.md 2026-11-28 04:46 and 05:08,
   * bench/unseen; gradient2d, one: 1005.5 against 942 at 5, 957 at 7,
   * 951.5 at 8; H200, 2026-11-28 16:53; not measured on the H100).
   * Floats, as measured. */
  if (rsqrt_point(p, k, tb) && !o->tb_shfl)
    return 6;
  /* reach 1 across the strip, more along i: the halo is reach 1's, and
   * every step's 2 r0 + 1 rows of registers up to about 45 rows a pass: 8
   * steps up to r0 = 2, 6 at r0 = 3 (aniso2di, r0 = 3: 741 GCells/s at 6
   * against 663 at 8 at 8192^2, 919 against 865 at 16384^2;
   * aniso2di2.double, r0 = 2: 549 and 662 at 8, 533 and 632 at 6; H100,
   * docs/benchmarks.md 2026-11-27 19:01-19:04, bench/unseen). Stars up to
   * r0 = 3, as measured; these rules not with --tb-exchange=shfl, whose
   * warps each compute their own halo (not measured). */
  if (tb->reach[1] <= 1 && tb->reach[0] <= 3 && tb->npairs == 1 && !reads_diagonal(k, tb) && !o->tb_shfl)
    return 45 / (2 * tb->reach[0] + 1) < 8 ? 45 / (2 * tb->reach[0] + 1) : 8;
  /* (2-D stencils of reach 2 with diagonal reads, biharm2d's 13 points,
   * take reach 2's 4 steps of two columns below: 631 GCells/s at 8192^2
   * and 775 at 16384^2 against 581 and 629 at the 6 of one column they
   * took before the area's march, 2026-11-27 19:01-19:04) */
  if (wide_halo(p, k, tb) && tb->reach[1] <= 4 && !o->tb_shfl)
    return 8;
  return rmax > 1 ? 4 : 8;
}

/* --tb as given, or its default: auto on the GPU, where the fused steps
 * the auto rules choose ran 1.2x (lbm 1024^2) to 4.7x (jacobi5 16384^2, 8
 * steps) faster than single steps on the H100 wherever a step's fields
 * outgrow the L2, with the same results, and the program takes single
 * steps where they do not (stn_cuda_tb_pays; docs/benchmarks.md,
 * docs/tblock.md); none on the CPU, where the gains measured on two
 * cores were within their noise. */
static const char *tb_option(const PassOptions *o)
{
  return o->tb ? o->tb : o->target == TARGET_CUDA ? "auto" : NULL;
}

/* Whether --tb (or its CUDA default) says auto for kernel k. */
static int tb_auto(const PassOptions *o, const IrKernel *k)
{
  size_t len;
  const char *v = pass_option_for_kernel(tb_option(o), k->name, &len);
  return v && len == 4 && strncmp(v, "auto", 4) == 0;
}

/* Steps per pass for kernel k; when that is 1, *why says why. */
static int steps_for(const IrProgram *p, const IrKernel *k, const IrTb *tb, const PassOptions *o, const char **why)
{
  /* "4", "auto", or "name=4,other=2" */
  size_t len;
  const char *v = pass_option_for_kernel(tb_option(o), k->name, &len);
  *why = !tb_option(o) ? "temporal blocking is off (--tb=N or --tb=auto turns it on)" : "--tb asks for 1 step per pass";
  if (!v)
    return 1;
  if (tb_auto(o, k))
    return auto_steps(p, k, tb, o, why);
  return atoi(v) > 0 ? atoi(v) : 1;
}

/* CUDA 2-D: the band of rows (IrTb.band_known, see ir.h). A comparison of
 * the row index with the grid's first rows (i - 1 >= 0) or its last (i +
 * 1 < NY), as walls and bounce-back write them, holds on every row of a
 * band that leaves out at most 8 rows at each end; the steady iterations
 * keep to the band, and there such a comparison prints as 1, so that
 * nvcc folds the selects it guards away (lbm_d2q9: nine a point and
 * step; 4096^2 1.04x on the H200, docs/benchmarks.md 2026-11-28). */
enum { BAND_ROWS = 8 };

static int int_const(const IrNode *n, long *v)
{
  if (n->op != OP_CONST || n->ty != TY_INT || !(fabs(n->f) < 2147483648.0) || n->f != (double)(long)n->f)
    return 0;
  *v = (long)n->f;
  return 1;
}

/* The bases the band knows: the row index (i, dimension 0), and the
 * grid's extent along it (the param the grid is declared with, G[NY]...,
 * or the extent itself). */
static int is_row(const IrProgram *p, const IrKernel *k, const IrNode *n)
{
  (void)p, (void)k;
  return n->op == OP_INDEX && n->ref == 0;
}

static int is_edge(const IrProgram *p, const IrKernel *k, const IrNode *n)
{
  if (n->op == OP_EXTENT)
    return n->ref == k->grid && n->imm == 0;
  const IrNode *d = &p->host.data[p->grids.data[k->grid].dims[0]];
  return n->op == OP_PARAM && d->op == OP_PARAM && d->ref == n->ref;
}

/* Is node id X + c (X a base: is(X)), as X, X + c, X - c or c + X, of
 * ints? The base X in *x. */
static int affine(const IrProgram *p, const IrKernel *k, int id, int (*is)(const IrProgram *, const IrKernel *, const IrNode *),
                  long *c, const IrNode **x)
{
  const IrNode *n = &k->nodes.data[id];
  if (n->ty == TY_INT && is(p, k, n)) {
    *c = 0, *x = n;
    return 1;
  }
  if ((n->op != OP_ADD && n->op != OP_SUB) || n->ty != TY_INT)
    return 0;
  const IrNode *a = &k->nodes.data[n->arg[0]], *b = &k->nodes.data[n->arg[1]];
  long v;
  if (a->ty == TY_INT && is(p, k, a) && int_const(b, &v)) {
    *c = n->op == OP_ADD ? v : -v, *x = a;
    return 1;
  }
  if (n->op == OP_ADD && b->ty == TY_INT && is(p, k, b) && int_const(a, &v)) {
    *c = v, *x = b;
    return 1;
  }
  return 0;
}

static void row_band(const IrProgram *p, const IrKernel *k, IrTb *t)
{
  t->band_known = arena_alloc(p->arena, (size_t)k->nodes.len + 1);
  memset(t->band_known, 0, (size_t)k->nodes.len + 1);
  long hend[MAX_TB_BAND]; /* i < E + hend[x], E the extent node band_hi[x] is based on */
  int hbase[MAX_TB_BAND]; /* that base's op (OP_PARAM or OP_EXTENT): one last row per kind */
  for (int id = 0; id < k->nodes.len; id++) {
    const IrNode *n = &k->nodes.data[id];
    Op op = n->op;
    if (op != OP_LT && op != OP_LE && op != OP_GT && op != OP_GE)
      continue;
    int y = n->arg[1]; /* i + c op y */
    long c, v, e;
    const IrNode *x;
    if (!affine(p, k, n->arg[0], is_row, &c, &x)) { /* y op i + c: i + c op' y */
      if (!affine(p, k, y, is_row, &c, &x))
        continue;
      y = n->arg[0];
      op = op == OP_LT ? OP_GT : op == OP_LE ? OP_GE : op == OP_GT ? OP_LT : OP_LE;
    }
    if ((op == OP_GE || op == OP_GT) && int_const(&k->nodes.data[y], &v)) {
      long lo = v - c + (op == OP_GT); /* i >= lo */
      if (lo < -BAND_ROWS || lo > BAND_ROWS)
        continue;
      if (!t->band_has_lo || lo > t->band_lo)
        t->band_lo = lo;
      t->band_has_lo = 1;
    } else if ((op == OP_LT || op == OP_LE) && k->nodes.data[y].level == 0 && affine(p, k, y, is_edge, &e, &x)) {
      /* y is computed once a call: the kernel has it (an argument, or the param itself) */
      long off = -c + (op == OP_LE); /* i < y + off = E + e + off, E = x */
      if (e + off < -BAND_ROWS || e + off > BAND_ROWS)
        continue;
      int h = 0;
      while (h < t->band_nhi && hbase[h] != x->op)
        h++;
      if (h == t->band_nhi && h == MAX_TB_BAND)
        continue;
      if (h == t->band_nhi || e + off < hend[h]) {
        t->band_nhi += h == t->band_nhi;
        hbase[h] = x->op, t->band_hi[h] = y, t->band_hioff[h] = off, hend[h] = e + off;
      }
    } else {
      continue;
    }
    t->band_known[id] = 1;
    t->band_count++;
  }
  if (!t->band_count)
    return;
  /* For --report: "rows 1 to NY - 2" */
  const IrNode *d = &p->host.data[p->grids.data[k->grid].dims[0]];
  const char *ext = d->op == OP_PARAM ? p->params.data[d->ref].name : "the grid's rows", *last = NULL;
  if (t->band_nhi) {
    long m = hend[0];
    for (int h = 1; h < t->band_nhi; h++)
      m = hend[h] < m ? hend[h] : m;
    last = m - 1 ? arena_printf(p->arena, "%s %c %ld", ext, m - 1 < 0 ? '-' : '+', labs(m - 1)) : ext;
  }
  int one = t->band_count == 1;
  t->band_last = last;
  t->band_text = arena_printf(p->arena, "in the middle of the march, rows %s to %s: %d comparison%s with the grid's edges "
                              "hold%s there and print%s as 1 (docs/tblock.md)",
                              arena_printf(p->arena, "%ld", ir_tb_band_first(t)),
                              last ? last : "the last", t->band_count, one ? "" : "s", one ? "s" : "", one ? "s" : "");
}

/* CUDA shared memory: IrTb.ring, xneed, xrows, nx, xoff, smem (see ir.h). */
static size_t strip_bytes(const IrProgram *p, const IrTb *t, const IrKernel *k, int q)
{
  if (!t->xneed[q])
    return 0;
  int r = k->rank;
  size_t w = t->xedge ? (size_t)(2 * t->reach[1] * (t->block[0] + 2))
                      : (size_t)(t->block[0] * t->vec + 2 * t->reach[r - 1]);
  if (r == 3)
    w *= (size_t)(t->block[1] * t->rows + 2 * t->reach[1]);
  size_t bytes = (size_t)t->steps * (size_t)t->nx * w * type_bytes(p->fields.data[t->cur[q]].ty);
  return (bytes + 15) / 16 * 16; /* [T][NX][W] (2-D), [T][NX][HY][W] (3-D), 16-byte aligned */
}

int tb_edge_columns(const IrKernel *k, const IrTb *t, int vec)
{
  return k->rank == 2 && vec > 1 && t->reach[1] > 0 && vec >= 2 * t->reach[1];
}

/* Of the shape decided so far (choose_shape tries narrower 3-D tiles with
 * it; called again once the shape is final). */
static void smem_layout(const IrProgram *p, IrTb *t, const IrKernel *k)
{
  int R0 = t->reach[0];
  t->ring = 2 * R0 + (t->cuda == TB_SMEM ? 2 : 1) + t->predicated;
  t->smem = 0;
  t->xedge = t->cuda == TB_STRIP && tb_edge_columns(k, t, t->vec);
  if (t->cuda == TB_SMEM)
    for (int q = 0; q < t->npairs; q++)
      t->smem += (size_t)type_bytes(p->fields.data[t->cur[q]].ty) *
                 (size_t)(t->steps * t->ring * t->block[0] * (k->rank == 3 ? t->block[1] : 1));
  if (t->cuda != TB_STRIP)
    return;
  int dmin = R0;
  t->xrows = arena_alloc(p->arena, (size_t)(2 * R0 + 1));
  memset(t->xneed, 0, sizeof t->xneed);
  for (int n = 0; n < k->nodes.len; n++) {
    const IrNode *nd = &k->nodes.data[n];
    int q = nd->op == OP_LOAD ? ir_tb_pair_of_cur(t, nd->ref) : -1;
    if (q < 0 || (!nd->off[1] && !nd->off[k->rank - 1]))
      continue;
    int d = t->psum >= 0 ? R0 : nd->off[0]; /* partial sums: every read is of the newest row */
    t->xneed[q] = 1;
    t->xrows[d + R0] = 1;
    if (d < dmin)
      dmin = d;
  }
  /* IrTb.own_smem: the own column's rows come from shared memory too */
  for (int n = 0; t->own_smem && n < k->nodes.len; n++) {
    const IrNode *nd = &k->nodes.data[n];
    int q = nd->op == OP_LOAD ? ir_tb_pair_of_cur(t, nd->ref) : -1;
    if (q < 0 || !t->xneed[q] || nd->off[1])
      continue;
    t->xrows[nd->off[0] + R0] = 1;
    if (nd->off[0] < dmin)
      dmin = nd->off[0];
  }
  t->nx = R0 + 1 - dmin + 1 > t->ring ? R0 + 1 - dmin + 1 : t->ring;
  for (int q = 0; q < t->npairs; q++) {
    t->xoff[q] = t->smem;
    t->smem += strip_bytes(p, t, k, q);
  }
}

/* A block's shared memory (sm_90: 227 KB; sm_80: 163 KB; else 99 KB). */
static size_t smem_most(const PassOptions *o)
{
  return o->arch >= 90 ? 232448 : o->arch >= 80 ? 166912 : 101376;
}

/* 3-D TB_STRIP: registers a thread may use (IrTb.regs). 64 for floats
 * (two blocks of 512 threads an SM, one of 1024); doubles take two registers a value
 * and spilled 400-1700 bytes a thread at 64 (box3d1r.double --tb=2, 3),
 * none at 128 (one block); 128 at four rows a thread
 * (tb_strip_single_rows); --max-regs. */
int tb_strip_regs(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o, int rows)
{
  size_t len;
  const char *rv = pass_option_for_kernel(o->max_regs, k->name, &len);
  return rv ? atoi(rv) : pairs_double(p, t) || rows == 4 ? 128 : 64;
}

/* How many divisions and functions K computes at every point (point_special). */
int tb_point_specials(const IrKernel *k)
{
  int n = 0;
  for (int i = 0; i < k->nodes.len; i++)
    n += point_special(&k->nodes.data[i]);
  return n;
}

/* 2-D TB_STRIP's threads a block (--block, else 128; 256 for kernels of
 * floats with divisions or functions at every point, whose chip time the
 * recomputed halo adds to: gradient2d 650 GCells/s at 8 steps against
 * 602 at 128; j2d5pt loses at 256, 1462 / 1516; gradient2d.double too,
 * 342 / 360; H100, docs/benchmarks.md 2026-11-26 09:37 and 11:25). 256
 * also for a step that reads a read-only field at offsets, which every
 * step loads again, floats or doubles (vardiff2d.double: 262 GCells/s at
 * 8192^2 and 285 at 16384^2 against 221 and 236 on 128; 2026-11-27
 * 19:01-19:04, bench/unseen). 256 too for a box of reach 3 and more with
 * partial sums, floats or doubles (box2d3r 305 and 366 GCells/s at
 * 8192^2 and 16384^2 against 288 and 345 on 128, box2d4r 217 and 243
 * against 200 and 226, box2d3r.double 151 and 174 against 124 and 150,
 * box2d4r.double 96 and 106 against 88 and 101; reach 2 loses, box2d2r
 * 548 and 666 against 555 and 708; 2026-11-27 19:31-19:34). */
/* Which of the rules above gives a 2-D strip pass 256 threads (NONE:
 * 128); tb_strip_threads decides by it and strip_threads_why says it. */
typedef enum { WIDE_NONE, WIDE_OPS, WIDE_HALO, WIDE_READONLY, WIDE_BOX } StripWide;
static StripWide strip_wide(const IrProgram *p, const IrTb *t, const IrKernel *k, const PassOptions *o)
{
  if (wide_halo(p, k, t))
    return WIDE_HALO;
  if (tb_point_specials(k) > 0 && !pairs_double(p, t))
    return WIDE_OPS;
  if (readonly_offset_reads(k, t))
    return WIDE_READONLY;
  return reach_max(k, t) >= 3 && tb_psum_for(p, k, t, o) >= 0 ? WIDE_BOX : WIDE_NONE;
}

int tb_strip_threads(const IrProgram *p, const IrTb *t, const IrKernel *k, int cuda, const PassOptions *o)
{
  if (o->block[0])
    return (o->block[0] + 31) / 32 * 32;
  return cuda == TB_STRIP && strip_wide(p, t, k, o) != WIDE_NONE ? 256 : 128;
}

/* Why a 2-D strip pass of --tb=auto has the threads it has (after
 * choose_shape, which may have taken 256 back), for --report: "" at the
 * default 128 or under --block. */
static const char *strip_threads_why(IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o)
{
  static const char *const what[] = {
    [WIDE_OPS] = "divisions or functions", [WIDE_HALO] = "wide halo columns",
    [WIDE_READONLY] = "read-only field's neighbours", [WIDE_BOX] = "box's partial sums"};
  static const char *const why[] = {
    [WIDE_OPS] = " (a float kernel that divides or calls a function at every point: its halo is costly to compute again)",
    [WIDE_HALO] = " (a reach across the strip beyond its reach along i: a wider strip, less of it halo)",
    [WIDE_READONLY] = " (a step that reads a read-only field at offsets, which every step loads again: measured faster so)",
    [WIDE_BOX] = " (a box of reach 3 or more with partial sums: a wider strip, less of it halo)"};
  StripWide w = strip_wide(p, t, k, o);
  if (o->block[0] || t->cuda != TB_STRIP || w == WIDE_NONE)
    return "";
  if (t->block[0] != 256)
    return arena_printf(p->arena, " (not 256, which its %s ask for: their rows would need more shared memory than "
                                  "sm_%d gives a block)", what[w], o->arch);
  return why[w];
}

/* Two columns a thread where a 2-D strip pass runs its fast instance
 * (fast_2d; one or two pairs never take their own columns from shared
 * memory, tb_own_smem), its step reads nothing but its pairs and computes
 * no division or function, and the pairs hold at most two words a point:
 * one float pair, one double pair, or two float pairs. Measured on the
 * H200 with the fast instance (bench/an5d sweep, docs/benchmarks.md
 * 2026-11-29 21:47, GCells/s, 16384^2): at 8 steps of reach 1, j2d5pt
 * 1998.8 against 1743.8 at one column, box2d1r 1601.1 / 1368.6, j2d9pt-gol
 * 1601.4 / 1365.6, j2d5pt.double 1095.5 / 967.9, box2d1r.double 888.6 /
 * 848.2; at 4 steps of reach 2 and more in double, star2d4r.double 362.4 /
 * 270.6, box2d2r.double 402.2 / 373.2 (floats there had two already). Two
 * float pairs (bench/unseen's gs2d, 8192^2, 2026-11-30 00:32): 693.7 /
 * 648.3 at 8 steps; two double pairs, four words, lose (gs2d.double 306.4
 * / 407.2). The general instance of two columns ran slower than one column
 * (j2d5pt at 8 steps, 1280 against 1717, 19:05), so not where it runs: a
 * predicated store, a next field every pass writes, a grid that wraps
 * (fast_2d_loop). The run time's occupancy rule (stn_cuda_tb_fast_pays)
 * runs the fast one there: ptxas gives both instances the same blocks an
 * SM (general / fast registers: j2d5pt 96 / 96, box2d1r 127 / 128,
 * star2d4r.double 252 / 236, box2d2r.double 186 / 206), where at one
 * column star2d4r.double's fast instance (154 against 126) fits fewer and
 * the general one ran. */
static int fast_pair(const IrProgram *p, const IrKernel *k, const IrTb *t)
{
  int words = 0; /* the pairs' words a point: a float's 1, a double's 2 */
  for (int q = 0; q < t->npairs; q++)
    words += p->fields.data[t->cur[q]].ty == TY_DOUBLE ? 2 : 1;
  if (!fast_2d_loop(p, k, t) || words > 2 || tb_point_specials(k))
    return 0;
  for (int i = 0; i < k->nodes.len; i++)
    if (k->nodes.data[i].op == OP_LOAD && ir_tb_pair_of_cur(t, k->nodes.data[i].ref) < 0)
      return 0;
  return 1;
}

/* 2-D TB_STRIP: columns per thread at T steps (psum: partial sums taken).
 * Two at a reach of 2 and more, 4 steps (3 for a box with partial sums up
 * to a reach of 3), one float pair: 1.10-1.48x one column on the H100
 * (star2d2r-4r, box2d2r-3r, j2d9pt; docs/benchmarks.md, the sweep of
 * AN5D's suite; box2d4r at 3 steps: 115 against 183); two at 6 steps for
 * a star of reach 2, floats and doubles, and at the 8 of its doubles
 * (star2d2r.double 536 against 477 at one column; star2); two at 8 steps
 * for a wide halo up to r1 = 4 (wide_halo) and at 4 for a heavy point
 * (heavy_point); two where the fast instance runs them (fast_pair);
 * --tb-vec. */
int tb_strip_vec(const IrProgram *p, const IrTb *t, int steps, int psum, const PassOptions *o)
{
  int rmax = t->reach[0] > t->reach[1] ? t->reach[0] : t->reach[1];
  const IrKernel *k = p->kernels.data[t->kernel];
  if (o->tb_vec)
    return o->tb_vec;
  if (fast_pair(p, k, t) && ((steps == 8 && rmax == 1) || (steps == 4 && rmax >= 2 && pairs_double(p, t))))
    return 2; /* the fast instance's two columns (fast_pair) */
  if ((steps == 6 || (steps == 8 && pairs_double(p, t))) && !psum && star2(k, t))
    return 2; /* floats and doubles at 6 steps, doubles at 8 (auto_steps) */
  if ((steps == 8 && wide_halo(p, k, t) && t->reach[1] <= 4) || (steps == 4 && heavy_point(p, k, t)))
    return 2;
  return rmax >= 2 && (steps == 4 || (steps == 3 && psum && rmax <= 3)) && t->npairs == 1 && !pairs_double(p, t) ? 2 : 1;
}

/* CUDA: the threads of a block cover a tile of the two fastest dimensions
 * (halo included: the T x reach points at each side are computed but not
 * written; one-step passes in 3-D compute all of their tile, IrTb.whole),
 * and march along dimension 0. --block and --march override. */
static void choose_shape(const IrProgram *p, IrTb *t, const IrKernel *k, const PassOptions *o)
{
  t->rows = 1;
  if (k->rank == 2) {
    /* 2-D: each thread keeps `vec` neighbouring columns of every step's
     * last 2r + 1 rows in registers. TB_STRIP (the default): the threads
     * of a block share one strip of columns, each step hands its newest
     * row to the next step's neighbours through shared memory (one
     * barrier per row), so only the block's edges are halo; one column
     * per thread, 128 threads (bench/tb2d.cu, H100: jacobi5 at T = 8 1587
     * GCells/s, against 1391-1495 for 256 threads and 1311-1361 for two
     * columns; 256 for kernels that divide or call a function at every
     * point, tb_strip_threads), at most 256 rows (generated: 1553 GCells/s, 512 rows
     * 1356: the edge strips' blocks, slower, end later), fewer where the
     * run time finds they fill the GPU's waves better. TB_SHFL
     * (--tb-exchange=shfl): each warp its own strip, the neighbours from
     * the next lanes by shuffles, no barriers, but a halo at every warp's
     * edges; 4 columns per lane for up to 3 steps, 2 beyond, 1 for
     * several pairs (lbm_d2q9's nine). */
    t->cuda = o->tb_shfl ? TB_SHFL : TB_STRIP;
    if (t->cuda == TB_SHFL)
      t->vec = o->tb_vec ? o->tb_vec : t->npairs > 2 ? 1 : t->steps <= 3 ? 4 : 2;
    else
      t->vec = tb_strip_vec(p, t, t->steps, t->psum >= 0, o);
    t->own_smem = tb_own_smem(k, t, o);
    t->warps = tb_strip_threads(p, t, k, t->cuda, o) / 32;
    t->block[0] = 32 * t->warps;
    t->block[1] = 1;
    /* 256 threads only where their rows fit a block's shared memory
     * (lbm_d2q9's nine pairs at 6 steps: 148608 bytes, past sm_75's) */
    if (t->cuda == TB_STRIP && !o->block[0] && t->warps > 4) {
      smem_layout(p, t, k);
      if (t->smem > smem_most(o))
        t->warps = 4, t->block[0] = 128;
    }
    t->march = o->march ? o->march : t->cuda == TB_SHFL ? 128 : 256;
    return;
  }
  int ro[MAX_TB_KEEP];
  if (!readonly_point_fields(k, t, ro, MAX_TB_KEEP)) {
    /* 3-D without read-only fields to keep (diffusion3d): TB_STRIP one
     * dimension up. A tile of 32x32 points streams along i; each thread
     * computes two rows of it along j, keeps every step's last planes of
     * its points in registers and hands its newest plane to the next
     * step's in-plane neighbours through shared memory; one barrier per
     * plane (bench/tb3d.cu, H100, diffusion3d 512^3 at T = 3: 480
     * GCells/s against 366 for a thread per point and 297 for the rings
     * of TB_SMEM; two rows let two blocks fit an SM). The one-step passes
     * take their tile from tb_strip_tile_rows (32x16 for doubles of reach
     * 2) and their rows a thread from tb_strip_single_rows (four for
     * floats of reach 2, one for doubles past 64 words). --block gives
     * the tile. */
    t->cuda = TB_STRIP;
    t->vec = 1;
    t->block[0] = o->block[0] ? o->block[0] : 32;
    int ty = tb_strip_tile_rows(p, k, t, o, t->steps);
    /* Within a block's shared memory: a narrower tile (tblock.stn's 3-D
     * box in double at T = 6 needs 235008 bytes at 32x32). */
    size_t most = smem_most(o);
    int want = tb_strip_rows(p, k, t, o, t->steps);
    for (;;) {
      int rows = ty % want == 0 ? want : ty % 2 == 0 ? 2 : 1;
      t->rows = t->block[0] * ty > 128 ? rows : 1;
      t->block[1] = ty / t->rows;
      smem_layout(p, t, k);
      if (o->block[1] || ty <= 8 || t->smem <= most)
        break;
      ty /= 2;
    }
    t->march = tb_strip_march(k, t, o, t->steps);
    t->regs = tb_strip_regs(p, k, t, o, t->rows);
    /* One-step passes: the queue of a thread's own values (2r + 1
     * planes) goes; the center term and the value stored to next read
     * the planes every pass keeps in shared memory (ptxas spilled the
     * doubles' queue at 64 and 128 registers: box3d2r.double 40.1 -> 43.8
     * GCells/s, box3d3r.double 11.2 -> 11.4; H100, docs/benchmarks.md
     * 2026-11-26 01:05), and the block computes its whole tile, none of
     * halo (IrTb.whole: with one step a pass there is none to compute
     * again; a 32x32 tile of reach 4 kept 24x24 of its 1024 points):
     * box3d4r.double 6.3 -> 7.9, box3d3r.double 15.6 -> 17.9,
     * box3d2r.double 45.2 -> 50.1, box3d4r 20.2 -> 22.3, box3d3r 47.1 ->
     * 55.5, box3d2r 109.6 -> 130.9 (the floats at two and four rows had
     * kept the queue, and lost 3-7% without it on overlapped tiles;
     * H100, docs/benchmarks.md 2026-11-26 12:23). */
    int one_row = want == 1, all_smem = 1; /* one row: then t->rows is 1 */
    for (int q = 0; q < t->npairs; q++)
      all_smem &= t->xneed[q];
    t->whole = t->steps == 1 && t->psum >= 0 && t->nx == t->ring && all_smem;
    /* At one row a thread only the points the block keeps add to the
     * partial sums (on overlapped tiles the warps of halo rows skipped
     * them; on whole tiles, threads past the grid's edge). The branch lets
     * ptxas keep the sums without spilling (box3d3r.double: 44
     * registers, none spilled, against 64 and 220 bytes; 14.4 GCells/s
     * against 11.5; box3d4r 17.8 against 16.6 at two rows); where
     * nothing spilled it costs more than it saves (box3d3r 43.6 -> 37.0,
     * box3d2r 110 -> 79, box3d2r.double 45 -> 37, the fused passes of
     * box3d1r 304 -> 294; H100, docs/benchmarks.md 2026-11-26 01:45 and
     * 02:10). */
    t->sums_owned = t->whole && one_row;
    return;
  }
  t->cuda = TB_SMEM;
  /* Read-only fields read at the point itself: one load per pass, not
   * one per step (Himeno's twelve coefficient arrays). Each costs a
   * register per iteration of delay, (T - 1)(r + 1): at most 32 in all,
   * so that the kernel keeps its occupancy (and does not spill). */
  int delay = (t->steps - 1) * (t->reach[0] + 1), budget = delay ? 32 / delay : 0;
  if (budget > MAX_TB_KEEP)
    budget = MAX_TB_KEEP;
  t->nkeep = o->no_tb_reuse ? 0 : readonly_point_fields(k, t, t->keep, budget);
  {
    /* At least half the tile's rows and columns its own: wider blocks for
     * more steps, up to 1024 threads. */
    int hx = 2 * t->steps * t->reach[2], hy = 2 * t->steps * t->reach[1];
    t->block[0] = o->block[0] ? o->block[0] : hx <= 16 ? 32 : 64;
    t->block[1] = o->block[1] ? o->block[1] : 16;
    while (!o->block[1] && t->block[1] < 2 * hy && t->block[0] * t->block[1] * 2 <= 1024)
      t->block[1] *= 2;
  }
  t->march = o->march ? o->march : 48; /* Himeno L --tb=2: 48 planes 0.4598 ms, 32 0.4724 (at most: run-time), 64 0.4698 (07:33) */
}

/* CPU tiles */
static void choose_tiles(const IrProgram *p, IrTb *t, const IrKernel *k, const PassOptions *o)
{
  /* CPU tiles: each thread's two level buffers per pair within ~1 MB
   * (its share of a last-level cache), rows along the contiguous
   * dimension 512 (2-D) or 128 (3-D) points long. */
  int elems = (1 << 20) / (2 * t->npairs * 8), h0 = t->steps * t->reach[0], h1 = t->steps * t->reach[1];
  t->cpu_march = cpu_marches(p, k, t, o);
  if (t->cpu_march) {
    /* 3-D, on grids periodic along k at most (a tile's row wraps like an
     * overlapped tile's): a tile of TJ x 256 points with its halo marches
     * along i, 128 planes per tile; each step's ring of 2r + 1 planes, all
     * pairs, within ~2.5 MB per thread (bench/cpu_tb3d.c, diffusion3d 256^3 on
     * two cores: 1.42x single steps at T = 4 with 64x256, 1.60x at T = 8
     * with 128x256, 2026-11-23). */
    int h2 = t->steps * t->reach[2], esum = 0;
    t->march_ring = 2 * t->reach[0] + 1;
    for (int q = 0; q < t->npairs; q++)
      esum += type_bytes(p->fields.data[t->cur[q]].ty);
    t->tile[0] = 128;
    t->tile[2] = 256;
    t->tile[1] = 128;
    while (t->tile[1] > 8 && (double)(t->steps + 1) * t->march_ring * (t->tile[1] + 2 * h1) * (256 + 2 * h2) * esum > 2.5e6)
      t->tile[1] /= 2;
    return;
  }
  if (k->rank == 2) {
    t->tile[1] = 512;
    t->tile[0] = elems / (512 + 2 * h1) - 2 * h0;
    if (t->tile[0] < 8)
      t->tile[0] = 8;
  } else {
    int h2 = t->steps * t->reach[2], side = 8;
    while ((side + 8 + 2 * h0) * (side + 8 + 2 * h1) * (128 + 2 * h2) <= elems)
      side += 8;
    t->tile[0] = t->tile[1] = side;
    t->tile[2] = 128;
  }
}

/* The fused passes of `steps` steps of the loop s whose legal pairs are
 * tb: their shape, shared memory and the words --report prints; NULL with
 * *fail saying why where no block keeps a point of its own or the rings
 * outgrow shared memory. */
static IrTb *build_tb(IrProgram *p, const PassOptions *o, IrStmt *s, const IrTb *tb, int steps, const char **fail)
{
  IrTb *t = arena_alloc(p->arena, sizeof *t);
  *t = *tb;
  t->steps = steps;
  const IrKernel *k = p->kernels.data[t->kernel];
  t->psum = tb_psum_for(p, k, t, o);
  choose_shape(p, t, k, o);
  if (t->cuda != TB_STRIP)
    t->psum = -1;
  /* The general instance's loads and stores outside the region cost
   * a third of its speed (diffusion3d --tb=4: 353 against 554
   * GCells/s; Himeno L --tb=2: 2.46 against 2.77 TFLOPS;
   * docs/benchmarks.md, 2026-11-23). */
  t->fast_instance = o->target == TARGET_CUDA && (k->rank == 3 || fast_2d(p, k, t));
  /* 2-D strips: the pass's body also without the store of step
   * T - 1 where it is not always needed (prev_live covers
   * predicated stores; cg_cuda_tb.c print_tb_tail). Not the
   * warp-shuffle strips: not measured in this form (as a kernel
   * of its own, ptxas spilled theirs: jacobi5 --tb=8, 80
   * registers and 12 bytes spilled against 96) */
  t->prev_instance = o->target == TARGET_CUDA && k->rank == 2 && t->cuda == TB_STRIP && !t->prev_live;
  /* 3-D strip passes: in the steady iterations a row of threads
   * whose rows none of the later steps need skips the step
   * (cg_cuda_tb.c print_2d_steps). Measured on the H200
   * (docs/benchmarks.md 2026-11-29 09:47-09:52, fused passes with
   * and without): star3d1r 1.03x, box3d19 1.04x, grad3d 1.035x,
   * diffusion3d 1.02x; but star3d1r.double 0.987x and aniso3d
   * (reach 2 along the march) 0.86x. So floats of reach 1 along
   * the march, without partial sums (a box's sums serve rows of
   * later iterations). */
  t->skip_rows = k->rank == 3 && t->fast_instance && t->cuda == TB_STRIP && t->psum < 0 && !t->whole && t->reach[0] == 1 &&
                 !pairs_double(p, t);
  /* (partial sums evaluate a row's terms in other rows' iterations) */
  if (o->target == TARGET_CUDA && k->rank == 2 && !p->grids.data[k->grid].periodic[0] && t->psum < 0)
    row_band(p, k, t);
  smem_layout(p, t, k);
  t->march_fixed = o->march != 0;
  t->march_area = t->march_fixed ? TB_AREA_NONE : area_march(k, t, s->tb_model);
  choose_tiles(p, t, k, o);
  t->halo = steps * t->reach[k->rank - 1];
  if (t->cuda != TB_SMEM && k->rank == 2) /* whole threads of halo */
    t->halo = (t->halo + t->vec - 1) / t->vec * t->vec;
  /* TB_SHFL: every warp's strip has its halo */
  t->own[0] = t->cuda == TB_SHFL ? t->warps * (32 * t->vec - 2 * t->halo)
              : t->cuda == TB_STRIP ? t->block[0] * t->vec - (t->whole ? 0 : 2 * t->halo)
                                    : t->block[0] - 2 * t->halo;
  t->own[1] = k->rank == 3 ? t->block[1] * t->rows - (t->whole ? 0 : 2 * steps * t->reach[1]) : 1;
  if (o->target == TARGET_CUDA && (t->own[0] < 1 || t->own[1] < 1)) {
    *fail = arena_printf(p->arena, "a %dx%d block has no points of its own after %d steps of reach %d:%d; "
                         "use a larger --block or fewer steps", t->block[0], t->block[1] * t->rows, steps,
                         t->reach[k->rank - 2], t->reach[k->rank - 1]);
    return NULL;
  }
  /* TB_SMEM's rings: tblock.stn's deep3 (double, reach 2 along i)
   * at T = 5 needs 245760 bytes at 32x32, and a narrower tile has
   * no rows of its own. */
  if (o->target == TARGET_CUDA && t->smem > smem_most(o)) {
    *fail = arena_printf(p->arena, "%d steps of %s need %zu bytes of shared memory per %dx%d block, more than "
                         "the %zu a block may have on sm_%d; use fewer steps", steps, k->name, t->smem,
                         t->block[0], t->block[1] * t->rows, smem_most(o), o->arch);
    return NULL;
  }
  const char *reach = k->rank == 3 ? arena_printf(p->arena, "%d:%d:%d", t->reach[0], t->reach[1], t->reach[2])
                                   : arena_printf(p->arena, "%d:%d", t->reach[0], t->reach[1]);
  if (o->target == TARGET_CUDA && t->cuda == TB_SHFL)
    t->why = arena_printf(p->arena, "%d steps per pass of %s (reach %s): each warp streams along i with every "
                          "step's rows in registers, %d columns per lane, neighbours by warp shuffles; %d "
                          "warps per block, marching %s%d rows", steps, k->name, reach, t->vec, t->warps,
                          t->march_fixed ? "" : "up to ", t->march);
  else if (o->target == TARGET_CUDA && t->cuda == TB_STRIP && k->rank == 3)
    t->why = arena_printf(p->arena, "%d step%s per pass of %s (reach %s): each block streams a %dx%d tile along i "
                          "%s%s, %d row%s per thread%s, in-plane neighbours "
                          "through shared memory; %dx%d threads per block, marching %s%d planes", steps,
                          steps == 1 ? "" : "s", k->name, reach, t->block[0], t->block[1] * t->rows,
                          t->whole ? "with its planes in shared memory only (no register queue)"
                                      : "with every step's planes in registers",
                          t->whole ? " and computes all of it (no halo to compute again: its threads load the "
                                     "planes' rim too)" : "",
                          t->rows, t->rows == 1 ? "" : "s",
                          t->rows == 4 && steps > 1 && !o->tb_rows
                              ? " (a float box of reach 1 with partial sums: an iteration's loads, barrier "
                                "and stores serve four points; 1.12-1.14x two rows, docs/tblock.md)"
                              : "",
                          t->block[0], t->block[1], t->march_fixed ? "" : "up to ",
                          t->march);
  else if (o->target == TARGET_CUDA && t->cuda == TB_STRIP)
    t->why = arena_printf(p->arena, "%d steps per pass of %s (reach %s): each block streams along i with every "
                          "step's rows in registers, %d column%s per thread, neighbours through shared memory%s; "
                          "%d threads per block%s, marching %s%d rows%s", steps, k->name, reach, t->vec,
                          t->vec == 1 ? "" : "s",
                          t->own_smem ? " (the own column too, for the pairs kept there: fewer registers, "
                                        "more than two pairs; -fno-tb-own-smem)" : "",
                          t->block[0],
                          strip_threads_why(p, k, t, o),
                          t->march_fixed ? "" : "up to ", t->march,
                          t->march_area == TB_AREA_NONE ? ""
                          : arena_printf(p->arena, " (where the kernel has two blocks a multiprocessor, from the "
                                                   "grid's area instead, for %s, up to 384; docs/tblock.md)",
                                         t->march_area == TB_AREA_LIGHT
                                             ? "light steps: 128 rows at 8192^2, as sqrt(rows x columns)^1.5"
                                             : "heavier steps: about sqrt(rows x columns) / 48"));
  else if (o->target == TARGET_CUDA)
    t->why = arena_printf(p->arena, "%d steps per pass of %s (reach %s): a 2.5-D pipeline of time levels in "
                          "shared memory, block %dx%d, marching %s%d planes%s", steps, k->name, reach,
                          t->block[0], t->block[1], t->march_fixed ? "" : "up to ", t->march,
                          t->nkeep ? arena_printf(p->arena, ", %d read-only field%s loaded once per pass",
                                                  t->nkeep, t->nkeep == 1 ? "" : "s") : "");
  else if (t->cpu_march)
    t->why = arena_printf(p->arena, "%d steps per pass of %s (reach %s): each thread marches a %dx%d tile along "
                          "i, %d planes, every step's last %d planes in a ring", steps, k->name, reach,
                          t->tile[1], t->tile[2], t->tile[0], t->march_ring);
  else
    t->why = arena_printf(p->arena, "%d steps per pass of %s (reach %s): overlapped tiles in private buffers",
                          steps, k->name, reach);
  if (t->psum >= 0)
    t->why = arena_printf(p->arena, "%s; partial sums: each arriving %s adds its part to the sums of the %d %s "
                          "it serves%s", t->why, k->rank == 3 ? "plane" : "row", 2 * t->reach[0] + 1,
                          k->rank == 3 ? "planes" : "rows",
                          t->sums_owned ? ", at the points the block keeps only" : "");
  if (o->target == TARGET_CUDA) /* runtime/stn_cuda.h stn_cuda_tb_pays */
    t->why = arena_printf(p->arena, "%s; at run time, single steps instead where a step's fields fit in the L2 "
                          "cache or the grid has fewer blocks than the GPU has multiprocessors", t->why);
  if (o->target == TARGET_CUDA && o->tb_rows && !(t->cuda == TB_STRIP && k->rank == 3))
    t->why = arena_printf(p->arena, "%s (--tb-rows ignored: rows a thread are the 3-D strip kernel's)", t->why);
  return t;
}

/* --tb=auto on CUDA: the candidates the run time times in the loop's
 * first passes (runtime/stn_cuda.h stn_cuda_tb_trial) besides the fused
 * pass of T steps, and --report's words for them.
 *
 * T single steps, in 3-D. The depths --tb=auto takes were measured on
 * the H100; on a GPU of faster memory for the same chip single steps can
 * win (H200: aniso3d, grad3d, box3d19 and diff3dc ran 0.88-0.90x single
 * steps, docs/benchmarks.md 2026-11-28 17:53). 3-D passes only: they
 * compute a tile's rim again and run short of registers, and ran 0.88x
 * to 1.9x their single steps on the H200; 2-D passes ran 1.09x to 4x
 * (box2dnl to j2d5pt), and their two timed passes of single steps would
 * cost a light one 3% (j2d5pt: 16 single steps at a third of a fused
 * one's rate in 125 passes).
 *
 * Two fused passes of T / 2 steps (IrTb.half), in 2-D and 3-D, for an
 * even T of 4 and more: the depth the measured rules give is the best
 * of a sweep on most stencils but not all, and the half depth is the one
 * that beat it where it was not (H200: sqrt2d.double 4 steps 1.07x its
 * 8, grad3d 2 steps 1.05x its 4; bench/unseen, docs/benchmarks.md
 * 2026-11-30 00:32). A half pass computes what a fused one does in half
 * the rows of halo, so the slower of the two costs the trial at most
 * its two timed passes. -fno-tb-half leaves it out (one kernel fewer to
 * compile). An explicit --tb=N is kept: no trial. */
static void add_trial(IrProgram *p, const PassOptions *o, IrStmt *s, const IrTb *tb, IrTb *t)
{
  const IrKernel *k = p->kernels.data[t->kernel];
  if (o->target != TARGET_CUDA || !tb_auto(o, k))
    return;
  int T = t->steps;
  t->trial_single = k->rank == 3;
  if (T >= 4 && T % 2 == 0 && !o->no_tb_half) {
    const char *fail = NULL;
    t->half = build_tb(p, o, s, tb, T / 2, &fail);
    if (t->half) {
      t->half->tag = "tb_half";
      t->half->share_agree = t->fast_instance && t->half->fast_instance;
    }
  }
  if (!ir_tb_timed(t))
    return;
  const char *single = t->trial_single ? arena_printf(p->arena, "%d single step%s", T, T == 1 ? "" : "s") : NULL;
  const char *half = t->half ? arena_printf(p->arena, "two fused passes of %d steps", T / 2) : NULL;
  t->why = arena_printf(p->arena, "%s, or where the loop's first passes, timed, find %s%s%s 3%% faster than a fused "
                        "pass (--tb=auto; STN_TB_TRIAL=0 keeps the passes)", t->why, single ? single : "",
                        single && half ? " or " : "", half ? half : "");
}

/* The statements that run after a block ends: the rest of each enclosing
 * block (a time loop inside `timer t { ... }` is followed by main's
 * statements after the timer). */
typedef struct After {
  const IrBlock *blk;
  int from;
  const struct After *up;
} After;

static int mentions_after(const IrProgram *p, const After *a, int f)
{
  for (; a; a = a->up)
    if (mentions(p, a->blk, a->from, f))
      return 1;
  return 0;
}

static void visit(IrProgram *p, const PassOptions *o, IrBlock *blk, int nested, const After *up)
{
  for (int i = 0; i < blk->len; i++) {
    IrStmt *s = blk->data[i];
    if (s->kind == H_FOR || s->kind == H_WHILE) {
      int has_call = 0, has_swap = 0;
      for (int j = 0; j < s->body.len; j++) {
        has_call |= s->body.data[j]->kind == H_CALL;
        has_swap |= s->body.data[j]->kind == H_SWAP;
      }
      if (has_call && has_swap) {
        IrTb tb = { 0 };
        const char *why = s->kind == H_WHILE ? "it is a while loop: its condition is tested after every step" : legal(p, s, &tb);
        if (!why) {
          /* The next fields are read after the loop, in the rest of its
           * block or of an enclosing one (after a timer around it), or the
           * loop runs again: every pass must leave step s + T - 1 in
           * them. So does a predicated store: where it does not fire, step
           * t keeps step t - 2, which the next pass reads from next. (Set
           * before the model, whose 2-D columns a thread depend on it:
           * tb_strip_vec.) */
          tb.prev_live = nested || tb.predicated;
          for (int q = 0; q < tb.npairs; q++)
            tb.prev_live |= mentions(p, blk, i + 1, tb.next[q]) || mentions_after(p, up, tb.next[q]);
        }
        /* the GPU time model of the strip kernels' candidates, for --report */
        if (!why && o->target == TARGET_CUDA && !o->mpi && !o->tb_shfl) {
          const IrKernel *kk = p->kernels.data[tb.kernel];
          int ro[MAX_TB_KEEP];
          if (kk->rank == 2 || (kk->rank == 3 && !readonly_point_fields(kk, &tb, ro, MAX_TB_KEEP)))
            s->tb_model = tb_model(p, kk, &tb, o, p->arena);
        }
        const char *one_why = "temporal blocking is off (--tb=N or --tb=auto turns it on)"; /* why steps is 1 */
        int steps = why || o->no_tb ? 1 : steps_for(p, p->kernels.data[tb.kernel], &tb, o, &one_why);
        if (!why && o->no_tb)
          why = "-fno-tb";
        if (!why && o->mpi && steps > 1) {
          /* Across ranks the steps stay single kernels; what blocking buys
           * there is fewer exchanges (passes/mpi.c: pass_mpi_deep). */
          IrGrid *g = &p->grids.data[p->kernels.data[tb.kernel]->grid];
          int wraps = 0;
          for (int d = 0; d < g->rank; d++)
            wraps |= g->wrap[d];
          if (tb_auto(o, p->kernels.data[tb.kernel]))
            why = "--mpi: --tb=auto blocks no loop across ranks (--tb=N exchanges N-deep halos once every N steps); "
                  "single steps, each after the exchange it needs";
          else if (wraps)
            why = "--mpi: temporal blocking across ranks is not supported on a grid that wraps (the ghost points "
                  "across the wrap have no position to compute them at); single steps, each after its own exchange";
          else {
            if (steps > g->ca_steps)
              g->ca_steps = steps;
            why = arena_printf(p->arena, "--mpi: communication-avoiding across ranks instead: halos %d steps deep, "
                                         "exchanged once every %d steps, each step computing past the rank's part "
                                         "what the next ones read (single-step kernels)",
                               steps, steps);
          }
        }
        int single_strip = !why && steps == 1 && tb_strip_single(p, p->kernels.data[tb.kernel], &tb, o);
        if (!why && steps <= 1 && !single_strip)
          why = one_why;
        if (!why && steps > 8)
          why = "more than 8 steps per pass is not supported";
        s->tb_why = why;
        if (!why) {
          const char *fail = NULL;
          IrTb *t = build_tb(p, o, s, &tb, steps, &fail);
          if (!t) {
            s->tb_why = fail;
            visit(p, o, &s->body, 1, NULL);
            continue;
          }
          s->tb = t;
          add_trial(p, o, s, &tb, t);
        }
      }
      visit(p, o, &s->body, 1, NULL);
      continue;
    }
    After after = { blk, i + 1, up };
    visit(p, o, &s->body, nested || s->kind == H_IF, &after);
    visit(p, o, &s->els, nested || s->kind == H_IF, &after);
  }
}

/* The scratch field of f (a twin, allocated like it), added once. */
static int twin(IrProgram *p, int f)
{
  for (int x = 0; x < p->fields.len; x++)
    if (p->fields.data[x].scratch_of == f)
      return x;
  IrField sf = p->fields.data[f];
  sf.name = arena_printf(p->arena, "stn_tb_%s", p->fields.data[f].name);
  sf.label = sf.name;
  sf.scratch_of = f;
  vec_push(&p->fields, sf);
  return p->fields.len - 1;
}

/* Scratch buffers: one per pair, like its cur field, and with a predicated
 * store one like its next field. */
static void add_scratch(IrProgram *p, IrBlock *blk)
{
  for (int i = 0; i < blk->len; i++) {
    IrStmt *s = blk->data[i];
    for (IrTb *t = s->tb; t; t = t->half) /* the half passes share the fused ones' */
      for (int q = 0; q < t->npairs; q++) {
        t->scratch[q] = twin(p, t->cur[q]);
        t->scratch_next[q] = t->predicated ? twin(p, t->next[q]) : -1;
      }
    add_scratch(p, &s->body);
    add_scratch(p, &s->els);
  }
}

void pass_tblock(IrProgram *p, const PassOptions *o)
{
  if (o->target == TARGET_CUDA) /* the time model (tb_model) needs each kernel's flops and bytes */
    pass_cost(p, o);
  visit(p, o, &p->main, 0, NULL);
  add_scratch(p, &p->main);
  if (o->mpi)
    pass_mpi_deep(p);
}
