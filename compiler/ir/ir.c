/* ir.c: opcode table, node helpers and the textual IR printer
 * (--emit=ir, --dump-after=PASS); docs/ir.md describes the format. */
#include "ir/ir.h"
#include <string.h>
#include <math.h>

const OpInfo op_info[OP__COUNT] = {
#define OP(name, nargs, form, text, flags) { #name, nargs, form, text, flags },
#include "ir/ops.h"
#undef OP
};

int ir_add(IrNodes *pool, IrNode n)
{
  if (!n.ty)
    ice("IR node %s without a type", op_info[n.op].name);
  n.uses = 0;
  vec_push(pool, n);
  return pool->len - 1;
}

int ir_const(IrNodes *pool, Type ty, double v)
{
  IrNode n = { .op = OP_CONST, .ty = ty, .f = v, .level = -1 };
  if (ty == TY_INT)
    n.f = trunc(v);
  else if (ty == TY_FLOAT)
    n.f = (double)(float)v;
  else if (ty == TY_BOOL)
    n.f = v != 0;
  return ir_add(pool, n);
}

int ir_tb_pair_of_cur(const IrTb *tb, int f)
{
  for (int q = 0; q < tb->npairs; q++)
    if (tb->cur[q] == f)
      return q;
  return -1;
}

const char *ir_tb_stem(const IrProgram *p, const IrTb *tb)
{
  return arena_printf(p->arena, "%s_%s", p->kernels.data[tb->kernel]->name, tb->tag ? tb->tag : "tb");
}

long ir_tb_band_first(const IrTb *tb)
{
  return tb->band_has_lo && tb->band_lo > 0 ? tb->band_lo : 0;
}

int ir_tb_pair_of_next(const IrTb *tb, int f)
{
  for (int q = 0; q < tb->npairs; q++)
    if (tb->next[q] == f)
      return q;
  return -1;
}

/* At least 0, or NaN or +inf. */
static int nonneg(const IrNodes *pool, int id)
{
  const IrNode *n = &pool->data[id];
  double c;
  switch (n->op) {
  case OP_CONST: return ir_is_const(pool, id, &c) && c >= 0;
  case OP_MUL: return n->arg[0] == n->arg[1];
  case OP_FABS: case OP_SQRT: case OP_EXP: case OP_RSQRT: return 1;
  case OP_ADD: return nonneg(pool, n->arg[0]) && nonneg(pool, n->arg[1]);
  default: return 0;
  }
}

int ir_at_least_normal(const IrNodes *pool, int id)
{
  const IrNode *n = &pool->data[id];
  double c;
  if (n->ty != TY_FLOAT && n->ty != TY_DOUBLE)
    return 0;
  if (n->op == OP_CONST)
    return ir_is_const(pool, id, &c) && c >= 1.17549435e-38; /* FLT_MIN: a float's smallest normal */
  if (n->op == OP_ADD) /* the sum of non-negative values rounds to at least the larger */
    return (ir_at_least_normal(pool, n->arg[0]) && nonneg(pool, n->arg[1])) ||
           (nonneg(pool, n->arg[0]) && ir_at_least_normal(pool, n->arg[1]));
  return 0;
}

int ir_is_const(const IrNodes *pool, int id, double *v)
{
  if (id < 0 || pool->data[id].op != OP_CONST)
    return 0;
  if (v)
    *v = pool->data[id].f;
  return 1;
}

int ir_reads_field(const IrKernel *k, int f)
{
  for (int i = 0; i < k->nodes.len; i++)
    if (k->nodes.data[i].op == OP_LOAD && k->nodes.data[i].ref == f)
      return 1;
  return 0;
}

int ir_stores_field(const IrKernel *k, int f)
{
  for (int i = 0; i < k->effects.len; i++)
    if (k->effects.data[i].kind == EFF_STORE && k->effects.data[i].ref == f)
      return 1;
  return 0;
}

void ir_count_uses(IrKernel *k)
{
  for (int i = 0; i < k->nodes.len; i++)
    k->nodes.data[i].uses = 0;
  for (int i = 0; i < k->nodes.len; i++) {
    IrNode *n = &k->nodes.data[i];
    for (int a = 0; a < op_info[n->op].nargs; a++)
      k->nodes.data[n->arg[a]].uses++;
  }
  for (int i = 0; i < k->effects.len; i++) {
    k->nodes.data[k->effects.data[i].val].uses++;
    if (k->effects.data[i].pred >= 0)
      k->nodes.data[k->effects.data[i].pred].uses++;
  }
  for (int d = 0; d < k->rank; d++) {
    k->nodes.data[k->lo[d]].uses++;
    k->nodes.data[k->hi[d]].uses++;
  }
}

