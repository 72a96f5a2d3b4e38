/* cg_cuda.c: prints a program as CUDA (`--target=cuda`). Each kernel
 * becomes a __global__ function plus a host wrapper that launches it with
 * the strategy, block shape and marching length the gpu pass chose.
 * Values computed once per call (level 0 after hoisting) are computed by
 * the wrapper on the host and passed as arguments; everything else is
 * printed per point exactly as for the CPU. Reductions: each thread
 * accumulates, stn_block_reduce combines a block, and the runtime combines
 * the blocks (runtime/stn_cuda.h). */
#include "backend/cg.h"
#include "backend/cg_common.h"
#include "backend/cg_cuda.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *cuda_red_op(RedOp op) { return op == RED_SUM ? "STN_RED_SUM" : op == RED_MAX ? "STN_RED_MAX" : "STN_RED_MIN"; }
#define red_op cuda_red_op

/* The runtime's op of reduction r: exact sums under --mpi
 * --deterministic-reductions (cg_common.c: red_exact). */
static const char *red_op_of(const IrProgram *p, const IrRed *r) { return red_exact(p, r) ? "STN_RED_XSUM" : red_op(r->op); }

static int exact_reds(const IrProgram *p, const IrKernel *k)
{
  int n = 0;
  for (int i = 0; i < k->reds.len; i++)
    n += red_exact(p, &k->reds.data[i]);
  return n;
}

void cuda_print_red_decls(Buf *b, const IrKernel *k)
{
  buf_printf(b, "  const int ops_[] = {");
  for (int i = 0; i < k->reds.len; i++)
    buf_printf(b, "%s%s", i ? ", " : "", red_op(k->reds.data[i].op));
  buf_puts(b, "};\n  static stn_reduction red_;\n");
  buf_puts(b, "  void *const dst_[] = {");
  for (int i = 0; i < k->reds.len; i++)
    buf_printf(b, "%s%s_out_", i ? ", " : "", k->reds.data[i].name);
  buf_puts(b, "};\n  const stn_type dst_type_[] = {");
  for (int i = 0; i < k->reds.len; i++)
    buf_printf(b, "%s%s_type_", i ? ", " : "", k->reds.data[i].name);
  buf_puts(b, "};\n");
}

void cuda_print_block_reduce(Buf *b, const IrProgram *p, const IrKernel *k, const char *first_thread)
{
  for (int i = 0; i < k->reds.len; i++) {
    const IrRed *r = &k->reds.data[i];
    buf_printf(b, "  {\n    const double v_ = stn_block_reduce<%s>((double)%s);\n", red_op(r->op), cname(p, r->name));
    buf_printf(b, "    if (%s)\n", first_thread);
    if (k->gpu_atomic)
      buf_printf(b, "      stn_atomic_combine<%s>(&stn_part[%d], v_);\n  }\n", red_op(r->op), i);
    else
      buf_printf(b, "      stn_part[(size_t)%d * gridDim.x * gridDim.y * gridDim.z + stn_block_linear()] = v_;\n  }\n", i);
  }
  for (int i = 0, xi = 0; i < k->reds.len; i++)
    if (red_exact(p, &k->reds.data[i]))
      buf_printf(b, "  stn_xacc_store(%s_xa_, stn_xpart + ((size_t)%d * gridDim.x * gridDim.y * gridDim.z + stn_block_linear()) * "
                    "STN_XACC_W);\n", k->reds.data[i].name, xi++);
}

/* A level-0 value the per-point code needs becomes a kernel argument. */
int cuda_passed(const IrKernel *k, const int *use_level, int id)
{
  const IrNode *n = &k->nodes.data[id];
  if (n->level != 0 || use_level[id] < 1 || n->op == OP_CONST)
    return 0;
  /* Without CSE (-fno-cse) a param can have several nodes: the first is
   * the argument, the others print as its name. */
  if (n->op == OP_PARAM || n->op == OP_ARG || n->op == OP_EXTENT)
    for (int j = 0; j < id; j++) {
      const IrNode *m = &k->nodes.data[j];
      if (m->op == n->op && m->ref == n->ref && m->imm == n->imm && m->level == 0 && use_level[j] >= 1)
        return 0;
    }
  return 1;
}

const char *cuda_passed_name(const IrProgram *p, const IrKernel *k, char **names, int id)
{
  const IrNode *n = &k->nodes.data[id];
  if (n->op == OP_PARAM)
    return cname(p, p->params.data[n->ref].name);
  if (n->op == OP_ARG)
    return cname(p, k->args.data[n->ref].name);
  if (n->op == OP_EXTENT)
    return arena_printf(p->arena, "n%d_", n->imm);
  if (names[id])
    return names[id];
  return arena_printf(p->arena, "t%d_", id);
}

static void qname(Buf *b, const IrProgram *p, int f, int d)
{
  buf_printf(b, "q_%s_%c%d_", p->fields.data[f].name, d < 0 ? 'm' : 'p', abs(d));
}

/* ---- vector lanes (k->vec = V > 1) -------------------------------------
 * A thread computes the V points k, k + 1, ..., k + V - 1 along the
 * contiguous dimension, k a multiple of V (rows start 16-element aligned,
 * see stn_grid_init), so that each row the kernel reads (a field at fixed
 * offsets in the other dimensions) arrives as one aligned vector load
 * r_F_.._ of the thread's V columns, plus single loads s_F_.._ of the
 * columns its stencil reaches beyond them. Then each lane's point is
 * printed with its loads reading those values. Lanes outside the region
 * compute but neither store nor reduce (their reads stay inside the
 * padding the runtime allocates: passes/gpu.c, points_per_thread). */
enum { LANE_REACH = 16 };

typedef struct LaneRow {
  int f, off[MAX_RANK];    /* off[rank - 1] unused */
  int vec;                 /* some lane reads a column in [0, V) */
  char used[4 + 2 * LANE_REACH];  /* column x + LANE_REACH read by some lane */
  unsigned char lanes[4 + 2 * LANE_REACH];  /* which lanes (bit v) read column x + LANE_REACH */
} LaneRow;

typedef struct Lanes {
  int n;                   /* V */
  LaneRow *rows;
  int nrows;
  const char *queued;      /* stream: fields whose (d, 0, 0) rows are the queue */
  int piped;               /* stream, IrKernel.gpu_pipeline: each plane loads the next one's rows */
  const char *ahead;       /* the rows were loaded before, into <name><ahead> (the pipeline's "nx_", a burst's
                            * "b<m>_"), or NULL: they load where used */
} Lanes;

/* CUDA's vector type of v elements of t (at most 16 bytes: the gpu pass). */
static const char *vtype(Type t, int v)
{
  if (v == 1)
    return ctype(t);
  if (t == TY_DOUBLE)
    return "double2";
  if (t == TY_FLOAT)
    return v == 2 ? "float2" : "float4";
  return v == 2 ? "int2" : "int4";
}

/* What turns a load of field f at a column into a load of the thread's
 * vector of columns ("*(const float4 *)&"), or nothing for one point. */
static const char *vload_prefix(const IrProgram *p, const IrKernel *k, int f)
{
  return k->vec > 1 ? arena_printf(p->arena, "*(const %s *)&", vtype(p->fields.data[f].ty, k->vec)) : "";
}

static const char comp[] = "xyzw";

static int row_queued(const Lanes *L, const IrKernel *k, const LaneRow *r)
{
  if (!L->queued || !L->queued[r->f])
    return 0;
  for (int d = 1; d < k->rank - 1; d++)
    if (r->off[d])
      return 0;
  return k->gpu_queue_lo[r->f] <= r->off[0] && r->off[0] <= k->gpu_queue_hi[r->f];
}

static LaneRow *lane_row(Lanes *L, const IrKernel *k, int f, const int *off)
{
  for (int i = 0; i < L->nrows; i++) {
    int same = L->rows[i].f == f;
    for (int d = 0; d < k->rank - 1 && same; d++)
      same = L->rows[i].off[d] == off[d];
    if (same)
      return &L->rows[i];
  }
  return NULL;
}

