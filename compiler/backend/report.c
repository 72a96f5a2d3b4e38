/* report.c: --report and --report=json. Prints, per kernel, what the
 * passes found and decided for the CPU and for CUDA, and why: cost per
 * point, halos, fields, reductions, the strategy each target gets and the
 * ones it does not, resources, temporal blocking, and the time per step
 * the byte count predicts at a bandwidth. It decides nothing: it reads two
 * IR programs, one through the OpenMP pipeline and one through CUDA's. */
#include "backend/report.h"
#include "backend/cg_common.h"
#include "backend/cg_cuda.h"
#include "passes/passes.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- values at the params' defaults ---------------------------------- */

static int eval(const IrProgram *p, const IrNodes *pool, int id, double *v) { return ir_eval_default(p, pool, id, v); }

/* Points a call of k covers at the defaults, or -1 if unknown. */
static double default_points(const IrProgram *p, const IrKernel *k)
{
  double pts = 1;
  for (int d = 0; d < k->rank; d++) {
    double lo, hi;
    if (!eval(p, &k->nodes, k->lo[d], &lo) || !eval(p, &k->nodes, k->hi[d], &hi))
      return -1;
    pts *= hi > lo ? hi - lo : 0;
  }
  return pts;
}

/* ---- ptxas's resource lines ----------------------------------------- */

typedef struct Ptxas { int found, regs, spill_st, spill_ld, smem; } Ptxas;

/* Parses `nvcc -Xptxas -v` output for the int-indexed instance of
 * NAME_kernel_ (a blocked pass's: ptxas_tb). */
static Ptxas ptxas_fn_args(const char *text, const char *fn, const char *args);
static Ptxas ptxas_for(const char *text, const char *name)
{
  char fn[256];
  snprintf(fn, sizeof fn, "%s_kernel_", name);
  return ptxas_fn_args(text, fn, "i");
}

/* Blocks of `threads` threads with `regs` registers each and `smem`
 * bytes of shared memory that fit a multiprocessor of sm_90, by the rules
 * of CUDA's occupancy calculator (cuda_occupancy.h,
 * cudaOccMaxBlocksPerSMRegsLimit): registers allocated a warp at a time
 * in units of 256 from four sub-partitions of 16384, a block's warps
 * rounded up to four for the hardware's per-block check of 65536; at
 * most 64 warps and 32 blocks; 228 KB of shared memory with 1 KB of it
 * reserved per block, in units of 128. */
static int sm90_blocks(int regs, int threads, size_t smem)
{
  int warps = (threads + 31) / 32, n = 32;
  int per_warp = (regs * 32 + 255) / 256 * 256;
  if (warps <= 0 || regs > 255 || per_warp * ((warps + 3) / 4 * 4) > 65536)
    return 0;
  if (per_warp > 0 && 16384 / per_warp * 4 / warps < n)
    n = 16384 / per_warp * 4 / warps;
  if (64 / warps < n)
    n = 64 / warps;
  size_t per_block = (smem + 1024 + 127) / 128 * 128;
  if (233472 / per_block < (size_t)n)
    n = (int)(233472 / per_block);
  return n;
}

/* The blocked kernel a 2-D pass launches: its fast instance runs only
 * while it fits as many blocks a multiprocessor as the general one
 * (runtime stn_cuda_tb_fast_pays, cudaOccupancyMaxActiveBlocksPerMultiprocessor;
 * 3-D passes run their fast one where they have it). *run: the instance
 * that runs; *other: the other one (found 0 where there is none); the
 * blocks an SM of each. Returns 1 where the fast one runs, 0 where the
 * general one does or the pass has one instance, -1 where ptxas's lines
 * of a 2-D pass's two instances are missing (not known). */
static int ptxas_tb(const char *text, const IrProgram *p, const IrKernel *k, const IrTb *tb, Ptxas *run, Ptxas *other,
                    int *brun, int *bother)
{
  char fn[256]; /* STEM_kernel_ (ir_tb_stem); the mangled template arguments: F_ true "iLb1E", false "iLb0E" */
  snprintf(fn, sizeof fn, "%s_kernel_", ir_tb_stem(p, tb));
  *run = ptxas_fn_args(text, fn, tb->fast_instance ? "iLb1E" : "i");
  *other = (Ptxas){ 0 };
  *brun = *bother = 0;
  if (!tb->fast_instance || k->rank != 2)
    return tb->fast_instance;
  *other = ptxas_fn_args(text, fn, "iLb0E"); /* the general instance, F_ false */
  if (!run->found || !other->found) {
    *other = (Ptxas){ 0 };
    return -1;
  }
  int threads = tb->block[0] * (tb->block[1] > 0 ? tb->block[1] : 1);
  int bf = sm90_blocks(run->regs, threads, tb->smem + run->smem);
  int bg = sm90_blocks(other->regs, threads, tb->smem + other->smem);
  if (bf >= bg) {
    *brun = bf, *bother = bg;
    return 1;
  }
  Ptxas t = *run;
  *run = *other, *other = t;
  *brun = bg, *bother = bf;
  return 0;
}

/* The same for the device function fn (a kernel's variant: backend/cg_cuda.c). */
static Ptxas ptxas_fn(const char *text, const char *fn)
{
  return ptxas_fn_args(text, fn, "i");
}

