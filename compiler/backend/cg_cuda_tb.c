/* cg_cuda_tb.c: temporally blocked kernels for CUDA (the decision, and
 * what a pass computes, are in passes/tblock.c and ir.h, IrTb).
 *
 * A 2.5-D pipeline of time levels: a block's threads cover a tile of the
 * fastest dimensions (one point each), halo included, and march along
 * dimension 0. When plane s of step 0 arrives (from cur), step 1 computes
 * plane s - r, step 2 plane s - 2r, ..., step T plane s - T r, each from
 * the 2r + 1 planes of the step before, kept in shared memory in a ring
 * per step. Step t is valid on the tile narrowed by t x reach at each
 * side; the tile's own points, narrowed by T x reach, go out: step T to
 * scratch (and into the reductions), step T - 1 to next (when something
 * reads it later). Points outside the kernel's region take, at step t,
 * cur's value (t even) or next's (t odd). Reads of cur (anywhere) and
 * next (outside the region) never meet writes of scratch and of next
 * (inside the region). */
#include "backend/cg.h"
#include "backend/cg_cuda.h"
#include <limits.h>
#include <stdlib.h>

/* The step being printed: loads of cur fields read step t - 1's ring
 * (TB_SMEM), or its registers in phase ph, column v (TB_SHFL, TB_STRIP). */
typedef struct TbCuda {
  const IrTb *tb;
  int t, ph, v, ns;
  int psum;           /* printing partial sums (IrTb.psum): every load reads the newest row of step t - 1 */
  const char *xneed;  /* TB_STRIP: IrTb.xneed; NULL otherwise */
  int nx;             /* TB_STRIP: IrTb.nx; when NX == NS the slot of iteration it_ is the phase (constant), else
                       * the run-time ws_ */
  int lean;           /* 2-D: the steady range computed once, and no row checks it implies (print_2d_kernel) */
  int steady;         /* printing the straight code of the steady iterations (every step's row inside) */
} TbCuda;

/* TB_STRIP: the slot this iteration's rows go to in shared memory: the
 * phase when the rings have as many slots as the registers', else ws_. */
static const char *strip_wslot(const IrProgram *p, const TbCuda *c)
{
  return c->nx == c->ns ? arena_printf(p->arena, "%d", c->ph) : "ws_";
}

/* TB_SMEM: is field f one whose own-point value step 1 keeps (IrTb.keep)? */
static int kept(const IrTb *tb, int f)
{
  for (int j = 0; j < tb->nkeep; j++)
    if (tb->keep[j] == f)
      return 1;
  return 0;
}

/* Skewed schedule: in the iteration that brings row s of step 0, step t
 * computes row s - t LAG, LAG = r + 1, so that every step reads only rows
 * the step before finished in earlier iterations: the steps of one
 * iteration are independent (computed from T down to 1), which keeps
 * many loads and sums in flight, and shared memory needs one barrier per
 * iteration. */
static int lag(const IrTb *tb) { return tb->reach[0] + 1; }

/* The check that row q_ of step t lies in this block's march, [i0_,
 * i1_), as the stores to next and the reductions need it. In the steady
 * iterations (it_ from T (2 r + 1) to rows_ + 2 T r, s_ = i0_ - T r +
 * it_, see the loop's head) step t's row s_ - t LAG lies in [i0_ + T (r +
 * 1) - t LAG, i1_ + T r - t LAG]: a bound that holds is not checked. */
static const char *march_check(const IrProgram *p, const TbCuda *c, int t)
{
  int T = c->tb->steps, R0 = c->tb->reach[0], LAG = lag(c->tb);
  int lo = !c->steady || T * (R0 + 1) - t * LAG < 0, hi = !c->steady || T * R0 - t * LAG >= 0;
  return arena_printf(p->arena, "%s%s", lo ? " && q_ >= i0_" : "", hi ? " && q_ < i1_" : "");
}

static int pos_mod(int a, int m) { return ((a % m) + m) % m; }
static int floor_div(int a, int m) { return a >= 0 ? a / m : -((-a + m - 1) / m); }

/* 2-D kernels: where column v + dj of step t - 1's plane q_ + di lives: a
 * register of this lane (L = 0) or of lane + L. */
static void neighbour_source(const TbCuda *c, int di, int dj, int *slot, int *vv, int *L)
{
  int V = c->tb->vec;
  if (c->psum)
    di = c->tb->reach[0];
  *slot = pos_mod(c->ph + di - c->t * lag(c->tb), c->ns);
  *L = floor_div(c->v + dj, V);
  *vv = pos_mod(c->v + dj, V);
}

/* 2-D TB_STRIP: where in a row of shared memory the thread L lanes away
 * keeps its column vv (IrTb.xedge: only its first and last reach columns,
 * one word per lane; else the whole strip, V_ words per lane). */
static const char *xcol(const IrProgram *p, const IrTb *tb, int L, int vv)
{
  if (!tb->xedge) {
    int col = L * tb->vec + vv;
    if (col == 0) /* the thread's own first column */
      return " + PAD_ + tid_ * V_";
    return arena_printf(p->arena, " + PAD_ + tid_ * V_ %c %d", col < 0 ? '-' : '+', abs(col));
  }
  int R1 = tb->reach[1], e = vv < R1 ? vv : vv - tb->vec + 2 * R1;
  return arena_printf(p->arena, " + %stid_ + %d", e ? arena_printf(p->arena, "%d * EW_ + ", e) : "", 1 + L);
}

/* 2-D TB_STRIP: whether column v goes to shared memory (a neighbour reads it) */
static int xstored(const IrTb *tb, int v)
{
  return !tb->xedge || v < tb->reach[1] || v >= tb->vec - tb->reach[1];
}

/* 2-D TB_STRIP: column vv of the thread L lanes away in pair q's row at
 * offset di of step t - 1, from shared memory, where that thread wrote it
 * LAG - di iterations ago (phase ph) */
static const char *xrow_load(const IrProgram *p, const TbCuda *c, int q, int t, int ph, int di, int L, int vv)
{
  if (c->nx == c->ns)
    return arena_printf(p->arena, "x%d_[(%d * NX_ + %d) * W_%s]", q, t - 1, pos_mod(ph - (lag(c->tb) - di), c->nx),
                        xcol(p, c->tb, L, vv));
  return arena_printf(p->arena, "x%d_[(%d * NX_ + xs_%c%d_) * W_%s]", q, t - 1, di < 0 ? 'm' : 'p', abs(di),
                      xcol(p, c->tb, L, vv));
}

/* 2-D TB_STRIP (IrTb.own_smem): pair q's rows are in shared memory only,
 * its own column too, no registers of them kept */
static int own_in_smem(const IrTb *tb, int q)
{
  return tb->own_smem && tb->xneed[q];
}

static void shfl_name(Buf *b, int q, int slot, int vv, int L)
{
  buf_printf(b, "sh%d_%d_%d_%c%d_", q, slot, vv, L < 0 ? 'm' : 'p', abs(L));
}

/* 3-D TB_STRIP: the thread's point v (its column id, row v / V_, column
 * v % V_) reads plane q_ + di of step t - 1 at (dj, dk): from its own
 * registers when that point is one of its own, else from the plane the
 * owner wrote to shared memory LAG - di iterations ago. */
static void reg_load_3d(Printer *pr, const TbCuda *c, int q, const IrNode *n)
{
  const IrProgram *p = pr->p;
  int V = c->tb->vec, RY = c->tb->rows, di = c->psum ? c->tb->reach[0] : n->off[0], LAG = lag(c->tb);
  int yy = c->v / V + n->off[1], vv = c->v % V + n->off[2];
  if (yy >= 0 && yy < RY && vv >= 0 && vv < V && !c->tb->whole) {
    buf_printf(pr->b, "q%d_[%d][%d][%d]", q, c->t - 1, pos_mod(c->ph + di - c->t * LAG, c->ns), yy * V + vv);
    return;
  }
  const char *slot = c->nx == c->ns ? arena_printf(p->arena, "%d", pos_mod(c->ph - (LAG - di), c->nx))
                                    : arena_printf(p->arena, "xs_%c%d_", di < 0 ? 'm' : 'p', abs(di));
  buf_printf(pr->b, "x%d_[(%d * NX_ + %s) * PL_ + xo_", q, c->t - 1, slot);
  if (yy)
    buf_printf(pr->b, " %c %s", yy < 0 ? '-' : '+', abs(yy) == 1 ? "W_" : arena_printf(p->arena, "%d * W_", abs(yy)));
  if (vv)
    buf_printf(pr->b, " %c %d", vv < 0 ? '-' : '+', abs(vv));
  buf_puts(pr->b, "]");
}

static int reg_load(Printer *pr, const IrNode *n)
{
  const TbCuda *c = pr->hook;
  int q = ir_tb_pair_of_cur(c->tb, n->ref);
  if (q < 0)
    return 0;
  if (pr->k->rank == 3) {
    reg_load_3d(pr, c, q, n);
    return 1;
  }
  int slot, vv, L;
  neighbour_source(c, n->off[0], n->off[1], &slot, &vv, &L);
  if (L == 0 && own_in_smem(c->tb, q)) /* its own column, from shared memory too (IrTb.own_smem) */
    buf_puts(pr->b, xrow_load(pr->p, c, q, c->t, c->ph, n->off[0], 0, vv));
  else if (L == 0)
    buf_printf(pr->b, "q%d_[%d][%d][%d]", q, c->t - 1, slot, vv);
  else
    shfl_name(pr->b, q, slot, vv, L);
  return 1;
}

static int ring_load(Printer *pr, const IrNode *n)
{
  const TbCuda *c = pr->hook;
  int q = ir_tb_pair_of_cur(c->tb, n->ref);
  if (q < 0 && kept(c->tb, n->ref) && !n->off[0] && !n->off[1] && !n->off[2]) {
    /* step 1 loaded it at this point, (t - 1) LAG iterations ago */
    const char *f = cname(pr->p, pr->p->fields.data[n->ref].name);
    if (c->t == 1)
      buf_printf(pr->b, "kp_%s_", f);
    else
      buf_printf(pr->b, "kq_%s_[%d]", f, (c->t - 1) * lag(c->tb) - 1);
    return 1;
  }
  if (q < 0)
    return 0;
  int r = pr->k->rank;
  buf_printf(pr->b, "lv%d_[%d][sl_%c%d_]", q, c->t - 1, n->off[0] < 0 ? 'm' : 'p', abs(n->off[0]));
  if (r == 3)
    buf_printf(pr->b, "[ty_ %c %d]", n->off[1] < 0 ? '-' : '+', abs(n->off[1]));
  buf_printf(pr->b, "[tx_ %c %d]", n->off[r - 1] < 0 ? '-' : '+', abs(n->off[r - 1]));
  return 1;
}

/* Wrapped coordinate `name` of unwrapped `expr` along dimension d (any
 * number of periods away: a block's halo of T x reach points can be wider
 * than the grid). */
static void print_wrapped(Buf *b, const IrGrid *g, const char *gname, int d, const char *name, const char *expr, int depth)
{
  indent(b, depth);
  if (g->periodic[d])
    buf_printf(b, "const I %s = (I)stn_wrap(%s, (long)%s.n[%d]);\n", name, expr, gname, d);
  else
    buf_printf(b, "const I %s = (I)(%s);\n", name, expr);
}

static void print_allocated(Buf *b, const IrGrid *g, const char *gname, int d, const char *name)
{
  if (g->periodic[d])
    buf_puts(b, "true");
  else
    buf_printf(b, "(%s >= -%d && %s < (I)%s.n[%d] + %d)", name, g->halo_lo[d], name, gname, d, g->halo_hi[d]);
}

/* When a pass writes step T - 1 into next: the template argument P_ of a
 * 2-D kernel's body (IrTb.prev_instance; never true in the fast instance),
 * else the run-time prev_, in the general instance where the kernel has a
 * fast one (F_) */
static const char *prev_cond(const IrTb *tb)
{
  return tb->prev_instance ? "P_" : tb->fast_instance ? "!F_ && prev_" : "prev_";
}

/* One parameter: ", type name" in a signature (decl), else ", name" */
static void tb_param(Buf *b, int decl, const char *type, const char *name)
{
  if (decl)
    buf_printf(b, ", %s %s", type, name);
  else
    buf_printf(b, ", %s", name);
}

/* The blocked kernel's parameters: cur fields with their scratch, next
 * fields, the other fields read, the partials, the region, prev_ (write
 * step T - 1 into next; not the body's), M_ (rows of dimension 0 per
 * block), and the values the host passes. decl: with their types (a
 * signature); else their names (the arguments a kernel passes its
 * body). */
