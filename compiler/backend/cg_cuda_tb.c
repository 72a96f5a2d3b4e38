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
#include <stdlib.h>

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

/* The step being printed: loads of cur fields read step t - 1's ring. */
typedef struct TbCuda { const IrTb *tb; int t; } TbCuda;

static int ring_load(Printer *pr, const IrNode *n)
{
  const TbCuda *c = pr->hook;
  int q = pair_of_cur(c->tb, n->ref);
  if (q < 0)
    return 0;
  int r = pr->k->rank;
  buf_printf(pr->b, "lv%d_[%d][sl_%c%d_]", q, c->t - 1, n->off[0] < 0 ? 'm' : 'p', abs(n->off[0]));
  if (r == 3)
    buf_printf(pr->b, "[ty_ %c %d]", n->off[1] < 0 ? '-' : '+', abs(n->off[1]));
  buf_printf(pr->b, "[tx_ %c %d]", n->off[r - 1] < 0 ? '-' : '+', abs(n->off[r - 1]));
  return 1;
}

/* Wrapped coordinate `name` of unwrapped `expr` along dimension d. */
static void print_wrapped(Buf *b, const IrGrid *g, const char *gname, int d, const char *name, const char *expr, int depth)
{
  indent(b, depth);
  if (g->periodic[d])
    buf_printf(b, "const I %s = (I)(%s < 0 ? %s + %s.n[%d] : %s >= %s.n[%d] ? %s - %s.n[%d] : %s);\n", name, expr, expr,
               gname, d, expr, gname, d, expr, gname, d, expr);
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

void cg_cuda_print_tb(Buf *b, const IrProgram *p, const IrTb *tb, const void *opts)
{
  (void)opts;
  const IrKernel *k = p->kernels.data[tb->kernel];
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  int r = k->rank, T = tb->steps;
  int BX = tb->block[0], BY = r == 3 ? tb->block[1] : 1;
  int R0 = tb->reach[0], R1 = r == 3 ? tb->reach[1] : 0, R2 = tb->reach[r - 1];
  int NS = 2 * R0 + 1;
  ir_count_uses((IrKernel *)k);
  int *use_level = use_levels(k);
  char **names = value_names(p, k, use_level);
  char **dnames = xrealloc(NULL, sizeof(char *) * (size_t)(k->nodes.len + 1));
  for (int i = 0; i < k->nodes.len; i++)
    dnames[i] = cuda_passed(k, use_level, i) ? (char *)cuda_passed_name(p, k, names, i)
                : k->nodes.data[i].level == 0 ? NULL : names[i];
  char *skip = xrealloc(NULL, (size_t)p->fields.len + 1);
  for (int f = 0; f < p->fields.len; f++)
    skip[f] = pair_of_cur(tb, f) >= 0;
  TbCuda hook = { tb, 1 };
  Printer pr = { .b = b, .p = p, .k = k, .pool = &k->nodes, .names = dnames, .device = 1, .print_load = ring_load,
                 .hook = &hook, .wrap_skip = skip };
  int predicated = 0;
  for (int e = 0; e < k->effects.len; e++)
    predicated |= k->effects.data[e].kind == EFF_STORE && k->effects.data[e].pred >= 0;

  /* ---- the device kernel ---- */
  print_kernel_title(b, p, k);
  buf_printf(b, "\n * temporally blocked: %s */\n", tb->why);
  buf_printf(b, "template <typename I>\n__global__ void __launch_bounds__(%d) %s_tb_kernel_(const stn_grid %s", BX * BY, k->name,
             gname);
  for (int f = 0; f < p->fields.len; f++) {
    int qc = pair_of_cur(tb, f), qn = pair_of_next(tb, f);
    const char *ty = ctype(p->fields.data[f].ty);
    if (qc >= 0) {
      buf_printf(b, ", const %s *__restrict__ %s, %s *__restrict__ %s", ty, cname(p, p->fields.data[f].name), ty,
                 p->fields.data[tb->scratch[qc]].name);
    } else if (qn >= 0) {
      buf_printf(b, ", %s *__restrict__ %s", ty, cname(p, p->fields.data[f].name));
    } else if (reads_field(k, f)) {
      buf_printf(b, ", const %s *__restrict__ %s", ty, cname(p, p->fields.data[f].name));
    }
  }
  if (k->reds.len)
    buf_puts(b, ", double *__restrict__ stn_part");
  for (int d = 0; d < r; d++)
    buf_printf(b, ", long %s_lo_, long %s_hi_", index_name(d), index_name(d));
  buf_puts(b, ", int prev_");
  for (int i = 0; i < k->nodes.len; i++)
    if (cuda_passed(k, use_level, i))
      buf_printf(b, ", %s %s", ctype(k->nodes.data[i].ty), dnames[i]);
  buf_puts(b, ")\n{\n");
  buf_printf(b, "  enum { T_ = %d, NS_ = %d, BX_ = %d, BY_ = %d, H1_ = %d, H2_ = %d, M_ = %d };\n", T, NS, BX, BY, T * R1,
             T * R2, tb->march);
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
  print_red_locals(b, p, k);
  const char *kx = index_name(r - 1);
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
  buf_printf(b, "  const long i0_ = (long)blockIdx.%s * M_, i1_ = i0_ + M_ < (long)%s.n[0] ? i0_ + M_ : (long)%s.n[0];\n",
             r == 3 ? "z" : "y", gname, gname);
  buf_printf(b, "  for (long s_ = i0_ - T_ * %d; s_ < i1_ + T_ * %d; s_++) {\n", R0, R0);
  /* step 0: plane s_ of cur */
  buf_puts(b, "    {\n");
  print_wrapped(b, g, gname, 0, "i", "s_", 3);
  buf_printf(b, "      const int sl_ = (int)(((s_ %% NS_) + NS_) %% NS_);\n");
  buf_puts(b, "      const bool in_ = col_alloc_ && ");
  print_allocated(b, g, gname, 0, "i");
  buf_puts(b, ";\n      const I c_ = ");
  buf_printf(b, "i * s0_ + %s%s;\n", r == 3 ? "j * s1_ + " : "", kx);
  for (int q = 0; q < tb->npairs; q++) {
    const char *cur = cname(p, p->fields.data[tb->cur[q]].name);
    buf_printf(b, "      lv%d_[0][sl_]%s[tx_] = in_ ? %s[c_] : (%s)0;\n", q, r == 3 ? "[ty_]" : "", cur,
               ctype(p->fields.data[tb->cur[q]].ty));
  }
  buf_puts(b, "    }\n    __syncthreads();\n");
  for (int t = 1; t <= T; t++) {
    hook.t = t;
    pr.last_line = 0;
    buf_printf(b, "    { /* step %d: plane s_ - %d */\n", t, t * R0);
    buf_printf(b, "      const long q_ = s_ - %d;\n", t * R0);
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
        used = k->nodes.data[j].op == OP_LOAD && pair_of_cur(tb, k->nodes.data[j].ref) >= 0 && k->nodes.data[j].off[0] == o;
      if (used)
        buf_printf(b, "        const int sl_%c%d_ = (int)((((q_ + %d) %% NS_) + NS_) %% NS_);\n", o < 0 ? 'm' : 'p', abs(o),
                   o);
    }
    buf_puts(b, "        const I c_ = ");
    buf_printf(b, "i * s0_ + %s%s;\n", r == 3 ? "j * s1_ + " : "", kx);
    buf_puts(b, "        const bool region_ = col_region_ && i >= i_lo_ && i < i_hi_;\n");
    for (int q = 0; q < tb->npairs; q++)
      buf_printf(b, "        %s v%d_;\n", ctype(p->fields.data[tb->cur[q]].ty), q);
    buf_puts(b, "        if (region_) {\n");
    for (int d = 0; d < r; d++)
      print_wrap_decls(&pr, d, 5, "I");
    for (int lv = 1; lv <= r; lv++)
      emit_level(&pr, lv, 5);
    /* A predicated store leaves next as it was: step t - 2 there. */
    if (predicated)
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
      line_comment(&pr, k->nodes.data[ef->val].span, 5);
      indent(b, 5);
      if (ef->pred >= 0) {
        buf_puts(b, "if (");
        print_expr(&pr, ef->pred, P_TOP, 0);
        buf_puts(b, ") ");
      }
      if (ef->kind == EFF_STORE) {
        buf_printf(b, "v%d_ = ", pair_of_next(tb, ef->ref));
        print_expr(&pr, ef->val, P_TOP, 0);
        buf_puts(b, ";\n");
        continue;
      }
      const IrRed *rd = &k->reds.data[ef->ref];
      const char *rn = cname(p, rd->name);
      buf_printf(b, "if (own_ && q_ >= i0_ && q_ < i1_) ");
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
    buf_puts(b, "        } else {\n");
    buf_puts(b, "          const bool in_ = col_alloc_ && ");
    print_allocated(b, g, gname, 0, "i");
    buf_puts(b, ";\n");
    for (int q = 0; q < tb->npairs; q++) {
      const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
      buf_printf(b, "          v%d_ = in_ ? %s[c_] : (%s)0;\n", q,
                 cname(p, p->fields.data[t % 2 ? tb->next[q] : tb->cur[q]].name), ty);
    }
    buf_puts(b, "        }\n");
    for (int q = 0; q < tb->npairs; q++) {
      if (t < T)
        buf_printf(b, "        lv%d_[%d][sl_p0_]%s[tx_] = v%d_;\n", q, t, r == 3 ? "[ty_]" : "", q);
      else
        buf_printf(b, "        if (own_ && q_ >= i0_ && q_ < i1_)\n          %s[c_] = v%d_;\n",
                   p->fields.data[tb->scratch[q]].name, q);
      if (t == T - 1)
        buf_printf(b, "        if (prev_ && own_ && region_ && q_ >= i0_ && q_ < i1_)\n          %s[c_] = v%d_;\n",
                   cname(p, p->fields.data[tb->next[q]].name), q);
    }
    buf_puts(b, "      }\n");
    buf_printf(b, "    }\n%s", t < T ? "    __syncthreads();\n" : "");
  }
  buf_puts(b, "    __syncthreads();\n  }\n");
  for (int i = 0; i < k->reds.len; i++) {
    const IrRed *rd = &k->reds.data[i];
    buf_printf(b, "  {\n    const double v_ = stn_block_reduce<%s>((double)%s);\n", cuda_red_op(rd->op), cname(p, rd->name));
    buf_puts(b, "    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)\n");
    if (k->gpu_atomic)
      buf_printf(b, "      stn_atomic_combine<%s>(&stn_part[%d], v_);\n  }\n", cuda_red_op(rd->op), i);
    else
      buf_printf(b, "      stn_part[(size_t)%d * gridDim.x * gridDim.y * gridDim.z + stn_block_linear()] = v_;\n  }\n", i);
  }
  buf_puts(b, "}\n\n");

  /* Odd T: next takes cur's values outside the region (nothing reads it now). */
  if (T % 2) {
    buf_printf(b, "/* after an odd number of steps, next holds cur's values outside the region of %s */\n", k->name);
    buf_printf(b, "template <typename I>\n__global__ void %s_tb_fix_kernel_(const stn_grid %s", k->name, gname);
    for (int q = 0; q < tb->npairs; q++) {
      const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
      buf_printf(b, ", const %s *__restrict__ %s, %s *__restrict__ %s", ty, cname(p, p->fields.data[tb->cur[q]].name), ty,
                 cname(p, p->fields.data[tb->next[q]].name));
    }
    for (int d = 0; d < r; d++)
      buf_printf(b, ", long %s_lo_, long %s_hi_", index_name(d), index_name(d));
    buf_puts(b, ")\n{\n");
    buf_printf(b, "  const I %s = (I)(blockIdx.x * blockDim.x + threadIdx.x);\n", kx);
    if (r == 3)
      buf_puts(b, "  const I j = (I)blockIdx.y, i = (I)blockIdx.z;\n");
    else
      buf_puts(b, "  const I i = (I)blockIdx.y;\n");
    buf_printf(b, "  if (%s >= (I)%s.n[%d])\n    return;\n", kx, gname, r - 1);
    buf_puts(b, "  if (i >= i_lo_ && i < i_hi_");
    for (int d = 1; d < r; d++)
      buf_printf(b, " && %s >= %s_lo_ && %s < %s_hi_", index_name(d), index_name(d), index_name(d), index_name(d));
    buf_puts(b, ")\n    return;\n");
    for (int d = 0; d < r - 1; d++)
      buf_printf(b, "  const I s%d_ = (I)%s.stride[%d];\n", d, gname, d);
    buf_printf(b, "  const I c_ = i * s0_ + %s%s;\n", r == 3 ? "j * s1_ + " : "", kx);
    for (int q = 0; q < tb->npairs; q++)
      buf_printf(b, "  %s[c_] = %s[c_];\n", cname(p, p->fields.data[tb->next[q]].name),
                 cname(p, p->fields.data[tb->cur[q]].name));
    buf_puts(b, "}\n\n");
  }

  /* ---- the host wrapper ---- */
  buf_printf(b, "static void %s_tb_(", k->name);
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
  size_t smem = 0;
  for (int q = 0; q < tb->npairs; q++)
    smem += (size_t)(p->fields.data[tb->cur[q]].ty == TY_DOUBLE ? 8 : 4) * (size_t)(T * NS * BY * BX);
  buf_printf(b, "  const size_t smem_ = %zu;  /* the rings of all pairs */\n", smem);
  if (k->reds.len) {
    buf_printf(b, "  const int ops_[] = {");
    for (int i = 0; i < k->reds.len; i++)
      buf_printf(b, "%s%s", i ? ", " : "", cuda_red_op(k->reds.data[i].op));
    buf_puts(b, "};\n  static stn_reduction red_;\n  void *const dst_[] = {");
    for (int i = 0; i < k->reds.len; i++)
      buf_printf(b, "%s%s_out_", i ? ", " : "", k->reds.data[i].name);
    buf_puts(b, "};\n  const stn_type dst_type_[] = {");
    for (int i = 0; i < k->reds.len; i++)
      buf_printf(b, "%s%s_type_", i ? ", " : "", k->reds.data[i].name);
    buf_puts(b, "};\n");
    buf_printf(b, "  stn_cuda_reduction_begin(&red_, %d, ops_, %d, dst_, dst_type_);\n", k->reds.len, k->gpu_atomic);
  }
  buf_printf(b, "  const dim3 block(%d, %d, 1);\n", BX, BY);
  buf_printf(b, "  const dim3 grid((unsigned)((%s.n[%d] + %d - 1) / %d)", gname, r - 1, BX - 2 * T * R2, BX - 2 * T * R2);
  if (r == 3)
    buf_printf(b, ", (unsigned)((%s.n[1] + %d - 1) / %d)", gname, BY - 2 * T * R1, BY - 2 * T * R1);
  buf_printf(b, ", (unsigned)((%s.n[0] + %d - 1) / %d)%s);\n", gname, tb->march, tb->march, r == 3 ? "" : ", 1");
  buf_puts(b, "  static bool ready_ = false;\n  if (!ready_) { /* more than 48 KB of shared memory needs asking */\n");
  buf_printf(b, "    STN_CUDA_CHECK(cudaFuncSetAttribute(%s_tb_kernel_<int>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_));\n",
             k->name);
  buf_printf(b, "    STN_CUDA_CHECK(cudaFuncSetAttribute(%s_tb_kernel_<long>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_));\n",
             k->name);
  buf_puts(b, "    ready_ = true;\n  }\n");
  if (k->reds.len)
    buf_puts(b, "  double *const stn_part = stn_cuda_reduction_partials(&red_, (size_t)grid.x * grid.y * grid.z);\n");
  buf_puts(b, "  if (stn_profiling)\n    stn_cuda_prof_start(&prof_);\n");
  for (int pass = 0; pass < 2; pass++) {
    if (pass)
      buf_printf(b, "  else\n    %s_tb_kernel_<long><<<grid, block, smem_>>>(%s", k->name, gname);
    else
      buf_printf(b, "  if (%s.size < 2147483647u)\n    %s_tb_kernel_<int><<<grid, block, smem_>>>(%s", gname, k->name, gname);
    for (int f = 0; f < p->fields.len; f++) {
      int qc = pair_of_cur(tb, f), qn = pair_of_next(tb, f);
      const char *ty = ctype(p->fields.data[f].ty);
      if (qc >= 0)
        buf_printf(b, ", (const %s *)%s_.origin, (%s *)%s_.origin", ty, p->fields.data[f].name, ty,
                   p->fields.data[tb->scratch[qc]].name);
      else if (qn >= 0)
        buf_printf(b, ", (%s *)%s_.origin", ty, p->fields.data[f].name);
      else if (reads_field(k, f))
        buf_printf(b, ", (const %s *)%s_.origin", ty, p->fields.data[f].name);
    }
    if (k->reds.len)
      buf_puts(b, ", stn_part");
    for (int d = 0; d < r; d++)
      buf_printf(b, ", %s_lo_, %s_hi_", index_name(d), index_name(d));
    buf_puts(b, ", prev_");
    for (int i = 0; i < k->nodes.len; i++)
      if (cuda_passed(k, use_level, i)) {
        buf_puts(b, ", ");
        print_expr(&hpr, i, P_TOP, 0);
      }
    buf_puts(b, ");\n");
  }
  buf_printf(b, "  stn_cuda_check_launch(\"%s (temporally blocked)\", grid, block);\n", k->name);
  if (T % 2) {
    buf_printf(b, "  {\n    const dim3 fb(128, 1, 1), fg((unsigned)((%s.n[%d] + 127) / 128), (unsigned)%s.n[%d], %s);\n",
               gname, r - 1, gname, r - 2, r == 3 ? arena_printf(p->arena, "(unsigned)%s.n[0]", gname) : "1");
    for (int pass = 0; pass < 2; pass++) {
      if (pass)
        buf_printf(b, "    else\n      %s_tb_fix_kernel_<long><<<fg, fb>>>(%s", k->name, gname);
      else
        buf_printf(b, "    if (%s.size < 2147483647u)\n      %s_tb_fix_kernel_<int><<<fg, fb>>>(%s", gname, k->name, gname);
      for (int q = 0; q < tb->npairs; q++) {
        const char *ty = ctype(p->fields.data[tb->cur[q]].ty);
        buf_printf(b, ", (const %s *)%s_.origin, (%s *)%s_.origin", ty, p->fields.data[tb->cur[q]].name, ty,
                   p->fields.data[tb->next[q]].name);
      }
      for (int d = 0; d < r; d++)
        buf_printf(b, ", %s_lo_, %s_hi_", index_name(d), index_name(d));
      buf_puts(b, ");\n");
    }
    buf_printf(b, "    stn_cuda_check_launch(\"%s (temporal blocking, outside the region)\", fg, fb);\n  }\n", k->name);
  }
  buf_printf(b, "  if (stn_profiling)\n    stn_cuda_prof_stop(&prof_, %d.0 * ", T);
  print_region_points(b, k);
  buf_puts(b, ");\n");
  if (k->reds.len)
    buf_puts(b, "  stn_cuda_reduction_end(&red_);\n");
  /* cur <- scratch (step T), scratch <- cur. */
  for (int q = 0; q < tb->npairs; q++)
    buf_printf(b, "  stn_field_swap(&%s_, &%s_);\n", p->fields.data[tb->cur[q]].name, p->fields.data[tb->scratch[q]].name);
  buf_puts(b, "}\n\n");
  free(skip);
  free(dnames);
  free(names);
  free(use_level);
}