const char *ir_type_suffix(Type t)
{
  switch (t) {
  case TY_BOOL: return "i1";
  case TY_INT: return "i32";
  case TY_FLOAT: return "f32";
  case TY_DOUBLE: return "f64";
  default: return "?";
  }
}

static const char *red_name(RedOp op) { return op == RED_SUM ? "+" : op == RED_MAX ? "max" : "min"; }

static void print_const(FILE *out, const IrNode *n)
{
  if (n->ty == TY_INT || n->ty == TY_BOOL)
    fprintf(out, "%lld", (long long)n->f);
  else
    fprintf(out, n->ty == TY_FLOAT ? "%.9g" : "%.17g", n->f);
}

int ir_line(const IrProgram *p, Span at)
{
  int line, col;
  src_linecol(p->src, at.lo, &line, &col);
  return line;
}

static void print_loc(FILE *out, const IrProgram *p, Span at)
{
  fprintf(out, "%s:%d", p->src->name, ir_line(p, at));
}

/* Host expressions are trees: print them infix, fully parenthesised. */
static void print_host_expr(FILE *out, const IrProgram *p, int id)
{
  const IrNode *n = &p->host.data[id];
  const OpInfo *oi = &op_info[n->op];
  switch (n->op) {
  case OP_CONST: print_const(out, n); return;
  case OP_PARAM: fprintf(out, "%s", p->params.data[n->ref].name); return;
  case OP_VAR: fprintf(out, "%s", p->vars.data[n->ref].name); return;
  case OP_INDEX: fprintf(out, "%s", (const char *[]){ "i", "j", "k" }[n->ref]); return;
  case OP_TABLE:
    fprintf(out, "%s[", p->tables.data[n->ref].name);
    print_host_expr(out, p, n->arg[0]);
    fprintf(out, "]");
    return;
  case OP_CAST:
    fprintf(out, "%s(", ir_type_suffix(n->ty));
    print_host_expr(out, p, n->arg[0]);
    fprintf(out, ")");
    return;
  case OP_SELECT:
    fprintf(out, "(");
    print_host_expr(out, p, n->arg[0]);
    fprintf(out, " ? ");
    print_host_expr(out, p, n->arg[1]);
    fprintf(out, " : ");
    print_host_expr(out, p, n->arg[2]);
    fprintf(out, ")");
    return;
  default:
    break;
  }
  if (oi->form == INFIX) {
    fprintf(out, "(");
    print_host_expr(out, p, n->arg[0]);
    fprintf(out, " %s ", oi->c_text);
    print_host_expr(out, p, n->arg[1]);
    fprintf(out, ")");
    return;
  }
  fprintf(out, "%s(", oi->form == PREFIX ? oi->c_text : oi->name);
  for (int a = 0; a < oi->nargs; a++) {
    if (a)
      fprintf(out, ", ");
    print_host_expr(out, p, n->arg[a]);
  }
  fprintf(out, ")");
}

static void print_node(FILE *out, const IrProgram *p, const IrKernel *k, int id)
{
  const IrNode *n = &k->nodes.data[id];
  const OpInfo *oi = &op_info[n->op];
  fprintf(out, "  %%%d = %s.%s", id, oi->name, ir_type_suffix(n->ty));
  switch (n->op) {
  case OP_CONST: fprintf(out, " "); print_const(out, n); break;
  case OP_PARAM: fprintf(out, " %s", p->params.data[n->ref].name); break;
  case OP_ARG: fprintf(out, " %s", k->args.data[n->ref].name); break;
  case OP_INDEX: fprintf(out, " %d", n->ref); break;
  case OP_EXTENT: fprintf(out, " %s.%d", p->grids.data[n->ref].name, n->imm); break;
  case OP_LOAD:
    fprintf(out, " %s[", p->fields.data[n->ref].label);
    for (int d = 0; d < k->rank; d++)
      fprintf(out, d ? ", %+d" : "%+d", n->off[d]);
    fprintf(out, "]");
    break;
  case OP_TABLE: fprintf(out, " %s[%%%d]", p->tables.data[n->ref].name, n->arg[0]); break;
  default:
    for (int a = 0; a < oi->nargs; a++)
      fprintf(out, "%s%%%d", a ? ", " : " ", n->arg[a]);
  }
  if (n->level >= 0)
    fprintf(out, " @%d", n->level);
  if (n->name)
    fprintf(out, "  ; %s", n->name);
  fprintf(out, "\n");
}

