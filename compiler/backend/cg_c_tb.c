/* cg_c_tb.c: temporally blocked kernels for C and OpenMP (the decision,
 * and what a pass computes, are in passes/tblock.c and ir.h, IrTb).
 *
 * Overlapped tiles: each thread takes a tile of the grid, copies it with
 * H = T x reach points around it (step 0) into its own buffer, computes T
 * steps there, each on a range narrower by the reach than the last, and
 * then writes the tile's own points: step T to the scratch buffer, step
 * T - 1 to the next buffer (when something reads it later). Points
 * outside the kernel's region take, at step t, the current buffer's value
 * (t even) or the next buffer's (t odd). The tiles' reads and writes are
 * disjoint: reads of cur (anywhere) and of next (outside the region),
 * writes of scratch (anywhere) and of next (inside the region).
 *
 * Every row of the contiguous dimension is cut into segments, so that the
 * loops over it are plain and vectorise: outside the region (copies), and
 * inside it (the kernel's body, `omp simd`). */
#include "backend/cg.h"
#include "backend/cg_common.h"
#include <stdlib.h>

/* Loads of a cur field read the previous step's tile: in<q>_[x_ + offset]
 * (IrTb.cpu_march: the plane at offset o along i, in<q>_[r + o][x_ + the
 * offset within it]). */
static int tile_load(Printer *pr, const IrNode *n)
{
  const IrTb *tb = pr->hook;
  int q = ir_tb_pair_of_cur(tb, n->ref);
  if (q < 0)
    return 0;
  if (tb->cpu_march)
    buf_printf(pr->b, "in%d_[%d][x_", q, tb->reach[0] + n->off[0]);
  else
    buf_printf(pr->b, "in%d_[x_", q);
  int r = pr->k->rank;
  for (int d = tb->cpu_march ? 1 : 0; d < r; d++) {
    int o = n->off[d];
    if (!o)
      continue;
    if (d == r - 1)
      buf_printf(pr->b, " %c %d", o < 0 ? '-' : '+', abs(o));
    else
      buf_printf(pr->b, " %c %d * ts%d_", o < 0 ? '-' : '+', abs(o), d);
  }
  buf_puts(pr->b, "]");
  return 1;
}

typedef struct TbC {
  Buf *b;
  const IrProgram *p;
  const IrKernel *k;
  const IrTb *tb;
  const IrGrid *g;
  const char *gname;
  int r;
  Printer *pr;
  int openmp;              /* print `omp simd` */
  /* Per node, whether the body needs it: need[0] without the reductions
   * (the steps before T), need[1] with them; and whether the body then
   * needs c_ (it reads a field outside the ring) and k. */
  char *need[2];
  int need_c[2], need_k[2];
} TbC;

static const char *pos[] = { "u0_", "u1_", "u2_" }, *org[] = { "ti_", "tj_", "tk_" };
static const char *tsz[] = { "TI_", "TJ_", "TK_" }, *hal[] = { "H0_", "H1_", "H2_" };

/* The grid coordinate d of tile position u<d>_, as an expression (wrapped
 * along periodic dimensions: the pass function checks that those hold at
 * least H points). */
static const char *coord_expr(const TbC *c, int d)
{
  const char *x = arena_printf(c->p->arena, "%s + %s", org[d], pos[d]);
  if (!c->g->periodic[d])
    return x;
  return arena_printf(c->p->arena, "%s < 0 ? %s + %s.n[%d] : %s >= %s.n[%d] ? %s - %s.n[%d] : %s", x, x, c->gname, d, x,
                      c->gname, d, x, c->gname, d, x);
}

static void print_coord(const TbC *c, int d, int depth)
{
  indent(c->b, depth);
  buf_printf(c->b, "const long %s = %s;\n", index_name(d), coord_expr(c, d));
}

/* Opens loops over the tile positions of the outer dimensions (all but
 * the last), `ext` points beyond the tile on each side ("H0_" or an
 * expression), skipping rows outside the allocation when `skip`. Leaves
 * x_ (tile index of the row) and c_ (global index of the row). */
static int open_rows(const TbC *c, int depth, const char *const *ext, int skip)
{
  Buf *b = c->b;
  for (int d = 0; d < c->r - 1; d++) {
    indent(b, depth);
    buf_printf(b, "for (long %s = -(%s); %s < %s + (%s); %s++) {\n", pos[d], ext[d], pos[d], tsz[d], ext[d], pos[d]);
    print_coord(c, d, depth + 1);
    if (skip && !c->g->periodic[d]) { /* beyond the allocation: never needed */
      indent(b, depth + 1);
      buf_printf(b, "if (%s < -%d || %s >= %s.n[%d] + %d)\n", index_name(d), c->g->halo_lo[d], index_name(d), c->gname, d,
                 c->g->halo_hi[d]);
      indent(b, depth + 2);
      buf_puts(b, "continue;\n");
    }
    depth++;
  }
  indent(b, depth);
  buf_puts(b, "const long xr_ = ");
  for (int d = 0; d < c->r - 1; d++)
    buf_printf(b, "%s(%s + %s) * ts%d_", d ? " + " : "", pos[d], hal[d], d);
  buf_printf(b, " + %s;\n", hal[c->r - 1]);
  indent(b, depth);
  buf_puts(b, "const long cr_ = ");
  for (int d = 0; d < c->r - 1; d++)
    buf_printf(b, "%s%s * s%d_", d ? " + " : "", index_name(d), d);
  buf_puts(b, ";\n");
  return depth;
}

static void close_rows(const TbC *c, int depth)
{
  for (int d = c->r - 2; d >= 0; d--) {
    indent(c->b, depth + d);
    buf_puts(c->b, "}\n");
  }
}

/* What the body needs, with (last) and without the reductions: TbC.need,
 * need_c, need_k. Nodes are in topological order, so one backward sweep
 * from the roots finds them. */