static void print_tb_params(Buf *b, const IrProgram *p, const IrTb *tb, const int *use_level, char **names, int prev,
                            int decl)
{
  const IrKernel *k = p->kernels.data[tb->kernel];
  buf_printf(b, "%s%s", decl ? "const stn_grid " : "", cname(p, p->grids.data[k->grid].name));
  for (int f = 0; f < p->fields.len; f++) {
    int qc = ir_tb_pair_of_cur(tb, f), qn = ir_tb_pair_of_next(tb, f);
    const char *ty = ctype(p->fields.data[f].ty), *nm = cname(p, p->fields.data[f].name);
    const char *in = arena_printf(p->arena, "const %s *__restrict__", ty), *out = arena_printf(p->arena, "%s *__restrict__", ty);
    const char *t2 = qc >= 0 ? p->fields.data[tb->scratch[qc]].name
                     : qn >= 0 && tb->predicated ? p->fields.data[tb->scratch_next[qn]].name : NULL;
    if (t2) {
      tb_param(b, decl, in, nm);
      tb_param(b, decl, out, t2);
    } else if (qn >= 0) {
      tb_param(b, decl, out, nm);
    } else if (ir_reads_field(k, f)) {
      tb_param(b, decl, in, nm);
    }
  }
  if (k->reds.len)
    tb_param(b, decl, "double *__restrict__", "stn_part");
  for (int d = 0; d < k->rank; d++) {
    tb_param(b, decl, "long", arena_printf(p->arena, "%s_lo_", index_name(d)));
    tb_param(b, decl, "long", arena_printf(p->arena, "%s_hi_", index_name(d)));
  }
  if (prev)
    tb_param(b, decl, "int", "prev_");
  tb_param(b, decl, "int", "M_");
  for (int i = 0; i < k->nodes.len; i++)
    if (cuda_passed(k, use_level, i))
      tb_param(b, decl, ctype(k->nodes.data[i].ty), names[i]);
}

/* The blocked kernel's title comment and signature, or (IrTb.prev_instance)
 * its body's, a device function that print_tb_tail's kernel calls. */
static void print_tb_head(Buf *b, const IrProgram *p, const IrTb *tb, int threads, const int *use_level, char **names)
{
  const char *kn = ir_tb_stem(p, tb);
  const IrKernel *k = p->kernels.data[tb->kernel];
  print_kernel_title(b, p, k);
  buf_printf(b, "\n * temporally blocked: %s */\n", tb->why);
  if (tb->prev_instance) {
    buf_printf(b, "template <typename I%s, bool P_>  /* P_: this pass writes step T - 1 into next too */\n"
                  "__device__ __forceinline__ void %s_body_(", tb->fast_instance ? ", bool F_" : "", kn);
    print_tb_params(b, p, tb, use_level, names, 0, 1);
    buf_puts(b, ")\n{\n");
    return;
  }
  /* 3-D TB_STRIP: IrTb.regs registers a thread; for floats 64, two blocks
   * of 512 threads per SM (diffusion3d --tb=4 at 97 registers, one block:
   * 272 GCells/s; capped, 16 bytes spilled: 353; H100, 08:55 UTC) */
  int blocks = tb->regs ? 65536 / (threads * tb->regs) : 0;
  const char *minb = k->rank == 3 && tb->cuda == TB_STRIP && blocks >= 1 ? arena_printf(p->arena, ", %d", blocks) : "";
  buf_printf(b, "template <typename I%s>\n__global__ void __launch_bounds__(%d%s) %s_kernel_(",
             tb->fast_instance ? ", bool F_" : "", threads, minb, kn);
  print_tb_params(b, p, tb, use_level, names, 1, 1);
  buf_puts(b, ")\n{\n");
}

/* IrTb.prev_instance: after the body, the kernel, which runs the body
 * without the stores of step T - 1 where the pass does not need them, a
 * branch the whole block takes. One kernel, so ptxas allocates its
 * registers as for the body with the stores (two kernels, one without
 * them, took fewer registers and more blocks an SM there, which ran
 * aniso2di 0.82x and star2d1r.double 0.99x; H200, docs/benchmarks.md
 * 2026-11-29 16:34-17:18). */
static void print_tb_tail(Buf *b, const IrProgram *p, const IrTb *tb, int threads, const int *use_level, char **names)
{
  const char *kn = ir_tb_stem(p, tb);
  if (!tb->prev_instance)
    return;
  int fv = tb->fast_instance; /* F_: prev_ is false (the wrapper's fast_) */
  buf_printf(b, "template <typename I%s>\n__global__ void __launch_bounds__(%d) %s_kernel_(", fv ? ", bool F_" : "", threads,
             kn);
  print_tb_params(b, p, tb, use_level, names, 1, 1);
  buf_printf(b, ")\n{\n  if (%s)\n    %s_body_<I%s>(", fv ? "!F_ && prev_" : "prev_", kn, fv ? ", F_, !F_" : ", true");
  print_tb_params(b, p, tb, use_level, names, 0, 0);
  buf_printf(b, ");\n  else\n    %s_body_<I%s, false>(", kn, fv ? ", F_" : "");
  print_tb_params(b, p, tb, use_level, names, 0, 0);
  buf_puts(b, ");\n}\n\n");
}

/* 3-D TB_STRIP: the offset of the thread's point (row y, column v) from
 * its first in a plane of shared memory (xo_). */
static const char *smem_point(const IrProgram *p, int y, int v)
{
  const char *rows = y == 0 ? "" : y == 1 ? " + W_" : arena_printf(p->arena, " + %d * W_", y);
  return v ? arena_printf(p->arena, "%s + %d", rows, v) : rows;
}

/* The value of the thread's point v at step t - 1 of the row step t
 * computes in phase ph: a register of the queue, or (IrTb.whole, one
 * step a pass) the plane in shared memory, which keeps NX_ > LAG planes. */
static const char *own_value(const IrProgram *p, const TbCuda *c, int q, int t, int ph, int v)
{
  int V = c->tb->vec;
  if (c->tb->whole)
    return arena_printf(p->arena, "x%d_[(%d * NX_ + %d) * PL_ + xo_%s]", q, t - 1, pos_mod(ph - t * lag(c->tb), c->tb->nx),
                        smem_point(p, v / V, v % V));
  return arena_printf(p->arena, "q%d_[%d][%d][%d]", q, t - 1, pos_mod(ph - t * lag(c->tb), c->ns), v);
}

/* Strip passes, the F_ instance: the steady iterations of a warp some of
 * whose points lie outside the region (at the grid's edges) run the
 * straight code too, those points taking their own value of step t - 1
 * after the formula, instead of the checked code (where each point tests
 * and branches at every step). The upper bound measured on the H200
 * (every warp on the straight code, results wrong at the edges): box3d1r,
 * j3d27pt 1.07x, star3d1r 1.07x, j2d5pt 1.03x; docs/benchmarks.md
 * 2026-11-29 19:09-19:23. */
static int edge_steady(const IrTb *tb)
{
  return tb->cuda == TB_STRIP && tb->fast_instance && !tb->predicated;
}

/* print_2d_column's fast: 1, every point in the region; EDGE_STEADY,
 * the row in it, the points perhaps not. */
enum { EDGE_STEADY = 2 };

/* The stores to next of a column not known to be in the region: only
 * where it is. */
static const char *region_check(const IrProgram *p, int fast, int v)
{
  return fast == 1 ? "" : arena_printf(p->arena, fast == EDGE_STEADY ? " && cr%d_" : " && pr_ && cr%d_", v);
}

/* 2-D kernels: column v of step t in phase ph (3-D TB_STRIP: the thread's
 * point v, row v / V_ and column v % V_). fast: known to be in the region;
 * 2 (EDGE_STEADY, the F_ instance only): the row is, and a point outside
 * it along the other dimensions computes the formula too and then takes
 * its own value of step t - 1 (where cr<v>_ is false). */
static void print_2d_column(Buf *b, const IrProgram *p, const IrTb *tb, Printer *pr, int t, int ph, int v, int out_slot,
                              int fast)
{
  const IrKernel *k = p->kernels.data[tb->kernel];
  TbCuda *hook = (TbCuda *)pr->hook;
  int T = tb->steps, x = fast ? 1 : 0; /* extra indentation of the region's code */
  int r = k->rank, V = tb->vec;
  hook->t = t;
  hook->ph = ph;
  hook->v = v;
  pr->last_line = v || !fast ? 1 << 30 : 0;
  if (r == 3) {
    buf_printf(b, "          { /* point %d: row %d, column %d */\n", v, v / V, v % V);
    buf_printf(b, "            const I j = j%d_, k = k%d_, c_ = i * s0_ + j * s1_ + k;\n", v / V, v % V);
  } else {
    buf_printf(b, "          { /* column %d */\n", v);
    buf_printf(b, "            const I j = j%d_, c_ = i * s0_ + j;\n", v);
  }
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "            %s v%d_;\n", ctype(p->fields.data[tb->cur[q]].ty), q);
  if (!fast)
    buf_printf(b, "            if (pr_ && cr%d_) {\n", v);
  for (int d = 0; d < r; d++)
    print_wrap_decls(pr, d, 7 - x, "I");
  for (int lv = 1; lv <= r; lv++)
    emit_level(pr, lv, 7 - x);
  if (tb->predicated) /* a store that does not fire leaves step t - 2 */
    for (int q = 0; q < tb->npairs; q++) {
      indent(b, 7 - x);
      if (t == 1)
        buf_printf(b, "v%d_ = %s[c_];\n", q, cname(p, p->fields.data[tb->next[q]].name));
      else
        buf_printf(b, "v%d_ = q%d_[%d][%d][%d];\n", q, q, t - 2, out_slot, v);
    }
  for (int e = 0; e < k->effects.len; e++) {
    const IrEffect *ef = &k->effects.data[e];
    if (ef->kind == EFF_REDUCE && t < T)
      continue;
    print_effect_head(pr, ef, 7 - x);
    if (ef->kind == EFF_STORE) {
      buf_printf(b, "v%d_ = ", ir_tb_pair_of_next(tb, ef->ref));
      char *chain = tb->psum >= 0 ? pr->names[tb->psum] : NULL; /* partial sums: the row's, complete */
      if (tb->psum >= 0)
        pr->names[tb->psum] = arena_printf(p->arena, "a0_[%d][%d][%d]", t - 1, out_slot, v);
      print_expr(pr, ef->val, P_TOP, 0);
      if (tb->psum >= 0)
        pr->names[tb->psum] = chain;
      buf_puts(b, ";\n");
      continue;
    }
    buf_printf(b, "if (own%d_%s%s) ", v, march_check(p, hook, t), fast == EDGE_STEADY ? arena_printf(p->arena, " && cr%d_", v) : "");
    buf_puts(b, print_red_update(pr, &k->reds.data[ef->ref], ef->val) ? "\n" : ";\n");
  }
  if (fast == EDGE_STEADY)
    for (int q = 0; q < tb->npairs; q++)
      buf_printf(b, "            if (!cr%d_)  /* outside the region: its value of step t - 1 */\n              v%d_ = %s;\n", v, q,
                 own_value(p, hook, q, t, ph, v));
  if (!fast) {
    buf_puts(b, "            } else {\n");
    for (int q = 0; q < tb->npairs; q++) {
      buf_printf(b, "              v%d_ = ", q);
      if (tb->fast_instance) /* the point's own value at step t - 1 */
        buf_printf(b, "F_ ? %s : ", own_value(p, hook, q, t, ph, v));
      buf_printf(b, "pa_ && ca%d_ ? %s[c_] : (%s)0;\n", v, cname(p, p->fields.data[t % 2 ? tb->next[q] : tb->cur[q]].name),
                 ctype(p->fields.data[tb->cur[q]].ty));
    }
    buf_puts(b, "            }\n");
  }
  for (int q = 0; q < tb->npairs; q++) {
    if (t < T && !own_in_smem(tb, q))
      buf_printf(b, "            q%d_[%d][%d][%d] = v%d_;\n", q, t, out_slot, v, q);
    if (t < T && hook->xneed && hook->xneed[q] && r == 3)
      buf_printf(b, "            x%d_[(%d * NX_ + %s) * PL_ + xo_%s] = v%d_;\n", q, t, strip_wslot(p, hook),
                 smem_point(p, v / V, v % V), q);
    else if (t < T && hook->xneed && hook->xneed[q] && xstored(tb, v))
      buf_printf(b, "            x%d_[(%d * NX_ + %s) * W_%s] = v%d_;\n", q, t, strip_wslot(p, hook), xcol(p, tb, 0, v),
                 q);
    else if (t == T)
      buf_printf(b, "            o%d_[%d] = v%d_;\n", q, v, q);
    if (t == T - 1 && tb->predicated) /* to next's twin, outside the region too */
      buf_printf(b, "            if (own%d_%s)\n              %s[c_] = v%d_;\n", v, march_check(p, hook, t),
                 p->fields.data[tb->scratch_next[q]].name, q);
    else if (t == T - 1)
      buf_printf(b, "            if (%s && own%d_%s%s)\n              %s[c_] = v%d_;\n", prev_cond(tb), v,
                 march_check(p, hook, t), region_check(p, fast, v), cname(p, p->fields.data[tb->next[q]].name), q);
    else if (T == 1) /* one step a pass (tb_strip_single): step T - 1 is the point's value as loaded */
      buf_printf(b, "            if (%s && own%d_%s%s)\n              %s[c_] = %s;\n", prev_cond(tb), v,
                 march_check(p, hook, t), region_check(p, fast, v), cname(p, p->fields.data[tb->next[q]].name),
                 own_value(p, hook, q, 1, ph, v));
  }
  buf_puts(b, "          }\n");
}