static Ptxas ptxas_fn_args(const char *text, const char *fn, const char *args)
{
  Ptxas r = { 0 };
  if (!text)
    return r;
  char want[300];
  snprintf(want, sizeof want, "_Z%zu%sI%sE", strlen(fn), fn, args);
  const char *at = strstr(text, want);
  if (!at)
    return r;
  const char *props = strstr(at, "bytes stack frame");
  const char *used = strstr(at, "Used ");
  if (!used)
    return r;
  r.found = 1;
  sscanf(used, "Used %d registers", &r.regs);
  if (props && props < used) {
    const char *line = props;
    while (line > text && line[-1] != '\n')
      line--;
    sscanf(line, " %*d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &r.spill_st, &r.spill_ld);
  }
  const char *nl = strchr(used, '\n');
  const char *sm = strstr(used, "bytes smem");
  if (sm && (!nl || sm < nl)) {
    const char *q = sm;
    while (q > used && q[-1] == ' ')
      q--;
    while (q > used && q[-1] >= '0' && q[-1] <= '9')
      q--;
    r.smem = atoi(q);
  }
  return r;
}

/* ---- what to say ----------------------------------------------------- */

typedef struct Out {
  FILE *f;
  int json;
  int first;      /* JSON: no comma before the next member */
} Out;

static void json_str(FILE *f, const char *s)
{
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 32)
      fprintf(f, "\\u%04x", *s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

static const char *region_text(const IrProgram *p, const IrKernel *k)
{
  const char *g = p->grids.data[k->grid].name;
  if (k->region == REG_WHOLE)
    return g;
  if (k->region == REG_INTERIOR)
    return arena_printf(p->arena, "interior(%s, %d)", g, k->width);
  return arena_printf(p->arena, "a box of %s", g);
}

/* Loops of main that call kernel ki, and what temporal blocking made of
 * them, or with `graphs` what the graph pass did (passes/graph.c). */
typedef Vec(const IrStmt *) StmtList;
static void find_loops_of(const IrProgram *p, const IrBlock *blk, int ki, int graphs, StmtList *out)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    int noted = graphs ? s->graph || s->graph_why : s->tb || s->tb_why;
    if ((s->kind == H_FOR || s->kind == H_WHILE) && noted) {
      int calls = !graphs && s->tb ? s->tb->kernel == ki : 0;
      for (int j = 0; j < s->body.len && !calls; j++)
        calls = s->body.data[j]->kind == H_CALL && s->body.data[j]->kernel == ki;
      if (calls)
        vec_push(out, s);
    }
    find_loops_of(p, &s->body, ki, graphs, out);
    find_loops_of(p, &s->els, ki, graphs, out);
  }
}

static void find_loops(const IrProgram *p, const IrBlock *blk, int ki, StmtList *out)
{
  find_loops_of(p, blk, ki, 0, out);
}

static void find_graph_loops(const IrProgram *p, const IrBlock *blk, int ki, StmtList *out)
{
  find_loops_of(p, blk, ki, 1, out);
}

static const char *graph_text(const IrProgram *p, const IrStmt *s)
{
  int line, col;
  src_linecol(p->src, s->span.lo, &line, &col);
  if (s->graph)
    return arena_printf(p->arena, "loop at line %d: its iterations only launch kernels%s%s, so after its first few, %d at a "
                        "time are recorded once into a CUDA graph and replayed (%s; -fno-graph or STN_GRAPH=0 launches "
                        "every kernel)", line, s->graph_period > 1 ? " and swap fields" : "",
                        s->graph_guards ? " but where an if on the loop's variable holds (those run plainly)" : "", s->graph,
                        s->tb ? "its single steps, where fused passes do not pay" : "a launch's latency once a replay");
  return arena_printf(p->arena, "loop at line %d: every kernel launched: %s", line, s->graph_why);
}

static const char *tb_text(const IrProgram *p, const IrStmt *s)
{
  int line, col;
  src_linecol(p->src, s->span.lo, &line, &col);
  if (s->tb)
    return arena_printf(p->arena, "loop at line %d: %s", line, s->tb->why);
  return arena_printf(p->arena, "loop at line %d: not blocked: %s", line, s->tb_why);
}

/* The time model's candidate for the steps a loop runs (NULL: none). */
static const IrTbCand *model_chosen(const IrStmt *s)
{
  const IrTbModel *m = s->tb_model;
  int steps = s->tb ? s->tb->steps : 1;
  return m && steps <= m->n && m->c[steps - 1].own ? &m->c[steps - 1] : NULL;
}

/* The time model's candidates of a loop (passes/tbmodel.c): picoseconds
 * per point and step, and ms per step at the params' defaults. */
static void model_text(FILE *f, const ReportOptions *o, const IrStmt *s, double pts)
{
  const IrTbModel *m = s->tb_model;
  if (!m)
    return;
  int best = -1, chosen = s->tb ? s->tb->steps : 1;
  for (int i = 0; i < m->n; i++)
    if (m->c[i].own && (best < 0 || tb_model_ps(&m->c[i], o->bandwidth) < tb_model_ps(&m->c[best], o->bandwidth)))
      best = i;
  fprintf(f, "      model:     ps per point and step (the larger of memory and on chip; recomputed points, registers "
             "of the planes) at %.0f GB/s of copy bandwidth:\n", o->bandwidth);
  for (int i = 0; i < m->n; i++) {
    const IrTbCand *e = &m->c[i];
    if (!e->own) {
      fprintf(f, "        T=%d  no points of its own\n", e->steps);
      continue;
    }
    double ps = tb_model_ps(e, o->bandwidth);
    char ms[48] = "";
    if (pts >= 0)
      snprintf(ms, sizeof ms, ", %.4f ms a step", ps * pts * 1e-9);
    char one[64] = "";
    if (e->strip && e->steps == 1)
      snprintf(one, sizeof one, " (a one-step pass of the strip kernel)");
    else if (e->warps > 0)
      snprintf(one, sizeof one, " (%.0f warps an SM, from ptxas)", e->warps);
    fprintf(f, "        T=%d  %6.2f ps (memory %.2f, on chip %.2f; %.2fx computed, %.0f registers)%s%s%s%s\n", e->steps,
            ps, tb_model_mem_ps(e, o->bandwidth), e->chip_ps, e->recompute, e->regs, ms, one,
            e->steps == chosen ? "  <- chosen" : "", i == best ? "  <- lowest" : "");
  }
  if (best >= 0 && m->c[best].steps != chosen)
    fprintf(f, "      the model's lowest is T=%d; T=%d comes from --tb (auto: the measured sweep of docs/benchmarks.md, "
               "2026-11-25 and 26, within 4%% of the best on the 27 stencils it timed; the %s's model misses the rates it was "
               "fitted to by %s, bench/an5d/fitmodel.py)\n",
            m->c[best].steps, chosen, tb_model_gpu_what(m->gpu), tb_model_gpu_fit(m->gpu));
}

