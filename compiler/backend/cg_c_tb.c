/* cg_c_tb.c: temporally blocked kernels for C and OpenMP (the decision,
 * and what a pass computes, are in passes/tblock.c and ir.h, IrTb).
 *
 * Overlapped tiles: each thread takes a tile of the grid, copies it with
 * T x reach points around it (step 0) into its own buffer, computes T
 * steps there, each on a region T x reach narrower than the last, and
 * writes the tile's own points: step T to the scratch buffer, step T - 1
 * to the next buffer (when something reads it later). Points outside the
 * kernel's region take, at step t, the current buffer's value (t even) or
 * the next buffer's (t odd). The tiles' reads and writes are disjoint:
 * reads of cur (anywhere) and of next (outside the region), writes of
 * scratch (anywhere) and of next (inside the region). */
#include "backend/cg.h"
#include "backend/cg_common.h"
#include <stdlib.h>

/* Which pair of tb a field is the cur field of, or -1. */
static int pair_of_cur(const IrTb *tb, int f)
{
  for (int q = 0; q < tb->npairs; q++)
    if (tb->cur[q] == f)
      return q;
  return -1;
}

static int pair_of_next(const IrTb *tb, int f)
{
  for (int q = 0; q < tb->npairs; q++)
    if (tb->next[q] == f)
      return q;
  return -1;
}

