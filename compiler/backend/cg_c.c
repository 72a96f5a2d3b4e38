/* cg_c.c: kernels as C loops (`--target=c`, serial) or C loops with
 * OpenMP pragmas (`--target=openmp`). It decides nothing: loop levels come
 * from the hoist pass, parallel and SIMD loops from the schedule pass. A
 * value gets its own `const` line when the user named it, when several
 * expressions use it, or when it is computed in an outer loop; everything
 * else prints inline, so the stencil reads as the user wrote it. */
#include "backend/cg.h"
#include "backend/cg_common.h"
#include <math.h>
#include <stdlib.h>

static const char *red_clause(RedOp op) { return op == RED_SUM ? "+" : op == RED_MAX ? "max" : "min"; }

static void reduction_clause(Buf *b, const IrProgram *p, const IrKernel *k)
{
  for (int i = 0; i < k->reds.len; i++)
    if (red_exact(p, &k->reds.data[i]))
      buf_printf(b, " reduction(stn_xsum: %s_x_)", k->reds.data[i].name);
    else
      buf_printf(b, " reduction(%s: %s)", red_clause(k->reds.data[i].op), cname(p, k->reds.data[i].name));
}

/* --tb across ranks: the parts from parts_.nown on are the neighbours'
 * points, computed again for the next steps; the reductions keep what
 * they had before them (stage 0: the copies declared, 1: taken, 2: put back). */
static void print_own_reds(Buf *b, const IrProgram *p, const IrKernel *k, int stage)
{
  if (!k->reds.len)
    return;
  if (stage == 1)
    buf_puts(b, "    if (part_ == parts_.nown) {  /* past this rank's part: no more contributions */\n");
  if (stage == 2)
    buf_puts(b, "  if (parts_.nown < parts_.n) {\n");
  for (int i = 0; i < k->reds.len; i++) {
    const IrRed *r = &k->reds.data[i];
    const char *v = red_exact(p, r) ? arena_printf(p->arena, "%s_x_", r->name) : cname(p, r->name);
    if (stage == 0)
      buf_printf(b, "  %s %s_own_ = %s;  /* the rank's own points' %s */\n", red_exact(p, r) ? "stn_xsum" : ctype(r->ty),
                 r->name, v, r->name);
    else if (stage == 1)
      buf_printf(b, "      %s_own_ = %s;\n", r->name, v);
    else
      buf_printf(b, "    %s = %s_own_;\n", v, r->name);
  }
  if (stage)
    buf_puts(b, stage == 1 ? "    }\n" : "  }\n");
}

static int has_exact(const IrProgram *p, const IrKernel *k)
{
  for (int i = 0; i < k->reds.len; i++)
    if (red_exact(p, &k->reds.data[i]))
      return 1;
  return 0;
}