/* A kernel compiled in variants (passes/gpu.c, decide_variants): each
 * one's ptxas resources and warps an SM, and the one its first call will
 * run on an sm_90 GPU, as the runtime picks (runtime/stn_cuda.cu,
 * stn_cuda_pick_variant): the first if it leaves an SM 24 warps, else the
 * one that leaves the most (the earlier on a tie); pick -1 without ptxas
 * or variants. */
typedef struct Variants { int pick; Ptxas px[3]; int warps[3]; } Variants;

static Variants variants_of(const ReportOptions *o, const IrProgram *gpu, const IrKernel *kg)
{
  Variants r = { .pick = -1 };
  for (int v = 0; v < kg->nvariants; v++) {
    r.px[v] = ptxas_fn(o->ptxas, cuda_kernel_fn(gpu, kg, v));
    if (!r.px[v].found) {
      r.pick = -1;
      break;
    }
    r.warps[v] = tb_model_warps(r.px[v].regs, kg->variant[v].bx * kg->variant[v].by);
    if (r.pick < 0 || (r.warps[0] < 24 && r.warps[v] > r.warps[r.pick]))
      r.pick = v;
  }
  return r;
}

/* The single-step candidates' warps from ptxas's registers for the step
 * kernel, where it ran (tb_model_occupancy; without ptxas, none), as the
 * variant the program will run where it has several. */
static void model_occupancy(const StmtList *loops, Ptxas px, const IrKernel *kg, const Variants *vs)
{
  int pick = vs->pick;
  for (int i = 0; i < loops->len; i++) {
    IrTbModel *m = loops->data[i]->tb_model;
    if (m && pick >= 0)
      tb_model_single_variant(m, kg, kg->variant[pick].vec, vs->px[pick].regs,
                              kg->variant[pick].bx * kg->variant[pick].by);
    else if (m && px.found && !kg->nvariants)
      tb_model_occupancy(m, px.regs, kg->block[0] * kg->block[1]);
  }
}

/* The variants' line of the text report. */
static void variants_text(FILE *f, const IrKernel *kg, const Variants *vs)
{
  if (!kg->nvariants)
    return;
  int pick = vs->pick;
  fprintf(f, "    variants:    compiled %d ways; the first call runs the first if its registers leave an SM 24 "
             "warps, else the one that leaves the most (STN_VARIANT=n forces one)\n", kg->nvariants);
  for (int v = 0; v < kg->nvariants; v++) {
    fprintf(f, "      %d: %d point%s a thread, %s, block %dx%d", v, kg->variant[v].vec, kg->variant[v].vec > 1 ? "s" : "",
            kg->variant[v].burst ? "bursts of 2 planes" : "plane by plane", kg->variant[v].bx, kg->variant[v].by);
    if (pick >= 0)
      fprintf(f, ": %d registers, %d bytes spilled, %d warps an SM (ptxas, sm_90)%s", vs->px[v].regs, vs->px[v].spill_st,
              vs->warps[v], v == pick ? "  <- runs" : "");
    fputc('\n', f);
  }
  if (pick < 0)
    fprintf(f, "      (ptxas not run: the program picks at run time)\n");
}

static const char *strategy_name(GpuStrategy g) { return g == GPU_NAIVE ? "naive" : g == GPU_STREAM ? "stream" : "smem"; }

/* Shared memory a CUDA kernel asks for, in bytes (the pass's decisions). */
static int smem_estimate(const IrProgram *p, const IrKernel *k)
{
  int bytes = k->reds.len ? 32 * 8 : 0; /* stn_block_reduce's warp partials */
  if (k->gpu == GPU_SMEM) {
    int tw = k->block[0] + 2 * k->smem_r[2], th = k->block[1] + 2 * k->smem_r[1], np = 2 * k->smem_r[0] + 1;
    bytes += np * tw * th * type_bytes(p->fields.data[k->smem_field].ty);
  }
  return bytes;
}

/* Registers, roughly: the values a point keeps live (the loads and the
 * values with their own line), plus indexing; ptxas gives the real count. */
static int register_estimate(const IrKernel *k)
{
  int live = 0;
  for (int i = 0; i < k->nodes.len; i++)
    live += k->nodes.data[i].op == OP_LOAD || (k->nodes.data[i].name && k->nodes.data[i].level == k->rank);
  int est = 20 + live;
  if (k->gpu == GPU_STREAM && k->gpu_queue)
    est += 4;
  return est > 255 ? 255 : est;
}

/* --mpi: what the kernel exchanges, with whom, how many bytes, and whether
 * it overlaps (the mpi pass's decisions). */