/* How many of an exchanged field's neighbours (IrXField.dirs, one bit a
 * direction e = sum of (offset + 1) 3^d) are faces, edges and corners:
 * the directions with one, two and three nonzero offsets. */
void ir_xfield_sides(const IrXField *x, int rank, int sides[3])
{
  sides[0] = sides[1] = sides[2] = 0;
  for (int e = 0; e < 27; e++)
    if (x->dirs >> e & 1) {
      int nz = 0;
      for (int d = 0, y = e; d < rank; d++, y /= 3)
        nz += y % 3 != 1;
      sides[nz - 1]++;
    }
}

void ir_print_kernel(FILE *out, const IrProgram *p, const IrKernel *k)
{
  const IrGrid *g = &p->grids.data[k->grid];
  fprintf(out, "kernel %s(", k->name);
  for (int i = 0; i < k->args.len; i++)
    fprintf(out, "%s%s %s", i ? ", " : "", type_name(k->args.data[i].ty), k->args.data[i].name);
  fprintf(out, ") over ");
  if (k->region == REG_WHOLE)
    fprintf(out, "%s", g->name);
  else if (k->region == REG_INTERIOR)
    fprintf(out, "interior(%s, %d)", g->name, k->width);
  else
    fprintf(out, "box(%s)", g->name);
  if (k->reds.len) {
    fprintf(out, " reduce(");
    for (int i = 0; i < k->reds.len; i++)
      fprintf(out, "%s%s: %s %s", i ? ", " : "", red_name(k->reds.data[i].op),
              type_name(k->reds.data[i].ty), k->reds.data[i].name);
    fprintf(out, ")");
  }
  fprintf(out, " {  ; ");
  print_loc(out, p, k->span);
  fprintf(out, "\n");
  for (int i = 0; i < k->nodes.len; i++)
    print_node(out, p, k, i);
  fprintf(out, "  region");
  for (int d = 0; d < k->rank; d++)
    fprintf(out, " [%%%d, %%%d)", k->lo[d], k->hi[d]);
  fprintf(out, "\n");
  if (p->mpi) { /* the mpi pass: what is exchanged before the kernel */
    for (int i = 0; i < k->xch.len; i++) {
      const IrXField *x = &k->xch.data[i];
      fprintf(out, "  exchange %s", p->fields.data[x->field].label);
      for (int d = 0; d < k->rank; d++)
        fprintf(out, " %d:%d", x->lo[d], x->hi[d]);
      int sides[3];
      ir_xfield_sides(x, k->rank, sides);
      if (k->deep)
        fprintf(out, " deep %d%s%s%s\n", k->deep, x->role & XF_NOREAD ? " unread" : "", x->role & XF_WFULL ? " written"
                : "", x->role & XF_WPART ? " written-in-part" : "");
      else
        fprintf(out, " sides 0x%x  ; %d faces, %d edges, %d corners\n", x->dirs, sides[0], sides[1], sides[2]);
    }
    double total = 0;
    int msgs = 0;
    for (int e = 0; e < 27; e++)
      if (k->xbytes[e] > 0)
        total += k->xbytes[e], msgs++;
    if (k->xch.len)
      fprintf(out, "  ; sends %.0f bytes in %d messages per exchange, %.1f us at %g GB/s (the largest part of %d ranks)\n",
              total, msgs, total / (p->link_bw * 1e3), p->link_bw, p->mpi_ranks);
    fprintf(out, "  %s  ; %s\n", k->overlap && k->xch.len ? "overlap" : "no overlap", k->overlap_why);
  }
  for (int i = 0; i < k->effects.len; i++) {
    const IrEffect *e = &k->effects.data[i];
    if (e->kind == EFF_STORE)
      fprintf(out, "  store %s, %%%d", p->fields.data[e->ref].label, e->val);
    else
      fprintf(out, "  reduce %s %s, %%%d", red_name(k->reds.data[e->ref].op), k->reds.data[e->ref].name, e->val);
    if (e->pred >= 0)
      fprintf(out, " if %%%d", e->pred);
    fprintf(out, "\n");
  }
  if (k->flops || k->bytes_read || k->bytes_written)
    fprintf(out, "  ; cost: %d flops, %d bytes read + %d bytes written per point (%d fields read, %d written)\n",
            k->flops, k->bytes_read, k->bytes_written, k->fields_read, k->fields_written);
  if (k->omp_collapse || k->simd)
    fprintf(out, "  ; cpu schedule: omp parallel collapse(%d)%s\n", k->omp_collapse, k->simd ? ", simd inner loop" : "");
  if (k->gpu != GPU_NONE) {
    fprintf(out, "  ; gpu: %s, block %dx%d", k->gpu == GPU_NAIVE ? "naive" : k->gpu == GPU_STREAM ? "stream" : "smem",
            k->block[0], k->block[1]);
    if (k->gpu != GPU_NAIVE)
      fprintf(out, ", march %d", k->march);
    if (k->gpu == GPU_SMEM)
      fprintf(out, ", staged %s", p->fields.data[k->smem_field].label);
    if (k->vec > 1)
      fprintf(out, ", %d points per thread", k->vec);
    if (k->gpu_burst)
      fprintf(out, ", burst %d", k->gpu_burst);
    if (k->gpu_pipeline)
      fprintf(out, ", pipelined");
    if (k->gpu_guard_sides)
      fprintf(out, ", side columns for lanes inside");
    if (k->max_regs)
      fprintf(out, ", at most %d registers", k->max_regs);
    if (k->pdl) {
      int n = 0;
      fprintf(out, ", programmatic launch");
      for (int f = 0; f < p->fields.len; f++)
        if (k->pdl_ro[f])
          fprintf(out, "%s%s", n++ ? " " : " (read-only: ", p->fields.data[f].label);
      fputs(n ? ")" : "", out);
    }
    fprintf(out, " (%s)\n", k->gpu_why);
  }
  fprintf(out, "}\n");
}