static void body_needs(TbC *c)
{
  const IrKernel *k = c->k;
  int n = k->nodes.len, last = c->r - 1;
  for (int l = 0; l < 2; l++) {
    char *need = arena_alloc(c->p->arena, (size_t)n + 1);
    for (int e = 0; e < k->effects.len; e++) {
      const IrEffect *ef = &k->effects.data[e];
      if (ef->kind == EFF_REDUCE && !l)
        continue;
      need[ef->val] = 1;
      if (ef->pred >= 0)
        need[ef->pred] = 1;
    }
    for (int d = 0; d < c->r; d++)
      need[k->lo[d]] = need[k->hi[d]] = 1;
    c->need_c[l] = c->need_k[l] = 0; /* (wrapped indices are of loads outside the ring: need_c) */
    for (int i = n - 1; i >= 0; i--) {
      const IrNode *nd = &k->nodes.data[i];
      if (!need[i])
        continue;
      for (int a = 0; a < op_info[nd->op].nargs; a++)
        need[nd->arg[a]] = 1;
      c->need_c[l] |= nd->op == OP_LOAD && ir_tb_pair_of_cur(c->tb, nd->ref) < 0;
      c->need_k[l] |= nd->op == OP_INDEX && nd->ref == last;
    }
    c->need_k[l] |= c->need_c[l];
    c->need[l] = need;
  }
}

/* A loop over positions [lo, hi) of the last dimension, with k (wrapped),
 * x_ (tile index) and c_ (global index); body >= 0: the loop of the
 * body (1: with the reductions), k and c_ only where it needs them. */
static void open_loop(const TbC *c, const char *lo, const char *hi, int simd, const char *reduction, int depth, int body)
{
  Buf *b = c->b;
  int d = c->r - 1;
  if (simd && c->openmp) {
    indent(b, depth);
    buf_printf(b, "#pragma omp simd%s\n", reduction ? reduction : "");
  }
  indent(b, depth);
  buf_printf(b, "for (long %s = %s; %s < %s; %s++) {\n", pos[d], lo, pos[d], hi, pos[d]);
  if (body < 0 || c->need_k[body])
    print_coord(c, d, depth + 1);
  indent(b, depth + 1);
  buf_printf(b, "const long x_ = xr_ + %s;\n", pos[d]);
  if (body < 0 || c->need_c[body]) {
    indent(b, depth + 1);
    buf_printf(b, "const long c_ = cr_ + %s;\n", index_name(d));
  }
}

static void open_last(const TbC *c, const char *lo, const char *hi, int simd, const char *reduction, int depth)
{
  open_loop(c, lo, hi, simd, reduction, depth, -1);
}

/* The kernel's body at one point of the region, into the out buffers;
 * with the reductions when `last` (step T: every point is the tile's own). */
static void print_body(const TbC *c, int last, int depth)
{
  Buf *b = c->b;
  const IrKernel *k = c->k;
  Printer *pr = c->pr;
  if (c->tb->cpu_march && c->tb->predicated)
    /* A predicated store leaves the point as it was two steps back: the
     * ring's slot holds an older plane, so it starts as step t - 2 (next's
     * value at step 1), as outside the region (tests/lit/run/tb-predicate.stn, 3-D) */
    for (int q = 0; q < c->tb->npairs; q++) {
      /* (c_, k: not declared where unused; a periodic k wraps: the row's
       * ends past the grid's are its other end, tests/lit/run/tb-predicate-periodic.stn) */
      indent(c->b, depth);
      buf_printf(c->b, c->g->periodic[2] ? "out%d_[x_] = t_ == 1 ? %s[cr_ + (%s)] : pv%d_[x_];\n"
                                         : "out%d_[x_] = t_ == 1 ? %s[cr_ + %s] : pv%d_[x_];\n",
                 q, cname(c->p, c->p->fields.data[c->tb->next[q]].name), coord_expr(c, 2), q);
    }
  for (int d = 0; d < c->r; d++)
    print_wrap_decls(pr, d, depth, "long");
  /* Before step T the values only the reductions use are not printed. */
  char **all = pr->names, **names = xrealloc(NULL, sizeof(char *) * (size_t)(k->nodes.len + 1));
  for (int i = 0; i < k->nodes.len; i++)
    names[i] = c->need[last][i] || k->nodes.data[i].level == 0 ? all[i] : NULL;
  pr->names = names;
  for (int lv = 1; lv <= c->r; lv++)
    emit_level(pr, lv, depth);
  pr->names = all;
  free(names);
  for (int e = 0; e < k->effects.len; e++) {
    const IrEffect *ef = &k->effects.data[e];
    if (ef->kind == EFF_REDUCE && !last)
      continue;
    print_effect_head(pr, ef, depth);
    if (ef->kind == EFF_STORE) {
      buf_printf(b, "out%d_[x_] = ", ir_tb_pair_of_next(c->tb, ef->ref));
      print_expr(pr, ef->val, P_TOP, 0);
      buf_puts(b, ";\n");
      continue;
    }
    buf_puts(b, print_red_update(pr, &k->reds.data[ef->ref], ef->val) ? "\n" : ";\n");
  }
}

static void print_reduction_clause(Buf *b, const IrProgram *p, const IrKernel *k)
{
  for (int i = 0; i < k->reds.len; i++)
    buf_printf(b, " reduction(%s: %s)", k->reds.data[i].op == RED_SUM ? "+" : k->reds.data[i].op == RED_MAX ? "max" : "min",
               cname(p, k->reds.data[i].name));
}

/* A tile's own row (positions [0, hi_), at xr_ and cr_): step T - 1,
 * from src (a format of the pair: "lv%d_[(T_ - 1) & 1]", "out%d_"), into
 * next where the row and its points are in the region, when prev_. */