static void collect_rows(Lanes *L, const IrKernel *k)
{
  int last = k->rank - 1;
  L->rows = xrealloc(NULL, sizeof(LaneRow) * (size_t)(k->nodes.len + 1));
  L->nrows = 0;
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    if (n->op != OP_LOAD)
      continue;
    LaneRow *r = lane_row(L, k, n->ref, n->off);
    if (!r) {
      r = &L->rows[L->nrows++];
      memset(r, 0, sizeof *r);
      r->f = n->ref;
      for (int d = 0; d < last; d++)
        r->off[d] = n->off[d];
    }
    for (int v = 0; v < L->n; v++) {
      int x = n->off[last] + v;
      if (x < -LANE_REACH || x >= L->n + LANE_REACH)
        ice("vector lanes: column %d beyond the reach the gpu pass allows", x);
      r->used[x + LANE_REACH] = 1;
      r->lanes[x + LANE_REACH] |= (unsigned char)(1u << v);
      r->vec |= x >= 0 && x < L->n;
    }
  }
}

static void lanes_begin(Lanes *L, const IrKernel *k, const char *queued)
{
  L->n = k->vec;
  L->queued = queued;
  L->piped = 0;
  L->ahead = NULL;
  collect_rows(L, k);
}

static void lanes_end(Lanes *L) { free(L->rows); }

static void row_name(Buf *b, const IrProgram *p, const IrKernel *k, const LaneRow *r, char kind)
{
  buf_printf(b, "%c_%s_", kind, p->fields.data[r->f].name);
  for (int d = 0; d < k->rank - 1; d++)
    buf_printf(b, "%c%d_", r->off[d] < 0 ? 'm' : 'p', abs(r->off[d]));
}

/* The name of column x of row r (a vector component or a single value). */
static void lane_value(Buf *b, const IrProgram *p, const IrKernel *k, const Lanes *L, const LaneRow *r, int x)
{
  if (x >= 0 && x < L->n) {
    if (row_queued(L, k, r))
      qname(b, p, r->f, r->off[0]);
    else
      row_name(b, p, k, r, 'r');
    if (L->n > 1)
      buf_printf(b, ".%c", comp[x]);
  } else {
    row_name(b, p, k, r, 's');
    buf_printf(b, "%c%d_", x < 0 ? 'm' : 'p', abs(x));
  }
}

static int lane_load(Printer *pr, const IrNode *n)
{
  Lanes *L = (Lanes *)pr->hook;
  const LaneRow *r = lane_row(L, pr->k, n->ref, n->off);
  if (!r)
    ice("vector lanes: a load with no row");
  lane_value(pr->b, pr->p, pr->k, L, r, n->off[pr->k->rank - 1] + pr->lane);
  return 1;
}

static void print_row_at(Buf *b, const IrKernel *k, const LaneRow *r, int x, const char *base)
{
  buf_puts(b, base);
  for (int d = 0; d < k->rank - 1; d++)
    if (r->off[d])
      buf_printf(b, abs(r->off[d]) == 1 ? " %c s%d_" : " %c %d * s%d_", r->off[d] < 0 ? '-' : '+',
                 abs(r->off[d]) == 1 ? d : abs(r->off[d]), d);
  if (x)
    buf_printf(b, " %c %d", x < 0 ? '-' : '+', abs(x));
}

/* How print_rows prints each row value: where it is used, or ahead of
 * its plane into a name with the suffix L->ahead. */
typedef enum RowMode {
  ROW_LOAD,       /* const T name = load at c_ */
  ROW_READ_AHEAD, /* const T name = name<ahead>  (loaded before) */
  ROW_DECL_LOAD,  /* T name<ahead> = load at base */
  ROW_LOAD_AHEAD, /* name<ahead> = load at base  (declared before) */
  ROW_DECL,       /* T name<ahead>; */
} RowMode;

/* The rows of the current point (c_): vectors, then the columns beyond.
 * A programmatic launch loads the rows of its read-only fields first
 * (Himeno M 91.0% of copy in node order, 92.6% so: H100, 04:37-05:20). */
static void print_rows(Buf *b, const IrProgram *p, const IrKernel *k, const Lanes *L, int depth, RowMode mode,
                       const char *base)
{
  for (int pass = 0; pass < 2; pass++)
  for (int i = 0; i < L->nrows; i++) {
    const LaneRow *r = &L->rows[i];
    const IrField *f = &p->fields.data[r->f];
    if ((k->pdl && k->pdl_ro[r->f]) != (pass == 0))
      continue;
    for (int xi = -1; xi < 2 * LANE_REACH + L->n; xi++) { /* the vector (xi = -1), then the columns beyond it */
      int vec = xi < 0, x = xi - LANE_REACH;
      if (vec ? !r->vec || row_queued(L, k, r) : (x >= 0 && x < L->n) || !r->used[xi])
        continue;
      indent(b, depth);
      if (mode != ROW_LOAD_AHEAD)
        buf_printf(b, "%s%s ", mode <= ROW_READ_AHEAD ? "const " : "", vec ? vtype(f->ty, L->n) : ctype(f->ty));
      if (vec)
        row_name(b, p, k, r, 'r');
      else
        lane_value(b, p, k, L, r, x);
      if (mode >= ROW_DECL_LOAD)
        buf_puts(b, L->ahead);
      if (mode == ROW_DECL) {
        buf_puts(b, ";\n");
        continue;
      }
      buf_puts(b, " = ");
      if (mode == ROW_READ_AHEAD) {
        if (vec)
          row_name(b, p, k, r, 'r');
        else
          lane_value(b, p, k, L, r, x);
        buf_printf(b, "%s;\n", L->ahead);
        continue;
      }
      /* IrKernel.gpu_guard_sides: a column beyond the vector loads only
       * for the lanes that read it being inside the region (the others'
       * points are dropped), sparing a sector per row and field at each
       * end of the region. */
      const int guard = !vec && k->gpu_guard_sides && r->lanes[xi] != (1u << L->n) - 1;
      if (guard) {
        buf_puts(b, "(");
        for (int v = 0, n = 0; v < L->n; v++)
          if (r->lanes[xi] >> v & 1)
            buf_printf(b, "%sin%d_", n++ ? " || " : "", v);
        buf_puts(b, ") ? ");
      }
      buf_printf(b, "%s%s[", vec ? vload_prefix(p, k, r->f) : "", cname(p, f->name));
      print_row_at(b, k, r, vec ? 0 : x, mode == ROW_LOAD ? "c_" : base);
      buf_printf(b, "]%s;\n", guard ? arena_printf(p->arena, " : (%s)0", ctype(f->ty)) : "");
    }
  }
}

static void print_row_loads(Buf *b, const IrProgram *p, const IrKernel *k, const Lanes *L, int depth)
{
  print_rows(b, p, k, L, depth, L->ahead ? ROW_READ_AHEAD : ROW_LOAD, NULL);
}

/* Each lane's names for the values it computes (point level); values of
 * the outer levels are shared. A lane's name ends in '_', which no user
 * name may (sema), so `a` of lane 1 (a_1_) cannot meet a user's a_1. */
static char **lane_names(const IrProgram *p, const IrKernel *k, char **names, int v)
{
  char **ln = xrealloc(NULL, sizeof(char *) * (size_t)(k->nodes.len + 1));
  for (int i = 0; i < k->nodes.len; i++) {
    ln[i] = names[i];
    if (names[i] && k->nodes.data[i].level == k->rank) {
      size_t len = strlen(names[i]);
      ln[i] = names[i][len - 1] == '_' ? arena_printf(p->arena, "%s%d_", names[i], v)
                                       : arena_printf(p->arena, "%s_%d_", names[i], v);
    }
  }
  return ln;
}

/* The lanes' region tests, once per thread. */
static void print_lane_tests(Buf *b, const IrKernel *k, int V, int depth)
{
  const char *x = index_name(k->rank - 1);
  indent(b, depth);
  if (V > 1) {
    buf_printf(b, "/* this thread's %d points: %s .. %s + %d; those outside the region are computed, not kept */\n", V, x,
               x, V - 1);
    indent(b, depth);
    buf_printf(b, "const bool all_ = %s >= %s_lo_ && %s + %d <= %s_hi_;\n", x, x, x, V, x);
  } else {
    buf_printf(b, "/* this thread's point %s */\n", x);
  }
  for (int v = 0; v < V; v++) {
    indent(b, depth);
    if (v)
      buf_printf(b, "const bool in%d_ = %s + %d >= %s_lo_ && %s + %d < %s_hi_;\n", v, x, v, x, x, v, x);
    else
      buf_printf(b, "const bool in0_ = %s >= %s_lo_ && %s < %s_hi_;\n", x, x, x, x);
  }
}