static const char *dir_text(int rank, int e)
{
  static char buf[16];
  char *s = buf;
  int side[MAX_RANK];
  for (int d = rank - 1, x = e; d >= 0; d--, x /= 3)
    side[d] = x % 3 - 1;
  for (int d = 0; d < rank; d++)
    if (side[d])
      s += sprintf(s, "%c%s", side[d] < 0 ? '-' : '+', index_name(d));
  return buf;
}

static void mpi_text(FILE *f, const IrProgram *p, const IrKernel *k)
{
  const IrGrid *g = &p->grids.data[k->grid];
  fprintf(f, "  mpi:           ");
  if (k->deep) {
    /* --tb across ranks: one line of what travels, one of what is computed again */
    int once = 0;
    fprintf(f, "halos %d deep (--tb=%d across ranks); exchanged %d deep on every side, when a read lacks its ghost "
               "points (about once every %d steps):", k->deep, g->ca_steps, k->deep, g->ca_steps);
    for (int i = 0; i < k->xch.len; i++) {
      const IrXField *x = &k->xch.data[i];
      int reach = 0;
      for (int d = 0; d < k->rank; d++)
        reach |= x->lo[d] | x->hi[d];
      if (!reach) {
        once++;
        continue;
      }
      fprintf(f, " %s (reach", p->fields.data[x->field].label);
      for (int d = 0; d < k->rank; d++)
        fprintf(f, " %d:%d", x->lo[d], x->hi[d]);
      fprintf(f, ")");
    }
    if (once) {
      fprintf(f, "; once, then kept current by computing past the part:");
      for (int i = 0, n = 0; i < k->xch.len; i++) {
        const IrXField *x = &k->xch.data[i];
        int reach = 0;
        for (int d = 0; d < k->rank; d++)
          reach |= x->lo[d] | x->hi[d];
        if (!reach)
          fprintf(f, "%s %s", n++ ? "," : "", p->fields.data[x->field].label);
      }
    }
    fprintf(f, "\n    past the part: each call computes as many layers of the neighbours' points as its inputs' "
               "current ghost points allow (reductions count the rank's own points only)\n");
  } else if (!k->xch.len) {
    fprintf(f, "no exchange (it reads no field at an offset)\n");
  } else {
    fprintf(f, "before each call, exchanges");
    for (int i = 0; i < k->xch.len; i++) {
      const IrXField *x = &k->xch.data[i];
      int sides[3];
      ir_xfield_sides(x, k->rank, sides);
      fprintf(f, "%s %s (halo", i ? ";" : "", p->fields.data[x->field].label);
      for (int d = 0; d < k->rank; d++)
        fprintf(f, " %d:%d", x->lo[d], x->hi[d]);
      fprintf(f, ": %d faces, %d edges, %d corners)", sides[0], sides[1], sides[2]);
    }
    fprintf(f, ", when written since its last exchange; one message per neighbour\n");
  }
  fprintf(f, "    decomposition: %s on %d ranks as ", g->name, p->mpi_ranks);
  for (int d = 0; d < g->rank; d++)
    fprintf(f, "%s%d", d ? "x" : "", g->ranks[d]);
  if (g->part[0]) {
    fprintf(f, ", parts up to ");
    for (int d = 0; d < g->rank; d++)
      fprintf(f, "%s%ld", d ? "x" : "", g->part[d]);
  }
  fprintf(f, " at the params' defaults (at run time: MPI_Dims_create, or --ranks=PxQxR)\n");
  if (k->xch.len && g->part[0]) {
    double total = 0;
    int msgs = 0;
    fprintf(f, "    bytes sent per exchange:");
    for (int e = 0; e < 27; e++)
      if (k->xbytes[e] > 0) {
        fprintf(f, " %s %.0f", dir_text(k->rank, e), k->xbytes[e]);
        total += k->xbytes[e];
        msgs++;
      }
    fprintf(f, "\n    exchange:    %.0f bytes in %d messages, %.1f us at %g GB/s (--link-bandwidth)\n", total, msgs,
            total / (p->link_bw * 1e3), p->link_bw);
  }
  if (k->xch.len) /* the run-time choice of runtime/stn_cuda_mpi.cu */
    fprintf(f, "    on the GPU:  halos packed and unpacked by kernels; messages GPU to GPU through NCCL where each rank has "
               "a GPU of its own and NCCL loads at run time, else device to device where MPI is CUDA-aware, else "
               "staged through pinned host memory\n");
  fprintf(f, "    overlap:     %s: %s\n", k->overlap && k->xch.len ? "yes" : "no", k->overlap_why);
}

static void mpi_json(FILE *f, const IrProgram *p, const IrKernel *k)
{
  const IrGrid *g = &p->grids.data[k->grid];
  fprintf(f, ",\n     \"mpi\": {\"ranks\": %d, \"decomposition\": [", p->mpi_ranks);
  for (int d = 0; d < g->rank; d++)
    fprintf(f, "%s%d", d ? ", " : "", g->ranks[d]);
  fprintf(f, "], \"exchanges\": [");
  for (int i = 0; i < k->xch.len; i++) {
    const IrXField *x = &k->xch.data[i];
    int sides[3];
    ir_xfield_sides(x, k->rank, sides);
    fprintf(f, "%s{\"field\": ", i ? ", " : "");
    json_str(f, p->fields.data[x->field].label);
    fprintf(f, ", \"halo\": [");
    for (int d = 0; d < k->rank; d++)
      fprintf(f, "%s[%d, %d]", d ? ", " : "", x->lo[d], x->hi[d]);
    fprintf(f, "], \"faces\": %d, \"edges\": %d, \"corners\": %d}", sides[0], sides[1], sides[2]);
  }
  fprintf(f, "], \"bytes_per_neighbour\": {");
  double total = 0;
  for (int e = 0, n = 0; e < 27; e++)
    if (k->xbytes[e] > 0) {
      fprintf(f, "%s\"%s\": %.0f", n++ ? ", " : "", dir_text(k->rank, e), k->xbytes[e]);
      total += k->xbytes[e];
    }
  fprintf(f, "}, \"predicted_exchange_us\": %.3f, \"link_bandwidth_gbs\": %g, \"overlap\": %s, \"overlap_why\": ",
          total / (p->link_bw * 1e3), p->link_bw, k->overlap && k->xch.len ? "true" : "false");
  json_str(f, k->overlap_why);
  fprintf(f, ", \"halo_depth\": %d}", k->deep);
}