/* 2-D kernels: the neighbours' columns step t reads, by shuffle (TB_SHFL)
 * or from the rows they wrote to shared memory (TB_STRIP), each once:
 * const sh<pair>_<slot>_<column>_<lane>_. */
static void print_preloads(Buf *b, const IrProgram *p, const IrTb *tb, TbCuda *hook, int t, int ph, int LAG)
{
  const IrKernel *k = p->kernels.data[tb->kernel];
  int V = tb->vec, r = k->rank, R0 = tb->reach[0];
  hook->t = t;
  hook->ph = ph;
  Vec(int) seen = { 0 };
  for (int v = 0; v < V && r == 2; v++) {
    hook->v = v;
    for (int n = 0; n < k->nodes.len; n++) {
      const IrNode *nd = &k->nodes.data[n];
      int q = nd->op == OP_LOAD ? ir_tb_pair_of_cur(tb, nd->ref) : -1;
      if (q < 0)
        continue;
      int slot, vv, L;
      neighbour_source(hook, nd->off[0], nd->off[1], &slot, &vv, &L);
      if (L == 0)
        continue;
      int key = ((q * 16 + slot) * 16 + vv) * 64 + (L + 32), dup = 0;
      for (int x = 0; x < seen.len && !dup; x++)
        dup = seen.data[x] == key;
      if (dup)
        continue;
      vec_push(&seen, key);
      buf_printf(b, "          const %s ", ctype(p->fields.data[tb->cur[q]].ty));
      shfl_name(b, q, slot, vv, L);
      int di = hook->psum ? R0 : nd->off[0];
      if (hook->xneed) /* from the row the thread L away wrote to shared memory */
        buf_printf(b, " = %s;\n", xrow_load(p, hook, q, t, ph, di, L, vv));
      else
        buf_printf(b, " = __shfl_%s_sync(0xffffffffu, q%d_[%d][%d][%d], %d);\n", L > 0 ? "down" : "up", q, t - 1, slot,
                   vv, abs(L));
    }
  }
  vec_free(&seen);
}

/* Partial sums (IrTb.psum): the terms of the chain, in the source's order,
 * and the operator before each (0 for the first). */
static int psum_terms(const IrKernel *k, int root, int *term, Op *op, int most)
{
  int n = 0, x = root;
  for (;;) {
    const IrNode *nd = &k->nodes.data[x];
    int spine = ir_psum_spine(k, root, x);
    if (n == most)
      ice("partial sums: a chain of more than %d terms", most);
    term[n] = spine ? nd->arg[1] : x;
    op[n++] = spine ? nd->op : (Op)0;
    if (!spine)
      break;
    x = nd->arg[0];
  }
  for (int i = 0; i < n / 2; i++) { /* last term first -> first term first */
    int tt = term[i];
    Op to = op[i];
    term[i] = term[n - 1 - i], op[i] = op[n - 1 - i];
    term[n - 1 - i] = tt, op[n - 1 - i] = to;
  }
  return n;
}

/* The row offset of the loads in term id, or INT_MIN if it has none. */
static int term_row(const IrKernel *k, const IrTb *tb, int id)
{
  const IrNode *n = &k->nodes.data[id];
  if (n->op == OP_LOAD && ir_tb_pair_of_cur(tb, n->ref) >= 0)
    return n->off[0];
  for (int a = 0; a < op_info[n->op].nargs; a++) {
    int r = term_row(k, tb, n->arg[a]);
    if (r != INT_MIN)
      return r;
  }
  return INT_MIN;
}

/* Partial sums, step t, point v: row q_ + r of step t - 1 arrived (the
 * newest), and the terms that read row q_ + r at offset d add to the sum of
 * row q_ + r - d, a<pair>_[t - 1][its slot][v]: the first offset's terms
 * start it, the last offset's (d = r) complete row q_'s, in the order the
 * source adds them. */
static void print_psum_point(Buf *b, const IrProgram *p, const IrTb *tb, Printer *pr, int t, int ph, int v, int owned)
{
  const IrKernel *k = p->kernels.data[tb->kernel];
  TbCuda *hook = (TbCuda *)pr->hook;
  int term[IR_PSUM_TERMS], row[IR_PSUM_TERMS], R0 = tb->reach[0], LAG = lag(tb), NS = tb->ring;
  Op op[IR_PSUM_TERMS];
  int n = psum_terms(k, tb->psum, term, op, IR_PSUM_TERMS);
  /* each term's row; a term without loads goes with the one before (the
   * first ones with the first that has loads) */
  int first = INT_MIN;
  for (int i = 0; i < n && first == INT_MIN; i++)
    first = term_row(k, tb, term[i]);
  for (int i = 0; i < n; i++) {
    int d = term_row(k, tb, term[i]);
    row[i] = d != INT_MIN ? d : i ? row[i - 1] : first;
  }
  hook->t = t;
  hook->ph = ph;
  hook->v = v;
  hook->psum = 1;
  pr->last_line = 0;
  int d = 5 + owned;
  if (owned)
    buf_printf(b, "          if (own%d_) {\n", v);
  line_comment(pr, k->nodes.data[tb->psum].span, d);
  for (int i = 0; i < n;) {
    const char *acc = arena_printf(p->arena, "a0_[%d][%d][%d]", t - 1, pos_mod(ph - t * LAG + R0 - row[i], NS), v);
    indent(b, d);
    buf_printf(b, "%s = ", acc);
    if (i > 0)
      buf_printf(b, "%s ", acc);
    int g = i;
    for (; i < n && row[i] == row[g]; i++) {
      if (op[i])
        buf_printf(b, "%s ", op[i] == OP_ADD ? "+" : "-");
      print_expr(pr, term[i], P_ADD, op[i] != 0);
      if (i + 1 < n && row[i + 1] == row[g])
        buf_puts(b, " ");
    }
    buf_printf(b, ";  /* row q_ + %d of step %d: part of row q_ + %d */\n", R0, t - 1, R0 - row[g]);
  }
  if (owned)
    buf_puts(b, "          }\n");
  hook->psum = 0;
}

/* 2-D kernels: steps T..1 of one iteration (phase ph). fast: every step has
 * its row, inside the region, and all this lane's columns are in it. */
static void print_2d_steps(Buf *b, const IrProgram *p, const IrTb *tb, Printer *pr, int ph, int NS, int LAG,
                             int vec_bytes, int fast)
{
  const IrKernel *k = p->kernels.data[tb->kernel];
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  TbCuda *hook = (TbCuda *)pr->hook;
  int T = tb->steps, R0 = tb->reach[0], V = tb->vec, r = k->rank, C = V * tb->rows;
  hook->steady = fast && hook->lean;
  for (int t = T; t >= 1; t--) {
    if (tb->psum >= 0) { /* every iteration: its sums serve rows up to 2r ahead of the step's row */
      int hi = t * LAG - 2 * R0; /* the last row served: s_ - hi */
      buf_printf(b, "        { /* step %d: row s_ - %d of step %d into the partial sums of rows s_ - %d .. s_ %c %d */\n",
                 t, t * LAG - R0, t - 1, t * LAG, hi < 0 ? '+' : '-', abs(hi));
      hook->psum = 1;
      print_preloads(b, p, tb, hook, t, ph, LAG);
      hook->psum = 0;
      for (int v = 0; v < C; v++)
        print_psum_point(b, p, tb, pr, t, ph, v, tb->sums_owned); /* one step a pass: t == T */
      buf_puts(b, "        }\n");
    }
    hook->t = t;
    hook->ph = ph;
    /* 3-D (IrTb.skip_rows, tblock.c): step t's rows along j are needed in
     * [t R1, BY RY - 1 - t R1] (the own rows widened by the reach of the
     * steps after it); a row of threads (a warp where BX is 32) whose rows
     * lie outside skips it. */
    int R1 = r == 3 ? tb->reach[1] : 0, skip = fast && tb->skip_rows && t * R1 >= tb->rows;
    if (skip)
      buf_printf(b, "        if (ty_ * RY_ + RY_ - 1 >= %d && ty_ * RY_ < BY_ * RY_ - %d) { /* step %d: row s_ - %d; its rows "
                    "along j the later steps need */\n", t * R1, t * R1, t, t * LAG);
    else if (fast)
      buf_printf(b, "        { /* step %d: row s_ - %d */\n", t, t * LAG);
    else
      buf_printf(b, "        if (s_ - %d >= i0_ - %d && s_ - %d < i1_ + %d) { /* step %d: row s_ - %d */\n", t * LAG,
                 (T - t) * R0, t * LAG, (T - t) * R0, t, t * LAG);
    buf_printf(b, "          const I q_ = s_ - %d;\n", t * LAG);
    print_wrapped(b, g, gname, 0, "i", "q_", 5);
    if (!fast) {
      buf_puts(b, "          const bool pa_ = ");
      print_allocated(b, g, gname, 0, "i");
      buf_puts(b, ", pr_ = i >= (I)i_lo_ && i < (I)i_hi_;\n");
    }
    if (tb->psum < 0)
      print_preloads(b, p, tb, hook, t, ph, LAG);
    int out_slot = pos_mod(ph - t * LAG, NS);
    if (t == T)
      for (int q = 0; q < tb->npairs; q++)
        buf_printf(b, "          %s o%d_[%s];  /* step T of this %s */\n", ctype(p->fields.data[tb->cur[q]].ty), q,
                   r == 3 ? "C_" : "V_", r == 3 ? "plane's points" : "row's columns");
    if (fast) {
      for (int v = 0; v < C; v++)
        print_2d_column(b, p, tb, pr, t, ph, v, out_slot, fast);
    } else {
      /* All this lane's columns in the region: no checks per column. */
      buf_puts(b, "          if (pr_ && crall_) {\n");
      for (int v = 0; v < C; v++)
        print_2d_column(b, p, tb, pr, t, ph, v, out_slot, 1);
      buf_puts(b, "          } else {\n");
      for (int v = 0; v < C; v++)
        print_2d_column(b, p, tb, pr, t, ph, v, out_slot, 0);
      buf_puts(b, "          }\n");
    }
    if (t == T) { /* the row's own columns out, 16 bytes at a time where whole */
      buf_puts(b, fast ? "          {\n" : "          if (q_ >= i0_ && q_ < i1_) {\n");
      if (vec_bytes) {
        buf_printf(b, "            if (vok_ && own0_ && own%d_) {\n", V - 1);
        for (int q = 0; q < tb->npairs; q++) {
          int dbl = p->fields.data[tb->cur[q]].ty == TY_DOUBLE;
          for (int v = 0; v < V; v += dbl ? 2 : 4) {
            if (dbl)
              buf_printf(b, "              *(double2 *)&%s[i * s0_ + j%d_] = make_double2(o%d_[%d], o%d_[%d]);\n",
                         p->fields.data[tb->scratch[q]].name, v, q, v, q, v + 1);
            else
              buf_printf(b, "              *(float4 *)&%s[i * s0_ + j%d_] = make_float4(o%d_[%d], o%d_[%d], o%d_[%d], o%d_[%d]);\n",
                         p->fields.data[tb->scratch[q]].name, v, q, v, q, v + 1, q, v + 2, q, v + 3);
          }
        }
        buf_puts(b, "            } else {\n");
      }
      for (int v = 0; v < C; v++)
        for (int q = 0; q < tb->npairs; q++)
          buf_printf(b, "            %sif (own%d_)\n              %s%s[%s] = o%d_[%d];\n", vec_bytes ? "  " : "", v,
                     vec_bytes ? "  " : "", p->fields.data[tb->scratch[q]].name,
                     r == 3 ? arena_printf(p->arena, "i * s0_ + j%d_ * s1_ + k%d_", v / V, v % V)
                            : arena_printf(p->arena, "i * s0_ + j%d_", v), q, v);
      if (vec_bytes)
        buf_puts(b, "            }\n");
      buf_puts(b, "          }\n");
    }
    buf_puts(b, "        }\n");
  }
  hook->steady = 0;
}

/* TB_STRIP: the pointers into shared memory, x<pair>_, for the pairs
 * whose newest rows (3-D: planes) go there, and the run-time slot ws_
 * when the slots are not the phases. */