/* One point per lane, then the effects: a vector store when every lane is
 * inside the region and the store has no condition. */
static void print_lanes(Printer *pr, Lanes *L, int depth)
{
  const IrKernel *k = pr->k;
  const IrProgram *p = pr->p;
  Buf *b = pr->b;
  int V = L->n;
  print_row_loads(b, p, k, L, depth);
  if (L->piped) { /* plane i + 1's rows, while this plane computes */
    indent(b, depth);
    buf_puts(b, "if (i + 1 < i_end_) {\n");
    print_rows(b, p, k, L, depth + 1, ROW_LOAD_AHEAD, "c_ + s0_");
    indent(b, depth);
    buf_puts(b, "}\n");
  }
  for (int lv = 1; lv < k->rank; lv++)
    emit_level(pr, lv, depth);
  char **shared = pr->names;
  char **ln[4];
  pr->print_load = lane_load;
  pr->hook = L;
  for (int v = 0; v < V; v++) {
    ln[v] = lane_names(p, k, shared, v);
    pr->names = ln[v];
    pr->lane = v;
    pr->last_line = 0; /* each lane's point names its source lines */
    indent(b, depth);
    if (v)
      buf_printf(b, "/* point %s + %d */\n", index_name(k->rank - 1), v);
    else
      buf_printf(b, "/* point %s */\n", index_name(k->rank - 1));
    emit_level(pr, k->rank, depth);
    for (int i = 0; i < k->effects.len; i++) {
      const IrEffect *e = &k->effects.data[i];
      if (e->pred >= 0) {
        indent(b, depth);
        buf_printf(b, "const bool e%dp_%d_ = ", i, v);
        print_expr(pr, e->pred, P_TOP, 0);
        buf_puts(b, ";\n");
      }
      if (e->kind == EFF_STORE && !ln[v][e->val]) {
        line_comment(pr, k->nodes.data[e->val].span, depth);
        indent(b, depth);
        buf_printf(b, "const %s e%d_%d_ = ", ctype(p->fields.data[e->ref].ty), i, v);
        print_expr(pr, e->val, P_TOP, 0);
        buf_puts(b, ";\n");
      }
    }
  }
  for (int i = 0; i < k->effects.len; i++) {
    const IrEffect *e = &k->effects.data[i];
    if (e->kind == EFF_STORE) {
      const IrField *f = &p->fields.data[e->ref];
      indent(b, depth);
      if (e->pred < 0 && V > 1) {
        buf_printf(b, "if (all_)\n");
        indent(b, depth + 1);
        buf_printf(b, "*(%s *)&%s[c_] = %s{", vtype(f->ty, V), cname(p, f->name), vtype(f->ty, V));
        for (int v = 0; v < V; v++)
          buf_printf(b, "%s%s", v ? ", " : "", ln[v][e->val] ? ln[v][e->val] : arena_printf(p->arena, "e%d_%d_", i, v));
        buf_puts(b, "};\n");
        indent(b, depth);
        buf_puts(b, "else {\n");
      } else {
        buf_puts(b, "{\n");
      }
      for (int v = 0; v < V; v++) {
        indent(b, depth + 1);
        buf_printf(b, "if (in%d_", v);
        if (e->pred >= 0)
          buf_printf(b, " && e%dp_%d_", i, v);
        buf_printf(b, ")\n");
        indent(b, depth + 2);
        buf_printf(b, "%s[c_%s] = %s;\n", cname(p, f->name), v ? arena_printf(p->arena, " + %d", v) : "",
                   ln[v][e->val] ? ln[v][e->val] : arena_printf(p->arena, "e%d_%d_", i, v));
      }
      indent(b, depth);
      buf_puts(b, "}\n");
    } else {
      for (int v = 0; v < V; v++) {
        pr->names = ln[v];
        pr->lane = v;
        line_comment(pr, k->nodes.data[e->val].span, depth);
        indent(b, depth);
        buf_printf(b, "if (in%d_", v);
        if (e->pred >= 0)
          buf_printf(b, " && e%dp_%d_", i, v);
        buf_puts(b, ") ");
        print_red_update(pr, &k->reds.data[e->ref], e->val);
        buf_puts(b, ";\n");
      }
    }
  }
  pr->names = shared;
  pr->lane = 0;
  pr->print_load = NULL;
  pr->hook = NULL;
  for (int v = 0; v < V; v++)
    free(ln[v]);
}

/* The thread's point: which dimension each of x, y, z covers. */
static void print_point(Buf *b, const IrKernel *k)
{
  int r = k->rank;
  const char *last = index_name(r - 1);
  /* Warps start on a 32-element boundary, so that each warp's loads
   * cover whole 128-byte lines; threads before the region idle. */
  if (k->vec > 1)
    buf_printf(b, "  const I %s = (I)(%s_lo_ & ~31L) + (I)%d * (I)(blockIdx.x * blockDim.x + threadIdx.x);\n", last, last,
               k->vec);
  else
    buf_printf(b, "  const I %s = (I)(%s_lo_ & ~31L) + (I)(blockIdx.x * blockDim.x + threadIdx.x);\n", last, last);
  if (r == 3)
    buf_printf(b, "  const I j = (I)j_lo_ + (I)(blockIdx.y * blockDim.y + threadIdx.y);\n");
  if (k->gpu == GPU_STREAM || k->gpu == GPU_SMEM) {
    const char *by = r == 3 ? "blockIdx.z" : "blockIdx.y";
    buf_printf(b, "  const I i_first_ = (I)i_lo_ + (I)%s * (I)march_;\n", by);
    buf_printf(b, "  const I i_end_ = i_first_ + (I)march_ < (I)i_hi_ ? i_first_ + (I)march_ : (I)i_hi_;\n");
  } else if (r >= 2) {
    buf_printf(b, "  const I i = (I)i_lo_ + (I)(%s);\n", r == 3 ? "blockIdx.z" : "blockIdx.y * blockDim.y + threadIdx.y");
  }
}

static void print_inside(Buf *b, const IrKernel *k)
{
  int r = k->rank;
  if (k->vec > 1)
    buf_printf(b, "%s + %d > %s_lo_ && %s < %s_hi_", index_name(r - 1), k->vec, index_name(r - 1), index_name(r - 1),
               index_name(r - 1));
  else
    buf_printf(b, "%s >= %s_lo_ && %s < %s_hi_", index_name(r - 1), index_name(r - 1), index_name(r - 1),
               index_name(r - 1));
  if (r == 3)
    buf_puts(b, " && j < j_hi_");
  if (r >= 2 && k->gpu == GPU_NAIVE)
    buf_puts(b, " && i < i_hi_");
}

static void print_body(Printer *pr, int depth)
{
  const IrKernel *k = pr->k;
  Buf *b = pr->b;
  indent(b, depth);
  buf_puts(b, "const I c_ = ");
  for (int d = 0; d < k->rank - 1; d++)
    buf_printf(b, "%s * s%d_ + ", index_name(d), d);
  buf_printf(b, "%s;\n", index_name(k->rank - 1));
  if (k->vec > 1) {
    Lanes L;
    lanes_begin(&L, k, NULL);
    print_lane_tests(b, k, k->vec, depth);
    print_lanes(pr, &L, depth);
    lanes_end(&L);
    return;
  }
  for (int d = 0; d < k->rank; d++)
    print_wrap_decls(pr, d, depth, "I");
  for (int lv = 1; lv <= k->rank; lv++)
    emit_level(pr, lv, depth);
  print_effects(pr, depth);
}

/* Does the kernel read index d (OP_INDEX)? */
static int reads_index(const IrKernel *k, int d)
{
  for (int i = 0; i < k->nodes.len; i++)
    if (k->nodes.data[i].op == OP_INDEX && k->nodes.data[i].ref == d)
      return 1;
  return 0;
}