static void kernel_text(const ReportOptions *o, FILE *f, const IrProgram *cpu, const IrProgram *gpu, int ki)
{
  const IrKernel *k = cpu->kernels.data[ki], *kg = gpu->kernels.data[ki];
  const IrGrid *g = &cpu->grids.data[k->grid];
  int line, col;
  src_linecol(cpu->src, k->span.lo, &line, &col);
  int bytes = k->bytes_read + k->bytes_written;
  double pts = default_points(cpu, k);
  fprintf(f, "kernel %s (%s:%d): over %s\n", k->name, cpu->src->name, line, region_text(cpu, k));
  if (pts >= 0)
    fprintf(f, "  points:        %.0f per call at the params' defaults\n", pts);
  else
    fprintf(f, "  points:        set by its arguments (a box)\n");
  fprintf(f, "  per point:     %d flops, %d bytes read + %d written = %d bytes (%d words), %.2f flops per byte\n", k->flops,
          k->bytes_read, k->bytes_written, bytes, bytes / 4, bytes ? (double)k->flops / bytes : 0.0);
  if (k->distributed)
    fprintf(f, "  hoist:         the invariant scale of %d sum%s distributed over the coefficients: (a x + b y) * s "
               "computed as (a s) x + (b s) y, a product a point fewer (-fno-distribute keeps the written form)\n",
            k->distributed, k->distributed > 1 ? "s" : "");
  fprintf(f, "  halo of %s:", g->name);
  for (int d = 0; d < g->rank; d++)
    fprintf(f, " %d:%d%s", g->halo_lo[d], g->halo_hi[d], g->periodic[d] ? " (periodic)" : "");
  fprintf(f, "\n  reads:        ");
  for (int fi = 0; fi < cpu->fields.len; fi++) {
    int loads = 0;
    for (int i = 0; i < k->nodes.len; i++)
      loads += k->nodes.data[i].op == OP_LOAD && k->nodes.data[i].ref == fi;
    if (loads)
      fprintf(f, " %s%s", cpu->fields.data[fi].label, loads > 1 ? arena_printf(cpu->arena, "(x%d)", loads) : "");
  }
  fprintf(f, "\n  writes:       ");
  for (int fi = 0; fi < cpu->fields.len; fi++)
    if (ir_stores_field(k, fi))
      fprintf(f, " %s", cpu->fields.data[fi].label);
  fprintf(f, "\n");
  if (k->reds.len) {
    fprintf(f, "  reductions:   ");
    for (int i = 0; i < k->reds.len; i++)
      fprintf(f, " %s: %s %s", k->reds.data[i].op == RED_SUM ? "+" : k->reds.data[i].op == RED_MAX ? "max" : "min",
              type_name(k->reds.data[i].ty), k->reds.data[i].name);
    fprintf(f, " (generated: %s%s)\n", "per thread, then per block by warp shuffles, then a fixed-order finish on the GPU; "
                                       "an OpenMP reduction clause on the CPU",
            !cpu->mpi ? "" : cpu->mpi_exact ? "; exact sums (--deterministic-reductions: on the CPU per thread, on the GPU in "
                                              "integer digits per block), then over the ranks (bit-identical for any rank count)"
                                            : "; then over the ranks by MPI_Allreduce");
  }
  fprintf(f, "  openmp:        parallel for over %s (static schedule), simd over %s\n", index_name(0),
          index_name(k->rank - 1));
  StmtList loops = { 0 };
  find_loops(cpu, &cpu->main, ki, &loops);
  for (int i = 0; i < loops.len; i++)
    fprintf(f, "    temporal blocking: %s\n", tb_text(cpu, loops.data[i]));
  loops.len = 0;
  fprintf(f, "  cuda:          %s (block %dx%d%s%s%s%s%s)\n", kg->gpu_why, kg->block[0], kg->block[1],
          kg->gpu != GPU_NAIVE ? arena_printf(gpu->arena, ", marching %d planes", kg->march) : "",
          kg->gpu_pipeline ? (kg->gpu_tight ? ", the next plane's rows loaded while this one computes"
                                            : ", the next plane's rows loaded while this one computes (-fstream-pipeline)")
          : kg->gpu_burst ? arena_printf(gpu->arena, ", loads issued %d planes at a time (burst)", kg->gpu_burst) : "",
          kg->vec > 1 ? arena_printf(gpu->arena, ", %d points per thread along %s by vector loads", kg->vec,
                                     index_name(kg->rank - 1)) : "",
          kg->gpu_guard_sides ? ", the columns beyond them loaded only for points inside the region" : "",
          kg->max_regs ? arena_printf(gpu->arena, ", at most %d registers per thread (%s)", kg->max_regs,
                                      kg->gpu_tight ? "so that seven blocks fit an SM" : "--max-regs") : "");
  fprintf(f, "    launch:      %s\n", kg->pdl_why);
  for (int s = GPU_NAIVE; s <= GPU_SMEM; s++)
    if (kg->gpu_rejected[s])
      fprintf(f, "    not %-7s %s\n", arena_printf(gpu->arena, "%s:", strategy_name((GpuStrategy)s)), kg->gpu_rejected[s]);
  Ptxas px = ptxas_for(o->ptxas, k->name);
  if (px.found)
    fprintf(f, "    resources:   %d registers, %d bytes spilled (stores) and %d (loads), %d bytes of shared memory "
               "(ptxas, sm_90)\n", px.regs, px.spill_st, px.spill_ld, px.smem);
  else
    fprintf(f, "    resources:   about %d registers, %d bytes of shared memory per block (estimates; ptxas not run)\n",
            register_estimate(kg), smem_estimate(gpu, kg));
  Variants vs = variants_of(o, gpu, kg);
  variants_text(f, kg, &vs);
  find_loops(gpu, &gpu->main, ki, &loops);
  model_occupancy(&loops, px, kg, &vs);
  double model_ps = -1;
  for (int i = 0; i < loops.len; i++) {
    fprintf(f, "    temporal blocking: %s\n", tb_text(gpu, loops.data[i]));
    if (loops.data[i]->tb && loops.data[i]->tb->band_text)
      fprintf(f, "      band:      %s\n", loops.data[i]->tb->band_text);
    if (loops.data[i]->tb) {
      const IrTb *tb = loops.data[i]->tb;
      Ptxas pt, po;
      int brun, bother, fast = ptxas_tb(o->ptxas, gpu, k, tb, &pt, &po, &brun, &bother);
      if (pt.found)
        fprintf(f, "      resources: %d registers, %d bytes spilled (stores) and %d (loads), %zu bytes of shared memory per "
                "block (ptxas, sm_90; shared memory: the launch's dynamic size)%s\n", pt.regs, pt.spill_st, pt.spill_ld,
                tb->smem, !tb->fast_instance || fast < 0 ? "" : fast ? "; the fast instance" : "; the general instance");
      if (po.found)
        fprintf(f, "      instances: fast %d registers, %d blocks a multiprocessor; general %d, %d: the %s one runs (the run "
                "time takes the fast one, where next and cur agree outside the region, only while it fits as many blocks; "
                "STN_TB_FAST=0|1 overrides)\n", fast ? pt.regs : po.regs, fast ? brun : bother, fast ? po.regs : pt.regs,
                fast ? bother : brun, fast ? "fast" : "general");
      const IrTb *h = tb->half;
      if (h) {
        Ptxas ph, pg;
        int bh, bg, hfast = ptxas_tb(o->ptxas, gpu, k, h, &ph, &pg, &bh, &bg);
        fprintf(f, "      half:      the run time's other candidate, %d steps a pass", h->steps);
        if (ph.found)
          fprintf(f, ": %d registers, %d bytes spilled (stores) and %d (loads), %zu bytes of shared memory per block "
                  "(ptxas, sm_90)%s", ph.regs, ph.spill_st, ph.spill_ld, h->smem,
                  !h->fast_instance || hfast < 0 ? "" : hfast ? "; the fast instance" : "; the general instance");
        fprintf(f, "\n");
      }
    }
    model_text(f, o, loops.data[i], pts);
    if (model_chosen(loops.data[i]))
      model_ps = tb_model_ps(model_chosen(loops.data[i]), o->bandwidth);
  }
  loops.len = 0;
  find_graph_loops(gpu, &gpu->main, ki, &loops);
  for (int i = 0; i < loops.len; i++)
    fprintf(f, "    graph:       %s\n", graph_text(gpu, loops.data[i]));
  vec_free(&loops);
  if (cpu->mpi)
    mpi_text(f, cpu, k);
  if (pts >= 0 && model_ps > 0) { /* a time loop's kernel on the GPU: the time model's step (model_text) */
    double sec = model_ps * pts * 1e-12;
    fprintf(f, "  predicted:     %.4f ms per step on the GPU at %.0f GB/s (the time model, at the steps chosen), %.1f "
               "GFLOPS\n", sec * 1e3, o->bandwidth, k->flops * pts / sec / 1e9);
  } else if (pts >= 0 && bytes > 0) {
    double sec = bytes * pts / (o->bandwidth * 1e9);
    fprintf(f, "  predicted:     %.4f ms per call at %.0f GB/s (its bytes over the bandwidth), %.1f GFLOPS\n", sec * 1e3,
            o->bandwidth, k->flops * pts / sec / 1e9);
  }
}