static void print_strip_smem(Buf *b, const IrProgram *p, const IrTb *tb)
{
  int r3 = p->kernels.data[tb->kernel]->rank == 3;
  buf_puts(b, "  extern __shared__ double stn_smem_[];\n");
  for (int q = 0; q < tb->npairs; q++)
    if (tb->xneed[q]) {
      const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
      buf_printf(b, "  %s *const x%d_ = (%s *)((char *)stn_smem_ + %zu);  /* %s: every step's newest %s */\n", ty, q, ty,
                 tb->xoff[q], p->fields.data[tb->cur[q]].label,
                 r3          ? "planes, [T_][NX_][HY_][W_]"
                 : tb->xedge ? "rows, each thread's first and last PAD_ columns, [T_][NX_][2 * PAD_][EW_]"
                             : "rows, [T_][NX_][W_]");
    }
  if (tb->nx != tb->ring)
    buf_printf(b, "  int ws_ = 0;  /* the slot of this iteration's %s */\n", r3 ? "planes" : "rows");
}

/* IrTb.whole: the points of a plane of the tile padded by the reach
 * (PL_), and how many of them each thread loads (LD_). */
static int whole_plane(const IrTb *tb)
{
  return (tb->block[0] * tb->vec + 2 * tb->reach[2]) * (tb->block[1] * tb->rows + 2 * tb->reach[1]);
}

static int whole_loads(const IrTb *tb)
{
  int nt = tb->block[0] * tb->block[1];
  return (whole_plane(tb) + nt - 1) / nt;
}

/* Whether load l reaches past the padded plane for some threads (then
 * guarded by lp<l>_ < PL_). */
static int whole_partial(const IrTb *tb, int l)
{
  return (l + 1) * tb->block[0] * tb->block[1] > whole_plane(tb);
}

/* The type of a 3-D fused pass's tile origin (wj0_, wk0_) and of its
 * comparisons with the grid's extent: the kernel's index type I (32 bits
 * where the grid has fewer than 2^31 points) for fused passes of four
 * rows a thread (--tb-rows, tb_strip_rows; 128 registers unless
 * --max-regs says less): box3d1r 1.05x, j3d27pt
 * 1.03x (H200, docs/benchmarks.md 2026-11-29 02:35). long for the others:
 * held at 64 registers, ptxas recomputes a 32-bit origin from the
 * block's index inside the march (star3d1r 0.80x, 2026-11-28 15:47), and
 * the one-step passes and the doubles' gain nothing (box3d2r 0.99x,
 * box3d1r.double, j3d27pt.double, star3d1r.double and star3d2r within
 * 0.5%, 2026-11-29 02:43). */
static const char *tile_index_type(const IrTb *tb)
{
  return tb->rows >= 4 && !tb->whole ? "I" : "long";
}

/* 3-D TB_STRIP: thread (tx_, ty_) of a BX_ x BY_ block computes the
 * points (row y, column v) of the tile at j = wj0_ + y, k = wk0_ + v,
 * y < RY_, v < V_; point y V_ + v is allocated (ca), in the region (cr),
 * and the block's own (own: outside the halo, inside the grid; with
 * IrTb.whole there is no halo, only the grid's edge). Its
 * newest planes go to x<pair>_[step][slot][row][column] in shared memory,
 * padded by the reach, the thread's first point at xo_. */
static void print_3d_points(Buf *b, const IrProgram *p, const IrTb *tb)
{
  const IrKernel *k = p->kernels.data[tb->kernel];
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  int V = tb->vec, RY = tb->rows;
  const char *ty = tile_index_type(tb);
  buf_puts(b, "  const int tx_ = threadIdx.x, ty_ = threadIdx.y;\n");
  if (tb->whole) {
    buf_printf(b, "  const %s wk0_ = (%s)blockIdx.x * BX_ * V_ + tx_ * V_;\n", ty, ty);
    buf_printf(b, "  const %s wj0_ = (%s)blockIdx.y * BY_ * RY_ + ty_ * RY_;\n", ty, ty);
  } else {
    buf_printf(b, "  const %s wk0_ = (%s)blockIdx.x * (BX_ * V_ - 2 * H2_) - H2_ + tx_ * V_;\n", ty, ty);
    buf_printf(b, "  const %s wj0_ = (%s)blockIdx.y * (BY_ * RY_ - 2 * H1_) - H1_ + ty_ * RY_;\n", ty, ty);
  }
  buf_puts(b, "  const int xo_ = (P1_ + ty_ * RY_) * W_ + P2_ + tx_ * V_;  /* this thread's first point in a plane of x<pair>_ */\n");
  print_strip_smem(b, p, tb);
  for (int d = 1; d <= 2; d++) {
    int n = d == 1 ? RY : V;
    const char *x = d == 1 ? "j" : "k", *w = d == 1 ? "wj0_" : "wk0_", *t = d == 1 ? "ty_ * RY_" : "tx_ * V_";
    const char *extent = d == 1 ? "BY_ * RY_ - H1_" : "BX_ * V_ - H2_", *h = d == 1 ? "H1_" : "H2_";
    for (int y = 0; y < n; y++) {
      char e[32], nm[16];
      snprintf(e, sizeof e, "%s + %d", w, y);
      snprintf(nm, sizeof nm, "%s%d_", x, y);
      print_wrapped(b, g, gname, d, nm, e, 1);
      buf_printf(b, "  const bool ca%s%d_ = ", x, y);
      print_allocated(b, g, gname, d, nm);
      /* own: outside the halo (none on whole tiles), inside the grid */
      const char *halo = tb->whole ? "" : arena_printf(p->arena, "%s + %d >= %s && %s + %d < %s && ", t, y, h, t, y, extent);
      buf_printf(b, ", cr%s%d_ = %s >= %s_lo_ && %s < %s_hi_,\n             own%s%d_ = %s%s + %d < (%s)%s.n[%d];\n",
                 x, y, nm, x, nm, x, x, y, halo, w, y, ty, gname, d);
    }
  }
  for (int c = 0; c < RY * V; c++)
    buf_printf(b, "  const bool ca%d_ = caj%d_ && cak%d_, cr%d_ = crj%d_ && crk%d_, own%d_ = ownj%d_ && ownk%d_;\n", c,
               c / V, c % V, c, c / V, c % V, c, c / V, c % V);
  if (!tb->whole)
    return;
  /* IrTb.whole: the points this thread loads, tid_ + l BX_ BY_ of the
   * tile's plane padded by the reach, row by row (l < LD_) */
  int nt = tb->block[0] * tb->block[1];
  buf_puts(b, "  const int tid_ = ty_ * BX_ + tx_;  /* loads: the padded plane's points tid_, tid_ + BX_ * BY_, ... */\n");
  for (int l = 0; l < whole_loads(tb); l++) {
    char e[96], nm[16];
    buf_printf(b, "  const int lp%d_ = tid_ + %d;\n", l, l * nt);
    snprintf(e, sizeof e, "(long)blockIdx.y * BY_ * RY_ - P1_ + lp%d_ / W_", l);
    snprintf(nm, sizeof nm, "lj%d_", l);
    print_wrapped(b, g, gname, 1, nm, e, 1);
    snprintf(e, sizeof e, "(long)blockIdx.x * BX_ * V_ - P2_ + lp%d_ %% W_", l);
    snprintf(nm, sizeof nm, "lk%d_", l);
    print_wrapped(b, g, gname, 2, nm, e, 1);
    buf_printf(b, "  const bool la%d_ = %s", l, whole_partial(tb, l) ? arena_printf(p->arena, "lp%d_ < PL_ && ", l) : "");
    char lj[16], lk[16];
    snprintf(lj, sizeof lj, "lj%d_", l);
    snprintf(lk, sizeof lk, "lk%d_", l);
    print_allocated(b, g, gname, 1, lj);
    buf_puts(b, " && ");
    print_allocated(b, g, gname, 2, lk);
    buf_puts(b, ";\n");
  }
}

/* The 2-D kernels, TB_SHFL and TB_STRIP: a strip of columns streams
 * along i. Thread l of the strip holds columns wj0_ + l V .. + V - 1 of
 * every step's last 2r+1 rows in registers, q<pair>_[step][slot][column]
 * (IrTb.own_smem: not the pairs whose rows are in shared memory),
 * the ring unrolled so that every index is a constant: iteration it_
 * brings row s_ of step 0 into slot it_ mod NS_, and the loop advances
 * NS_ iterations at a time. TB_SHFL: a strip per warp, the neighbours'
 * columns by shuffles. TB_STRIP: a strip per block; every step also
 * writes its newest row to x<pair>_[step][slot][column] in shared memory,
 * slot it_ mod NX_ (the phase when NX_ = NS_, else the run-time ws_), and
 * the next step reads its neighbours' columns there; a barrier ends each
 * iteration. */