static void print_launch_args(Buf *b, const IrProgram *p, const IrKernel *k, const int *use_level, Printer *hpr,
                              const char *gname)
{
  buf_puts(b, gname);
  for (int f = 0; f < p->fields.len; f++)
    if (ir_reads_field(k, f) || ir_stores_field(k, f))
      buf_printf(b, ", (%s%s *)%s_.origin", ir_stores_field(k, f) ? "" : "const ", ctype(p->fields.data[f].ty),
                 p->fields.data[f].name);
  if (k->reds.len)
    buf_puts(b, ", stn_part");
  if (exact_reds(p, k))
    buf_puts(b, ", stn_xpart");
  for (int d = 0; d < k->rank; d++)
    buf_printf(b, ", %s_lo_, %s_hi_", index_name(d), index_name(d));
  for (int d = 0; d < k->rank; d++)
    if (p->mpi && reads_index(k, d))
      buf_printf(b, ", stn_%s0", index_name(d));
  if (k->gpu != GPU_NAIVE)
    buf_puts(b, ", (long)march_");
  for (int i = 0; i < k->nodes.len; i++)
    if (cuda_passed(k, use_level, i)) {
      buf_puts(b, ", ");
      print_expr(hpr, i, P_TOP, 0);
    }
  buf_puts(b, ");\n");
}

/* The queues move one plane on: each queued column's planes lo .. hi +
 * extra (extra: the planes loaded ahead) take the next plane's value. */
static void print_queue_shift(Buf *b, const IrProgram *p, const IrKernel *k, int extra)
{
  for (int f = 0; f < p->fields.len; f++) {
    if (!k->gpu_queue[f])
      continue;
    for (int d = k->gpu_queue_lo[f]; d < k->gpu_queue_hi[f] + extra; d++) {
      buf_puts(b, "      ");
      qname(b, p, f, d);
      buf_puts(b, " = ");
      qname(b, p, f, d + 1);
      buf_puts(b, ";\n");
    }
  }
}

/* The start of a burst's plane m: cb_, cb_ + s0_, cb_ + m * s0_. */
static const char *burst_plane(const IrProgram *p, int m)
{
  return m == 0 ? "cb_" : m == 1 ? "cb_ + s0_" : arena_printf(p->arena, "cb_ + %d * s0_", m);
}

/* The stream strategy in a burst (IrKernel.gpu_burst = M, the march): a
 * thread loads the queue's planes and every plane's rows first, then
 * computes its M planes from registers, so that all those loads are in
 * flight at once rather than each plane's after the plane before has
 * stored (diffusion3d 87.4% -> 90.5% of copy at M = 2; as a loop of
 * bursts over a longer march, 82%: H100, docs/benchmarks.md 2026-11-23). */
static void print_burst_loop(Buf *b, const IrProgram *p, const IrKernel *k, Printer *pr)
{
  const char *queued = k->gpu_queue;
  int M = k->gpu_burst, any = 0;
  for (int f = 0; queued && f < p->fields.len; f++) {
    if (!queued[f])
      continue;
    any = 1;
    int lo = k->gpu_queue_lo[f], hi = k->gpu_queue_hi[f] + M - 1;
    buf_printf(b, "    /* %s's column%s in registers, planes i_first_%+d .. i_first_%+d */\n", p->fields.data[f].name,
               k->vec > 1 ? "s" : "", lo, hi);
    for (int d = lo; d <= hi; d++) {
      buf_printf(b, "    %s ", k->vec > 1 ? vtype(p->fields.data[f].ty, k->vec) : ctype(p->fields.data[f].ty));
      qname(b, p, f, d);
      buf_puts(b, ";\n");
    }
  }
  Lanes L;
  lanes_begin(&L, k, any ? queued : NULL);
  print_lane_tests(b, k, k->vec, 2);
  buf_printf(b, "    { /* %d planes: all their loads, then their points */\n", M);
  buf_printf(b, "      const I cb_ = i_first_ * s0_ + %s;\n", k->rank == 3 ? "j * s1_ + k" : "j");
  for (int f = 0; any && f < p->fields.len; f++) {
    int hi = k->gpu_queue_hi[f];
    if (!queued[f])
      continue;
    for (int d = k->gpu_queue_lo[f]; d <= hi + M - 1; d++) {
      /* plane i_first_ + d serves planes i_first_ + d - hi and on */
      buf_puts(b, d > hi ? arena_printf(p->arena, "      if (i_first_ + %d < i_end_)\n        ", d - hi) : "      ");
      qname(b, p, f, d);
      buf_printf(b, " = %s%s[cb_", vload_prefix(p, k, f), cname(p, p->fields.data[f].name));
      if (d)
        buf_printf(b, " %c %d * s0_", d < 0 ? '-' : '+', abs(d));
      buf_puts(b, "];\n");
    }
  }
  for (int m = 0; m < M; m++) {
    L.ahead = arena_printf(p->arena, "b%d_", m);
    if (m == 0) {
      print_rows(b, p, k, &L, 3, ROW_DECL_LOAD, burst_plane(p, 0));
      continue;
    }
    print_rows(b, p, k, &L, 3, ROW_DECL, NULL);
    buf_printf(b, "      if (i_first_ + %d < i_end_) {\n", m);
    print_rows(b, p, k, &L, 4, ROW_LOAD_AHEAD, burst_plane(p, m));
    buf_puts(b, "      }\n");
  }
  int uses_i = reads_index(k, 0);
  for (int m = 0; m < M; m++) {
    buf_puts(b, m ? arena_printf(p->arena, "      if (i_first_ + %d < i_end_) {\n", m) : "      {\n");
    if (uses_i)
      buf_printf(b, "        const I i = i_first_%s;\n", m ? arena_printf(p->arena, " + %d", m) : "");
    buf_printf(b, "        const I c_ = %s;\n", burst_plane(p, m));
    L.ahead = arena_printf(p->arena, "b%d_", m);
    print_lanes(pr, &L, 4);
    buf_puts(b, "      }\n");
    if (any && m < M - 1)
      print_queue_shift(b, p, k, M - 1);
  }
  buf_puts(b, "    }\n");
  lanes_end(&L);
}

/* The stream strategy's loop. A field read at several planes of the
 * thread's own column keeps that column in registers (a queue): each
 * plane loads only its leading value, and the queue shifts at the end. */
static void print_stream_loop(Buf *b, const IrProgram *p, const IrKernel *k, Printer *pr)
{
  const char *queued = k->gpu_queue;
  int any = 0;
  for (int f = 0; queued && f < p->fields.len; f++) {
    int lo = k->gpu_queue_lo[f], hi = k->gpu_queue_hi[f];
    if (!queued[f])
      continue;
    any = 1;
    const char *ty = k->vec > 1 ? vtype(p->fields.data[f].ty, k->vec) : ctype(p->fields.data[f].ty);
    /* Pipelined: one plane more, i + hi + 1, loaded at plane i. */
    int ahead = k->gpu_pipeline;
    buf_printf(b, "    /* %s's column%s in registers, planes i%+d .. i%+d */\n", p->fields.data[f].name,
               k->vec > 1 ? "s" : "", lo, hi + ahead);
    for (int d = lo; d <= hi + ahead; d++) {
      buf_printf(b, "    %s ", ty);
      qname(b, p, f, d);
      if (d < hi + ahead)
        buf_printf(b, " = %s%s[(i_first_ %c %d) * s0_ + %s];\n", vload_prefix(p, k, f), cname(p, p->fields.data[f].name),
                   d < 0 ? '-' : '+', abs(d), k->rank == 3 ? "j * s1_ + k" : "j");
      else
        buf_puts(b, ";\n");
    }
  }
  int lanes = k->vec > 1 || k->gpu_pipeline;
  Lanes L;
  if (lanes) {
    lanes_begin(&L, k, any ? queued : NULL);
    print_lane_tests(b, k, k->vec, 2);
  }
  /* Software pipelining: plane i_first_'s rows now, plane i + 1's in
   * iteration i, so that their loads overlap plane i's arithmetic. */
  const char *cpos = k->rank == 3 ? "j * s1_ + k" : "j";
  if (k->gpu_pipeline) {
    buf_printf(b, "    /* the rows beside the column%s, loaded a plane ahead */\n", k->vec > 1 ? "s" : "");
    L.ahead = "nx_";
    print_rows(b, p, k, &L, 2, ROW_DECL_LOAD, arena_printf(p->arena, "i_first_ * s0_ + %s", cpos));
    L.piped = 1;
  }
  buf_puts(b, "    for (I i = i_first_; i < i_end_; i++) {\n");
  buf_puts(b, "      const I c_ = ");
  for (int d = 0; d < k->rank - 1; d++)
    buf_printf(b, "%s * s%d_ + ", index_name(d), d);
  buf_printf(b, "%s;\n", index_name(k->rank - 1));
  for (int f = 0; any && f < p->fields.len; f++) {
    int hi = k->gpu_queue_hi[f] + k->gpu_pipeline;
    if (!queued[f])
      continue;
    buf_puts(b, k->gpu_pipeline ? "      if (i + 1 < i_end_)\n        " : "      ");
    qname(b, p, f, hi);
    buf_printf(b, " = %s%s[c_ + %d * s0_];\n", vload_prefix(p, k, f), cname(p, p->fields.data[f].name), hi);
  }
  if (lanes) {
    print_lanes(pr, &L, 3);
    lanes_end(&L);
  } else {
    pr->queued = any ? queued : NULL;
    for (int lv = 1; lv <= k->rank; lv++)
      emit_level(pr, lv, 3);
    print_effects(pr, 3);
    pr->queued = NULL;
  }
  if (any)
    print_queue_shift(b, p, k, k->gpu_pipeline);
  buf_puts(b, "    }\n");
}