static void print_prev_row(const TbC *c, int dd, const char *src)
{
  Buf *b = c->b;
  const char *kx = index_name(c->r - 1), *tk = org[c->r - 1];
  indent(b, dd);
  buf_puts(b, "if (prev_ && ");
  for (int d = 0; d < c->r - 1; d++)
    buf_printf(b, "%s >= %s_lo_ && %s < %s_hi_ && ", index_name(d), index_name(d), index_name(d), index_name(d));
  buf_puts(b, "1) {\n");
  indent(b, dd + 1);
  buf_printf(b, "const long rlo_ = %s_lo_ - %s > 0 ? %s_lo_ - %s : 0, rhi_ = %s_hi_ - %s < hi_ ? %s_hi_ - %s : hi_;\n",
             kx, tk, kx, tk, kx, tk, kx, tk);
  open_last(c, "rlo_", "rhi_", 1, NULL, dd + 1);
  for (int q = 0; q < c->tb->npairs; q++) {
    indent(b, dd + 2);
    buf_printf(b, "%s[c_] = ", cname(c->p, c->p->fields.data[c->tb->next[q]].name));
    buf_printf(b, src, q);
    buf_puts(b, "[x_];\n");
  }
  indent(b, dd + 1);
  buf_puts(b, "}\n");
  indent(b, dd);
  buf_puts(b, "}\n");
}

/* One row of step t_ (its positions along the last dimension within
 * shrink of the tile, inside the allocation) into out<pair>_: the parts
 * outside the kernel's region copy what the swaps leave there, the part
 * inside runs the body; at step T with the reductions, over the tile's
 * own points only (own_row: a C condition, the row is one of them). */
static void print_row_step(const TbC *c, int dd, const char *shrink, const char *own_row)
{
  Buf *b = c->b;
  const IrProgram *p = c->p;
  const IrKernel *k = c->k;
  const IrTb *tb = c->tb;
  const IrGrid *g = c->g;
  const char *gname = c->gname;
  int r = c->r, last = r - 1;
  const char *kx = index_name(last);
  /* This row's positions: [lo_, hi_) within the allocation, of which
   * [rlo_, rhi_) in the region (empty when the row is not). */
  indent(b, dd);
  buf_printf(b, "long lo_ = -%s, hi_ = %s + %s;\n", shrink, tsz[last], shrink);
  indent(b, dd);
  buf_printf(b, "if (lo_ < alo_ - %s)\n", org[last]);
  indent(b, dd + 1);
  buf_printf(b, "lo_ = alo_ - %s;\n", org[last]);
  indent(b, dd);
  buf_printf(b, "if (hi_ > ahi_ - %s)\n", org[last]);
  indent(b, dd + 1);
  buf_printf(b, "hi_ = ahi_ - %s;\n", org[last]);
  indent(b, dd);
  buf_puts(b, "const int row_ = ");
  for (int d = 0; d < r - 1; d++)
    buf_printf(b, "%s%s >= %s_lo_ && %s < %s_hi_", d ? " && " : "", index_name(d), index_name(d), index_name(d),
               index_name(d));
  buf_puts(b, ";\n");
  if (g->periodic[last]) {
    /* The region of a periodic last dimension is a range of wrapped
     * coordinates: it is all of it, or the row is done point by point. */
    indent(b, dd);
    buf_printf(b, "const int whole_ = %s_lo_ == 0 && %s_hi_ == %s.n[%d];\n", kx, kx, gname, last);
    indent(b, dd);
    buf_puts(b, "const long rlo_ = row_ && whole_ ? lo_ : hi_, rhi_ = hi_;\n");
  } else {
    indent(b, dd);
    buf_printf(b, "long rlo_ = %s_lo_ - %s, rhi_ = %s_hi_ - %s;\n", kx, org[last], kx, org[last]);
    indent(b, dd);
    buf_puts(b, "if (rlo_ < lo_)\n");
    indent(b, dd + 1);
    buf_puts(b, "rlo_ = lo_;\n");
    indent(b, dd);
    buf_puts(b, "if (rhi_ > hi_)\n");
    indent(b, dd + 1);
    buf_puts(b, "rhi_ = hi_;\n");
    indent(b, dd);
    buf_puts(b, "if (!row_ || rhi_ < rlo_)\n");
    indent(b, dd + 1);
    buf_puts(b, "rlo_ = rhi_ = hi_;\n");
  }
  /* Outside the region: the value the swaps leave there at step t. */
  for (int seg = 0; seg < 2; seg++) {
    open_last(c, seg ? "rhi_" : "lo_", seg ? "hi_" : "rlo_", 0, NULL, dd);
    if (g->periodic[last]) {
      indent(b, dd + 1);
      buf_printf(b, "if (row_ && %s >= %s_lo_ && %s < %s_hi_) {\n", kx, kx, kx, kx);
      print_body(c, 0, dd + 2);
      indent(b, dd + 1);
      buf_puts(b, "} else {\n");
      for (int q = 0; q < tb->npairs; q++) {
        indent(b, dd + 2);
        if (tb->cpu_march) /* as below */
          buf_printf(b, "out%d_[x_] = t_ == 1 ? %s[c_] : pv%d_[x_];\n", q, cname(p, p->fields.data[tb->next[q]].name), q);
        else
          buf_printf(b, "out%d_[x_] = t_ & 1 ? %s[c_] : %s[c_];\n", q, cname(p, p->fields.data[tb->next[q]].name),
                     cname(p, p->fields.data[tb->cur[q]].name));
      }
      indent(b, dd + 1);
      buf_puts(b, "}\n");
    } else if (tb->cpu_march) {
      /* the same as step t - 2 there (in the ring, in cache), next's at step 1 */
      for (int q = 0; q < tb->npairs; q++) {
        indent(b, dd + 1);
        buf_printf(b, "out%d_[x_] = t_ == 1 ? %s[c_] : pv%d_[x_];\n", q, cname(p, p->fields.data[tb->next[q]].name), q);
      }
    } else {
      for (int q = 0; q < tb->npairs; q++) {
        indent(b, dd + 1);
        buf_printf(b, "out%d_[x_] = t_ & 1 ? %s[c_] : %s[c_];\n", q, cname(p, p->fields.data[tb->next[q]].name),
                   cname(p, p->fields.data[tb->cur[q]].name));
      }
    }
    indent(b, dd);
    buf_puts(b, "}\n");
  }
  /* Inside: the kernel's body; at step T with the reductions, over the
   * tile's own points only (along a periodic dimension the tile can
   * reach past the grid's end, where its points wrap onto points counted
   * already; nothing reads step T there). */
  if (k->reds.len) {
    indent(b, dd);
    buf_puts(b, "if (t_ == T_) {\n");
    indent(b, dd + 1);
    buf_printf(b, "if (%s) {\n", own_row);
    indent(b, dd + 2);
    buf_printf(b, "const long ohi_ = rhi_ < %s.n[%d] - %s ? rhi_ : %s.n[%d] - %s;  /* own points */\n", gname, last,
               org[last], gname, last, org[last]);
    Buf rc = { 0 };
    print_reduction_clause(&rc, p, k);
    open_loop(c, "rlo_", "ohi_", 1, rc.s, dd + 2, 1);
    buf_free(&rc);
    print_body(c, 1, dd + 3);
    indent(b, dd + 2);
    buf_puts(b, "}\n");
    indent(b, dd + 1);
    buf_puts(b, "}\n");
    indent(b, dd);
    buf_puts(b, "} else {\n");
    open_loop(c, "rlo_", "rhi_", 1, NULL, dd + 1, 0);
    print_body(c, 0, dd + 2);
    indent(b, dd + 1);
    buf_puts(b, "}\n");
    indent(b, dd);
    buf_puts(b, "}\n");
  } else {
    open_loop(c, "rlo_", "rhi_", 1, NULL, dd, 0);
    print_body(c, 0, dd + 1);
    indent(b, dd);
    buf_puts(b, "}\n");
  }
}