static void print_2d_kernel(Buf *b, const IrProgram *p, const IrTb *tb, Printer *pr, const int *use_level)
{
  const IrKernel *k = p->kernels.data[tb->kernel];
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  TbCuda *hook = (TbCuda *)pr->hook;
  /* Ring of 2r + 1 rows per step (one more when a predicated store reads
   * step t - 2 at the row being computed): IrTb.ring. */
  int T = tb->steps, R0 = tb->reach[0], R1 = tb->reach[1], V = tb->vec, LAG = lag(tb), NS = tb->ring;
  int H = tb->halo, strip = tb->cuda == TB_STRIP, NX = strip ? tb->nx : 0, r = k->rank, C = V * tb->rows;
  hook->ns = NS;
  int threads = r == 3 ? tb->block[0] * tb->block[1] : 32 * tb->warps;
  print_tb_head(b, p, tb, threads, use_level, pr->names);
  if (strip) {
    hook->xneed = tb->xneed;
    hook->nx = NX;
  }
  if (r == 3)
    buf_printf(b, "  enum { T_ = %d, NS_ = %d, V_ = %d, RY_ = %d, C_ = RY_ * V_, BX_ = %d, BY_ = %d, H1_ = %d, H2_ = %d, "
               "NX_ = %d, P1_ = %d, P2_ = %d, W_ = BX_ * V_ + 2 * P2_, HY_ = BY_ * RY_ + 2 * P1_, PL_ = HY_ * W_ };\n",
               T, NS, V, tb->rows, tb->block[0], tb->block[1], T * R1, H, NX, R1, tb->reach[2]);
  else if (strip && tb->xedge)
    buf_printf(b, "  enum { T_ = %d, NS_ = %d, V_ = %d, H_ = %d, NT_ = %d, OWN_ = NT_ * V_ - 2 * H_, NX_ = %d, "
               "PAD_ = %d, EW_ = NT_ + 2, W_ = 2 * PAD_ * EW_ };\n", T, NS, V, H, tb->block[0], NX, R1);
  else if (strip)
    buf_printf(b, "  enum { T_ = %d, NS_ = %d, V_ = %d, H_ = %d, NT_ = %d, OWN_ = NT_ * V_ - 2 * H_, NX_ = %d, "
               "PAD_ = %d, W_ = NT_ * V_ + 2 * PAD_ };\n", T, NS, V, H, tb->block[0], NX, R1);
  else
    buf_printf(b, "  enum { T_ = %d, NS_ = %d, V_ = %d, H_ = %d, OWN_ = 32 * V_ - 2 * H_ };\n", T, NS, V, H);
  buf_printf(b, "  const I s0_ = (I)%s.stride[0];\n", gname);
  if (r == 3)
    buf_printf(b, "  const I s1_ = (I)%s.stride[1];\n", gname);
  print_red_locals(b, p, k, 1);
  if (r == 3)
    print_3d_points(b, p, tb);
  else {
  /* The blocks of the first and the last strip run first: their edge
   * columns lie outside the region, where each step loads the field, so
   * they take longer than the others and must not be the grid's last
   * (bench/tb2d.cu, generated jacobi5 --tb=8: 1282 -> 1553 GCells/s). */
  buf_puts(b, "  unsigned bx_ = blockIdx.x, by_ = blockIdx.y;  /* the edge strips first */\n"
              "  if (gridDim.x > 2) {\n"
              "    const unsigned l_ = blockIdx.y * gridDim.x + blockIdx.x, e_ = 2 * gridDim.y;\n"
              "    bx_ = l_ < e_ ? (l_ & 1 ? gridDim.x - 1 : 0) : 1 + (l_ - e_) % (gridDim.x - 2);\n"
              "    by_ = l_ < e_ ? l_ >> 1 : (l_ - e_) / (gridDim.x - 2);\n"
              "  }\n");
  if (strip) {
    buf_puts(b, "  const int tid_ = threadIdx.x;\n");
    buf_puts(b, "  const long wj0_ = (long)bx_ * OWN_ - H_ + tid_ * V_;\n");
    buf_puts(b, "  const bool own_lane_ = tid_ >= H_ / V_ && tid_ < NT_ - H_ / V_;\n");
    print_strip_smem(b, p, tb);
  } else {
    buf_puts(b, "  const int lane_ = threadIdx.x & 31;\n");
    buf_puts(b, "  const long wj0_ = ((long)bx_ * (blockDim.x >> 5) + (threadIdx.x >> 5)) * OWN_ - H_ + lane_ * V_;\n");
    buf_puts(b, "  const bool own_lane_ = lane_ >= H_ / V_ && lane_ < 32 - H_ / V_;\n");
  }
  for (int v = 0; v < V; v++) {
    char e[32];
    snprintf(e, sizeof e, "wj0_ + %d", v);
    char nm[16];
    snprintf(nm, sizeof nm, "j%d_", v);
    print_wrapped(b, g, gname, 1, nm, e, 1);
    buf_printf(b, "  const bool ca%d_ = ", v);
    print_allocated(b, g, gname, 1, nm);
    buf_printf(b, ", cr%d_ = %s >= j_lo_ && %s < j_hi_, own%d_ = own_lane_ && wj0_ + %d < (long)%s.n[1];\n", v, nm, nm, v, v,
               gname);
  }
  }
  /* The warp's where its steady iterations have two branches, so that
   * its lanes take one (edge_steady) */
  Buf all = { 0 };
  buf_puts(&all, "cr0_");
  for (int v = 1; v < C; v++)
    buf_printf(&all, " && cr%d_", v);
  if (!edge_steady(tb))
    buf_printf(b, "  const bool crall_ = %s;  /* all this thread's %s in the region */\n", all.s, r == 3 ? "points" : "columns");
  else if (r == 3)
    buf_printf(b, "  const bool crall_ = __all_sync(__activemask(), %s);  /* all the warp's points in the region */\n", all.s);
  else /* the general instance as it was: a warp-wide test there cost box2d1r 8 registers (72 -> 80) */
    buf_printf(b, "  const bool crall_ = F_ ? __all_sync(__activemask(), %s) : %s;  /* all the warp's columns in the region "
                  "(F_), or this thread's */\n", all.s, all.s);
  buf_free(&all);
  buf_printf(b, "  const I i0_ = (I)%s * M_, i1_ = i0_ + M_ < (I)%s.n[0] ? i0_ + M_ : (I)%s.n[0];\n",
             r == 3 ? "blockIdx.z" : "by_", gname, gname);
  /* Rows of step 0 are fetched D rows ahead (loads in flight while
   * earlier rows are computed) into a ring of NS_ slots, the row of
   * iteration it_ in slot it_ mod NS_, a constant of the unrolled phase
   * (register moves would wait for the loads); 16 bytes at a time where a
   * thread's columns allow it: all allocated, not wrapping. */
  int D = NS > 2 ? 2 : 1;  /* D < NS but for NS = 1 */
  for (int q = 0; q < tb->npairs; q++) {
    const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
    if (r == 3 && tb->whole)
      buf_printf(b, "  %s pf%d_[NS_][%d];  /* %s: this thread's loads of the next planes (the last ones in shared memory "
                 "only) */\n", ty, q, whole_loads(tb), p->fields.data[tb->cur[q]].label);
    else if (r == 3)
      buf_printf(b, "  %s q%d_[T_][NS_][C_], pf%d_[NS_][C_];  /* %s: every step's last planes; the next planes of step 0 */\n",
                 ty, q, q, p->fields.data[tb->cur[q]].label);
    else if (own_in_smem(tb, q))
      buf_printf(b, "  %s pf%d_[NS_][V_];  /* %s: the next rows of step 0 (every step's rows: in shared memory) */\n", ty, q,
                 p->fields.data[tb->cur[q]].label);
    else
      buf_printf(b, "  %s q%d_[T_][NS_][V_], pf%d_[NS_][V_];  /* %s: every step's last rows; the next rows of step 0 */\n",
                 ty, q, q, p->fields.data[tb->cur[q]].label);
  }
  if (tb->psum >= 0)
    buf_printf(b, "  %s a0_[T_][NS_][%s];  /* partial sums: step t + 1's rows, as the rows of step t arrive */\n",
               ctype(k->nodes.data[tb->psum].ty), r == 3 ? "C_" : "V_");
  int vec_bytes = 0; /* a lane's columns of every pair as 16-byte loads */
  if (r == 2 && !g->periodic[1]) {
    vec_bytes = 1;
    for (int q = 0; q < tb->npairs; q++)
      vec_bytes &= (V * type_bytes(p->fields.data[tb->cur[q]].ty)) % 16 == 0;
  }
  if (vec_bytes)
    buf_printf(b, "  const bool vok_ = ca0_ && ca%d_;  /* whole 16-byte loads and stores */\n", V - 1);
  buf_puts(b, "  auto fetch_ = [&](I s_, int d_) {\n");
  print_wrapped(b, g, gname, 0, "i", "s_", 2);
  buf_puts(b, "    const bool pa_ = ");
  print_allocated(b, g, gname, 0, "i");
  buf_puts(b, ";\n");
  for (int q = 0; q < tb->npairs; q++) {
    const char *ty = ctype(p->fields.data[tb->cur[q]].ty), *cur = cname(p, p->fields.data[tb->cur[q]].name);
    int dbl = p->fields.data[tb->cur[q]].ty == TY_DOUBLE;
    if (vec_bytes) {
      buf_puts(b, "    if (pa_ && vok_) {\n");
      for (int v = 0; v < V; v += dbl ? 2 : 4) {
        buf_printf(b, "      const %s w%d_ = *(const %s *)&%s[i * s0_ + j%d_];\n", dbl ? "double2" : "float4", v,
                   dbl ? "double2" : "float4", cur, v);
        for (int e = 0; e < (dbl ? 2 : 4); e++)
          buf_printf(b, "      pf%d_[d_][%d] = w%d_.%c;\n", q, v + e, v, "xyzw"[e]);
      }
      buf_puts(b, "    } else {\n");
    }
    for (int l = 0; tb->whole && l < whole_loads(tb); l++)
      buf_printf(b, "    pf%d_[d_][%d] = pa_ && la%d_ ? %s[i * s0_ + lj%d_ * s1_ + lk%d_] : (%s)0;\n", q, l, l, cur, l, l,
                 ty);
    for (int v = 0; !tb->whole && v < C; v++)
      buf_printf(b, "    %spf%d_[d_][%d] = pa_ && ca%d_ ? %s[%s] : (%s)0;\n", vec_bytes ? "  " : "", q, v, v, cur,
                 r == 3 ? arena_printf(p->arena, "i * s0_ + j%d_ * s1_ + k%d_", v / V, v % V)
                        : arena_printf(p->arena, "i * s0_ + j%d_", v), ty);
    if (vec_bytes)
      buf_puts(b, "    }\n");
  }
  buf_puts(b, "  };\n");
  for (int d = 0; d < D; d++)
    buf_printf(b, "  fetch_(i0_ - T_ * %d + %d, %d);\n", R0, d, d);
  /* Iterations: rows of step 0 from i0_ - T r, whole groups of NS_ (the
   * last ones compute rows nobody needs, and store nothing). */
  buf_printf(b, "  const int rows_ = (int)(i1_ - i0_), iters_ = (rows_ + T_ * %d + NS_ - 1) / NS_ * NS_;\n", R0 + LAG);
  /* The steady iterations: it0_ from T (2 r + 1) (every step has reached
   * the march) to rows_ + 2 T r (none has left it), where step T's row s_
   * - T LAG is at or after i_lo_ and step 1's s_ - LAG before i_hi_, and
   * all the thread's points in the region. In 2-D computed once, before
   * the loop: one comparison an iteration (H100, 2026-11-27: lbm_d2q9
   * 4096^2 1.13x, the 2-D stars 1.01x). Not in 3-D, whose passes run
   * capped at 64 registers: the two it keeps made star3d1r's spill (0.54x);
   * there each iteration compares with the kernel's arguments, and the
   * straight code keeps its row checks (without them ptxas spilled
   * box3d4r's general instance). */
  hook->lean = r == 2;
  int hoist_steady = hook->lean && !g->periodic[0];
  int band = hoist_steady && tb->band_count; /* IrTb.band_known */
  int edge = edge_steady(tb) && !g->periodic[0]; /* (rows that wrap: no steady iterations) */
  if (hoist_steady) {
    const char *lo = "(long)i_lo_", *hi = "(long)i_hi_";
    if (band && tb->band_has_lo) {
      buf_printf(b, "  const long blo_ = %ld;  /* the band of rows where the comparisons with the grid's edges hold */\n", tb->band_lo);
      lo = "((long)i_lo_ > blo_ ? (long)i_lo_ : blo_)";
    }
    if (band && tb->band_nhi) {
      for (int h = 0; h < tb->band_nhi; h++) {
        Buf e = { 0 };
        Printer epr = *pr;
        epr.b = &e;
        buf_puts(&e, "(long)(");
        print_expr(&epr, tb->band_hi[h], P_TOP, 0);
        buf_puts(&e, ")");
        if (tb->band_hioff[h])
          buf_printf(&e, " %c %ld", tb->band_hioff[h] < 0 ? '-' : '+', labs(tb->band_hioff[h]));
        if (h == 0)
          buf_printf(b, "  %slong bhi_ = %s;\n", tb->band_nhi == 1 ? "const " : "", e.s);
        else
          buf_printf(b, "  bhi_ = %s < bhi_ ? %s : bhi_;\n", e.s, e.s);
        buf_free(&e);
      }
      hi = "((long)i_hi_ < bhi_ ? (long)i_hi_ : bhi_)";
    }
    buf_printf(b, "  const long sal_ = %s - (long)i0_ + %d, sbl_ = %s - (long)i0_ + %d;  /* the region's%s */\n",
               lo, T * (R0 + LAG), hi, T * R0 + LAG, band ? ", in the band" : "");
    buf_printf(b, "  const long sa0_ = sal_ > %d ? sal_ : %d, sb0_ = sbl_ < rows_ + %d ? sbl_ : rows_ + %d;  /* and the march's */\n",
               T * (2 * R0 + 1), T * (2 * R0 + 1), 2 * T * R0 + 1, 2 * T * R0 + 1);
    buf_puts(b, "  const int sa_ = (int)sa0_;\n"
                "  const unsigned sn_ = crall_ && sb0_ > sa0_ ? (unsigned)(sb0_ - sa0_) : 0u;  /* steady: it0_ in [sa_, sa_ + sn_) */\n");
    if (edge)
      buf_puts(b, "  const unsigned sne_ = sb0_ > sa0_ ? (unsigned)(sb0_ - sa0_) : 0u;  /* the same for a warp with columns "
                  "outside the region */\n");
  }
  buf_puts(b, "  for (int it0_ = 0; it0_ < iters_; it0_ += NS_) {\n");
  for (int ph = 0; ph < NS; ph++) {
    buf_printf(b, "    { /* iteration it0_ + %d: row s_ of step 0 comes last, into slot %d */\n", ph, ph);
    buf_printf(b, "      const I s_ = i0_ - T_ * %d + it0_ + %d;\n", R0, ph);
    /* First the fetch of row s_ + D of step 0, into the slot consumed D
     * iterations from now (rows past the march are loaded and unused):
     * the whole iteration to arrive. With one slot, after its use. */
    if (D < NS)
      buf_printf(b, "      fetch_(s_ + %d, %d);\n", D, (ph + D) % NS);
    for (int d = 0; strip && NX != NS && d <= 2 * R0; d++)
      if (tb->xrows[d]) { /* the slot of the rows read at offset d - R0: written LAG - (d - R0) iterations ago */
        int K = LAG - (d - R0);
        buf_printf(b, "      const int xs_%c%d_ = ws_ >= %d ? ws_ - %d : ws_ + %d;  /* rows written %d iteration%s ago */\n",
                   d < R0 ? 'm' : 'p', abs(d - R0), K, K, NX - K, K, K == 1 ? "" : "s");
      }
    if (g->periodic[0])
      buf_puts(b, "      const bool steady_ = false;  /* rows wrap: each step checks */\n");
    else if (hoist_steady)
      buf_printf(b, "      const bool steady_ = (unsigned)(it0_ + %d - sa_) < sn_;\n", ph);
    else
      buf_printf(b, "      const bool steady_ = it0_ + %d >= %d && it0_ + %d < rows_ + %d && s_ - %d >= (I)i_lo_ && s_ - %d < (I)i_hi_;\n",
                 ph, T * (2 * R0 + 1), ph, 2 * T * R0 + 1, T * LAG, LAG);
    /* In the middle of the march every step has a row to compute, inside
     * the region: straight code (fast); otherwise each step and column
     * checks. */
    buf_puts(b, hoist_steady ? "      if (steady_) {" : "      if (steady_ && crall_) {");
    buf_puts(b, band ? "  /* rows in the band: the comparisons with the grid's edges print as 1 */\n" : "\n");
    pr->known = band ? tb->band_known : NULL;
    print_2d_steps(b, p, tb, pr, ph, NS, LAG, vec_bytes, 1);
    pr->known = NULL;
    if (edge) {
      if (r == 3)
        buf_puts(b, "      } else if (F_ && steady_) {  /* the same where some of the warp's points lie outside the region */\n");
      else
        buf_printf(b, "      } else if (F_ && (unsigned)(it0_ + %d - sa_) < sne_) {  /* the same where some of the warp's columns lie outside "
                      "the region */\n", ph);
      pr->known = band ? tb->band_known : NULL;
      print_2d_steps(b, p, tb, pr, ph, NS, LAG, vec_bytes, EDGE_STEADY);
      pr->known = NULL;
    }
    buf_puts(b, "      } else {\n");
    print_2d_steps(b, p, tb, pr, ph, NS, LAG, vec_bytes, 0);
    buf_puts(b, "      }\n");
    /* Last: row s_ of step 0 into its slot, and the next fetch. */
    hook->ph = ph;
    for (int q = 0; q < tb->npairs; q++)
      for (int l = 0; tb->whole && l < whole_loads(tb); l++)
        buf_printf(b, "      %sx%d_[%s * PL_ + lp%d_] = pf%d_[%d][%d];\n",
                   whole_partial(tb, l) ? arena_printf(p->arena, "if (lp%d_ < PL_)\n        ", l) : "",
                   q, strip_wslot(p, hook), l, q, ph, l);
    for (int q = 0; q < tb->npairs && !tb->whole; q++)
      for (int v = 0; v < C; v++) {
        if (!own_in_smem(tb, q))
          buf_printf(b, "      q%d_[0][%d][%d] = pf%d_[%d][%d];\n", q, ph, v, q, ph, v);
        if (strip && tb->xneed[q] && r == 3)
          buf_printf(b, "      x%d_[%s * PL_ + xo_%s] = pf%d_[%d][%d];\n", q, strip_wslot(p, hook),
                     smem_point(p, v / V, v % V), q, ph, v);
        else if (strip && tb->xneed[q] && xstored(tb, v))
          buf_printf(b, "      x%d_[%s * W_%s] = pf%d_[%d][%d];\n", q, strip_wslot(p, hook), xcol(p, tb, 0, v), q, ph, v);
      }
    if (strip)
      buf_puts(b, "      __syncthreads();  /* this iteration's rows written, the oldest read */\n");
    if (strip && NX != NS)
      buf_puts(b, "      ws_ = ws_ == NX_ - 1 ? 0 : ws_ + 1;\n");
    if (D >= NS)
      buf_printf(b, "      fetch_(s_ + %d, %d);\n", D, (ph + D) % NS);
    buf_puts(b, "    }\n");
  }
  buf_puts(b, "  }\n");
  cuda_print_block_reduce(b, p, k, r == 3 ? "threadIdx.x == 0 && threadIdx.y == 0" : "threadIdx.x == 0");
  buf_puts(b, "}\n\n");
  print_tb_tail(b, p, tb, threads, use_level, pr->names);
}