/* The smem strategy: the block marches along i; before each plane it
 * stages plane i + ri of the chosen field (its tile plus halo) into a
 * rolling buffer of 2ri+1 planes, then every thread computes its point
 * reading that field from shared memory. All threads stage and wait,
 * including those whose point is outside the region. */
static void print_stage(Buf *b, const IrProgram *p, const IrKernel *k, const char *plane, int tw, int th, int depth)
{
  const IrField *f = &p->fields.data[k->smem_field];
  int np = 2 * k->smem_r[0] + 1;
  indent(b, depth);
  buf_printf(b, "{ /* stage plane %s of %s */\n", plane, f->name);
  indent(b, depth + 1);
  buf_printf(b, "const I pl_ = %s;\n", plane);
  indent(b, depth + 1);
  buf_printf(b, "%s *dst_ = sm_[(int)(((pl_ %% %d) + %d) %% %d)];\n", ctype(f->ty), np, np, np);
  /* The planes staged reach ri both ways, the field's allocation only as
   * far as some kernel reads (boundary.stn: 2 below, 1 above): planes
   * outside it are zeros. */
  const char *g = cname(p, p->grids.data[k->grid].name);
  indent(b, depth + 1);
  buf_printf(b, "const bool pin_ = pl_ >= -(I)%s.halo_lo[0] && pl_ < (I)(%s.n[0] + %s.halo_hi[0]);\n", g, g, g);
  indent(b, depth + 1);
  buf_printf(b, "for (int e_ = tid_; e_ < %d; e_ += nt_) {\n", tw * th);
  indent(b, depth + 2);
  buf_printf(b, "const I gj_ = jb_ - %d + e_ / %d, gk_ = kb_ - %d + e_ %% %d;\n", k->smem_r[1], tw, k->smem_r[2], tw);
  indent(b, depth + 2);
  buf_printf(b, "dst_[e_] = pin_ && gj_ >= -(I)%s.halo_lo[1] && gj_ < (I)(%s.n[1] + %s.halo_hi[1]) && gk_ >= -(I)%s.pad_lo[2] && "
                "gk_ < (I)(%s.alloc[2] - %s.pad_lo[2])\n", g, g, g, g, g, g);
  indent(b, depth + 4);
  buf_printf(b, "? %s[pl_ * s0_ + gj_ * s1_ + gk_] : (%s)0;\n", cname(p, f->name), ctype(f->ty));
  indent(b, depth + 1);
  buf_puts(b, "}\n");
  indent(b, depth);
  buf_puts(b, "}\n");
}

static void print_smem_body(Buf *b, const IrProgram *p, const IrKernel *k, Printer *pr)
{
  const IrField *f = &p->fields.data[k->smem_field];
  int ri = k->smem_r[0], rj = k->smem_r[1], rk = k->smem_r[2];
  int tw = k->block[0] + 2 * rk, th = k->block[1] + 2 * rj, np = 2 * ri + 1;
  buf_printf(b, "  __shared__ %s sm_[%d][%d];  /* %d planes of a %dx%d tile of %s */\n", ctype(f->ty), np, tw * th, np,
             th, tw, f->name);
  buf_puts(b, "  const int tid_ = threadIdx.y * blockDim.x + threadIdx.x, nt_ = blockDim.x * blockDim.y;\n");
  buf_puts(b, "  const I kb_ = (I)(k_lo_ & ~31L) + (I)(blockIdx.x * blockDim.x), jb_ = (I)j_lo_ + (I)(blockIdx.y * blockDim.y);\n");
  buf_puts(b, "  const bool in_ = ");
  buf_printf(b, "k >= k_lo_ && k < k_hi_ && j < j_hi_;\n");
  char plane[64];
  if (ri > 0) {
    buf_printf(b, "  for (I d_ = -%d; d_ < %d; d_++)\n", ri, ri);
    print_stage(b, p, k, "i_first_ + d_", tw, th, 2);
  }
  buf_puts(b, "  for (I i = i_first_; i < i_end_; i++) {\n");
  snprintf(plane, sizeof plane, "i + %d", ri);
  print_stage(b, p, k, plane, tw, th, 2);
  buf_puts(b, "    __syncthreads();\n");
  buf_printf(b, "    const int sl0_ = (int)(((i %% %d) + %d) %% %d);\n", np, np, np);
  for (int d = -ri; d <= ri; d++) {
    int used = 0; /* the planes the loads read (a reach may be one-sided) */
    for (int j = 0; j < k->nodes.len && !used; j++)
      used = k->nodes.data[j].op == OP_LOAD && k->nodes.data[j].ref == k->smem_field && k->nodes.data[j].off[0] == d;
    if (used)
      buf_printf(b, "    const int sl_%c%d_ = (sl0_ + %d) %% %d;\n", d < 0 ? 'm' : 'p', abs(d), d + np, np);
  }
  buf_puts(b, "    if (in_) {\n");
  pr->staged = 1;
  pr->staged_field = k->smem_field;
  pr->staged_tw = tw;
  pr->staged_rj = rj;
  pr->staged_rk = rk;
  print_body(pr, 3);
  pr->staged = 0;
  buf_puts(b, "    }\n    __syncthreads();\n  }\n");
}

const char *cuda_kernel_fn(const IrProgram *p, const IrKernel *k, int v)
{
  return v ? arena_printf(p->arena, "%s_kernel_alt%d_", k->name, v) : arena_printf(p->arena, "%s_kernel_", k->name);
}

/* k with variant v's shape (passes/gpu.c, decide_variants) in place of
 * the first's. */
static IrKernel kernel_variant(const IrKernel *k, int v)
{
  IrKernel kv = *k;
  kv.vec = k->variant[v].vec;
  kv.gpu_burst = k->variant[v].burst;
  kv.block[0] = k->variant[v].bx;
  kv.block[1] = k->variant[v].by;
  kv.march = k->variant[v].march;
  kv.gpu_guard_sides = k->variant[v].guard_sides;
  return kv;
}

/* Appends text to b with every line but empty ones indented by depth more
 * levels (the launch inside --mpi's loop over parts). */
static void append_indented(Buf *b, const char *text, int depth)
{
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
    if (len > 1)
      indent(b, depth);
    buf_append(b, line, len);
    line += len;
  }
}

/* The launch of one box (i_lo_ .. k_hi_) inside the wrapper's
 * `if (box not empty) {`: launch_ enqueues one call of the kernel with a
 * given shape, then --autotune's first call, the profile's events and the
 * call. red: the reduction's record ("red_", or with --mpi the part's);
 * pdl_when: with --mpi's parts, the condition under which a launch may be
 * programmatic (NULL: always); profiled: the events bracket this launch. */