/* Marching tiles: a loop over the rows of plane i, `ext` rows beyond the
 * tile on each side inside the allocation, with j, xr_ (the row in a ring
 * plane) and cr_ (the row in the grid). */
static void march_rows(const TbC *c, int depth, const char *ext)
{
  Buf *b = c->b;
  indent(b, depth);
  buf_printf(b, "for (long u1_ = -(%s); u1_ < TJ_ + (%s); u1_++) {\n", ext, ext);
  print_coord(c, 1, depth + 1);
  indent(b, depth + 1);
  buf_printf(b, "if (j < -%d || j >= %s.n[1] + %d)\n", c->g->halo_lo[1], c->gname, c->g->halo_hi[1]);
  indent(b, depth + 2);
  buf_puts(b, "continue;\n");
  indent(b, depth + 1);
  buf_puts(b, "const long xr_ = (u1_ + H1_) * ts1_ + H2_;\n");
  indent(b, depth + 1);
  buf_puts(b, "const long cr_ = i * s0_ + j * s1_;\n");
}

/* 3-D, IrTb.cpu_march: each thread takes a tile of TI_ planes of TJ_ x TK_
 * points (with T x reach around it along j and k) and marches along i.
 * Step t keeps its last NS_ = 2 r + 1 planes of the tile in a ring
 * (lv<pair>_, plane x of step t at slot x mod NS_); the iteration that
 * brings plane s_ of step 0 computes plane s_ - t r of step t, for t = 1
 * .. T, from step t - 1's planes around it. So each point is computed
 * (TJ_ + 2 H1_)(TK_ + 2 H2_) / (TJ_ TK_) times and not, as in overlapped
 * 3-D tiles, that times (TI_ + 2 H0_) / TI_ too; and only the ring's
 * planes need to stay in cache (bench/cpu_tb3d.c: diffusion3d 256^3 on
 * two cores, 1.26-1.60x single steps, against 0.67-0.86x for tiles;
 * generated: 1.08-1.35x, docs/benchmarks.md 2026-11-23 12:20). */
/* The march's own row: out<q>_ into the field dst[q] of each pair. */
static void own_row_out(const TbC *c, const int *dst)
{
  open_last(c, "0", "hi_", 1, NULL, 11);
  for (int q = 0; q < c->tb->npairs; q++) {
    indent(c->b, 12);
    buf_printf(c->b, "%s[c_] = out%d_[x_];\n", c->p->fields.data[dst[q]].name, q);
  }
  indent(c->b, 11);
  buf_puts(c->b, "}\n");
}