/* Loads of a cur field read the previous step's tile: in<q>_[x_ + offset]. */
static int tile_load(Printer *pr, const IrNode *n)
{
  const IrTb *tb = pr->hook;
  int q = pair_of_cur(tb, n->ref);
  if (q < 0)
    return 0;
  buf_printf(pr->b, "in%d_[x_", q);
  int r = pr->k->rank;
  for (int d = 0; d < r; d++) {
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

/* i, j, k of tile position u0_, u1_, u2_: wrapped along periodic dimensions. */
static void print_coord(Buf *b, const IrGrid *g, int d, const char *gname, int depth)
{
  static const char *pos[] = { "u0_", "u1_", "u2_" }, *org[] = { "ti_", "tj_", "tk_" };
  indent(b, depth);
  if (g->periodic[d])
    buf_printf(b, "const long %s = ((%s + %s) %% %s.n[%d] + %s.n[%d]) %% %s.n[%d];\n", index_name(d), org[d], pos[d],
               gname, d, gname, d, gname, d);
  else
    buf_printf(b, "const long %s = %s + %s;\n", index_name(d), org[d], pos[d]);
}

/* Is coordinate d inside the allocation (grid plus halo)? */
static void print_allocated(Buf *b, const IrGrid *g, int d, const char *gname)
{
  if (g->periodic[d])
    buf_puts(b, "1");
  else
    buf_printf(b, "%s >= -%d && %s < %s.n[%d] + %d", index_name(d), g->halo_lo[d], index_name(d), gname, d, g->halo_hi[d]);
}

void cg_c_print_tb(Buf *b, const IrProgram *p, const IrTb *tb, int openmp)
{
  const IrKernel *k = p->kernels.data[tb->kernel];
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  int r = k->rank, T = tb->steps;
  ir_count_uses((IrKernel *)k);
  int *use_level = use_levels(k);
  char **names = value_names(p, k, use_level);
  char *skip = xrealloc(NULL, (size_t)p->fields.len + 1);
  for (int f = 0; f < p->fields.len; f++)
    skip[f] = pair_of_cur(tb, f) >= 0;
  Printer pr = { .b = b, .p = p, .k = k, .pool = &k->nodes, .names = names, .print_load = tile_load, .hook = tb,
                 .wrap_skip = skip };
  static const char *pos[] = { "u0_", "u1_", "u2_" }, *org[] = { "ti_", "tj_", "tk_" };
  static const char *tsz[] = { "TI_", "TJ_", "TK_" }, *hal[] = { "H0_", "H1_", "H2_" };

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
  /* Fields: cur (step 0; outside the region at even steps), next (outside
   * the region at odd steps; step T - 1 out), scratch (step T out), and
   * the fields the kernel only reads. */
  for (int f = 0; f < p->fields.len; f++) {
    int qc = pair_of_cur(tb, f), qn = pair_of_next(tb, f);
    const char *fn = cname(p, p->fields.data[f].name), *ty = ctype(p->fields.data[f].ty);
    if (qc >= 0) {
      buf_printf(b, "  const %s *restrict %s = %s_.origin;\n", ty, fn, p->fields.data[f].name);
      const IrField *sf = &p->fields.data[tb->scratch[qc]];
      buf_printf(b, "  %s *restrict %s = %s_.origin;\n", ty, sf->name, sf->name);
    } else if (qn >= 0) {
      buf_printf(b, "  %s *restrict %s = %s_.origin;\n", ty, fn, p->fields.data[f].name);
    } else if (reads_field(k, f)) {
      buf_printf(b, "  const %s *restrict %s = %s_.origin;\n", ty, fn, p->fields.data[f].name);
    }
  }
  for (int d = 0; d < r - 1; d++)
    buf_printf(b, "  const long s%d_ = %s.stride[%d];\n", d, gname, d);
  print_red_locals(b, p, k);
  emit_level(&pr, 0, 1);
  print_region_bounds(&pr, gname);
  buf_printf(b, "  static stn_kprof prof_ = { \"%s x%d\", %d, %d, 0, 0, 0, NULL };\n", k->name, T, k->flops,
             k->bytes_read + k->bytes_written);
  buf_puts(b, "  const double prof_t0_ = stn_profiling ? stn_time() : 0.0;\n");
  /* Tile sizes (the pass's) and halos: T x reach. */
  buf_printf(b, "  enum { T_ = %d", T);
  for (int d = 0; d < r; d++)
    buf_printf(b, ", %s = %d, %s = %d", tsz[d], tb->tile[d], hal[d], T * tb->reach[d]);
  buf_puts(b, " };\n");
  for (int d = r - 1; d >= 0; d--)
    buf_printf(b, "  const long W%d_ = %s + 2 * %s;\n", d, tsz[d], hal[d]);
  /* Tile strides: ts<d>_ between neighbours along d. */
  for (int d = 0; d < r - 1; d++) {
    buf_printf(b, "  const long ts%d_ = ", d);
    for (int e = d + 1; e < r; e++)
      buf_printf(b, "%sW%d_", e > d + 1 ? " * " : "", e);
    buf_puts(b, ";\n");
  }
  buf_puts(b, "  const long tile_ = W0_");
  for (int d = 1; d < r; d++)
    buf_printf(b, " * W%d_", d);
  buf_puts(b, ";\n");
  if (openmp) {
    buf_puts(b, "  #pragma omp parallel");
    for (int i = 0; i < k->reds.len; i++)
      buf_printf(b, " reduction(%s: %s)", k->reds.data[i].op == RED_SUM ? "+" : k->reds.data[i].op == RED_MAX ? "max" : "min",
                 cname(p, k->reds.data[i].name));
    buf_puts(b, "\n");
  }
  buf_puts(b, "  {\n");
  /* Two step buffers per pair, in turn the previous step and the next. */
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
  /* Step 0: the tile and its halo, from cur (what the allocation holds).
   * A predicated store leaves the next field unchanged where it does not
   * fire, so the buffer of step 1 starts as next. */
  int predicated = 0;
  for (int e = 0; e < k->effects.len; e++)
    predicated |= k->effects.data[e].kind == EFF_STORE && k->effects.data[e].pred >= 0;
  indent(b, depth);
  buf_puts(b, "/* step 0: the tile and T x reach around it */\n");
  for (int d = 0; d < r; d++) {
    indent(b, depth + d);
    buf_printf(b, "for (long %s = -%s; %s < %s + %s; %s++) {\n", pos[d], hal[d], pos[d], tsz[d], hal[d], pos[d]);
    print_coord(b, g, d, gname, depth + d + 1);
  }
  int dd = depth + r;
  indent(b, dd);
  buf_puts(b, "const long x_ = ");
  for (int d = 0; d < r; d++)
    buf_printf(b, "%s(%s + %s)%s", d ? " + " : "", pos[d], hal[d], d < r - 1 ? arena_printf(p->arena, " * ts%d_", d) : "");
  buf_puts(b, ";\n");
  indent(b, dd);
  buf_puts(b, "const int in_ = ");
  for (int d = 0; d < r; d++) {
    buf_puts(b, d ? " && " : "");
    print_allocated(b, g, d, gname);
  }
  buf_puts(b, ";\n");
  indent(b, dd);
  buf_puts(b, "const long c_ = ");
  for (int d = 0; d < r - 1; d++)
    buf_printf(b, "%s * s%d_ + ", index_name(d), d);
  buf_printf(b, "%s;\n", index_name(r - 1));
  for (int q = 0; q < tb->npairs; q++) {
    indent(b, dd);
    buf_printf(b, "lv%d_[0][x_] = in_ ? %s[c_] : 0;\n", q, cname(p, p->fields.data[tb->cur[q]].name));
    if (predicated) {
      indent(b, dd);
      buf_printf(b, "lv%d_[1][x_] = in_ ? %s[c_] : 0;\n", q, cname(p, p->fields.data[tb->next[q]].name));
    }
  }
  for (int d = r - 1; d >= 0; d--) {
    indent(b, depth + d);
    buf_puts(b, "}\n");
  }
  /* Steps 1..T. */
  indent(b, depth);
  buf_puts(b, "for (int t_ = 1; t_ <= T_; t_++) {\n");
  for (int q = 0; q < tb->npairs; q++) {
    const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
    indent(b, depth + 1);
    buf_printf(b, "const %s *restrict in%d_ = lv%d_[(t_ - 1) & 1];\n", ty, q, q);
    indent(b, depth + 1);
    buf_printf(b, "%s *restrict out%d_ = lv%d_[t_ & 1];\n", ty, q, q);
  }
  for (int d = 0; d < r; d++) {
    int dep = depth + 1 + d;
    indent(b, dep);
    buf_printf(b, "for (long %s = -(T_ - t_) * %d; %s < %s + (T_ - t_) * %d; %s++) {\n", pos[d], tb->reach[d], pos[d],
               tsz[d], tb->reach[d], pos[d]);
    print_coord(b, g, d, gname, dep + 1);
    if (!g->periodic[d]) { /* points beyond the allocation are never needed */
      indent(b, dep + 1);
      buf_printf(b, "if (%s < -%d || %s >= %s.n[%d] + %d)\n", index_name(d), g->halo_lo[d], index_name(d), gname, d,
                 g->halo_hi[d]);
      indent(b, dep + 2);
      buf_puts(b, "continue;\n");
    }
  }
  dd = depth + 1 + r;
  indent(b, dd);
  buf_puts(b, "const long x_ = ");
  for (int d = 0; d < r; d++)
    buf_printf(b, "%s(%s + %s)%s", d ? " + " : "", pos[d], hal[d], d < r - 1 ? arena_printf(p->arena, " * ts%d_", d) : "");
  buf_puts(b, ";\n");
  indent(b, dd);
  buf_puts(b, "const long c_ = ");
  for (int d = 0; d < r - 1; d++)
    buf_printf(b, "%s * s%d_ + ", index_name(d), d);
  buf_printf(b, "%s;\n", index_name(r - 1));
  indent(b, dd);
  buf_puts(b, "const int region_ = ");
  for (int d = 0; d < r; d++)
    buf_printf(b, "%s%s >= %s_lo_ && %s < %s_hi_", d ? " && " : "", index_name(d), index_name(d), index_name(d),
               index_name(d));
  buf_puts(b, ";\n");
  /* Own points of the tile, inside the grid: written at steps T and T - 1. */
  indent(b, dd);
  buf_puts(b, "const int own_ = ");
  for (int d = 0; d < r; d++)
    buf_printf(b, "%s%s >= 0 && %s < %s && %s + %s < %s.n[%d]", d ? " && " : "", pos[d], pos[d], tsz[d], org[d], pos[d],
               gname, d);
  buf_puts(b, ";\n");
  indent(b, dd);
  buf_puts(b, "if (region_) {\n");
  for (int d = 0; d < r; d++)
    print_wrap_decls(&pr, d, dd + 1, "long");
  for (int lv = 1; lv <= r; lv++)
    emit_level(&pr, lv, dd + 1);
  for (int e = 0; e < k->effects.len; e++) {
    const IrEffect *ef = &k->effects.data[e];
    line_comment(&pr, k->nodes.data[ef->val].span, dd + 1);
    indent(b, dd + 1);
    if (ef->kind == EFF_STORE) {
      int q = pair_of_next(tb, ef->ref);
      if (ef->pred >= 0) {
        buf_puts(b, "if (");
        print_expr(&pr, ef->pred, P_TOP, 0);
        buf_puts(b, ") ");
      }
      buf_printf(b, "out%d_[x_] = ", q);
      print_expr(&pr, ef->val, P_TOP, 0);
      buf_puts(b, ";\n");
    } else {
      const IrRed *rd = &k->reds.data[ef->ref];
      const char *rn = cname(p, rd->name);
      buf_puts(b, "if (t_ == T_ && own_) ");
      if (rd->op == RED_SUM) {
        buf_printf(b, "%s += ", rn);
        print_expr(&pr, ef->val, P_TOP, 0);
        buf_puts(b, ";\n");
      } else {
        buf_printf(b, "{ const %s v_ = ", ctype(rd->ty));
        print_expr(&pr, ef->val, P_TOP, 0);
        buf_printf(b, "; %s = v_ %s %s ? v_ : %s; }\n", rn, rd->op == RED_MAX ? ">" : "<", rn, rn);
      }
    }
  }
  indent(b, dd);
  buf_puts(b, "} else {\n");
  for (int q = 0; q < tb->npairs; q++) {
    indent(b, dd + 1);
    buf_printf(b, "out%d_[x_] = t_ & 1 ? %s[c_] : %s[c_];\n", q, cname(p, p->fields.data[tb->next[q]].name),
               cname(p, p->fields.data[tb->cur[q]].name));
  }
  indent(b, dd);
  buf_puts(b, "}\n");
  indent(b, dd);
  buf_puts(b, "if (own_ && t_ == T_) {\n");
  for (int q = 0; q < tb->npairs; q++) {
    indent(b, dd + 1);
    buf_printf(b, "%s[c_] = out%d_[x_];\n", p->fields.data[tb->scratch[q]].name, q);
  }
  indent(b, dd);
  buf_puts(b, "} else if (own_ && t_ == T_ - 1 && prev_ && region_) {\n");
  for (int q = 0; q < tb->npairs; q++) {
    indent(b, dd + 1);
    buf_printf(b, "%s[c_] = out%d_[x_];\n", cname(p, p->fields.data[tb->next[q]].name), q);
  }
  indent(b, dd);
  buf_puts(b, "}\n");
  for (int d = r - 1; d >= 0; d--) {
    indent(b, depth + 1 + d);
    buf_puts(b, "}\n");
  }
  indent(b, depth);
  buf_puts(b, "}\n");
  indent(b, 2 + r);
  buf_puts(b, "}\n");
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "    free(lv%d_[0]);\n    free(lv%d_[1]);\n", q, q);
  buf_puts(b, "  }\n");
  /* Odd T: the next fields must now hold, outside the region, what cur
   * holds there (the swaps' alternation); nothing reads them any more.
   * The region is a box: each row skips its part of it. */
  if (T % 2) {
    buf_puts(b, "  /* odd steps per pass: next takes cur's values outside the region */\n");
    for (int d = 0; d < r; d++) {
      indent(b, 1 + d);
      buf_printf(b, "for (long %s = 0; %s < %s.n[%d]; %s++) {\n", index_name(d), index_name(d), gname, d, index_name(d));
      if (d == r - 2) {
        indent(b, 2 + d);
        buf_puts(b, "const int inner_ = ");
        for (int e = 0; e < r - 1; e++)
          buf_printf(b, "%s >= %s_lo_ && %s < %s_hi_ && ", index_name(e), index_name(e), index_name(e), index_name(e));
        buf_printf(b, "%s_lo_ < %s_hi_;\n", index_name(r - 1), index_name(r - 1));
      }
    }
    const char *last = index_name(r - 1);
    indent(b, 1 + r);
    buf_printf(b, "if (inner_ && %s == %s_lo_) {\n", last, last);
    indent(b, 2 + r);
    buf_printf(b, "%s = %s_hi_ - 1;\n", last, last);
    indent(b, 2 + r);
    buf_puts(b, "continue;\n");
    indent(b, 1 + r);
    buf_puts(b, "}\n");
    indent(b, 1 + r);
    buf_puts(b, "const long c_ = ");
    for (int d = 0; d < r - 1; d++)
      buf_printf(b, "%s * s%d_ + ", index_name(d), d);
    buf_printf(b, "%s;\n", last);
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
  /* cur <- scratch (step T), scratch <- cur. */
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "  stn_field_swap(&%s_, &%s_);\n", p->fields.data[tb->cur[q]].name, p->fields.data[tb->scratch[q]].name);
  buf_puts(b, "  if (stn_profiling)\n    stn_prof_add(&prof_, stn_time() - prof_t0_, T_ * ");
  print_region_points(b, k);
  buf_puts(b, ");\n");
  if (k->reds.len == 1)
    buf_printf(b, "  return %s;\n", cname(p, k->reds.data[0].name));
  else
    for (int i = 0; i < k->reds.len; i++)
      buf_printf(b, "  *%s_out_ = %s;\n", k->reds.data[i].name, cname(p, k->reds.data[i].name));
  buf_puts(b, "}\n\n");
  free(skip);
  free(names);
  free(use_level);
}