static void print_launch(Buf *b, const IrProgram *p, const IrKernel *k, const int *use_level, Printer *hpr,
                         int nthreads, const char *red, const char *pdl_when, int profiled)
{
  const char *gname = cname(p, p->grids.data[k->grid].name);
  int r = k->rank;
  const char *last = index_name(r - 1);
  buf_puts(b, "    auto launch_ = [&](int bx_, int by_, int march_, bool check_) {\n");
  /* Columns a block covers: threads x points per thread. */
  const char *vbx = k->nvariants ? "(variants_[variant_].vec * bx_)"
                    : k->vec > 1 ? arena_printf(p->arena, "(%d * bx_)", k->vec) : "bx_";
  /* Grid: x over the contiguous dimension (from a 32-aligned start), then y, then z. */
  if (k->gpu == GPU_STREAM && r == 2) {
    buf_puts(b, "      const dim3 block(bx_ * by_, 1, 1);\n");
    buf_printf(b, "      const dim3 grid((unsigned)((j_hi_ - (j_lo_ & ~31L) + %s * by_ - 1) / (%s * by_)), "
                  "(unsigned)((i_hi_ - i_lo_ + march_ - 1) / march_), 1);\n", vbx, vbx);
  } else {
    buf_puts(b, "      const dim3 block(bx_, by_, 1);\n");
    buf_printf(b, "      const dim3 grid((unsigned)((%s_hi_ - (%s_lo_ & ~31L) + %s - 1) / %s)", last, last, vbx, vbx);
    if (r == 3)
      buf_puts(b, ", (unsigned)((j_hi_ - j_lo_ + by_ - 1) / by_)");
    else if (r == 2)
      buf_puts(b, ", (unsigned)((i_hi_ - i_lo_ + by_ - 1) / by_)");
    if (r == 3 && k->gpu != GPU_NAIVE)
      buf_puts(b, ", (unsigned)((i_hi_ - i_lo_ + march_ - 1) / march_));\n");
    else if (r == 3)
      buf_puts(b, ", (unsigned)(i_hi_ - i_lo_));\n");
    else
      buf_puts(b, r == 2 ? ", 1);\n" : ", 1, 1);\n");
  }
  if (k->reds.len)
    buf_printf(b, "      double *const stn_part = stn_cuda_reduction_partials(&%s, (size_t)grid.x * grid.y * grid.z);\n",
               red);
  if (exact_reds(p, k))
    buf_printf(b, "      long long *const stn_xpart = stn_cuda_reduction_xpartials(&%s, (size_t)grid.x * grid.y * grid.z);\n",
               red);
  /* Programmatic when the gpu pass says so (and STN_PDL=0 is not set),
   * and no launch in flight wrote a field it reads through the read-only
   * path (runtime/stn_cuda.h). */
  const char *pdl = k->pdl ? "pdl_" : "false";
  if (k->pdl) {
    buf_puts(b, "      const bool pdl_ = stn_cuda_pdl");
    if (pdl_when)
      buf_printf(b, " && %s", pdl_when);
    for (int f = 0; f < p->fields.len; f++)
      if (k->pdl_ro[f])
        buf_printf(b, " && stn_cuda_settled(&%s_)", p->fields.data[f].name);
    buf_puts(b, ";\n");
  }
  for (int longi = 0; longi < 2; longi++) { /* the int-indexed instance, then the long */
    const char *ity = longi ? "long" : "int";
    buf_printf(b, longi ? "      else\n        stn_cuda_launch(%s, grid, block, 0, " :
                          "      if (%s.size < 2147483647u)\n        stn_cuda_launch(%s, grid, block, 0, ", longi ? pdl : gname, pdl);
    for (int v = 1; v < k->nvariants; v++)
      buf_printf(b, "variant_ == %d ? %s<%s> : ", v, cuda_kernel_fn(p, k, v), ity);
    buf_printf(b, "%s<%s>, ", cuda_kernel_fn(p, k, 0), ity);
    print_launch_args(b, p, k, use_level, hpr, gname);
  }
  for (int f = 0; f < p->fields.len; f++)
    if (ir_stores_field(k, f))
      buf_printf(b, "      stn_cuda_wrote(&%s_);\n", p->fields.data[f].name);
  buf_printf(b, "      if (check_)\n        stn_cuda_check_launch(\"%s\", grid, block);\n", k->name);
  buf_puts(b, "      return check_ ? cudaSuccess : cudaGetLastError();\n    };\n");
  buf_puts(b, "    if (stn_cuda_autotune && !tune_.done)\n"
              "      stn_cuda_tune(&tune_, &");
  buf_printf(b, "%s, [&](int x_, int y_, int m_) { return launch_(x_, y_, m_, false); });\n", gname);
  if (profiled)
    buf_puts(b, "    if (stn_profiling)\n      stn_cuda_prof_start(&prof_);\n");
  buf_puts(b, "    launch_(tune_.bx, tune_.by, tune_.march, true);\n");
  if (profiled) {
    buf_puts(b, "    if (stn_profiling)\n      stn_cuda_prof_stop(&prof_, ");
    print_region_points(b, k);
    buf_puts(b, ");\n");
  }
  if (k->reds.len)
    buf_printf(b, "    stn_cuda_reduction_end(&%s);\n", red);
}

/* The wrapper: the region's bounds, then the launch. Single process:
 * reductions go to main's variables through pointers (NULL: dropped),
 * finished and delivered only when main next needs them (stn_cuda_sync,
 * see stn_reduction in runtime/stn_cuda.h); the variable's type is the
 * reduction's unless main converts: pass it along.
 *
 * --mpi: the launch covers this rank's part of the region. Before a
 * kernel that reads fields at offsets, stn_cuda_mpi_begin posts the
 * exchange of the stale ones (packed on the device, on the runtime's
 * exchange stream) and splits the box into parts as stn_mpi_begin does:
 * with overlap the interior is launched while the halos travel, then
 * stn_cuda_mpi_end waits, unpacks and makes the default stream wait for
 * the unpacking, and the shell's parts are launched (plainly: a
 * programmatic launch must not run ahead of that wait). Reductions stay
 * lazy under --mpi: each part has its own partials and its own results
 * (rv_, static), and stn_cuda_mpi_red_done records that they are to be
 * combined, over the parts, then over the ranks (MPI_Allreduce), when main
 * next reads a result (stn_cuda_sync); every rank records, whether or not
 * its part of the region is empty. */