static void kernel_json(const ReportOptions *o, FILE *f, const IrProgram *cpu, const IrProgram *gpu, int ki)
{
  const IrKernel *k = cpu->kernels.data[ki], *kg = gpu->kernels.data[ki];
  const IrGrid *g = &cpu->grids.data[k->grid];
  int line, col;
  src_linecol(cpu->src, k->span.lo, &line, &col);
  int bytes = k->bytes_read + k->bytes_written;
  double pts = default_points(cpu, k);
  fprintf(f, "    {\"name\": ");
  json_str(f, k->name);
  fprintf(f, ", \"line\": %d, \"region\": ", line);
  json_str(f, region_text(cpu, k));
  fprintf(f, ", \"grid\": ");
  json_str(f, g->name);
  fprintf(f, ", \"rank\": %d,\n     \"points\": ", k->rank);
  if (pts >= 0)
    fprintf(f, "%.0f", pts);
  else
    fprintf(f, "null");
  fprintf(f, ", \"flops\": %d, \"bytes_read\": %d, \"bytes_written\": %d, \"bytes\": %d, \"intensity\": %.4f,\n", k->flops,
          k->bytes_read, k->bytes_written, bytes, bytes ? (double)k->flops / bytes : 0.0);
  fprintf(f, "     \"halo\": [");
  for (int d = 0; d < g->rank; d++)
    fprintf(f, "%s[%d, %d]", d ? ", " : "", g->halo_lo[d], g->halo_hi[d]);
  fprintf(f, "], \"periodic\": [");
  for (int d = 0; d < g->rank; d++)
    fprintf(f, "%s%s", d ? ", " : "", g->periodic[d] ? "true" : "false");
  fprintf(f, "],\n     \"reads\": [");
  for (int fi = 0, n = 0; fi < cpu->fields.len; fi++) {
    int loads = 0;
    for (int i = 0; i < k->nodes.len; i++)
      loads += k->nodes.data[i].op == OP_LOAD && k->nodes.data[i].ref == fi;
    if (!loads)
      continue;
    fprintf(f, "%s{\"field\": ", n++ ? ", " : "");
    json_str(f, cpu->fields.data[fi].label);
    fprintf(f, ", \"loads\": %d}", loads);
  }
  fprintf(f, "], \"writes\": [");
  for (int fi = 0, n = 0; fi < cpu->fields.len; fi++)
    if (ir_stores_field(k, fi)) {
      fprintf(f, "%s", n++ ? ", " : "");
      json_str(f, cpu->fields.data[fi].label);
    }
  fprintf(f, "],\n     \"reductions\": [");
  for (int i = 0; i < k->reds.len; i++) {
    fprintf(f, "%s{\"op\": \"%s\", \"type\": \"%s\", \"name\": ", i ? ", " : "",
            k->reds.data[i].op == RED_SUM ? "+" : k->reds.data[i].op == RED_MAX ? "max" : "min", type_name(k->reds.data[i].ty));
    json_str(f, k->reds.data[i].name);
    fprintf(f, "}");
  }
  fprintf(f, "],\n     \"openmp\": {\"parallel\": \"%s\", \"simd\": \"%s\", \"temporal_blocking\": [", index_name(0),
          index_name(k->rank - 1));
  StmtList loops = { 0 };
  find_loops(cpu, &cpu->main, ki, &loops);
  for (int i = 0; i < loops.len; i++) {
    fprintf(f, "%s{\"steps\": %d, \"why\": ", i ? ", " : "", loops.data[i]->tb ? loops.data[i]->tb->steps : 1);
    json_str(f, tb_text(cpu, loops.data[i]));
    fprintf(f, "}");
  }
  loops.len = 0;
  fprintf(f, "]},\n     \"cuda\": {\"strategy\": \"%s\", \"why\": ", strategy_name(kg->gpu));
  json_str(f, kg->gpu_why);
  fprintf(f, ", \"block\": [%d, %d], \"march\": %d, \"vec\": %d, \"pipelined\": %s, \"burst\": %d, \"guard_sides\": %s, "
             "\"max_regs\": %d, \"launch\": {\"programmatic\": %s, \"why\": ", kg->block[0], kg->block[1], kg->march, kg->vec,
          kg->gpu_pipeline ? "true" : "false", kg->gpu_burst, kg->gpu_guard_sides ? "true" : "false", kg->max_regs,
          kg->pdl ? "true" : "false");
  json_str(f, kg->pdl_why);
  fprintf(f, "}, \"rejected\": [");
  for (int s = GPU_NAIVE, n = 0; s <= GPU_SMEM; s++)
    if (kg->gpu_rejected[s]) {
      fprintf(f, "%s{\"strategy\": \"%s\", \"why\": ", n++ ? ", " : "", strategy_name((GpuStrategy)s));
      json_str(f, kg->gpu_rejected[s]);
      fprintf(f, "}");
    }
  fprintf(f, "],\n       \"variants\": [");
  Variants vs = variants_of(o, gpu, kg);
  for (int v = 0; v < kg->nvariants; v++) {
    fprintf(f, "%s{\"vec\": %d, \"burst\": %d, \"block\": [%d, %d], ", v ? ", " : "", kg->variant[v].vec,
            kg->variant[v].burst, kg->variant[v].bx, kg->variant[v].by);
    if (vs.pick >= 0)
      fprintf(f, "\"registers\": %d, \"warps\": %d, \"runs\": %s}", vs.px[v].regs, vs.warps[v],
              v == vs.pick ? "true" : "false");
    else
      fprintf(f, "\"registers\": null, \"warps\": null, \"runs\": null}");
  }
  Ptxas px = ptxas_for(o->ptxas, k->name);
  fprintf(f, "],\n       \"resources\": {\"source\": \"%s\", \"registers\": %d, \"shared_memory\": %d, \"spill_stores\": %d, "
             "\"spill_loads\": %d},\n       \"temporal_blocking\": [",
          px.found ? "ptxas" : "estimate", px.found ? px.regs : register_estimate(kg), px.found ? px.smem : smem_estimate(gpu, kg),
          px.spill_st, px.spill_ld);
  double model_ps = -1;
  find_loops(gpu, &gpu->main, ki, &loops);
  model_occupancy(&loops, px, kg, &vs);
  for (int i = 0; i < loops.len; i++) {
    const IrTb *tb = loops.data[i]->tb;
    fprintf(f, "%s{\"steps\": %d, \"why\": ", i ? ", " : "", tb ? tb->steps : 1);
    json_str(f, tb_text(gpu, loops.data[i]));
    if (tb) { /* the blocked kernel's: ptxas's registers where it ran, the launch's shared memory */
      Ptxas pt, po;
      int brun, bother, fast = ptxas_tb(o->ptxas, gpu, k, tb, &pt, &po, &brun, &bother);
      if (pt.found)
        fprintf(f, ", \"resources\": {\"source\": \"ptxas\", \"registers\": %d, \"spill_stores\": %d, \"spill_loads\": %d, ",
                pt.regs, pt.spill_st, pt.spill_ld);
      else
        fprintf(f, ", \"resources\": {\"source\": \"none\", \"registers\": null, \"spill_stores\": null, \"spill_loads\": null, ");
      fprintf(f, "\"shared_memory\": %zu, \"instance\": ", tb->smem);
      if (tb->fast_instance && fast >= 0)
        json_str(f, fast ? "fast" : "general");
      else
        fprintf(f, "null");
      if (po.found)
        fprintf(f, ", \"blocks_per_sm\": %d, \"other_registers\": %d, \"other_blocks_per_sm\": %d", brun, po.regs,
                bother);
      fprintf(f, "}");
    }
    if (tb && tb->band_text) { /* IrTb.band_*: the rows where the comparisons with the grid's edges print as 1 */
      fprintf(f, ", \"band\": {\"first_row\": %ld, \"last_row\": ", ir_tb_band_first(tb));
      if (tb->band_last)
        json_str(f, tb->band_last);
      else
        fprintf(f, "null");
      fprintf(f, ", \"comparisons\": %d, \"why\": ", tb->band_count);
      json_str(f, tb->band_text);
      fprintf(f, "}");
    }
    const IrTbModel *m = loops.data[i]->tb_model;
    if (m) {
      fprintf(f, ", \"model\": [");
      for (int c = 0; c < m->n; c++) {
        const IrTbCand *e = &m->c[c];
        if (!e->own)
          fprintf(f, "%snull", c ? ", " : "");
        else
          fprintf(f, "%s{\"steps\": %d, \"strip\": %s, \"ps\": %.4f, \"memory_ps\": %.4f, \"chip_ps\": %.4f, \"recompute\": %.4f, "
                     "\"registers\": %.1f, \"features\": {\"bytes\": %.4f, \"shared_words\": %.4f, \"flops\": %.1f, "
                     "\"special\": %.1f, \"neighbours\": %.4f, \"points_per_thread\": %d, \"warps\": %s, \"element_bytes\": %d, "
                     "\"warm_rows\": %.4f, \"readonly_loads\": %.1f, \"rows_per_thread\": %d}}",
                  c ? ", " : "", e->steps, e->strip ? "true" : "false", tb_model_ps(e, o->bandwidth),
                  tb_model_mem_ps(e, o->bandwidth), e->chip_ps, e->recompute, e->regs, e->bytes, e->smem, e->flops,
                  e->special, e->neighbours, e->vec,
                  e->warps > 0 ? arena_printf(gpu->arena, "%.0f", e->warps) : "null", e->esz, e->warm, e->roloads, e->rows);
      }
      fprintf(f, "]");
    }
    if (model_chosen(loops.data[i]))
      model_ps = tb_model_ps(model_chosen(loops.data[i]), o->bandwidth);
    fprintf(f, "}");
  }
  loops.len = 0;
  fprintf(f, "],\n       \"graphs\": [");
  find_graph_loops(gpu, &gpu->main, ki, &loops);
  for (int i = 0; i < loops.len; i++) {
    fprintf(f, "%s{\"iterations\": %d, \"period\": %d, \"why\": ", i ? ", " : "", loops.data[i]->graph,
            loops.data[i]->graph_period);
    json_str(f, graph_text(gpu, loops.data[i]));
    fprintf(f, "}");
  }
  vec_free(&loops);
  fprintf(f, "]},\n     \"predicted_ms\": ");
  if (pts >= 0 && model_ps > 0)
    fprintf(f, "%.6f", model_ps * pts * 1e-9);
  else if (pts >= 0 && bytes > 0)
    fprintf(f, "%.6f", bytes * pts / (o->bandwidth * 1e9) * 1e3);
  else
    fprintf(f, "null");
  if (cpu->mpi)
    mpi_json(f, cpu, k);
  fprintf(f, "}");
}