static void print_block(FILE *out, const IrProgram *p, const IrBlock *b, int depth);

/* A read's or an image write's scale(lo, hi). */
static void print_scale(FILE *out, const IrProgram *p, const IrStmt *s)
{
  if (s->expr < 0)
    return;
  fprintf(out, " scale(");
  print_host_expr(out, p, s->expr);
  fprintf(out, ", ");
  print_host_expr(out, p, s->expr2);
  fprintf(out, ")");
}


/* A loop's CUDA graph (passes/graph.c), after its other notes. */
static void print_graph(FILE *out, const IrStmt *s)
{
  if (s->graph)
    fprintf(out, "  ; graph: %d iterations a replay (period %d%s)", s->graph, s->graph_period,
            s->graph_guards ? "; where no if's condition holds" : "");
  else if (s->graph_why)
    fprintf(out, "  ; graph: not replayed: %s", s->graph_why);
}

static void print_stmt(FILE *out, const IrProgram *p, const IrStmt *s, int depth)
{
  fprintf(out, "%*s", depth * 2, "");
  switch (s->kind) {
  case H_ASSIGN:
    fprintf(out, "%s = ", p->vars.data[s->var].name);
    print_host_expr(out, p, s->expr);
    fprintf(out, "\n");
    return;
  case H_CALL:
    if (s->results.len) {
      for (int i = 0; i < s->results.len; i++)
        fprintf(out, "%s%s", i ? ", " : "", s->results.data[i] < 0 ? "_" : p->vars.data[s->results.data[i]].name);
      fprintf(out, " = ");
    }
    fprintf(out, "call %s(", p->kernels.data[s->kernel]->name);
    for (int i = 0; i < s->args.len; i++) {
      if (i)
        fprintf(out, ", ");
      print_host_expr(out, p, s->args.data[i]);
    }
    fprintf(out, ")\n");
    return;
  case H_FOR:
    fprintf(out, "for %s in ", p->vars.data[s->var].name);
    print_host_expr(out, p, s->expr);
    fprintf(out, " .. ");
    print_host_expr(out, p, s->expr2);
    fprintf(out, " {");
    if (s->tb)
      fprintf(out, "  ; tb: %s", s->tb->why);
    else if (s->tb_why)
      fprintf(out, "  ; tb: not temporally blocked: %s", s->tb_why);
    print_graph(out, s);
    fprintf(out, "\n");
    print_block(out, p, &s->body, depth + 1);
    fprintf(out, "%*s}\n", depth * 2, "");
    return;
  case H_WHILE:
    fprintf(out, "while ");
    print_host_expr(out, p, s->expr);
    fprintf(out, " {");
    if (s->tb_why)
      fprintf(out, "  ; tb: not temporally blocked: %s", s->tb_why);
    print_graph(out, s);
    fprintf(out, "\n");
    print_block(out, p, &s->body, depth + 1);
    fprintf(out, "%*s}\n", depth * 2, "");
    return;
  case H_IF:
    fprintf(out, "if ");
    print_host_expr(out, p, s->expr);
    fprintf(out, " {\n");
    print_block(out, p, &s->body, depth + 1);
    if (s->els.len) {
      fprintf(out, "%*s} else {\n", depth * 2, "");
      print_block(out, p, &s->els, depth + 1);
    }
    fprintf(out, "%*s}\n", depth * 2, "");
    return;
  case H_BREAK: fprintf(out, "break\n"); return;
  case H_SWAP:
    fprintf(out, "swap %s, %s\n", p->fields.data[s->field].label, p->fields.data[s->field2].label);
    return;
  case H_PRINT:
    fprintf(out, "print");
    for (int i = 0; i < s->items.len; i++) {
      fprintf(out, i ? ", " : " ");
      if (s->items.data[i].str)
        fprintf(out, "\"%s\"", s->items.data[i].str);
      else
        print_host_expr(out, p, s->items.data[i].expr);
    }
    fprintf(out, "\n");
    return;
  case H_TIMER:
    fprintf(out, "timer %s {\n", p->vars.data[s->var].name);
    print_block(out, p, &s->body, depth + 1);
    fprintf(out, "%*s}\n", depth * 2, "");
    return;
  case H_READ: {
    const char *label = p->fields.data[s->field].label;
    const char *br = s->comps.len ? strchr(label, '[') : NULL;
    fprintf(out, "read %.*s from \"%s\"", br ? (int)(br - label) : (int)strlen(label), label, s->path);
    if (s->comps.len)
      fprintf(out, " (%d components)", s->comps.len);
    if (s->expr3 >= 0) {
      fprintf(out, " threshold(");
      print_host_expr(out, p, s->expr3);
      fprintf(out, ")");
    }
    print_scale(out, p, s);
    if (s->allow_nonfinite)
      fprintf(out, " nonfinite(allow)");
    fprintf(out, "\n");
    return;
  }
  case H_WRITE:
    fprintf(out, "write %s to \"%s\"", p->fields.data[s->field].label, s->path);
    for (int a = 0; a < s->args.len; a++) {
      fputs(a ? ", " : " % (", out);
      print_host_expr(out, p, s->args.data[a]);
      fprintf(out, a + 1 == s->args.len ? ")" : "");
    }
    if (s->args.len && s->expr3 >= 0) {
      fprintf(out, " time(");
      print_host_expr(out, p, s->expr3);
      fprintf(out, ")");
    }
    print_scale(out, p, s);
    if (s->colormap)
      fprintf(out, " colormap(%s)", s->colormap);
    fprintf(out, "\n");
    return;
  }
}