static void print_wrapper(Buf *b, const IrProgram *p, const IrKernel *k, const int *use_level, char **names,
                          int nthreads, int bound)
{
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  int dist = p->mpi, parts = p->mpi && k->xch.len, nred = k->reds.len;
  buf_printf(b, "static %svoid %s_(", kernel_called(p, k) ? "" : "__attribute__((unused)) ", k->name);
  for (int i = 0; i < k->args.len; i++)
    buf_printf(b, "%s%s %s", i ? ", " : "", ctype(k->args.data[i].ty), cname(p, k->args.data[i].name));
  for (int i = 0; i < nred; i++)
    buf_printf(b, "%svoid *%s_out_, stn_type %s_type_", i || k->args.len ? ", " : "", k->reds.data[i].name,
               k->reds.data[i].name);
  if (!k->args.len && !nred)
    buf_puts(b, "void");
  buf_puts(b, ")\n{\n");
  Printer hpr = { .b = b, .p = p, .k = k, .pool = &k->nodes, .names = names };
  emit_level(&hpr, 0, 1);
  print_region_bounds(&hpr, gname);
  /* The launch shape lives in tune_ (the defaults the gpu pass chose;
   * --autotune may replace them on the first call). */
  int r = k->rank;
  const char *strat = k->gpu == GPU_NAIVE ? "naive" : k->gpu == GPU_STREAM ? "stream" : "smem";
  if (k->vec > 1) /* the tuning cache keeps shapes per strategy and width */
    strat = arena_printf(p->arena, "%s-v%d", strat, k->vec);
  if (k->gpu_burst)
    strat = arena_printf(p->arena, "%s-b%d", strat, k->gpu_burst);
  buf_printf(b, "  static stn_tune tune_ = { \"%s\", \"%s\", \"%s\", %d, %d, %d, ", p->name, k->name, strat,
             k->gpu == GPU_STREAM && r == 2 ? nthreads : k->block[0], k->gpu == GPU_STREAM && r == 2 ? 1 : k->block[1],
             k->gpu == GPU_NAIVE ? 1 : k->march);
  if (k->untunable)
    buf_printf(b, "\"%s\"", k->untunable);
  else
    buf_puts(b, "NULL");
  buf_printf(b, ", %d, %d, 0 };\n", bound, k->gpu != GPU_NAIVE && !k->gpu_burst); /* a burst is the march */
  print_prof_decl(b, k, 1);
  if (k->nvariants) {
    /* passes/gpu.c, decide_variants; runtime/stn_cuda.h, stn_cuda_pick_variant */
    buf_printf(b, "  /* %s is compiled in %d variants: the first call runs the first if its registers leave an SM "
                  "24 warps,\n   * else the one that leaves the most (STN_VARIANT=n forces one) */\n", k->name, k->nvariants);
    buf_printf(b, "  static const stn_variant variants_[%d] = {", k->nvariants);
    for (int v = 0; v < k->nvariants; v++) {
      const char *st = k->variant[v].vec > 1 ? arena_printf(p->arena, "stream-v%d", k->variant[v].vec) : "stream";
      if (k->variant[v].burst)
        st = arena_printf(p->arena, "%s-b%d", st, k->variant[v].burst);
      buf_printf(b, "%s\n    { \"%s\", %d, %d, %d, %d, %d }", v ? "," : "", st, k->variant[v].vec, k->variant[v].bx,
                 k->variant[v].by, k->variant[v].march, !k->variant[v].burst);
    }
    buf_puts(b, "\n  };\n  static int variant_ = -1;\n  if (variant_ < 0) {\n    const void *const fns_[] = {");
    for (int v = 0; v < k->nvariants; v++)
      buf_printf(b, "%s(const void *)%s<int>", v ? ", " : " ", cuda_kernel_fn(p, k, v));
    buf_printf(b, " };\n    variant_ = stn_cuda_pick_variant(&tune_, variants_, fns_, %d);\n  }\n", k->nvariants);
  }
  if (!dist) {
    if (nred)
      cuda_print_red_decls(b, k);
    buf_puts(b, "  if (");
    for (int d = 0; d < r; d++)
      buf_printf(b, "%s%s_hi_ > %s_lo_", d ? " && " : "", index_name(d), index_name(d));
    buf_puts(b, ") {\n");
    if (nred)
      buf_printf(b, "    stn_cuda_reduction_begin(&red_, %d, ops_, %d, dst_, dst_type_);\n", nred, k->gpu_atomic);
    print_launch(b, p, k, use_level, &hpr, nthreads, "red_", NULL, 1);
    buf_puts(b, "  }");
    if (nred) {
      /* An empty region: the identities, delivered at once. */
      buf_puts(b, " else {\n    stn_cuda_sync();\n    const double identity_[] = {");
      for (int i = 0; i < nred; i++) {
        buf_puts(b, i ? ", " : "");
        print_number(b, TY_DOUBLE, k->reds.data[i].op == RED_SUM ? 0 : k->reds.data[i].op == RED_MAX ? -INFINITY : INFINITY);
      }
      buf_printf(b, "};\n    stn_cuda_deliver_now(identity_, %d, dst_, dst_type_);\n  }", nred);
    }
    buf_puts(b, "\n}\n\n");
    return;
  }

  /* --mpi */
  const char *np = parts ? "STN_MPI_MAXPARTS" : "1", *part = parts ? "part_" : "0";
  if (nred) {
    buf_printf(b, "  const int ops_[] = {");
    for (int i = 0; i < nred; i++)
      buf_printf(b, "%s%s", i ? ", " : "", red_op_of(p, &k->reds.data[i]));
    buf_printf(b, "};\n  static stn_reduction red_[%s];%s\n", np, parts ? "  /* each part's partials */" : "");
    buf_puts(b, "  void *const dst_[] = {");
    for (int i = 0; i < nred; i++)
      buf_printf(b, "%s%s_out_", i ? ", " : "", k->reds.data[i].name);
    buf_puts(b, "};\n  const stn_type dst_type_[] = {");
    for (int i = 0; i < nred; i++)
      buf_printf(b, "%s%s_type_", i ? ", " : "", k->reds.data[i].name);
    buf_puts(b, "}, part_type_[] = {");
    for (int i = 0; i < nred; i++)
      buf_printf(b, "%s%s", i ? ", " : "", red_exact(p, &k->reds.data[i]) ? "STN_XSUM_DST" : "STN_DOUBLE");
    buf_printf(b, "};\n  static double rv_[%s][%d];  /* %s results (the identities where it has no points) */\n", np,
               nred, parts ? "each part's" : "this rank's");
    if (exact_reds(p, k))
      buf_printf(b, "  static stn_xsum rx_[%s][%d];  /* the exact sums' digits, the same way */\n", np, nred);
    buf_printf(b, "  stn_cuda_mpi_red_init(rv_[0], %s, red_, %s, %d, ops_);\n", exact_reds(p, k) ? "rx_[0]" : "NULL", np,
               nred);
  }
  int depth = 0;
  if (parts) {
    buf_printf(b, "  stn_mpi_parts parts_;\n  stn_cuda_mpi_begin(&%s_x_, lo_, hi_, &parts_);\n", k->name);
    buf_puts(b, "  if (stn_profiling)\n    stn_cuda_prof_start(&prof_);\n");
    buf_printf(b, "  for (int part_ = 0; part_ < parts_.n; part_++) {\n    if (part_ == parts_.wait)\n"
                  "      stn_cuda_mpi_end(&%s_x_);\n", k->name);
    for (int d = 0; d < r; d++)
      buf_printf(b, "    const long %s_lo_ = parts_.lo[part_][%d], %s_hi_ = parts_.hi[part_][%d];\n", index_name(d), d,
                 index_name(d), d);
    depth = 1;
  }
  Buf body = { 0 };
  buf_puts(&body, "  if (");
  for (int d = 0; d < r; d++)
    buf_printf(&body, "%s%s_hi_ > %s_lo_", d ? " && " : "", index_name(d), index_name(d));
  buf_puts(&body, ") {\n");
  const char *red = arena_printf(p->arena, "red_[%s]", part);
  if (nred) {
    buf_puts(&body, "    void *const part_dst_[] = {");
    for (int i = 0; i < nred; i++)
      buf_printf(&body, "%s&%s[%s][%d]", i ? ", " : "", red_exact(p, &k->reds.data[i]) ? "rx_" : "rv_", part, i);
    buf_printf(&body, "};\n    stn_cuda_reduction_begin(&%s, %d, ops_, %d, part_dst_, part_type_);\n", red, nred,
               k->gpu_atomic);
  }
  Printer bpr = hpr;
  bpr.b = &body;
  print_launch(&body, p, k, use_level, &bpr, nthreads, red, parts ? "(parts_.wait < 0 || part_ < parts_.wait)" : NULL,
               !parts);
  buf_puts(&body, "  }\n");
  append_indented(b, body.s, depth);
  buf_free(&body);
  if (parts) {
    buf_puts(b, "  }\n  if (stn_profiling)\n    stn_cuda_prof_stop(&prof_, ");
    print_region_points(b, k);
    buf_puts(b, ");\n");
  }
  if (nred)
    buf_printf(b, "  stn_cuda_mpi_red_done(rv_[0], %s, %s, %d, ops_, dst_, dst_type_);\n", exact_reds(p, k) ? "rx_[0]" : "NULL",
               parts ? "parts_.nown" : "1", nred);
  int wrote = 0;
  for (int f = 0; f < p->fields.len; f++)
    wrote += ir_stores_field(k, f);
  if (wrote && k->deep) /* current as deep as it computed past its part */
    buf_printf(b, "  stn_mpi_wrote_deep(&%s_x_);\n", k->name);
  else if (wrote) /* their ghost points are stale (NAME_written_: print_mpi_exchange_decl) */
    buf_printf(b, "  stn_mpi_wrote(%s_written_, %d);\n", k->name, wrote);
  buf_puts(b, "}\n\n");
}