void report_print(FILE *f, const IrProgram *cpu, const IrProgram *gpu, const ReportOptions *o)
{
  if (o->json) {
    fprintf(f, "{\"program\": ");
    json_str(f, cpu->src->name);
    fprintf(f, ", \"gpu\": \"%s\", \"bandwidth_gbs\": %.1f,\n  \"params\": [", o->gpu, o->bandwidth);
    for (int i = 0; i < cpu->params.len; i++) {
      fprintf(f, "%s{\"name\": ", i ? ", " : "");
      json_str(f, cpu->params.data[i].name);
      fprintf(f, ", \"type\": \"%s\", \"default\": %.17g}", type_name(cpu->params.data[i].ty), cpu->params.data[i].def);
    }
    fprintf(f, "],\n  \"kernels\": [\n");
    for (int i = 0; i < cpu->kernels.len; i++) {
      kernel_json(o, f, cpu, gpu, i);
      fprintf(f, "%s\n", i + 1 < cpu->kernels.len ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return;
  }
  fprintf(f, "stencilc report for %s (predicted times by the %s's time model at %.0f GB/s; --gpu and --bandwidth set them)\n",
          cpu->src->name, o->gpu, o->bandwidth);
  fprintf(f, "params:");
  for (int i = 0; i < cpu->params.len; i++)
    fprintf(f, " %s=%.9g", cpu->params.data[i].name, cpu->params.data[i].def);
  fprintf(f, "\n");
  for (int i = 0; i < cpu->kernels.len; i++) {
    fprintf(f, "\n");
    kernel_text(o, f, cpu, gpu, i);
  }
}