static void print_block(FILE *out, const IrProgram *p, const IrBlock *b, int depth)
{
  for (int i = 0; i < b->len; i++)
    print_stmt(out, p, b->data[i], depth);
}

void ir_print_program(FILE *out, const IrProgram *p)
{
  fprintf(out, "; stencilc IR for %s\n", p->src->name);
  for (int i = 0; i < p->params.len; i++) {
    const IrParam *q = &p->params.data[i];
    fprintf(out, "param %s %s = %.17g", type_name(q->ty), q->name, q->def);
    if (q->has_lo || q->has_hi) {
      fprintf(out, " in ");
      if (q->has_lo)
        fprintf(out, "%.17g", q->lo);
      fprintf(out, "..");
      if (q->has_hi)
        fprintf(out, "%.17g", q->hi);
    }
    fprintf(out, "\n");
  }
  for (int i = 0; i < p->tables.len; i++) {
    const IrTable *t = &p->tables.data[i];
    fprintf(out, "table %s %s[%d] = {", type_name(t->ty), t->name, t->len);
    for (int j = 0; j < t->len; j++)
      fprintf(out, "%s%.9g", j ? ", " : "", t->vals[j]);
    fprintf(out, "}\n");
  }
  for (int i = 0; i < p->grids.len; i++) {
    const IrGrid *g = &p->grids.data[i];
    fprintf(out, "grid %s", g->name);
    for (int d = 0; d < g->rank; d++) {
      fprintf(out, "[");
      print_host_expr(out, p, g->dims[d]);
      fprintf(out, "]");
    }
    if (p->mpi) {
      fprintf(out, " ranks");
      for (int d = 0; d < g->rank; d++)
        fprintf(out, "%s%d", d ? "x" : " ", g->ranks[d]);
      for (int d = 0, first = 1; d < g->rank; d++)
        if (g->wrap[d]) {
          fprintf(out, "%s%d", first ? " wrap " : ",", d);
          first = 0;
        }
    }
    fprintf(out, " halo");
    for (int d = 0; d < g->rank; d++)
      fprintf(out, " %d:%d", g->halo_lo[d], g->halo_hi[d]);
    for (int d = 0, first = 1; d < g->rank; d++)
      if (g->periodic[d]) {
        fprintf(out, "%s%d", first ? " periodic " : ",", d);
        first = 0;
      }
    fprintf(out, "\n");
  }
  for (int i = 0; i < p->fields.len; i++) {
    const IrField *f = &p->fields.data[i];
    fprintf(out, "field %s %s on %s", type_name(f->ty), f->label, p->grids.data[f->grid].name);
    if (f->scratch_of >= 0)
      fprintf(out, " scratch(%s)", p->fields.data[f->scratch_of].label);
    if (f->boundary >= 0) {
      fprintf(out, " boundary(");
      print_host_expr(out, p, f->boundary);
      fprintf(out, ")");
    }
    fprintf(out, "\n");
  }
  for (int i = 0; i < p->kernels.len; i++) {
    fprintf(out, "\n");
    ir_print_kernel(out, p, p->kernels.data[i]);
  }
  fprintf(out, "\nmain {\n");
  print_block(out, p, &p->main, 1);
  fprintf(out, "}\n");
}