static void print_march(const TbC *c, int openmp)
{
  Buf *b = c->b;
  const IrProgram *p = c->p;
  const IrKernel *k = c->k;
  const IrTb *tb = c->tb;
  const IrGrid *g = c->g;
  const char *gname = c->gname;
  int R0 = tb->reach[0], NS = tb->march_ring;
  buf_printf(b, "  enum { NS_ = %d };  /* planes each step keeps */\n", NS);
  if (openmp) {
    buf_puts(b, "  #pragma omp parallel");
    print_reduction_clause(b, p, k);
    buf_puts(b, "\n");
  }
  buf_puts(b, "  {\n");
  /* Each thread's rings, [step][slot][plane], kept for the next pass (a
   * fresh allocation each pass cost diffusion3d 256^3 x 24 steps at
   * T = 4 about a fifth of its time in page faults). */
  buf_puts(b, "    const size_t ring_ = (size_t)(T_ + 1) * NS_ * (size_t)ts0_;\n");
  for (int q = 0; q < tb->npairs; q++) {
    const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
    buf_printf(b, "    static _Thread_local %s *lv%d_keep_ = NULL;\n    static _Thread_local size_t lv%d_size_ = 0;\n", ty, q, q);
    buf_printf(b, "    if (lv%d_size_ < ring_) {\n      free(lv%d_keep_);\n      lv%d_keep_ = malloc(sizeof(%s) * ring_);\n", q, q,
               q, ty);
    buf_printf(b, "      if (!lv%d_keep_)\n        stn_fatal(\"kernel %s: no memory for its temporal-blocking planes (%%ld "
                  "bytes); use a smaller --tb\", (long)(sizeof(%s) * ring_));\n      lv%d_size_ = ring_;\n    }\n", q, k->name,
               ty, q);
    buf_printf(b, "    %s *const lv%d_ = lv%d_keep_;\n", ty, q, q);
  }
  if (openmp)
    buf_puts(b, "    #pragma omp for collapse(3) schedule(static)\n");
  for (int d = 0; d < 3; d++) {
    indent(b, 2 + d);
    buf_printf(b, "for (long %s = 0; %s < %s.n[%d]; %s += %s)\n", org[d], org[d], gname, d, org[d], tsz[d]);
  }
  indent(b, 5);
  buf_puts(b, "{\n");
  indent(b, 6);
  buf_printf(b, "const long i1_ = ti_ + TI_ < %s.n[0] ? ti_ + TI_ : %s.n[0];  /* the tile's own planes: [ti_, i1_) */\n", gname,
             gname);
  indent(b, 6);
  buf_printf(b, "for (long s_ = ti_ - H0_; s_ < i1_ + %d * T_; s_++) {  /* plane s_ of step 0 comes */\n", R0);
  /* step 0 */
  indent(b, 7);
  buf_printf(b, "if (s_ >= -%d && s_ < %s.n[0] + %d) { /* step 0: plane s_, the tile and T x reach around it */\n",
             g->halo_lo[0], gname, g->halo_hi[0]);
  indent(b, 8);
  buf_puts(b, "const long i = s_;\n");
  for (int q = 0; q < tb->npairs; q++) {
    indent(b, 8);
    buf_printf(b, "%s *const out%d_ = lv%d_ + (size_t)((s_ %% NS_ + NS_) %% NS_) * ts0_;\n",
               ctype(p->fields.data[tb->cur[q]].ty), q, q);
  }
  march_rows(c, 8, "H1_");
  indent(b, 9);
  buf_puts(b, "const long lo_ = alo_ - tk_ > -H2_ ? alo_ - tk_ : -H2_, hi_ = ahi_ - tk_ < TK_ + H2_ ? ahi_ - tk_ : TK_ + H2_;\n");
  open_last(c, "lo_", "hi_", 1, NULL, 9);
  for (int q = 0; q < tb->npairs; q++) {
    indent(b, 10);
    buf_printf(b, "out%d_[x_] = %s[c_];\n", q, cname(p, p->fields.data[tb->cur[q]].name));
  }
  indent(b, 9);
  buf_puts(b, "}\n");
  indent(b, 8);
  buf_puts(b, "}\n");
  indent(b, 7);
  buf_puts(b, "}\n");
  /* steps 1..T */
  indent(b, 7);
  buf_puts(b, "for (int t_ = 1; t_ <= T_; t_++) {\n");
  indent(b, 8);
  buf_printf(b, "const long i = s_ - %d * t_;  /* the plane step t_ computes */\n", R0);
  indent(b, 8);
  buf_printf(b, "if (i < ti_ - %d * (T_ - t_) || i >= i1_ + %d * (T_ - t_) || i < -%d || i >= %s.n[0] + %d)\n", R0, R0,
             g->halo_lo[0], gname, g->halo_hi[0]);
  indent(b, 9);
  buf_puts(b, "continue;\n");
  for (int q = 0; q < tb->npairs; q++) {
    const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
    indent(b, 8);
    buf_printf(b, "const %s *in%d_[%d];  /* step t_ - 1's planes i - %d .. i + %d */\n", ty, q, NS, R0, R0);
    indent(b, 8);
    buf_printf(b, "for (int d_ = 0; d_ < NS_; d_++)\n");
    indent(b, 9);
    buf_printf(b, "in%d_[d_] = lv%d_ + ((size_t)(t_ - 1) * NS_ + (size_t)(((i + d_ - %d) %% NS_ + NS_) %% NS_)) * ts0_;\n", q, q,
               R0);
    indent(b, 8);
    buf_printf(b, "%s *restrict out%d_ = lv%d_ + ((size_t)t_ * NS_ + (size_t)((i %% NS_ + NS_) %% NS_)) * ts0_;\n", ty, q, q);
    indent(b, 8); /* step t_ - 2's plane i: still in its ring, whose newest plane is i + 2 r */
    buf_printf(b, "const %s *pv%d_ = lv%d_ + ((size_t)(t_ >= 2 ? t_ - 2 : 0) * NS_ + (size_t)((i %% NS_ + NS_) %% NS_)) * ts0_;\n",
               ty, q, q);
  }
  march_rows(c, 8, arena_printf(p->arena, "(T_ - t_) * %d", tb->reach[1]));
  print_row_step(c, 9, arena_printf(p->arena, "(T_ - t_) * %d", tb->reach[2]),
                 arena_printf(p->arena, "tj_ + u1_ < %s.n[1]", gname));
  indent(b, 8);
  buf_puts(b, "}\n");
  /* own points out */
  indent(b, 8);
  buf_puts(b, "if (t_ >= T_ - 1 && i >= ti_ && i < i1_) { /* own points: step T to scratch, step T - 1 (in the region) to next */\n");
  indent(b, 9);
  buf_printf(b, "for (long u1_ = 0; u1_ < TJ_ && tj_ + u1_ < %s.n[1]; u1_++) {\n", gname);
  print_coord(c, 1, 10);
  indent(b, 10);
  buf_puts(b, "const long xr_ = (u1_ + H1_) * ts1_ + H2_;\n");
  indent(b, 10);
  buf_puts(b, "const long cr_ = i * s0_ + j * s1_;\n");
  indent(b, 10);
  buf_printf(b, "const long hi_ = %s.n[2] - tk_ < TK_ ? %s.n[2] - tk_ : TK_;\n", gname, gname);
  indent(b, 10);
  buf_puts(b, "if (t_ == T_) {\n");
  own_row_out(c, tb->scratch);
  indent(b, 10);
  buf_puts(b, "} else {\n");
  if (tb->predicated) {
    /* A predicated store: the tiles after this one read next as their
     * step -1 (where the store does not fire), so step T - 1 goes to
     * next's twin, swapped in after the pass, as overlapped tiles do
     * (tests/lit/run/tb-predicate.stn, 3-D) */
    own_row_out(c, tb->scratch_next);
  } else {
    print_prev_row(c, 11, "out%d_");
  }
  indent(b, 10);
  buf_puts(b, "}\n");
  indent(b, 9);
  buf_puts(b, "}\n");
  indent(b, 8);
  buf_puts(b, "}\n");
  indent(b, 7);
  buf_puts(b, "}\n");
  indent(b, 6);
  buf_puts(b, "}\n");
  indent(b, 5);
  buf_puts(b, "}\n");
  buf_puts(b, "  }\n");
}