/* The device kernel fn (k's variant v). */
static void print_device_kernel(Buf *b, const IrProgram *p, const IrKernel *k, int v, const int *use_level,
                                char **dnames)
{
  const IrGrid *g = &p->grids.data[k->grid];
  const char *gname = cname(p, g->name);
  const char *fn = cuda_kernel_fn(p, k, v);
  int nthreads = k->block[0] * k->block[1] * k->block[2];
  if (k->gpu == GPU_STREAM && k->rank == 2)
    nthreads = k->block[0] * k->block[1];
  if (!v) {
    print_mpi_exchange_decl(b, p, k);
    print_kernel_title(b, p, k);
    buf_printf(b, "\n * strategy %s", k->gpu_why);
  } else {
    buf_printf(b, "/* kernel %s, variant %d of %d (the first call picks one: see %s_)", k->name, v, k->nvariants, k->name);
  }
  buf_printf(b, "\n * block %dx%d", k->gpu == GPU_STREAM && k->rank == 2 ? nthreads : k->block[0],
             k->gpu == GPU_STREAM && k->rank == 2 ? 1 : k->block[1]);
  if (k->gpu != GPU_NAIVE)
    buf_printf(b, ", marching %d planes along i", k->march);
  if (k->gpu_pipeline)
    buf_puts(b, ",\n * software pipelined: the next plane's rows load while this one computes");
  if (k->gpu_burst)
    buf_printf(b, ",\n * in a burst: each thread loads its %d planes' rows, then computes them", k->gpu_burst);
  else if (k->nvariants && k->gpu == GPU_STREAM)
    buf_puts(b, ",\n * plane by plane");
  if (k->gpu == GPU_SMEM)
    buf_printf(b, ", field %s staged in shared memory (reach %d:%d:%d)", p->fields.data[k->smem_field].name,
               k->smem_r[0], k->smem_r[1], k->smem_r[2]);
  if (k->vec > 1)
    buf_printf(b, ",\n * %d points per thread along %s (vector loads)", k->vec, index_name(k->rank - 1));
  if (k->gpu_guard_sides)
    buf_puts(b, ",\n * the columns beyond a thread's points loaded only for points inside the region");
  if (!v && k->nvariants)
    buf_printf(b, ";\n * compiled in %d variants, of which the first call picks one (%s_)", k->nvariants, k->name);
  buf_puts(b, " */\n");
  /* I: the index type, int when the grid's allocation has fewer than 2^31
   * elements (cheaper address arithmetic), long otherwise. */
  /* Launch bounds (k->max_threads, the gpu pass), or with --max-regs a
   * register cap in their place. */
  if (k->max_regs)
    buf_printf(b, "template <typename I>\n__global__ void __maxnreg__(%d) %s(const stn_grid %s", k->max_regs, fn, gname);
  else
    buf_printf(b, "template <typename I>\n__global__ void __launch_bounds__(%d) %s(const stn_grid %s", k->max_threads, fn,
               gname);
  for (int f = 0; f < p->fields.len; f++) {
    int r = ir_reads_field(k, f), w = ir_stores_field(k, f);
    /* A programmatic launch runs beside the launch before it, which may
     * write what it reads: such reads may not take the non-coherent path
     * that const __restrict__ allows (ld.global.nc, which ptxas moves
     * above griddepcontrol.wait: bench/pdl.cu's SASS, docs/benchmarks.md),
     * except of the fields no loop writes (pdl_ro; the wrapper checks). */
    int coherent = k->pdl && r && !w && !k->pdl_ro[f];
    if (r || w)
      buf_printf(b, ", %s%s *%s%s", w ? "" : "const ", ctype(p->fields.data[f].ty), coherent ? "" : "__restrict__ ",
                 cname(p, p->fields.data[f].name));
  }
  if (k->reds.len)
    buf_puts(b, ", double *__restrict__ stn_part");
  if (exact_reds(p, k))
    buf_puts(b, ", long long *__restrict__ stn_xpart");
  for (int d = 0; d < k->rank; d++)
    buf_printf(b, ", long %s_lo_, long %s_hi_", index_name(d), index_name(d));
  /* --mpi: the rank's first global index along each dimension whose
   * position the kernel uses (it prints positions as stn_i0 + i) */
  for (int d = 0; d < k->rank; d++)
    if (p->mpi && reads_index(k, d))
      buf_printf(b, ", long stn_%s0", index_name(d));
  if (k->gpu != GPU_NAIVE)
    buf_puts(b, ", long march_");
  for (int i = 0; i < k->nodes.len; i++)
    if (cuda_passed(k, use_level, i))
      buf_printf(b, ", %s %s", ctype(k->nodes.data[i].ty), dnames[i]);
  buf_puts(b, ")\n{\n");
  for (int d = 0; d < k->rank - 1; d++)
    buf_printf(b, "  const I s%d_ = (I)%s.stride[%d];\n", d, gname, d);
  print_red_locals(b, p, k, 1);
  print_point(b, k);
  if (k->pdl)
    buf_puts(b, "  stn_pdl_trigger(); /* the next launch may start once all blocks are here */\n"
                "  stn_pdl_wait();    /* for the launch before this one, before any access */\n");
  Printer pr = { .b = b, .p = p, .k = k, .pool = &k->nodes, .names = dnames, .device = 1 };
  if (k->gpu == GPU_SMEM) {
    print_smem_body(b, p, k, &pr);
  } else {
  buf_puts(b, "  if (");
  print_inside(b, k);
  buf_puts(b, ") {\n");
  if (k->gpu == GPU_STREAM) {
    if (k->gpu_burst)
      print_burst_loop(b, p, k, &pr);
    else
      print_stream_loop(b, p, k, &pr);
  } else {
    print_body(&pr, 2);
  }
  buf_puts(b, "  }\n");
  }
  cuda_print_block_reduce(b, p, k, "threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0");
  buf_puts(b, "}\n\n");
}

static void print_kernel(Buf *b, const IrProgram *p, const IrKernel *k, const void *opts)
{
  ir_count_uses((IrKernel *)k);
  int *use_level = use_levels(k);
  char **names = value_names(p, k, use_level);
  char **dnames = xrealloc(NULL, sizeof(char *) * (size_t)(k->nodes.len + 1));
  for (int i = 0; i < k->nodes.len; i++)
    dnames[i] = cuda_passed(k, use_level, i) ? (char *)cuda_passed_name(p, k, names, i) : k->nodes.data[i].level == 0 ? NULL : names[i];
  int nthreads = k->block[0] * k->block[1] * k->block[2];
  if (k->gpu == GPU_STREAM && k->rank == 2)
    nthreads = k->block[0] * k->block[1];

  /* ---- the device kernel, and its variants ---- */
  print_device_kernel(b, p, k, 0, use_level, dnames);
  for (int v = 1; v < k->nvariants; v++) {
    IrKernel kv = kernel_variant(k, v);
    print_device_kernel(b, p, &kv, v, use_level, dnames);
  }

  /* ---- the host wrapper ---- */
  print_wrapper(b, p, k, use_level, names, nthreads, k->max_threads);
  free(use_level);
  free(names);
  free(dnames);
}

static void print_tables(Buf *b, const IrProgram *p)
{
  for (int i = 0; i < p->tables.len; i++) {
    const IrTable *t = &p->tables.data[i];
    if (!table_used(p, i, TABLE_KERNELS))
      continue;
    buf_printf(b, "__constant__ %s stn_dtab_%s[%d] = {", ctype(t->ty), t->name, t->len);
    for (int j = 0; j < t->len; j++) {
      buf_puts(b, j ? ", " : " ");
      print_number(b, t->ty, t->vals[j]);
    }
    buf_puts(b, " };\n");
  }
}

static CgTarget cuda_target(void)
{
  CgTarget t = {
    .name = "cuda",
    .includes = "#include <math.h>\n#include <stdio.h>\n#include \"stn_cuda.h\"\n",
    .const_decl = "static constexpr",
    .field_alloc = "stn_cuda_field_alloc",
    .field_zero = "stn_cuda_field_zero",
    .field_boundary = "stn_cuda_field_fill_halo",
    .field_write = "stn_cuda_field_write",
    .field_write_image = "stn_cuda_field_write_image",
    .finish = "stn_cuda_finish",
    .mpi_finish = "stn_cuda_mpi_finish",
    .before_init = "stn_cuda_options(&stn_program);",
    .after_init = "stn_cuda_init(&stn_program);",
    .time_fn = "stn_cuda_time",
    .sync = "stn_cuda_sync",
    .lazy_results = 1,
    .tb_pays = 1,
    .print_tables = print_tables,
    .print_kernel = print_kernel,
    .print_tb = cg_cuda_print_tb,
    .lib_init = "stn_cuda_lib_init(&stn_lib_program);",
    .lib_finish = "stn_cuda_lib_finish(&stn_lib_program);",
    .field_free = "stn_cuda_field_free",
    .field_get = "stn_cuda_field_get",
    .field_set = "stn_cuda_field_set",
  };
  return t;
}

void cg_cuda_program(Buf *b, const IrProgram *p)
{
  CgTarget t = cuda_target();
  if (p->mpi) /* one GPU per rank, chosen before the device is first used */
    t.after_init = "stn_cuda_mpi_init(&stn_program);";
  cg_print_program(b, p, &t);
}

void cg_cuda_library(Buf *src, Buf *hdr, const IrProgram *p, const char *header_name)
{
  CgTarget t = cuda_target();
  cg_print_library(src, hdr, p, &t, header_name);
}