/* ---- values at the params' defaults ---------------------------------- */

int ir_eval_default(const IrProgram *p, const IrNodes *pool, int id, double *v)
{
  const IrNode *n = &pool->data[id];
  double a = 0, b = 0;
  if (op_info[n->op].nargs >= 1 && !ir_eval_default(p, pool, n->arg[0], &a))
    return 0;
  if (op_info[n->op].nargs >= 2 && n->op != OP_SELECT && !ir_eval_default(p, pool, n->arg[1], &b))
    return 0;
  int integer = n->ty == TY_INT;
  switch (n->op) {
  case OP_CONST: *v = n->f; return 1;
  case OP_PARAM: *v = p->params.data[n->ref].def; return 1;
  case OP_EXTENT: return ir_eval_default(p, &p->host, p->grids.data[n->ref].dims[n->imm], v);
  case OP_CAST: *v = integer ? trunc(a) : a; return 1;
  case OP_NEG: *v = -a; return 1;
  case OP_ADD: *v = a + b; return 1;
  case OP_SUB: *v = a - b; return 1;
  case OP_MUL: *v = a * b; return 1;
  case OP_DIV:
    if (b == 0)
      return 0;
    *v = integer ? trunc(a / b) : a / b;
    return 1;
  case OP_MOD:
    if (b == 0)
      return 0;
    *v = fmod(a, b);
    return 1;
  case OP_IMIN: case OP_FMIN: *v = a < b ? a : b; return 1;
  case OP_IMAX: case OP_FMAX: *v = a > b ? a : b; return 1;
  default: return 0; /* kernel arguments, main's variables: not known here */
  }
}

int ir_psum_spine(const IrKernel *k, int root, int x)
{
  const IrNode *n = &k->nodes.data[x];
  return (n->op == OP_ADD || n->op == OP_SUB) && n->level >= 1 && (x == root || !(n->name || n->uses > 1));
}