/* A kernel over the points outside K's region: a warp per row of the
 * contiguous dimension, the grid striding over rows; rows inside the
 * region along the other dimensions visit only their two ends (a block per
 * row of a 512^3 grid, most of them with nothing to do, took about as long
 * as a pass of 3 steps). check = 0: next takes cur's values (after an odd
 * number of steps); check = 1: *differ_ = 1 where next and cur differ. */
static void print_outside_kernel(Buf *b, const IrProgram *p, const IrTb *tb, int check)
{
  const char *kn = ir_tb_stem(p, tb);
  const IrKernel *k = p->kernels.data[tb->kernel];
  const char *gname = cname(p, p->grids.data[k->grid].name);
  int r = k->rank;
  const char *last = index_name(r - 1);
  if (check)
    buf_printf(b, "/* do next and cur hold the same values outside the region of %s? */\n", k->name);
  else
    buf_printf(b, "/* after an odd number of steps, next holds cur's values outside the region of %s */\n", k->name);
  buf_printf(b, "template <typename I>\n__global__ void %s_%s_kernel_(const stn_grid %s", kn, check ? "same" : "fix",
             gname);
  for (int q = 0; q < tb->npairs; q++) {
    const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
    buf_printf(b, ", const %s *__restrict__ %s, %s%s *__restrict__ %s", ty, cname(p, p->fields.data[tb->cur[q]].name),
               check ? "const " : "", ty, cname(p, p->fields.data[tb->next[q]].name));
  }
  for (int d = 0; d < r; d++)
    buf_printf(b, ", long %s_lo_, long %s_hi_", index_name(d), index_name(d));
  buf_puts(b, check ? ", int *differ_)\n{\n" : ")\n{\n");
  for (int d = 0; d < r - 1; d++)
    buf_printf(b, "  const I s%d_ = (I)%s.stride[%d];\n", d, gname, d);
  buf_printf(b, "  const long rows_ = (long)%s.n[0]%s;\n", gname, r == 3 ? arena_printf(p->arena, " * %s.n[1]", gname) : "");
  buf_printf(b, "  const I lane_ = (I)(threadIdx.x & 31), n_ = (I)%s.n[%d];\n", gname, r - 1);
  buf_puts(b, "  for (long row_ = (long)(blockIdx.x * blockDim.x + threadIdx.x) / 32; row_ < rows_;\n"
              "       row_ += (long)gridDim.x * blockDim.x / 32) {\n");
  if (r == 3)
    buf_printf(b, "    const I i = (I)(row_ / %s.n[1]), j = (I)(row_ %% %s.n[1]);\n", gname, gname);
  else
    buf_puts(b, "    const I i = (I)row_;\n");
  buf_printf(b, "    const I c0_ = i * s0_%s;\n", r == 3 ? " + j * s1_" : "");
  buf_puts(b, "    const bool inside_ = i >= i_lo_ && i < i_hi_");
  if (r == 3)
    buf_puts(b, " && j >= j_lo_ && j < j_hi_");
  buf_puts(b, ";\n");
  buf_printf(b, "    const I lo_ = inside_ ? (I)%s_lo_ : n_, hi_ = inside_ ? (I)%s_hi_ : n_;  /* [0, lo_) and [hi_, n_) */\n",
             last, last);
  for (int half = 0; half < 2; half++) {
    buf_printf(b, "    for (I %s = %slane_; %s < %s; %s += 32) {\n", last, half ? "hi_ + " : "", last, half ? "n_" : "lo_", last);
    for (int q = 0; q < tb->npairs; q++) {
      const char *cur = cname(p, p->fields.data[tb->cur[q]].name), *next = cname(p, p->fields.data[tb->next[q]].name);
      if (check)
        buf_printf(b, "      if (%s[c0_ + %s] != %s[c0_ + %s])\n        *differ_ = 1;\n", next, last, cur, last);
      else
        buf_printf(b, "      %s[c0_ + %s] = %s[c0_ + %s];\n", next, last, cur, last);
    }
    buf_puts(b, "    }\n");
  }
  buf_puts(b, "  }\n}\n\n");
}

/* The launch of print_outside_kernel's kernel (check: into differ_). */
static void print_outside_launch(Buf *b, const IrProgram *p, const IrTb *tb, int check)
{
  const char *kn = ir_tb_stem(p, tb);
  const IrKernel *k = p->kernels.data[tb->kernel];
  const char *gname = cname(p, p->grids.data[k->grid].name);
  int r = k->rank;
  const char *in = check ? "  " : "";
  buf_printf(b, "%s  {\n%s    const long rows_ = (long)%s.n[0]%s;  /* a warp per row, at most 4096 blocks */\n", in, in, gname,
             r == 3 ? arena_printf(p->arena, " * %s.n[1]", gname) : "");
  buf_printf(b, "%s    const dim3 fb(256, 1, 1), fg((unsigned)(rows_ / 8 + 1 < 4096 ? rows_ / 8 + 1 : 4096), 1, 1);\n", in);
  for (int pass = 0; pass < 2; pass++) {
    if (pass)
      buf_printf(b, "%s    else\n%s      %s_%s_kernel_<long><<<fg, fb, 0, stn_cuda_stream>>>(%s", in, in, kn, check ? "same" : "fix", gname);
    else
      buf_printf(b, "%s    if (%s.size < 2147483647u)\n%s      %s_%s_kernel_<int><<<fg, fb, 0, stn_cuda_stream>>>(%s", in, gname, in, kn,
                 check ? "same" : "fix", gname);
    for (int q = 0; q < tb->npairs; q++) {
      const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
      buf_printf(b, ", (const %s *)%s_.origin, (%s%s *)%s_.origin", ty, p->fields.data[tb->cur[q]].name, check ? "const " : "",
                 ty, p->fields.data[tb->next[q]].name);
    }
    for (int d = 0; d < r; d++)
      buf_printf(b, ", %s_lo_, %s_hi_", index_name(d), index_name(d));
    buf_puts(b, check ? ", differ_);\n" : ");\n");
  }
  buf_printf(b, "%s    stn_cuda_check_launch(\"%s (temporal blocking, outside the region)\", fg, fb);\n%s  }\n", in, k->name, in);
}

/* The fused kernel's block: a strip of warps (2-D strips), or the tile. */
static void print_tb_block(Buf *b, const IrKernel *k, const IrTb *tb)
{
  if (tb->cuda != TB_SMEM && k->rank == 2)
    buf_printf(b, "  const dim3 block(%d, 1, 1);\n", 32 * tb->warps);
  else
    buf_printf(b, "  const dim3 block(%d, %d, 1);\n", tb->block[0], k->rank == 3 ? tb->block[1] : 1);
}

/* NAME_tb_grid_(&march): the fused kernel's grid, blocks side by side
 * (gx_, gy_) and bands of march rows along dimension 0: --march's, or
 * chosen once by stn_cuda_tb_march: at most tb->march, fewer where that
 * fills the GPU's waves of blocks better, or for 2-D strip passes from
 * the grid's area (IrTb.march_area). NAME_tb_pays_(): whether the fields
 * of a step outgrow the L2 cache and that grid fills the GPU
 * (stn_cuda_tb_pays); main runs single steps where not (the prior work's
 * lbm lattice, 320 x 128: 400,000 steps took 7.8 s in fused passes of
 * 10 blocks, 1.4 s in single steps on the H100). */
static void print_tb_grid(Buf *b, const IrProgram *p, const IrKernel *k, const IrTb *tb, const char *gname,
                          const char *const *inst, int ninst)
{
  const char *kn = ir_tb_stem(p, tb);
  int r = k->rank, T = tb->steps, R0 = tb->reach[0], LAG = lag(tb);
  buf_printf(b, "static dim3 %s_grid_(int *march)\n{\n", kn);
  buf_printf(b, "  const size_t smem_ = %zu;\n", tb->smem);
  print_tb_block(b, k, tb);
  if (tb->cuda != TB_SMEM && r == 2) {
    buf_printf(b, "  const unsigned gx_ = (unsigned)((%s.n[1] + %d - 1) / %d);\n", gname, tb->own[0], tb->own[0]);
  } else {
    buf_printf(b, "  const unsigned gx_ = (unsigned)((%s.n[%d] + %d - 1) / %d)", gname, r - 1, tb->own[0], tb->own[0]);
    if (r == 3)
      buf_printf(b, ", gy_ = (unsigned)((%s.n[1] + %d - 1) / %d);\n", gname, tb->own[1], tb->own[1]);
    else
      buf_puts(b, ";\n");
  }
  buf_printf(b, "  static int march_ = %d;\n", tb->march);
  buf_puts(b, "  static bool ready_ = false;\n  if (!ready_) { /* more than 48 KB of shared memory needs asking */\n");
  for (int x = 0; x < ninst; x++)
    buf_printf(b, "    STN_CUDA_CHECK(cudaFuncSetAttribute(%s_kernel_%s, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_));\n",
               kn, inst[x]);
  if (!tb->march_fixed) { /* the waves of blocks, or the grid's area (passes/tblock.c, area_march) */
    static const char *const kind[] = {[TB_AREA_NONE] = "STN_TB_MARCH_WAVES", [TB_AREA_HEAVY] = "STN_TB_MARCH_AREA_HEAVY",
                                       [TB_AREA_LIGHT] = "STN_TB_MARCH_AREA_LIGHT"};
    buf_printf(b, "    march_ = stn_cuda_tb_march((const void *)%s_kernel_%s, (int)(block.x * block.y), smem_, %s,\n"
               "                               (long)gx_%s, (long)%s.n[0], ", kn, inst[0], kind[tb->march_area],
               r == 3 ? " * gy_" : "", gname);
    if (tb->march_area != TB_AREA_NONE)
      buf_printf(b, "(long)%s.n[1], ", gname);
    else
      buf_puts(b, "0, ");
    buf_printf(b, "%d, march_);\n", T * (R0 + LAG));
  } else {
    buf_puts(b, "    (void)block;\n");
  }
  buf_puts(b, "    ready_ = true;\n  }\n  *march = march_;\n");
  buf_printf(b, "  return dim3(gx_, %s(unsigned)((%s.n[0] + march_ - 1) / march_)%s);\n}\n\n", r == 3 ? "gy_, " : "", gname,
             r == 3 ? "" : ", 1");
  if (tb->tag) /* the half passes run where the fused ones pay */
    return;
  buf_printf(b, "static bool %s_pays_(void)\n{\n  static int said_ = 0;\n  int march_;\n"
                "  const double bytes_ = (double)%s.size * (", kn, gname);
  int n = 0;
  for (int f = 0; f < p->fields.len; f++)
    if (ir_reads_field(k, f) || ir_stores_field(k, f))
      buf_printf(b, "%ssizeof(%s)", n++ ? " + " : "", ctype(p->fields.data[f].ty));
  buf_printf(b, ");  /* the fields of a step */\n"
                "  return stn_cuda_tb_pays(\"%s\", %s_grid_(&march_), bytes_, &said_);\n}\n\n", k->name, kn);
}