void cg_c_print_tb(Buf *b, const IrProgram *p, const IrTb *tb, int openmp)
{
  const IrKernel *k = p->kernels.data[tb->kernel];
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  int r = k->rank, T = tb->steps, last = r - 1;
  const char *kx = index_name(last);
  ir_count_uses((IrKernel *)k);
  int *use_level = use_levels(k);
  char **names = value_names(p, k, use_level);
  char *skip = xrealloc(NULL, (size_t)p->fields.len + 1);
  for (int f = 0; f < p->fields.len; f++)
    skip[f] = ir_tb_pair_of_cur(tb, f) >= 0;
  Printer pr = { .b = b, .p = p, .k = k, .pool = &k->nodes, .names = names, .print_load = tile_load, .hook = tb,
                 .wrap_skip = skip };
  TbC c = { b, p, k, tb, g, gname, r, &pr, openmp, { NULL, NULL }, { 0, 0 }, { 0, 0 } };
  body_needs(&c);

  print_kernel_title(b, p, k);
  buf_printf(b, "\n * temporally blocked: %s */\n", tb->why);
  const char *ret = k->reds.len == 1 ? ctype(k->reds.data[0].ty) : "void";
  buf_printf(b, "static %s %s_tb_(", ret, k->name);
  for (int i = 0; i < k->args.len; i++)
    buf_printf(b, "%s %s, ", ctype(k->args.data[i].ty), cname(p, k->args.data[i].name));
  if (k->reds.len > 1)
    for (int i = 0; i < k->reds.len; i++)
      buf_printf(b, "%s *%s_out_, ", ctype(k->reds.data[i].ty), k->reds.data[i].name);
  buf_puts(b, "int prev_)\n{\n");
  /* The tiles (the pass's sizes) and their halos, H = T x reach. */
  buf_printf(b, "  enum { T_ = %d", T);
  for (int d = 0; d < r; d++)
    buf_printf(b, ", %s = %d, %s = %d", tsz[d], tb->tile[d], hal[d], T * tb->reach[d]);
  buf_puts(b, " };\n");
  /* A periodic dimension shorter than its halo would wrap more than once:
   * take the steps one at a time instead. */
  int any_periodic = 0;
  for (int d = 0; d < r; d++)
    any_periodic |= g->periodic[d];
  if (any_periodic) {
    buf_puts(b, "  if (");
    for (int d = 0, n = 0; d < r; d++)
      if (g->periodic[d])
        buf_printf(b, "%s%s.n[%d] < %s", n++ ? " || " : "", gname, d, hal[d]);
    buf_puts(b, ") {\n");
    for (int i = 0; i < k->reds.len; i++)
      buf_printf(b, "    %s %s_v_ = 0;\n", ctype(k->reds.data[i].ty), k->reds.data[i].name);
    buf_puts(b, "    for (int t_ = 0; t_ < T_; t_++) {\n      ");
    if (k->reds.len == 1)
      buf_printf(b, "%s_v_ = ", k->reds.data[0].name);
    buf_printf(b, "%s_(", k->name);
    for (int i = 0; i < k->args.len; i++)
      buf_printf(b, "%s%s", i ? ", " : "", cname(p, k->args.data[i].name));
    if (k->reds.len > 1)
      for (int i = 0; i < k->reds.len; i++)
        buf_printf(b, "%s&%s_v_", i || k->args.len ? ", " : "", k->reds.data[i].name);
    buf_puts(b, ");\n");
    for (int q = 0; q < tb->npairs; q++)
      buf_printf(b, "      stn_field_swap(&%s_, &%s_);\n", p->fields.data[tb->cur[q]].name, p->fields.data[tb->next[q]].name);
    buf_puts(b, "    }\n");
    if (k->reds.len == 1)
      buf_printf(b, "    return %s_v_;\n", k->reds.data[0].name);
    else
      for (int i = 0; i < k->reds.len; i++)
        buf_printf(b, "    *%s_out_ = %s_v_;\n", k->reds.data[i].name, k->reds.data[i].name);
    if (k->reds.len != 1)
      buf_puts(b, "    return;\n");
    buf_puts(b, "  }\n");
  }
  /* Fields: cur (step 0; outside the region at even steps), next (outside
   * the region at odd steps; step T - 1 out, or with a predicated store
   * step -1, and step T - 1 out to its twin), scratch (step T out), and
   * the fields the kernel only reads. */
  for (int f = 0; f < p->fields.len; f++) {
    int qc = ir_tb_pair_of_cur(tb, f), qn = ir_tb_pair_of_next(tb, f);
    const char *fn = cname(p, p->fields.data[f].name), *ty = ctype(p->fields.data[f].ty);
    if (qc >= 0) {
      buf_printf(b, "  const %s *restrict %s = %s_.origin;\n", ty, fn, p->fields.data[f].name);
      const IrField *sf = &p->fields.data[tb->scratch[qc]];
      buf_printf(b, "  %s *restrict %s = %s_.origin;\n", ty, sf->name, sf->name);
    } else if (qn >= 0) {
      buf_printf(b, "  %s *restrict %s = %s_.origin;\n", ty, fn, p->fields.data[f].name);
      if (tb->predicated) {
        const IrField *sf = &p->fields.data[tb->scratch_next[qn]];
        buf_printf(b, "  %s *restrict %s = %s_.origin;\n", ty, sf->name, sf->name);
      }
    } else if (ir_reads_field(k, f)) {
      buf_printf(b, "  const %s *restrict %s = %s_.origin;\n", ty, fn, p->fields.data[f].name);
    }
  }
  for (int d = 0; d < r - 1; d++)
    buf_printf(b, "  const long s%d_ = %s.stride[%d];\n", d, gname, d);
  print_red_locals(b, p, k, 0);
  emit_level(&pr, 0, 1);
  print_region_bounds(&pr, gname);
  buf_printf(b, "  static stn_kprof prof_ = { \"%s x%d\", %d, %d, 0, 0, 0, NULL };\n", k->name, T, k->flops,
             k->bytes_read + k->bytes_written);
  buf_puts(b, "  const double prof_t0_ = stn_profiling ? stn_time() : 0.0;\n");
  /* A tile's extents with the halo, its strides (marching: ts0_ is a
   * plane), and (overlapped tiles) its size. */
  for (int d = r - 1; d >= (tb->cpu_march ? 1 : 0); d--)
    buf_printf(b, "  const long W%d_ = %s + 2 * %s;\n", d, tsz[d], hal[d]);
  for (int d = 0; d < r - 1; d++) {
    buf_printf(b, "  const long ts%d_ = ", d);
    for (int e = d + 1; e < r; e++)
      buf_printf(b, "%sW%d_", e > d + 1 ? " * " : "", e);
    buf_puts(b, ";\n");
  }
  if (!tb->cpu_march) {
    buf_puts(b, "  const long tile_ = W0_");
    for (int d = 1; d < r; d++)
      buf_printf(b, " * W%d_", d);
    buf_puts(b, ";\n");
  }
  /* The allocation along the last dimension (periodic: wrapped, all of it). */
  if (g->periodic[last])
    buf_printf(b, "  const long alo_ = -%s, ahi_ = %s.n[%d] + %s;\n", hal[last], gname, last, hal[last]);
  else
    buf_printf(b, "  const long alo_ = -%d, ahi_ = %s.n[%d] + %d;\n", g->halo_lo[last], gname, last, g->halo_hi[last]);
  int predicated = tb->predicated;
  if (tb->cpu_march)
    print_march(&c, openmp);
  else {
    if (openmp) {
      buf_puts(b, "  #pragma omp parallel");
      print_reduction_clause(b, p, k);
      buf_puts(b, "\n");
    }
    buf_puts(b, "  {\n");
    for (int q = 0; q < tb->npairs; q++) {
      const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
      buf_printf(b, "    %s *lv%d_[2] = { malloc(sizeof(%s) * (size_t)tile_), malloc(sizeof(%s) * (size_t)tile_) };\n", ty, q,
                 ty, ty);
      buf_printf(b, "    if (!lv%d_[0] || !lv%d_[1])\n      stn_fatal(\"kernel %s: no memory for its temporal-blocking tiles "
                    "(%%ld bytes); use a smaller --tb\", (long)(2 * sizeof(%s) * (size_t)tile_));\n", q, q, k->name, ty);
    }
    if (openmp)
      buf_printf(b, "    #pragma omp for collapse(%d) schedule(static)\n", r);
    for (int d = 0; d < r; d++) {
      indent(b, 2 + d);
      buf_printf(b, "for (long %s = 0; %s < %s.n[%d]; %s += %s)\n", org[d], org[d], gname, d, org[d], tsz[d]);
    }
    indent(b, 2 + r);
    buf_puts(b, "{\n");
    int depth = 3 + r;
    /* A predicated store leaves the next field unchanged where it does not
     * fire (its value two steps back): the buffer of step 1 starts as next. */

    /* ---- step 0 ---- */
    indent(b, depth);
    buf_puts(b, "/* step 0: the tile and T x reach around it, as far as the allocation goes */\n");
    const char *full[MAX_RANK] = { "H0_", "H1_", "H2_" };
    int dd = open_rows(&c, depth, full, 1);
    indent(b, dd);
    buf_printf(b, "const long lo_ = alo_ - %s > -%s ? alo_ - %s : -%s, hi_ = ahi_ - %s < %s + %s ? ahi_ - %s : %s + %s;\n",
               org[last], hal[last], org[last], hal[last], org[last], tsz[last], hal[last], org[last], tsz[last], hal[last]);
    open_last(&c, "lo_", "hi_", 1, NULL, dd);
    for (int q = 0; q < tb->npairs; q++) {
      indent(b, dd + 1);
      buf_printf(b, "lv%d_[0][x_] = %s[c_];\n", q, cname(p, p->fields.data[tb->cur[q]].name));
      if (predicated) {
        indent(b, dd + 1);
        buf_printf(b, "lv%d_[1][x_] = %s[c_];\n", q, cname(p, p->fields.data[tb->next[q]].name));
      }
    }
    indent(b, dd);
    buf_puts(b, "}\n");
    close_rows(&c, depth);

    /* ---- steps 1..T ---- */
    indent(b, depth);
    buf_puts(b, "for (int t_ = 1; t_ <= T_; t_++) {\n");
    for (int q = 0; q < tb->npairs; q++) {
      const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
      indent(b, depth + 1);
      buf_printf(b, "const %s *restrict in%d_ = lv%d_[(t_ - 1) & 1];\n", ty, q, q);
      indent(b, depth + 1);
      buf_printf(b, "%s *restrict out%d_ = lv%d_[t_ & 1];\n", ty, q, q);
    }
    const char *shrink[MAX_RANK];
    for (int d = 0; d < r; d++)
      shrink[d] = arena_printf(p->arena, "(T_ - t_) * %d", tb->reach[d]);
    dd = open_rows(&c, depth + 1, shrink, 1);
    {
      Buf own = { 0 };
      for (int d = 0; d < r - 1; d++)
        buf_printf(&own, "%s + %s < %s.n[%d] && ", org[d], pos[d], gname, d);
      buf_puts(&own, "1");
      print_row_step(&c, dd, shrink[last], own.s);
      buf_free(&own);
    }
    close_rows(&c, depth + 1);
    indent(b, depth);
    buf_puts(b, "}\n");

    /* ---- the tile's own points out ---- */
    indent(b, depth);
    buf_puts(b, "/* the tile's own points: step T to scratch, step T - 1 (in the region) to next */\n");
    /* Own rows: positions [0, T<d>) inside the grid. */
    for (int d = 0; d < r - 1; d++) {
      indent(b, depth + d);
      buf_printf(b, "for (long %s = 0; %s < %s && %s + %s < %s.n[%d]; %s++) {\n", pos[d], pos[d], tsz[d], org[d], pos[d],
                 gname, d, pos[d]);
      print_coord(&c, d, depth + d + 1);
    }
    dd = depth + r - 1;
    indent(b, dd);
    buf_puts(b, "const long xr_ = ");
    for (int d = 0; d < r - 1; d++)
      buf_printf(b, "%s(%s + %s) * ts%d_", d ? " + " : "", pos[d], hal[d], d);
    buf_printf(b, " + %s;\n", hal[last]);
    indent(b, dd);
    buf_puts(b, "const long cr_ = ");
    for (int d = 0; d < r - 1; d++)
      buf_printf(b, "%s%s * s%d_", d ? " + " : "", index_name(d), d);
    buf_puts(b, ";\n");
    indent(b, dd);
    buf_printf(b, "const long hi_ = %s.n[%d] - %s < %s ? %s.n[%d] - %s : %s;\n", gname, last, org[last], tsz[last], gname,
               last, org[last], tsz[last]);
    open_last(&c, "0", "hi_", 1, NULL, dd);
    for (int q = 0; q < tb->npairs; q++) {
      indent(b, dd + 1);
      buf_printf(b, "%s[c_] = lv%d_[T_ & 1][x_];\n", p->fields.data[tb->scratch[q]].name, q);
      if (predicated) {
        indent(b, dd + 1);
        buf_printf(b, "%s[c_] = lv%d_[(T_ - 1) & 1][x_];\n", p->fields.data[tb->scratch_next[q]].name, q);
      }
    }
    indent(b, dd);
    buf_puts(b, "}\n");
    if (!predicated) /* else step T - 1 went to next's twin, outside the region too */
      print_prev_row(&c, dd, "lv%d_[(T_ - 1) & 1]");
    close_rows(&c, depth);
    indent(b, 2 + r);
    buf_puts(b, "}\n");
    for (int q = 0; q < tb->npairs; q++)
      buf_printf(b, "    free(lv%d_[0]);\n    free(lv%d_[1]);\n", q, q);
    buf_puts(b, "  }\n");
  }

  /* Odd T: the next fields must now hold, outside the region, what cur
   * holds there (the swaps' alternation); nothing reads them any more.
   * The region is a box: each row skips its part of it. */
  if (T % 2 && !predicated) {
    buf_puts(b, "  /* odd steps per pass: next takes cur's values outside the region */\n");
    for (int d = 0; d < r; d++) {
      indent(b, 1 + d);
      buf_printf(b, "for (long %s = 0; %s < %s.n[%d]; %s++) {\n", index_name(d), index_name(d), gname, d, index_name(d));
      if (d == r - 2) {
        indent(b, 2 + d);
        buf_puts(b, "const int inner_ = ");
        for (int e = 0; e < r - 1; e++)
          buf_printf(b, "%s >= %s_lo_ && %s < %s_hi_ && ", index_name(e), index_name(e), index_name(e), index_name(e));
        buf_printf(b, "%s_lo_ < %s_hi_;\n", kx, kx);
      }
    }
    indent(b, 1 + r);
    buf_printf(b, "if (inner_ && %s == %s_lo_) {\n", kx, kx);
    indent(b, 2 + r);
    buf_printf(b, "%s = %s_hi_ - 1;\n", kx, kx);
    indent(b, 2 + r);
    buf_puts(b, "continue;\n");
    indent(b, 1 + r);
    buf_puts(b, "}\n");
    indent(b, 1 + r);
    buf_puts(b, "const long c_ = ");
    for (int d = 0; d < r - 1; d++)
      buf_printf(b, "%s * s%d_ + ", index_name(d), d);
    buf_printf(b, "%s;\n", kx);
    for (int q = 0; q < tb->npairs; q++) {
      indent(b, 1 + r);
      buf_printf(b, "%s[c_] = %s[c_];\n", cname(p, p->fields.data[tb->next[q]].name),
                 cname(p, p->fields.data[tb->cur[q]].name));
    }
    for (int d = r - 1; d >= 0; d--) {
      indent(b, 1 + d);
      buf_puts(b, "}\n");
    }
  }
  /* cur <- scratch (step T), scratch <- cur; next <- its twin (step T - 1). */
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "  stn_field_swap(&%s_, &%s_);\n", p->fields.data[tb->cur[q]].name, p->fields.data[tb->scratch[q]].name);
  for (int q = 0; predicated && q < tb->npairs; q++)
    buf_printf(b, "  stn_field_swap(&%s_, &%s_);\n", p->fields.data[tb->next[q]].name,
               p->fields.data[tb->scratch_next[q]].name);
  print_c_wrapper_end(b, p, k, "T_ * ");
  free(skip);
  free(names);
  free(use_level);
}