static void print_kernel(Buf *b, const IrProgram *p, const IrKernel *k, const void *opts)
{
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  Printer pr = { .b = b, .p = p, .k = k, .pool = &k->nodes };
  ir_count_uses((IrKernel *)k);
  int *use_level = use_levels(k);
  pr.names = value_names(p, k, use_level);

  print_mpi_exchange_decl(b, p, k);
  /* Header: where it came from and what it costs. */
  print_kernel_title(b, p, k);
  buf_puts(b, " */\n");

  const char *ret = "void";
  if (k->reds.len == 1)
    ret = ctype(k->reds.data[0].ty);
  buf_printf(b, "static %s%s %s_(", kernel_called(p, k) ? "" : "__attribute__((unused)) ", ret, k->name);
  for (int i = 0; i < k->args.len; i++)
    buf_printf(b, "%s%s %s", i ? ", " : "", ctype(k->args.data[i].ty), cname(p, k->args.data[i].name));
  if (k->reds.len > 1)
    for (int i = 0; i < k->reds.len; i++)
      buf_printf(b, "%s%s *%s_out_", i || k->args.len ? ", " : "", ctype(k->reds.data[i].ty), k->reds.data[i].name);
  if (!k->args.len && k->reds.len <= 1)
    buf_puts(b, "void");
  buf_puts(b, ")\n{\n");

  /* Fields: const pointers for those only read. */
  for (int f = 0; f < p->fields.len; f++) {
    int r = 0, w = 0;
    for (int i = 0; i < k->nodes.len; i++)
      r |= k->nodes.data[i].op == OP_LOAD && k->nodes.data[i].ref == f;
    for (int i = 0; i < k->effects.len; i++)
      w |= k->effects.data[i].kind == EFF_STORE && k->effects.data[i].ref == f;
    if (!r && !w)
      continue;
    const char *fn = cname(p, p->fields.data[f].name);
    buf_printf(b, "  %s%s *restrict %s = %s_.origin;\n", w ? "" : "const ", ctype(p->fields.data[f].ty), fn,
               p->fields.data[f].name);
  }
  /* After the pointers: a field named s0 has its record in s0_. */
  for (int d = 0; d < k->rank - 1; d++)
    buf_printf(b, "  const long s%d_ = %s.stride[%d];\n", d, gname, d);
  print_red_locals(b, p, k, 0);
  emit_level(&pr, 0, 1);
  print_region_bounds(&pr, gname);
  print_prof_decl(b, k, 1);
  buf_puts(b, "  const double prof_t0_ = stn_profiling ? stn_time() : 0.0;\n");

  int depth = 1;
  int parts = p->mpi && k->xch.len;
  if (parts) {
    /* --mpi: the halos travel while the interior is computed (one part when
     * nothing is stale or without overlap), then the shell */
    buf_printf(b, "  stn_mpi_parts parts_;\n  stn_mpi_begin(&%s_x_, lo_, hi_, &parts_);\n", k->name);
    if (k->deep)
      print_own_reds(b, p, k, 0);
    buf_printf(b, "  for (int part_ = 0; part_ < parts_.n; part_++) {\n    if (part_ == parts_.wait)\n"
                  "      stn_mpi_end(&%s_x_);\n", k->name);
    if (k->deep)
      print_own_reds(b, p, k, 1);
    for (int d = 0; d < k->rank; d++)
      buf_printf(b, "    const long %s_lo_ = parts_.lo[part_][%d], %s_hi_ = parts_.hi[part_][%d];\n", index_name(d), d,
                 index_name(d), d);
    depth = 2;
  }
  int simd = k->simd && !has_exact(p, k); /* exact sums: no SIMD lanes */
  for (int d = 0; d < k->rank; d++) {
    const char *ix = index_name(d);
    int inner = d == k->rank - 1;
    if (d == 0 && k->omp_collapse) {
      indent(b, depth);
      buf_printf(b, "#pragma omp parallel for%s schedule(static)", inner && simd ? " simd" : "");
      reduction_clause(b, p, k);
      buf_puts(b, "\n");
    } else if (inner && simd) {
      indent(b, depth);
      buf_puts(b, "#pragma omp simd");
      reduction_clause(b, p, k);
      buf_puts(b, "\n");
    }
    indent(b, depth);
    buf_printf(b, "for (long %s = %s_lo_; %s < %s_hi_; %s++) {\n", ix, ix, ix, ix, ix);
    depth++;
    if (inner) {
      indent(b, depth);
      if (k->rank == 1)
        buf_puts(b, "const long c_ = i;\n");
      else
        buf_printf(b, "const long c_ = r_ + %s;\n", ix);
    } else if (d == k->rank - 2) {
      indent(b, depth);
      buf_puts(b, "const long r_ = ");
      for (int e = 0; e <= d; e++)
        buf_printf(b, "%s%s * s%d_", e ? " + " : "", index_name(e), e);
      buf_puts(b, ";\n");
    }
    print_wrap_decls(&pr, d, depth, "long");
    emit_level(&pr, d + 1, depth);
  }
  print_effects(&pr, depth);
  for (int d = k->rank - 1; d >= 0; d--) {
    depth--;
    indent(b, depth);
    buf_puts(b, "}\n");
  }
  if (parts)
    buf_puts(b, "  }\n");
  if (parts && k->deep)
    print_own_reds(b, p, k, 2);
  print_c_wrapper_end(b, p, k, "");
  free(pr.names);
  free(use_level);
}


static void print_tb(Buf *b, const IrProgram *p, const IrTb *tb, const void *opts)
{
  cg_c_print_tb(b, p, tb, *(const int *)opts);
}

static CgTarget c_target(int openmp)
{
  static const int yes = 1, no = 0;
  CgTarget t = {
    .name = openmp ? "openmp" : "c",
    .includes = "#include <math.h>\n#include <stdio.h>\n#include \"stn.h\"\n",
    .const_decl = "static const",
    .field_alloc = "stn_field_alloc",
    .field_zero = "stn_field_zero",
    .field_boundary = "stn_field_fill_halo",
    .field_write = "stn_field_write",
    .field_write_image = "stn_field_write_image",
    .finish = "stn_finish",
    .before_init = openmp ? "stn_program.copy_bandwidth = stn_host_copy_bandwidth; stn_program.target = \"openmp\";"
                          : "stn_program.copy_bandwidth = stn_host_copy_bandwidth; stn_program.target = \"c\";",
    .time_fn = "stn_time",
    .print_kernel = print_kernel,
    .print_tb = print_tb,
    .lib_init = openmp ? "stn_lib_init(&stn_lib_program); stn_lib_program.copy_bandwidth = stn_host_copy_bandwidth; stn_lib_program.target = \"openmp\";"
                       : "stn_lib_init(&stn_lib_program); stn_lib_program.copy_bandwidth = stn_host_copy_bandwidth; stn_lib_program.target = \"c\";",
    .lib_finish = "stn_lib_finish(&stn_lib_program);",
    .field_free = "stn_field_free",
    .field_get = "stn_field_get",
    .field_set = "stn_field_set",
    .opts = openmp ? &yes : &no,
  };
  return t;
}

void cg_c_program(Buf *b, const IrProgram *p, int openmp)
{
  CgTarget t = c_target(openmp);
  cg_print_program(b, p, &t);
}

void cg_c_library(Buf *src, Buf *hdr, const IrProgram *p, int openmp, const char *header_name)
{
  CgTarget t = c_target(openmp);
  cg_print_library(src, hdr, p, &t, header_name);
}