void cg_cuda_print_tb(Buf *b, const IrProgram *p, const IrTb *tb, const void *opts)
{
  const char *kn = ir_tb_stem(p, tb);
  (void)opts;
  const IrKernel *k = p->kernels.data[tb->kernel];
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  int r = k->rank, T = tb->steps;
  int BX = tb->block[0], BY = r == 3 ? tb->block[1] : 1;
  int R0 = tb->reach[0], R1 = r == 3 ? tb->reach[1] : 0, R2 = tb->reach[r - 1];
  int LAG = lag(tb), NS = tb->ring;
  ir_count_uses((IrKernel *)k);
  int *use_level = use_levels(k);
  char **names = value_names(p, k, use_level);
  char **dnames = xrealloc(NULL, sizeof(char *) * (size_t)(k->nodes.len + 1));
  for (int i = 0; i < k->nodes.len; i++)
    dnames[i] = cuda_passed(k, use_level, i) ? (char *)cuda_passed_name(p, k, names, i)
                : k->nodes.data[i].level == 0 ? NULL : names[i];
  char *skip = xrealloc(NULL, (size_t)p->fields.len + 1);
  for (int f = 0; f < p->fields.len; f++)
    skip[f] = ir_tb_pair_of_cur(tb, f) >= 0;
  TbCuda hook = { .tb = tb, .t = 1, .ns = NS };
  Printer pr = { .b = b, .p = p, .k = k, .pool = &k->nodes, .names = dnames, .device = 1, .print_load = ring_load,
                 .hook = &hook, .wrap_skip = skip };
  const char *kx = index_name(r - 1);

  if (tb->cuda != TB_SMEM) {
    pr.print_load = reg_load;
    print_2d_kernel(b, p, tb, &pr, use_level);
  } else {
  /* ---- the device kernel ---- */
  print_tb_head(b, p, tb, BX * BY, use_level, dnames);
  buf_printf(b, "  enum { T_ = %d, NS_ = %d, BX_ = %d, BY_ = %d, H1_ = %d, H2_ = %d };\n", T, NS, BX, BY, T * R1, T * R2);
  /* The rings: lv<q>_[step][slot][row][column], step 0 .. T - 1. */
  buf_puts(b, "  extern __shared__ double stn_smem_[];\n");
  buf_puts(b, "  char *sm_ = (char *)stn_smem_;\n");
  for (int q = 0; q < tb->npairs; q++) {
    const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
    if (r == 3)
      buf_printf(b, "  %s (*const lv%d_)[NS_][BY_][BX_] = (%s (*)[NS_][BY_][BX_])sm_;\n", ty, q, ty);
    else
      buf_printf(b, "  %s (*const lv%d_)[NS_][BX_] = (%s (*)[NS_][BX_])sm_;\n", ty, q, ty);
    buf_printf(b, "  sm_ += sizeof(%s) * T_ * NS_ * BY_ * BX_;\n", ty);
  }
  for (int d = 0; d < r - 1; d++)
    buf_printf(b, "  const I s%d_ = (I)%s.stride[%d];\n", d, gname, d);
  print_red_locals(b, p, k, 1);
  buf_puts(b, "  const int tx_ = threadIdx.x;\n");
  buf_printf(b, "  const long kk_ = (long)blockIdx.x * (BX_ - 2 * H2_) - H2_ + tx_;\n");
  print_wrapped(b, g, gname, r - 1, kx, "kk_", 1);
  if (r == 3) {
    buf_puts(b, "  const int ty_ = threadIdx.y;\n");
    buf_printf(b, "  const long jj_ = (long)blockIdx.y * (BY_ - 2 * H1_) - H1_ + ty_;\n");
    print_wrapped(b, g, gname, 1, "j", "jj_", 1);
  }
  buf_puts(b, "  const bool col_alloc_ = ");
  print_allocated(b, g, gname, r - 1, kx);
  if (r == 3) {
    buf_puts(b, " && ");
    print_allocated(b, g, gname, 1, "j");
  }
  buf_puts(b, ";\n  const bool col_region_ = ");
  buf_printf(b, "%s >= %s_lo_ && %s < %s_hi_", kx, kx, kx, kx);
  if (r == 3)
    buf_puts(b, " && j >= j_lo_ && j < j_hi_");
  buf_puts(b, ";\n");
  /* The tile's own points, inside the grid. */
  buf_printf(b, "  const bool own_ = tx_ >= H2_ && tx_ < BX_ - H2_ && kk_ < (long)%s.n[%d]", gname, r - 1);
  if (r == 3)
    buf_printf(b, " && ty_ >= H1_ && ty_ < BY_ - H1_ && jj_ < (long)%s.n[1]", gname);
  buf_puts(b, ";\n");
  buf_printf(b, "  const I i0_ = (I)blockIdx.%s * M_, i1_ = i0_ + M_ < (I)%s.n[0] ? i0_ + M_ : (I)%s.n[0];\n",
             r == 3 ? "z" : "y", gname, gname);
  /* Iteration it_ brings plane s_ = i0_ - T r + it_ of step 0 (stored
   * last); step t computes plane s_ - t LAG. Plane s_ + d lives in ring
   * slot (it_ + d) mod NS_ (small ints: cheap). The next plane's values
   * are loaded while this one is computed. */
  buf_printf(b, "  const int iters_ = (int)(i1_ - i0_) + T_ * %d;\n", R0 + LAG);
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "  %s pf%d_;\n", ctype(p->fields.data[tb->cur[q]].ty), q);
  buf_puts(b, "  auto fetch_ = [&](I s_) {\n");
  print_wrapped(b, g, gname, 0, "i", "s_", 2);
  buf_puts(b, "    const bool in_ = col_alloc_ && ");
  print_allocated(b, g, gname, 0, "i");
  buf_puts(b, ";\n    const I c_ = ");
  buf_printf(b, "i * s0_ + %s%s;\n", r == 3 ? "j * s1_ + " : "", kx);
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "    pf%d_ = in_ ? %s[c_] : (%s)0;\n", q, cname(p, p->fields.data[tb->cur[q]].name),
               ctype(p->fields.data[tb->cur[q]].ty));
  buf_puts(b, "  };\n");
  buf_printf(b, "  fetch_(i0_ - T_ * %d);\n", R0);
  /* Kept read-only values: kq_F_[m] is what step 1 loaded m + 1
   * iterations ago, at the point step (m + 1) / LAG + 1 computes now. */
  int delay = (T - 1) * LAG;
  for (int j = 0; j < tb->nkeep; j++) {
    const IrField *f = &p->fields.data[tb->keep[j]];
    buf_printf(b, "  %s kq_%s_[%d] = {};  /* %s at this point, as step 1 loaded it */\n", ctype(f->ty), cname(p, f->name),
               delay, f->label);
  }
  buf_puts(b, "  for (int it_ = 0; it_ < iters_; it_++) {\n");
  buf_printf(b, "    const I s_ = i0_ - T_ * %d + it_;\n", R0);
  for (int j = 0; j < tb->nkeep; j++) {
    const IrField *f = &p->fields.data[tb->keep[j]];
    buf_printf(b, "    %s kp_%s_ = 0;\n", ctype(f->ty), cname(p, f->name));
  }
  /* Step 1's kept read-only values are loaded first, at step 1's point
   * and under its conditions, so that they arrive while the later steps
   * compute (Himeno L --tb=2: 0.4931 -> 0.4703 ms per sweep). */
  if (tb->nkeep) {
    buf_printf(b, "    { /* step 1's read-only values first: the later steps compute while they arrive */\n"
                  "      const I q_ = s_ - %d;\n", LAG);
    buf_printf(b, "      if (q_ >= i0_ - %d && q_ < i1_ + %d && tx_ >= %d && tx_ < BX_ - %d", (T - 1) * R0, (T - 1) * R0, R2, R2);
    if (r == 3)
      buf_printf(b, " && ty_ >= %d && ty_ < BY_ - %d", R1, R1);
    buf_puts(b, ") {\n");
    print_wrapped(b, g, gname, 0, "i", "q_", 4);
    buf_printf(b, "        const I c_ = i * s0_ + %s%s;\n", r == 3 ? "j * s1_ + " : "", kx);
    buf_puts(b, "        if (col_region_ && i >= (I)i_lo_ && i < (I)i_hi_) {\n");
    for (int j = 0; j < tb->nkeep; j++) {
      const char *f = cname(p, p->fields.data[tb->keep[j]].name);
      buf_printf(b, "          kp_%s_ = %s[c_];\n", f, f);
    }
    buf_puts(b, "        }\n      }\n    }\n");
  }
  for (int t = T; t >= 1; t--) {
    hook.t = t;
    pr.last_line = 0;
    buf_printf(b, "    { /* step %d: plane s_ - %d */\n", t, t * LAG);
    buf_printf(b, "      const I q_ = s_ - %d;\n", t * LAG);
    buf_printf(b, "      if (q_ >= i0_ - %d && q_ < i1_ + %d && tx_ >= %d && tx_ < BX_ - %d", (T - t) * R0, (T - t) * R0,
               t * R2, t * R2);
    if (r == 3)
      buf_printf(b, " && ty_ >= %d && ty_ < BY_ - %d", t * R1, t * R1);
    buf_puts(b, ") {\n");
    print_wrapped(b, g, gname, 0, "i", "q_", 4);
    /* Ring slots of the planes q_ + o the loads read (and q_ itself). */
    for (int o = -R0; o <= R0; o++) {
      int used = o == 0;
      for (int j = 0; j < k->nodes.len && !used; j++)
        used = k->nodes.data[j].op == OP_LOAD && ir_tb_pair_of_cur(tb, k->nodes.data[j].ref) >= 0 && k->nodes.data[j].off[0] == o;
      if (used) /* plane q_ + o = s_ + d, d = o - t LAG */
        buf_printf(b, "        const int sl_%c%d_ = (it_ + %d) %% NS_;\n", o < 0 ? 'm' : 'p', abs(o),
                   (((o - t * LAG) % NS) + NS) % NS);
    }
    buf_puts(b, "        const I c_ = ");
    buf_printf(b, "i * s0_ + %s%s;\n", r == 3 ? "j * s1_ + " : "", kx);
    buf_puts(b, "        const bool region_ = col_region_ && i >= (I)i_lo_ && i < (I)i_hi_;\n");
    for (int q = 0; q < tb->npairs; q++)
      buf_printf(b, "        %s v%d_;\n", ctype(p->fields.data[tb->cur[q]].ty), q);
    buf_puts(b, "        if (region_) {\n");
    for (int d = 0; d < r; d++)
      print_wrap_decls(&pr, d, 5, "I");
    for (int lv = 1; lv <= r; lv++)
      emit_level(&pr, lv, 5);
    /* A predicated store leaves next as it was: step t - 2 there. */
    if (tb->predicated)
      for (int q = 0; q < tb->npairs; q++) {
        indent(b, 5);
        if (t == 1)
          buf_printf(b, "v%d_ = %s[c_];\n", q, cname(p, p->fields.data[tb->next[q]].name));
        else
          buf_printf(b, "v%d_ = lv%d_[%d][sl_p0_]%s[tx_];\n", q, q, t - 2, r == 3 ? "[ty_]" : "");
      }
    for (int e = 0; e < k->effects.len; e++) {
      const IrEffect *ef = &k->effects.data[e];
      if (ef->kind == EFF_REDUCE && t < T)
        continue; /* the reductions are of the last step */
      print_effect_head(&pr, ef, 5);
      if (ef->kind == EFF_STORE) {
        buf_printf(b, "v%d_ = ", ir_tb_pair_of_next(tb, ef->ref));
        print_expr(&pr, ef->val, P_TOP, 0);
        buf_puts(b, ";\n");
        continue;
      }
      buf_printf(b, "if (own_ && q_ >= i0_ && q_ < i1_) ");
      buf_puts(b, print_red_update(&pr, &k->reds.data[ef->ref], ef->val) ? "\n" : ";\n");
    }
    buf_puts(b, "        } else {\n");
    buf_puts(b, "          const bool in_ = col_alloc_ && ");
    print_allocated(b, g, gname, 0, "i");
    buf_puts(b, ";\n");
    for (int q = 0; q < tb->npairs; q++) {
      const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
      buf_printf(b, "          v%d_ = ", q);
      if (tb->fast_instance) /* the point's own value at step t - 1 */
        buf_printf(b, "F_ ? lv%d_[%d][sl_p0_]%s[tx_] : ", q, t - 1, r == 3 ? "[ty_]" : "");
      buf_printf(b, "in_ ? %s[c_] : (%s)0;\n", cname(p, p->fields.data[t % 2 ? tb->next[q] : tb->cur[q]].name), ty);
    }
    buf_puts(b, "        }\n");
    for (int q = 0; q < tb->npairs; q++) {
      if (t < T)
        buf_printf(b, "        lv%d_[%d][sl_p0_]%s[tx_] = v%d_;\n", q, t, r == 3 ? "[ty_]" : "", q);
      else
        buf_printf(b, "        if (own_ && q_ >= i0_ && q_ < i1_)\n          %s[c_] = v%d_;\n",
                   p->fields.data[tb->scratch[q]].name, q);
      if (t == T - 1 && tb->predicated) /* to next's twin, outside the region too */
        buf_printf(b, "        if (own_ && q_ >= i0_ && q_ < i1_)\n          %s[c_] = v%d_;\n",
                   p->fields.data[tb->scratch_next[q]].name, q);
      else if (t == T - 1)
        buf_printf(b, "        if (%s && own_ && region_ && q_ >= i0_ && q_ < i1_)\n          %s[c_] = v%d_;\n",
                   prev_cond(tb), cname(p, p->fields.data[tb->next[q]].name), q);
    }
    buf_puts(b, "      }\n");
    buf_puts(b, "    }\n");
  }
  /* Step 0's plane s_ last (its slot is none the steps read now). */
  buf_puts(b, "    {\n      const int sl_ = it_ % NS_;\n");
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "      lv%d_[0][sl_]%s[tx_] = pf%d_;\n", q, r == 3 ? "[ty_]" : "", q);
  buf_puts(b, "      if (it_ + 1 < iters_)\n        fetch_(s_ + 1);\n    }\n");
  for (int j = 0; j < tb->nkeep; j++) {
    const char *f = cname(p, p->fields.data[tb->keep[j]].name);
    for (int m = delay - 1; m >= 1; m--)
      buf_printf(b, "    kq_%s_[%d] = kq_%s_[%d];\n", f, m, f, m - 1);
    buf_printf(b, "    kq_%s_[0] = kp_%s_;\n", f, f);
  }
  buf_puts(b, "    __syncthreads();\n  }\n");
  cuda_print_block_reduce(b, p, k, "threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0");
  buf_puts(b, "}\n\n");

  }

  /* Odd T: next takes cur's values outside the region (nothing reads it
   * now). With a predicated store, next's twin has them already. */
  if (T % 2 && !tb->predicated)
    print_outside_kernel(b, p, tb, 0);
  if (tb->fast_instance)
    print_outside_kernel(b, p, tb, 1);

  /* ---- the fused kernel's grid, and whether it fills the GPU ---- */
  int fv = tb->fast_instance;
  const char *inst[4] = { "<int>", "<long>" };
  if (fv) {
    inst[0] = "<int, true>", inst[1] = "<long, true>", inst[2] = "<int, false>", inst[3] = "<long, false>";
  }
  print_tb_grid(b, p, k, tb, gname, inst, fv ? 4 : 2);

  /* ---- the host wrapper ---- */
  if (fv && !tb->tag)
    buf_printf(b, "/* do cur and next agree outside the region of %s (same), as found when they had these write stamps? */\n"
                  "static struct { unsigned long seen[%d]; bool same; } %s_tb_agree_;\n\n", k->name, 2 * tb->npairs, k->name);
  buf_printf(b, "static void %s_(", kn);
  for (int i = 0; i < k->args.len; i++)
    buf_printf(b, "%s %s, ", ctype(k->args.data[i].ty), cname(p, k->args.data[i].name));
  for (int i = 0; i < k->reds.len; i++)
    buf_printf(b, "void *%s_out_, stn_type %s_type_, ", k->reds.data[i].name, k->reds.data[i].name);
  buf_puts(b, "int prev_)\n{\n");
  Printer hpr = { .b = b, .p = p, .k = k, .pool = &k->nodes, .names = names };
  emit_level(&hpr, 0, 1);
  print_region_bounds(&hpr, gname);
  buf_printf(b, "  static stn_kprof prof_ = { \"%s x%d\", %d, %d, 0, 0, 0, NULL };\n", k->name, T, k->flops,
             k->bytes_read + k->bytes_written);
  size_t smem = tb->smem;
  buf_printf(b, "  const size_t smem_ = %zu;  /* %s */\n", smem,
             tb->cuda == TB_SMEM ? "the rings of all pairs" : "every step's newest rows");
  if (k->reds.len) {
    cuda_print_red_decls(b, k);
    buf_printf(b, "  stn_cuda_reduction_begin(&red_, %d, ops_, %d, dst_, dst_type_);\n", k->reds.len, k->gpu_atomic);
  }
  print_tb_block(b, k, tb);
  buf_printf(b, "  int march_;  /* rows of dimension 0 per block */\n  const dim3 grid = %s_grid_(&march_);\n", kn);
  if (fv) {
    /* Do next and cur agree outside the region? Checked again only when
     * something besides this wrapper wrote them since (the fields' write
     * stamps): a pass keeps them agreeing. */
    if (!tb->tag || tb->share_agree) {
      /* the fused and half passes of one loop share it: each keeps cur and
       * next agreeing outside the region, so neither checks again after
       * the other (the check waits for the device: --tb=auto's timed
       * passes switch between them) */
      buf_printf(b, "  unsigned long *const seen_ = %s_tb_agree_.seen;  /* write stamps of cur and next when same_ was found%s */\n"
                    "  bool &same_ = %s_tb_agree_.same;\n  if (", k->name, tb->half || tb->tag ? ", shared by the "
                    "fused and half passes" : "", k->name);
    } else {
      buf_printf(b, "  static unsigned long seen_[%d] = { 0 };  /* write stamps of cur and next when same_ was found */\n",
                 2 * tb->npairs);
      buf_puts(b, "  static bool same_ = false;\n  if (");
    }
    for (int q = 0; q < tb->npairs; q++)
      buf_printf(b, "%s%s_.wseq != seen_[%d] || %s_.wseq != seen_[%d]", q ? " || " : "", p->fields.data[tb->cur[q]].name, 2 * q,
                 p->fields.data[tb->next[q]].name, 2 * q + 1);
    buf_puts(b, ") {\n    static int *differ_ = NULL;\n"
                "    if (!differ_)\n      STN_CUDA_CHECK(cudaMalloc((void **)&differ_, sizeof(int)));\n"
                "    STN_CUDA_CHECK(cudaMemset(differ_, 0, sizeof(int)));\n");
    print_outside_launch(b, p, tb, 1);
    buf_puts(b, "    int differ_h_ = 1;\n    STN_CUDA_CHECK(cudaMemcpy(&differ_h_, differ_, sizeof(int), cudaMemcpyDeviceToHost));\n"
                "    same_ = !differ_h_;\n"
                "    stn_cuda_tb_trial_restart();  /* --tb=auto's timed pass starts here: the passes after it skip the check */\n"
                "  }\n");
    /* 2-D: only where its registers leave an SM as many blocks
     * (runtime/stn_cuda.h stn_cuda_tb_fast_pays); in 3-D the general
     * instance's loads and stores outside the region cost a third */
    if (r == 2)
      buf_printf(b, "  static int fast_pays_ = -1;  /* the fast instance's registers leave an SM as many blocks as the general one's */\n"
                    "  if (fast_pays_ < 0)\n"
                    "    fast_pays_ = stn_cuda_tb_fast_pays((const void *)%s_kernel_<int, true>, (const void *)%s_kernel_<int, false>, "
                    "(int)(block.x * block.y * block.z), smem_);\n", kn, kn);
    buf_printf(b, "  /* points outside the region keep their values, and nothing reads step T - 1 from next */\n"
                  "  const bool fast_ = same_ && !prev_%s;\n", r == 2 ? " && fast_pays_" : "");
  }
  if (k->reds.len)
    buf_puts(b, "  double *const stn_part = stn_cuda_reduction_partials(&red_, (size_t)grid.x * grid.y * grid.z);\n");
  buf_puts(b, "  if (stn_profiling)\n    stn_cuda_prof_start(&prof_);\n");
  for (int pass = 0; pass < 2; pass++) {
    const char *kern = fv ? arena_printf(p->arena, "(fast_ ? %s_kernel_%s : %s_kernel_%s)", kn, inst[pass], kn,
                                         inst[pass + 2])
                          : arena_printf(p->arena, "%s_kernel_%s", kn, inst[pass]);
    if (pass)
      buf_printf(b, "  else\n    %s<<<grid, block, smem_, stn_cuda_stream>>>(%s", kern, gname);
    else
      buf_printf(b, "  if (%s.size < 2147483647u)\n    %s<<<grid, block, smem_, stn_cuda_stream>>>(%s", gname, kern, gname);
    for (int f = 0; f < p->fields.len; f++) {
      int qc = ir_tb_pair_of_cur(tb, f), qn = ir_tb_pair_of_next(tb, f);
      const char *ty = ctype(p->fields.data[f].ty);
      if (qc >= 0)
        buf_printf(b, ", (const %s *)%s_.origin, (%s *)%s_.origin", ty, p->fields.data[f].name, ty,
                   p->fields.data[tb->scratch[qc]].name);
      else if (qn >= 0 && tb->predicated)
        buf_printf(b, ", (const %s *)%s_.origin, (%s *)%s_.origin", ty, p->fields.data[f].name, ty,
                   p->fields.data[tb->scratch_next[qn]].name);
      else if (qn >= 0)
        buf_printf(b, ", (%s *)%s_.origin", ty, p->fields.data[f].name);
      else if (ir_reads_field(k, f))
        buf_printf(b, ", (const %s *)%s_.origin", ty, p->fields.data[f].name);
    }
    if (k->reds.len)
      buf_puts(b, ", stn_part");
    for (int d = 0; d < r; d++)
      buf_printf(b, ", %s_lo_, %s_hi_", index_name(d), index_name(d));
    buf_puts(b, ", prev_, march_");
    for (int i = 0; i < k->nodes.len; i++)
      if (cuda_passed(k, use_level, i)) {
        buf_puts(b, ", ");
        print_expr(&hpr, i, P_TOP, 0);
      }
    buf_puts(b, ");\n");
  }
  buf_printf(b, "  stn_cuda_check_launch(\"%s (temporally blocked)\", grid, block);\n", k->name);
  if (T % 2 && !tb->predicated)
    print_outside_launch(b, p, tb, 0);
  buf_printf(b, "  if (stn_profiling)\n    stn_cuda_prof_stop(&prof_, %d.0 * ", T);
  print_region_points(b, k);
  buf_puts(b, ");\n");
  if (k->reds.len)
    buf_puts(b, "  stn_cuda_reduction_end(&red_);\n");
  /* Written on the device (for the programmatic launches of single steps,
   * runtime/stn_cuda.h); then cur <- scratch (step T), scratch <- cur. */
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "  stn_cuda_wrote(&%s_);\n  stn_cuda_wrote(&%s_);\n",
               p->fields.data[tb->predicated ? tb->scratch_next[q] : tb->next[q]].name,
               p->fields.data[tb->scratch[q]].name);
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "  stn_field_swap(&%s_, &%s_);\n", p->fields.data[tb->cur[q]].name, p->fields.data[tb->scratch[q]].name);
  for (int q = 0; tb->predicated && q < tb->npairs; q++) /* next <- its twin (step T - 1) */
    buf_printf(b, "  stn_field_swap(&%s_, &%s_);\n", p->fields.data[tb->next[q]].name,
               p->fields.data[tb->scratch_next[q]].name);
  for (int q = 0; fv && q < tb->npairs; q++)
    buf_printf(b, "  seen_[%d] = %s_.wseq;\n  seen_[%d] = %s_.wseq;\n", 2 * q, p->fields.data[tb->cur[q]].name, 2 * q + 1,
               p->fields.data[tb->next[q]].name);
  buf_puts(b, "}\n\n");
  free(skip);
  free(dnames);
  free(names);
  free(use_level);
}
