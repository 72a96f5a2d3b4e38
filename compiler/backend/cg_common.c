/* cg_common.c: the printing shared by the C, OpenMP and CUDA backends
 * (see cg_common.h). */
#include "backend/cg_common.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *index_name(int d) { return (const char *[]){ "i", "j", "k" }[d]; }


static const char *c_reserved[] = {
  "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
  "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
  "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
  "volatile", "while", "main", "printf", "exit", "free", "malloc", "sqrt", "exp", "log", "fabs", "sin",
  "cos", "tan", "tanh", "floor", "ceil", "pow", "fmin", "fmax", "abs", "min", "max", "argc", "argv",
  "INFINITY", "NAN", "errno", "stdin", "stdout", "stderr", "time", "clock",
  /* <math.h> */
  "acos", "asin", "atan", "atan2", "cosh", "sinh", "acosh", "asinh", "atanh", "exp2", "expm1",
  "log10", "log2", "log1p", "logb", "cbrt", "hypot", "erf", "erfc", "gamma", "lgamma", "tgamma",
  "j0", "j1", "jn", "y0", "y1", "yn", "round", "trunc", "fmod", "remainder", "nan", "isnan", "isinf",
  "isfinite", "signbit", "copysign", "frexp", "ldexp", "modf", "scalbn", "fma", "fdim", "rint",
  "lrint", "nearbyint", "drem", "significand", "M_PI", "M_E", "HUGE_VAL", "FP_NAN",
  /* <stdio.h>, <string.h>, <stdlib.h> */
  "FILE", "EOF", "NULL", "puts", "putchar", "fopen", "fclose", "fprintf", "sprintf", "snprintf",
  "fputs", "fputc", "fwrite", "fread", "getc", "putc", "remove", "rename", "perror", "abort",
  "atoi", "atof", "calloc", "realloc", "qsort", "rand", "srand", "system", "getenv", "memcpy",
  "memset", "memmove", "strlen", "strcmp", "strcpy", "size_t", "ptrdiff_t", "bool", "true", "false",
  /* C++ (CUDA programs are C++) */
  "class", "new", "delete", "this", "template", "typename", "namespace", "public", "private", "protected",
  "virtual", "operator", "friend", "try", "catch", "throw", "using", "explicit", "mutable", "export",
  "constexpr", "nullptr", "decltype", "static_assert", "noexcept", "alignas", "alignof", "thread_local",
  "and", "or", "not", "xor", "bitand", "bitor", "compl", "and_eq", "or_eq", "xor_eq", "not_eq", "concept",
  "requires", "final", "override", "typeid", "std", "asm", "wchar_t", "char8_t", "char16_t", "char32_t",
  /* CUDA's built-in variables, types and math functions */
  "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "umin", "umax", "llmin", "llmax",
  "ullmin", "ullmax", "rsqrt", "rcbrt", "sincos", "sincospi", "sinpi", "cospi", "exp10", "erfinv",
  "erfcinv", "normcdf", "normcdfinv", "norm3d", "norm4d", "rnorm", "rhypot", "saturate", "mul24",
  "umul24", "mulhi", "umulhi", "brev", "clz", "ffs", "popc", "fdividef", "float2", "float3", "float4",
  "int2", "int3", "int4", "double2", "uint", "ushort", "ulong",
};

/* User names are kept, except where they would clash with C or the
 * headers the generated code includes; those become stn_u_NAME (sema
 * keeps user names out of the stn_ namespace). Generated names either
 * start with stn_ or end in '_', which user names cannot. */
const char *cname(const IrProgram *p, const char *name)
{
  for (size_t i = 0; i < sizeof c_reserved / sizeof c_reserved[0]; i++)
    if (streq(name, c_reserved[i]))
      return arena_printf(p->arena, "stn_u_%s", name);
  return name;
}

const char *ctype(Type t)
{
  switch (t) {
  case TY_BOOL: return "int";
  case TY_INT: return "int";
  case TY_FLOAT: return "float";
  case TY_DOUBLE: return "double";
  default: ice("ctype: %d", t);
  }
}

static const char *stn_type_of(Type t) { return t == TY_INT ? "STN_INT" : t == TY_FLOAT ? "STN_FLOAT" : "STN_DOUBLE"; }

void print_number(Buf *b, Type ty, double v)
{
  if (ty == TY_INT || ty == TY_BOOL) {
    buf_printf(b, "%lld", (long long)v);
    return;
  }
  if (isnan(v)) {
    buf_puts(b, "NAN");
    return;
  }
  if (isinf(v)) {
    buf_puts(b, v < 0 ? "-INFINITY" : "INFINITY");
    return;
  }
  /* The shortest decimal that reads back to the same value; whole
   * numbers in fixed notation. */
  char s[64];
  if (v == floor(v) && fabs(v) < 1e15) {
    buf_printf(b, "%.1f%s", v, ty == TY_FLOAT ? "f" : "");
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(s, sizeof s, "%.*g", prec, v);
    double back = strtod(s, NULL);
    if (ty == TY_FLOAT ? (float)back == (float)v : back == v)
      break;
  }
  if (!strpbrk(s, ".eEn"))
    strcat(s, ".0");
  buf_printf(b, "%s%s", s, ty == TY_FLOAT ? "f" : "");
}

int line_of(const IrProgram *p, Span at)
{
  return ir_line(p, at);
}


static int prec_of(Op op)
{
  switch (op) {
  case OP_ADD: case OP_SUB: return P_ADD;
  case OP_MUL: case OP_DIV: case OP_MOD: return P_MUL;
  case OP_LT: case OP_LE: case OP_GT: case OP_GE: return P_REL;
  case OP_EQ: case OP_NE: return P_EQ;
  case OP_AND: return P_AND;
  case OP_OR: return P_OR;
  case OP_SELECT: return P_COND;
  case OP_NEG: case OP_NOT: case OP_CAST: return P_UNARY;
  default: return P_POST;
  }
}

/* Periodic grids: a load at offset o along periodic dimension d reads
 * the point (x_d + o) mod n_d. w<x><m|p><|o|>_ is how far that point is
 * from the current one, in elements; print_wrap_decls computes it once
 * per point (|o| < n_d). */
static int wrapped(const Printer *pr, int d, int o)
{
  return o != 0 && pr->p->grids.data[pr->k->grid].periodic[d];
}

void print_wrap_decls(Printer *pr, int d, int depth, const char *ity)
{
  const IrKernel *k = pr->k;
  const char *ix = index_name(d), *g = cname(pr->p, pr->p->grids.data[k->grid].name);
  int last = d == k->rank - 1;
  for (int o = -64; o <= 64; o++) {
    int used = 0;
    for (int i = 0; i < k->nodes.len && !used; i++)
      used = k->nodes.data[i].op == OP_LOAD && k->nodes.data[i].off[d] == o &&
             !(pr->wrap_skip && pr->wrap_skip[k->nodes.data[i].ref]);
    if (!used || !wrapped(pr, d, o))
      continue;
    for (int t = 0; t < depth; t++)
      buf_puts(pr->b, "  ");
    buf_printf(pr->b, "const %s w%s%c%d_ = (%s)(", ity, ix, o < 0 ? 'm' : 'p', abs(o), ity);
    if (o > 0)
      buf_printf(pr->b, "%s + %d >= %s.n[%d] ? %d - %s.n[%d] : %d)", ix, o, g, d, o, g, d, o);
    else
      buf_printf(pr->b, "%s - %d < 0 ? %s.n[%d] - %d : -%d)", ix, -o, g, d, -o, -o);
    buf_printf(pr->b, last ? ";\n" : " * s%d_;\n", d);
  }
}

static void print_offset_index(Printer *pr, const IrNode *n)
{
  buf_puts(pr->b, "c_");
  for (int d = 0; d < pr->k->rank; d++) {
    int o = n->off[d];
    if (!o)
      continue;
    int last = d == pr->k->rank - 1;
    if (wrapped(pr, d, o))
      buf_printf(pr->b, " + w%s%c%d_", index_name(d), o < 0 ? 'm' : 'p', abs(o));
    else if (last)
      buf_printf(pr->b, " %c %d", o < 0 ? '-' : '+', abs(o));
    else if (abs(o) == 1)
      buf_printf(pr->b, " %c s%d_", o < 0 ? '-' : '+', d);
    else
      buf_printf(pr->b, " %c %d * s%d_", o < 0 ? '-' : '+', abs(o), d);
  }
}


static void print_operand(Printer *pr, int id, int ctx_prec, int right) { print_expr(pr, id, ctx_prec, right); }

void print_expr(Printer *pr, int id, int ctx_prec, int right)
{
  const IrNode *n = &pr->pool->data[id];
  const IrProgram *p = pr->p;
  Buf *b = pr->b;
  if (pr->known && pr->known[id]) {
    buf_puts(b, "1");
    return;
  }
  if (pr->names && pr->names[id]) {
    buf_puts(b, pr->names[id]);
    return;
  }
  const OpInfo *oi = &op_info[n->op];
  switch (n->op) {
  case OP_CONST:
    if (n->name)
      buf_puts(b, cname(p, n->name));
    else if (n->f < 0 && ctx_prec > P_ADD - 1) {
      buf_puts(b, "(");
      print_number(b, n->ty, n->f);
      buf_puts(b, ")");
    } else {
      print_number(b, n->ty, n->f);
    }
    return;
  case OP_PARAM: buf_puts(b, cname(p, p->params.data[n->ref].name)); return;
  case OP_ARG: buf_puts(b, cname(p, pr->k->args.data[n->ref].name)); return;
  case OP_INDEX:
    /* --mpi: loops run over this rank's points; stn_i0 is its first global i
     * (a name no field's record, NAME_, can take) */
    if (pr->lane && n->ref == pr->k->rank - 1)
      buf_printf(b, p->mpi ? "(stn_%s0 + %s + %d)" : "(%s%s + %d)", p->mpi ? index_name(n->ref) : "", index_name(n->ref),
                 pr->lane);
    else if (p->mpi && pr->k) /* (boundary values get global indices) */
      buf_printf(b, "(stn_%s0 + %s)", index_name(n->ref), index_name(n->ref));
    else
      buf_puts(b, index_name(n->ref));
    return;
  case OP_EXTENT:
    buf_printf(b, p->mpi ? "%s.global_n[%d]" : "%s.n[%d]", cname(p, p->grids.data[n->ref].name), n->imm);
    return;
  case OP_VAR: buf_puts(b, cname(p, p->vars.data[n->ref].name)); return;
  case OP_LOAD:
    if (pr->print_load && pr->print_load(pr, n))
      return;
    if (pr->staged && n->ref == pr->staged_field) {
      /* sm_[plane slot][row * tile width + column], the tile's origin at
       * (-rj, -rk) from the block's first point. */
      int di = n->off[0], dj = n->off[1], dk = n->off[2];
      buf_printf(b, "sm_[sl_%c%d_][(threadIdx.y + %d) * %d + threadIdx.x + %d]", di < 0 ? 'm' : 'p', abs(di),
                 pr->staged_rj + dj, pr->staged_tw, pr->staged_rk + dk);
      return;
    }
    if (pr->queued && pr->queued[n->ref]) {
      int column = 1;
      for (int d = 1; d < pr->k->rank; d++)
        column &= n->off[d] == 0;
      if (column) {
        buf_printf(b, "q_%s_%c%d_", p->fields.data[n->ref].name, n->off[0] < 0 ? 'm' : 'p', abs(n->off[0]));
        return;
      }
    }
    buf_printf(b, "%s[", cname(p, p->fields.data[n->ref].name));
    print_offset_index(pr, n);
    buf_puts(b, "]");
    return;
  case OP_TABLE:
    if (pr->device)
      buf_printf(b, "stn_dtab_%s[", p->tables.data[n->ref].name);
    else
      buf_printf(b, "%s[", cname(p, p->tables.data[n->ref].name));
    print_expr(pr, n->arg[0], P_TOP, 0);
    buf_puts(b, "]");
    return;
  default:
    break;
  }
  int prec = prec_of(n->op);
  int paren = prec < ctx_prec || (prec == ctx_prec && right && prec != P_POST);
  if (paren)
    buf_puts(b, "(");
  switch (n->op) {
  case OP_CAST:
    buf_printf(b, "(%s)", ctype(n->ty));
    print_operand(pr, n->arg[0], P_UNARY, 0);
    break;
  case OP_NEG:
  case OP_NOT:
    buf_puts(b, oi->c_text);
    print_operand(pr, n->arg[0], P_UNARY, 0);
    break;
  case OP_SELECT:
    print_operand(pr, n->arg[0], P_COND + 1, 0);
    buf_puts(b, " ? ");
    print_operand(pr, n->arg[1], P_COND, 0);
    buf_puts(b, " : ");
    print_operand(pr, n->arg[2], P_COND, 1);
    break;
  case OP_IMIN: case OP_IMAX: case OP_IABS: case OP_RSQRT: /* RSQRT: imm, a normal float's (pass_gpu) */
    buf_puts(b, n->op == OP_IMIN    ? "stn_imin("
                : n->op == OP_IMAX  ? "stn_imax("
                : n->op == OP_IABS  ? "stn_iabs("
                : n->ty != TY_FLOAT ? "stn_rsqrt("
                : n->imm            ? "stn_rsqrtf_normal("
                                    : "stn_rsqrtf(");
    for (int a = 0; a < oi->nargs; a++) {
      if (a)
        buf_puts(b, ", ");
      print_expr(pr, n->arg[a], P_TOP, 0);
    }
    buf_puts(b, ")");
    break;
  default:
    if (oi->form == INFIX) {
      print_operand(pr, n->arg[0], prec, 0);
      buf_printf(b, " %s ", oi->c_text);
      print_operand(pr, n->arg[1], prec, 1);
    } else if (oi->form == FUNC) {
      buf_printf(b, "%s%s(", oi->c_text, n->ty == TY_FLOAT ? "f" : "");
      for (int a = 0; a < oi->nargs; a++) {
        if (a)
          buf_puts(b, ", ");
        print_expr(pr, n->arg[a], P_TOP, 0);
      }
      buf_puts(b, ")");
    } else {
      ice("print_expr: cannot print %s", oi->name);
    }
  }
  if (paren)
    buf_puts(b, ")");
}

void indent(Buf *b, int depth) { buf_printf(b, "%*s", depth * 2, ""); }

void line_comment(Printer *pr, Span at, int depth)
{
  if (at.lo == 0 && at.hi == 0)
    return; /* made by a pass, not from the source */
  int line = line_of(pr->p, at);
  if (line == pr->last_line)
    return;
  pr->last_line = line;
  indent(pr->b, depth);
  buf_printf(pr->b, "/* %s:%d */\n", pr->p->src->name, line);
}


static int pool_reads_table(const IrNodes *pool, const char *live, int table)
{
  for (int i = 0; i < pool->len; i++)
    if (pool->data[i].op == OP_TABLE && pool->data[i].ref == table && (!live || live[i]))
      return 1;
  return 0;
}

/* The host pool keeps nodes that conversions replaced; only those that
 * main, the grid sizes and the boundaries reach are printed. */
static void mark_host(const IrProgram *p, char *live, int id)
{
  if (id < 0 || live[id])
    return;
  live[id] = 1;
  for (int a = 0; a < op_info[p->host.data[id].op].nargs; a++)
    mark_host(p, live, p->host.data[id].arg[a]);
}

static void mark_host_block(const IrProgram *p, char *live, const IrBlock *blk)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->kind == H_ASSIGN || s->kind == H_FOR || s->kind == H_WHILE || s->kind == H_IF || s->kind == H_WRITE ||
        s->kind == H_READ) {
      mark_host(p, live, s->expr);
      mark_host(p, live, s->kind == H_FOR || s->kind == H_WRITE || s->kind == H_READ ? s->expr2 : -1);
      mark_host(p, live, s->kind == H_WRITE || s->kind == H_READ ? s->expr3 : -1);
    }
    for (int a = 0; a < s->args.len; a++)
      mark_host(p, live, s->args.data[a]);
    for (int a = 0; a < s->items.len; a++)
      if (!s->items.data[a].str)
        mark_host(p, live, s->items.data[a].expr);
    mark_host_block(p, live, &s->body);
    mark_host_block(p, live, &s->els);
  }
}

char *host_live(const IrProgram *p)
{
  char *live = xrealloc(NULL, (size_t)p->host.len + 1);
  memset(live, 0, (size_t)p->host.len + 1);
  for (int g = 0; g < p->grids.len; g++)
    for (int d = 0; d < p->grids.data[g].rank; d++)
      mark_host(p, live, p->grids.data[g].dims[d]);
  for (int f = 0; f < p->fields.len; f++)
    mark_host(p, live, p->fields.data[f].boundary);
  mark_host_block(p, live, &p->main);
  return live;
}

static int block_calls(const IrProgram *p, const IrBlock *blk, const IrKernel *k)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if ((s->kind == H_CALL && p->kernels.data[s->kernel] == k) || (s->tb && p->kernels.data[s->tb->kernel] == k) ||
        block_calls(p, &s->body, k) || block_calls(p, &s->els, k))
      return 1;
  }
  return 0;
}

/* Whether main calls kernel k (a library has no main: its entry points
 * call every kernel). An uncalled kernel's static wrapper is printed
 * __attribute__((unused)), so that neither the C compiler nor nvcc warns
 * about a function the user declared and left aside (tests/fuzz/mutate,
 * seed 136; tests/lit/codegen/unread.test). */
int kernel_called(const IrProgram *p, const IrKernel *k)
{
  return !p->has_main || block_calls(p, &p->main, k);
}

int table_used(const IrProgram *p, int table, TableUse where)
{
  if (where != TABLE_KERNELS) {
    char *live = host_live(p);
    int used = pool_reads_table(&p->host, live, table);
    free(live);
    if (used)
      return 1;
  }
  for (int i = 0; where != TABLE_HOST && i < p->kernels.len; i++)
    if (pool_reads_table(&p->kernels.data[i]->nodes, NULL, table))
      return 1;
  return 0;
}

/* use_level[id]: the deepest loop that uses the value (effects count as
 * the innermost loop, region bounds as the outermost). */
int *use_levels(const IrKernel *k)
{
  int *use_level = xrealloc(NULL, sizeof(int) * (size_t)(k->nodes.len + 1));
  for (int i = 0; i < k->nodes.len; i++)
    use_level[i] = 0;
  for (int i = 0; i < k->nodes.len; i++)
    for (int a = 0; a < op_info[k->nodes.data[i].op].nargs; a++) {
      int arg = k->nodes.data[i].arg[a];
      if (k->nodes.data[i].level > use_level[arg])
        use_level[arg] = k->nodes.data[i].level;
    }
  for (int i = 0; i < k->effects.len; i++) {
    use_level[k->effects.data[i].val] = k->rank;
    if (k->effects.data[i].pred >= 0)
      use_level[k->effects.data[i].pred] = k->rank;
  }
  return use_level;
}

static int emitted(const IrKernel *k, const int *use_level, int id)
{
  const IrNode *n = &k->nodes.data[id];
  /* Loads read the value from before the kernel: one of a field that this
   * kernel also stores must be read before the stores are printed. */
  if (n->op == OP_LOAD)
    return ir_stores_field(k, n->ref);
  if (op_info[n->op].form == LEAF)
    return 0;
  return n->name || n->uses > 1 || n->level < use_level[id];
}

void emit_level(Printer *pr, int level, int depth)
{
  const IrKernel *k = pr->k;
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    if (!pr->names[i] || n->level != level)
      continue;
    line_comment(pr, n->span, depth);
    indent(pr->b, depth);
    buf_printf(pr->b, "const %s %s = ", ctype(n->ty), pr->names[i]);
    char *self = pr->names[i];
    pr->names[i] = NULL;
    print_expr(pr, i, P_TOP, 0);
    pr->names[i] = self;
    buf_puts(pr->b, ";\n");
  }
}


/* Names for the values that get their own line: the user's name where
 * there is one and it is unique, else t<id>_. */
char **value_names(const IrProgram *p, const IrKernel *k, const int *use_level)
{
  char **names = xrealloc(NULL, sizeof(char *) * (size_t)(k->nodes.len + 1));
  for (int i = 0; i < k->nodes.len; i++) {
    names[i] = NULL;
    if (!emitted(k, use_level, i))
      continue;
    const char *want = k->nodes.data[i].name;
    int clash = !want;
    for (int j = 0; j < i && !clash; j++)
      clash = names[j] && streq(names[j], want);
    names[i] = clash ? arena_printf(p->arena, "t%d_", i) : (char *)cname(p, want);
  }
  return names;
}

/* ---- kernel pieces both printers use ---------------------------------- */

/* The kernel comment's first line: name, source line, region, flops and
 * bytes per point (the comment is left open). */
void print_kernel_title(Buf *b, const IrProgram *p, const IrKernel *k)
{
  const IrGrid *g = &p->grids.data[k->grid];
  buf_printf(b, "/* kernel %s (%s:%d): over ", k->name, p->src->name, line_of(p, k->span));
  if (k->region == REG_WHOLE)
    buf_printf(b, "%s", g->name);
  else if (k->region == REG_INTERIOR)
    buf_printf(b, "interior(%s, %d)", g->name, k->width);
  else
    buf_printf(b, "a box of %s", g->name);
  buf_printf(b, "; %d flops, %d bytes per point", k->flops, k->bytes_read + k->bytes_written);
  if (k->distributed)
    buf_printf(b, "; %s scale distributed over %s coefficients (-fno-distribute keeps %s)",
               k->distributed > 1 ? "each sum's" : "the sum's", k->distributed > 1 ? "their" : "its",
               k->distributed > 1 ? "them" : "it");
}

/* The kernel's profile record (--profile), with the cost pass's counts. */
void print_prof_decl(Buf *b, const IrKernel *k, int depth)
{
  indent(b, depth);
  buf_printf(b, "static stn_kprof prof_ = { \"%s\", %d, %d, 0, 0, 0, NULL };\n", k->name, k->flops,
             k->bytes_read + k->bytes_written);
}

/* The number of points in the kernel's region, as a double. */
void print_region_points(Buf *b, const IrKernel *k)
{
  for (int d = 0; d < k->rank; d++)
    buf_printf(b, "%s(double)(%s_hi_ - %s_lo_)", d ? " * " : "", index_name(d), index_name(d));
}

/* Each reduction's accumulator, starting at its identity. */
void print_red_locals(Buf *b, const IrProgram *p, const IrKernel *k, int device)
{
  for (int i = 0; i < k->reds.len; i++) {
    const IrRed *r = &k->reds.data[i];
    buf_printf(b, "  %s %s = ", ctype(r->ty), cname(p, r->name));
    if (r->ty == TY_INT && r->op != RED_SUM)
      buf_puts(b, r->op == RED_MAX ? "-2147483647 - 1" : "2147483647");
    else
      print_number(b, r->ty, r->op == RED_SUM ? 0 : r->op == RED_MAX ? -INFINITY : INFINITY);
    buf_puts(b, ";\n");
    if (red_exact(p, r) && device)
      buf_printf(b, "  __shared__ long long %s_xa_[STN_XACC_COPIES * STN_XACC_W];  /* exact: the same sum for any rank count */\n"
                    "  stn_xacc_init(%s_xa_);\n", r->name, r->name);
    else if (red_exact(p, r))
      buf_printf(b, "  stn_xsum %s_x_;  /* exact: the same sum for any rank count */\n  stn_xsum_zero(&%s_x_);\n",
                 r->name, r->name);
  }
}

/* Faces, edges and corners among the ghost regions a mask names. */
static void count_sides(unsigned dirs, int rank, int *faces, int *edges, int *corners)
{
  *faces = *edges = *corners = 0;
  for (int e = 0; e < 27; e++) {
    if (!(dirs >> e & 1))
      continue;
    int nz = 0;
    for (int d = 0, x = e; d < rank; d++, x /= 3)
      nz += x % 3 != 1;
    *(nz == 1 ? faces : nz == 2 ? edges : corners) += 1;
  }
}

void print_mpi_exchange_decl(Buf *b, const IrProgram *p, const IrKernel *k)
{
  if (!p->mpi)
    return;
  int wrote = 0;
  for (int f = 0; f < p->fields.len && !k->deep; f++) /* deep: the exchange lists them */
    if (ir_stores_field(k, f))
      buf_printf(b, "%s&%s_", wrote++ ? ", " : arena_printf(p->arena, "/* kernel %s writes these: their ghost points go stale */\n"
                                                                 "static stn_field *const %s_written_[] = { ", k->name, k->name),
                 p->fields.data[f].name);
  if (wrote)
    buf_puts(b, " };\n");
  if (!k->xch.len) {
    if (wrote)
      buf_puts(b, "\n");
    return;
  }
  if (k->deep)
    buf_printf(b, "/* kernel %s, --mpi --tb across ranks: the fields it reads (reach below:above per dimension)\n"
                  " * or writes, exchanged %d deep on every side when a read lacks its ghost points; it computes\n"
                  " * past its part as deep as its inputs' current ghost points allow (stn_mpi.h) */\n",
               k->name, k->deep);
  else
    buf_printf(b, "/* kernel %s, --mpi: the fields it reads at offsets, exchanged with the neighbouring ranks\n"
                  " * before it runs (reach below:above per dimension; the sides read) */\n", k->name);
  buf_printf(b, "static stn_mpi_xfield %s_xf_[] = {\n", k->name);
  for (int i = 0; i < k->xch.len; i++) {
    const IrXField *x = &k->xch.data[i];
    int faces, edges, corners;
    count_sides(x->dirs, k->rank, &faces, &edges, &corners);
    buf_printf(b, "  { &%s_, {", p->fields.data[x->field].name);
    for (int d = 0; d < k->rank; d++)
      buf_printf(b, "%s%d", d ? ", " : " ", x->lo[d]);
    buf_puts(b, " }, {");
    for (int d = 0; d < k->rank; d++)
      buf_printf(b, "%s%d", d ? ", " : " ", x->hi[d]);
    if (k->deep) {
      const char *role = x->role & XF_WFULL ? (x->role & XF_NOREAD ? "written" : "read and written")
                         : x->role & XF_WPART ? (x->role & XF_NOREAD ? "written in part" : "read, written in part")
                                              : "read";
      buf_printf(b, " }, 0x%xu, %d, %d },  /* %s: %s */\n", x->dirs, x->role, k->deep, p->fields.data[x->field].label,
                 role);
      continue;
    }
    buf_printf(b, " }, 0x%xu },  /* %s: %d face%s, %d edge%s, %d corner%s */\n", x->dirs, p->fields.data[x->field].label,
               faces, faces == 1 ? "" : "s", edges, edges == 1 ? "" : "s", corners, corners == 1 ? "" : "s");
  }
  if (k->deep)
    buf_printf(b, "};\nstatic stn_mpi_xch %s_x_ = { \"%s\", &%s, %d, %s_xf_, %d, %d };\n\n", k->name, k->name,
               cname(p, p->grids.data[k->grid].name), k->xch.len, k->name, k->overlap, k->deep);
  else
    buf_printf(b, "};\nstatic stn_mpi_xch %s_x_ = { \"%s\", &%s, %d, %s_xf_, %d };\n\n", k->name, k->name,
               cname(p, p->grids.data[k->grid].name), k->xch.len, k->name, k->overlap);
}

/* Every write's path (a constant), checked before the first step: a path
 * that cannot be written stops the program before any work is lost. */
static void print_output_checks(Buf *b, const IrProgram *p, const IrBlock *blk)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->kind == H_WRITE && !s->args.len)
      buf_printf(b, "  stn_check_output(\"write %s\", \"%s\");  /* line %d */\n", p->fields.data[s->field].label, s->path,
                 line_of(p, s->span));
    if (s->kind == H_WRITE && s->args.len) { /* a numbered file: its folder, with the values 0 */
      buf_printf(b, "  {\n    char stn_path_[4096];\n    const double stn_v_[%d] = { 0 };\n    const int stn_i_[%d] = { 0 };\n",
                 s->args.len, s->args.len);
      buf_printf(b, "    stn_series_path(stn_path_, sizeof stn_path_, \"%s\", %d, stn_v_, stn_i_);\n", s->path, s->args.len);
      buf_printf(b, "    stn_check_output(\"write %s\", stn_path_);  /* line %d */\n  }\n", p->fields.data[s->field].label,
                 line_of(p, s->span));
    }
    print_output_checks(b, p, &s->body);
    print_output_checks(b, p, &s->els);
  }
}

/* Is path written by a write of main (a file the program reads back)? */
static int written_path(const IrBlock *blk, const char *path)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if ((s->kind == H_WRITE && streq(s->path, path)) || written_path(&s->body, path) || written_path(&s->els, path))
      return 1;
  }
  return 0;
}

/* "u" for u and for f's every component "f", "f[2]" for one of them: the
 * name --load=NAME=PATH gives. */
static const char *load_name(const IrProgram *p, const IrStmt *s)
{
  const char *label = p->fields.data[s->field].label;
  const char *br = strchr(label, '[');
  if (s->comps.len && br)
    return arena_strndup(p->arena, label, (size_t)(br - label));
  return label;
}

/* Every read's file, before the first step: it exists and fits the field
 * (unless main writes it first); then the --load fields main does not read
 * itself. */
static void print_input_checks(Buf *b, const IrProgram *p, const IrBlock *main, const IrBlock *blk, Buf *deferred)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->kind == H_READ) {
      const char *name = load_name(p, s);
      int listed = 0;
      for (const char *d = deferred->s; d && *d;) {
        const char *c = strchr(d, ',');
        size_t n = c ? (size_t)(c - d) : strlen(d);
        listed |= n == strlen(name) && strncmp(d, name, n) == 0;
        d = c ? c + 1 : d + n;
      }
      if (!listed)
        buf_printf(deferred, "%s%s", deferred->len ? "," : "", name);
      if (!written_path(main, s->path)) {
        buf_printf(b, "  {\n    const stn_read_opts stn_o_ = { %d, 0, %d, 0, 0, 0, 1 };\n", s->comps.len, s->allow_nonfinite);
        buf_printf(b, "    stn_check_input(\"read %s\", &%s_, stn_load_path(\"%s\", \"%s\"), &stn_o_);  /* line %d */\n  }\n",
                   name, p->fields.data[s->field].name, name, s->path, line_of(p, s->span));
      }
    }
    print_input_checks(b, p, main, &s->body, deferred);
    print_input_checks(b, p, main, &s->els, deferred);
  }
}

int red_exact(const IrProgram *p, const IrRed *r) { return p->mpi_exact && r->op == RED_SUM && r->ty != TY_INT; }

/* After a kernel's loops: exact sums rounded; with --mpi, its reductions over all ranks, and the
 * fields it wrote need their halos exchanged again before a read at an
 * offset. */
void print_mpi_kernel_end(Buf *b, const IrProgram *p, const IrKernel *k)
{
  for (int i = 0; i < k->reds.len; i++) {
    const IrRed *r = &k->reds.data[i];
    const char *rn = cname(p, r->name);
    int op = r->op == RED_SUM ? 0 : r->op == RED_MAX ? 1 : 2;
    if (red_exact(p, r))
      buf_printf(b, "  %s = (%s)%s(&%s_x_);\n", rn, ctype(r->ty), p->mpi ? "stn_mpi_xsum" : "stn_xsum_value", r->name);
    else if (p->mpi)
      buf_printf(b, "  %s = stn_mpi_reduce_%s(%s, %d);\n", rn, r->ty == TY_INT ? "int" : r->ty == TY_FLOAT ? "float" : "double",
                 rn, op);
  }
  int wrote = 0;
  for (int f = 0; f < p->fields.len && p->mpi; f++)
    wrote += ir_stores_field(k, f);
  if (wrote && k->deep)
    buf_printf(b, "  stn_mpi_wrote_deep(&%s_x_);\n", k->name);
  else if (wrote)
    buf_printf(b, "  stn_mpi_wrote(%s_written_, %d);\n", k->name, wrote);
}

/* i_lo_, i_hi_, ... from the region's bounds, checked at run time when the
 * region is a box (its bounds may come from params). */
void print_region_bounds(Printer *pr, const char *gname)
{
  const IrKernel *k = pr->k;
  Buf *b = pr->b;
  if (pr->p->mpi) {
    /* The region in global indices, then this rank's part of it (local
     * indices); stn_i0 is the rank's first point along i. */
    buf_puts(b, "  long lo_[] = {");
    for (int d = 0; d < k->rank; d++) {
      buf_puts(b, d ? ", " : " ");
      print_expr(pr, k->lo[d], P_TOP, 0);
    }
    buf_puts(b, " }, hi_[] = {");
    for (int d = 0; d < k->rank; d++) {
      buf_puts(b, d ? ", " : " ");
      print_expr(pr, k->hi[d], P_TOP, 0);
    }
    buf_puts(b, " };\n");
    if (k->region == REG_BOX)
      buf_printf(b, "  stn_check_box(\"%s\", &%s, lo_, hi_);\n", k->name, gname);
    if (k->deep)
      buf_printf(b, "  stn_mpi_region(&%s_x_, lo_, hi_);  /* for the points past this rank's part it computes */\n",
                 k->name);
    buf_printf(b, "  stn_mpi_local_box(&%s, lo_, hi_);\n", gname);
    for (int d = 0; d < k->rank; d++) {
      int pos = 0; /* the kernel uses the position along d */
      for (int i = 0; i < k->nodes.len; i++)
        pos |= k->nodes.data[i].op == OP_INDEX && k->nodes.data[i].ref == d;
      buf_printf(b, "  const long %s_lo_ = lo_[%d], %s_hi_ = hi_[%d];\n", index_name(d), d, index_name(d), d);
      if (pos)
        buf_printf(b, "  const long stn_%s0 = %s.global_lo[%d];  /* this rank's first %s */\n", index_name(d), gname, d,
                   index_name(d));
    }
    return;
  }
  for (int d = 0; d < k->rank; d++) {
    buf_printf(b, "  const long %s_lo_ = ", index_name(d));
    print_expr(pr, k->lo[d], P_TOP, 0);
    buf_printf(b, ", %s_hi_ = ", index_name(d));
    print_expr(pr, k->hi[d], P_TOP, 0);
    buf_puts(b, ";\n");
  }
  if (k->region != REG_BOX)
    return;
  buf_puts(b, "  const long box_lo_[] = {");
  for (int d = 0; d < k->rank; d++)
    buf_printf(b, "%s%s_lo_", d ? ", " : "", index_name(d));
  buf_puts(b, "}, box_hi_[] = {");
  for (int d = 0; d < k->rank; d++)
    buf_printf(b, "%s%s_hi_", d ? ", " : "", index_name(d));
  buf_printf(b, "};\n  stn_check_box(\"%s\", &%s, box_lo_, box_hi_);\n", k->name, gname);
}

/* What every printer puts before an effect: its source line, the
 * indentation, and "if (condition) " when the store is predicated. */
void print_effect_head(Printer *pr, const IrEffect *e, int depth)
{
  line_comment(pr, pr->k->nodes.data[e->val].span, depth);
  indent(pr->b, depth);
  if (e->pred >= 0) {
    buf_puts(pr->b, "if (");
    print_expr(pr, e->pred, P_TOP, 0);
    buf_puts(pr->b, ") ");
  }
}

/* The stores and reduction contributions of the point at c_. */
void print_effects(Printer *pr, int depth)
{
  const IrKernel *k = pr->k;
  const IrProgram *p = pr->p;
  Buf *b = pr->b;
  for (int i = 0; i < k->effects.len; i++) {
    const IrEffect *e = &k->effects.data[i];
    print_effect_head(pr, e, depth);
    if (e->kind == EFF_STORE) {
      buf_printf(b, "%s[c_] = ", cname(p, p->fields.data[e->ref].name));
      print_expr(pr, e->val, P_TOP, 0);
    } else {
      print_red_update(pr, &k->reds.data[e->ref], e->val);
    }
    buf_puts(b, ";\n");
  }
}

void print_c_wrapper_end(Buf *b, const IrProgram *p, const IrKernel *k, const char *factor)
{
  print_mpi_kernel_end(b, p, k);
  buf_printf(b, "  if (stn_profiling)\n    stn_prof_add(&prof_, stn_time() - prof_t0_, %s", factor);
  print_region_points(b, k);
  buf_puts(b, ");\n");
  if (k->reds.len == 1)
    buf_printf(b, "  return %s;\n", cname(p, k->reds.data[0].name));
  else
    for (int i = 0; i < k->reds.len; i++)
      buf_printf(b, "  *%s_out_ = %s;\n", k->reds.data[i].name, cname(p, k->reds.data[i].name));
  buf_puts(b, "}\n\n");
}

int print_red_update(Printer *pr, const IrRed *rd, int val)
{
  Buf *b = pr->b;
  const char *rn = cname(pr->p, rd->name);
  if (red_exact(pr->p, rd) && pr->device) {
    buf_printf(b, "stn_xacc_add(%s_xa_, (double)(", rd->name);
    print_expr(pr, val, P_TOP, 0);
    buf_puts(b, "))");
    return 0;
  }
  if (red_exact(pr->p, rd)) {
    buf_printf(b, "stn_xsum_add(&%s_x_, ", rd->name);
    print_expr(pr, val, P_TOP, 0);
    buf_puts(b, ")");
    return 0;
  }
  if (rd->op == RED_SUM) {
    buf_printf(b, "%s += ", rn);
    print_expr(pr, val, P_TOP, 0);
    return 0;
  }
  /* Written so that compilers vectorise it (fmax often is not). */
  buf_printf(b, "{ const %s v_ = ", ctype(rd->ty));
  print_expr(pr, val, P_TOP, 0);
  buf_printf(b, "; %s = v_ %s %s ? v_ : %s; }", rn, rd->op == RED_MAX ? ">" : "<", rn, rn);
  return 1;
}

/* ---- main -------------------------------------------------------------- */


static void print_hblock(Printer *pr, const IrBlock *blk, int depth);

static void host_expr(Printer *pr, int id) { print_expr(pr, id, P_TOP, 0); }

/* Lazy results: variables some kernel call delivers to later. */
static void mark_lazy(const IrProgram *p, const IrBlock *blk, char *lazy)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->kind == H_CALL)
      for (int r = 0; r < s->results.len; r++)
        if (s->results.data[r] >= 0)
          lazy[s->results.data[r]] = 1;
    mark_lazy(p, &s->body, lazy);
    mark_lazy(p, &s->els, lazy);
  }
}

static int reads_lazy(const IrProgram *p, const char *lazy, int id)
{
  const IrNode *n = &p->host.data[id];
  if (n->op == OP_VAR)
    return lazy[n->ref];
  for (int a = 0; a < op_info[n->op].nargs; a++)
    if (reads_lazy(p, lazy, n->arg[a]))
      return 1;
  return 0;
}

static int lazy_reads(Printer *pr, int expr)
{
  return pr->target->lazy_results && pr->lazy && expr >= 0 && reads_lazy(pr->p, pr->lazy, expr);
}

/* Must main wait for pending results before this statement? When it
 * reads one, or assigns a variable a delivery is pending for. */
static int needs_sync(Printer *pr, const IrStmt *s)
{
  if (!pr->target->lazy_results || !pr->lazy)
    return 0;
  switch (s->kind) {
  case H_ASSIGN: return lazy_reads(pr, s->expr) || pr->lazy[s->var];
  case H_CALL:
    for (int i = 0; i < s->args.len; i++)
      if (lazy_reads(pr, s->args.data[i]))
        return 1;
    return 0;
  case H_FOR: return lazy_reads(pr, s->expr) || lazy_reads(pr, s->expr2);
  case H_IF: return lazy_reads(pr, s->expr);
  case H_WRITE:
  case H_READ:
    for (int i = 0; i < s->args.len; i++)
      if (lazy_reads(pr, s->args.data[i]))
        return 1;
    return lazy_reads(pr, s->expr) || lazy_reads(pr, s->expr2) || lazy_reads(pr, s->expr3);
  case H_PRINT:
    for (int i = 0; i < s->items.len; i++)
      if (!s->items.data[i].str && lazy_reads(pr, s->items.data[i].expr))
        return 1;
    return 0;
  default: return 0;
  }
}

/* A kernel call: fname(args, results[, extra]) with the results as the
 * target takes them (pointers and types for lazy results). */
static void print_call(Printer *pr, const IrStmt *s, const char *fname, const char *extra)
{
  const IrProgram *p = pr->p;
  const IrKernel *k = p->kernels.data[s->kernel];
  Buf *b = pr->b;
  int n = 0;
  if (!pr->target->lazy_results && k->reds.len == 1)
    buf_printf(b, "%s", s->results.data[0] >= 0 ? arena_printf(p->arena, "%s = ", cname(p, p->vars.data[s->results.data[0]].name))
                                                  : "(void)");
  buf_printf(b, "%s_(", fname);
  for (int i = 0; i < s->args.len; i++, n++) {
    buf_puts(b, n ? ", " : "");
    host_expr(pr, s->args.data[i]);
  }
  if (pr->target->lazy_results) {
    for (int i = 0; i < k->reds.len; i++, n++) {
      int v = s->results.data[i];
      Type vt = v >= 0 ? p->vars.data[v].ty : k->reds.data[i].ty;
      buf_printf(b, "%s%s%s, %s", n ? ", " : "", v >= 0 ? "&" : "", v >= 0 ? cname(p, p->vars.data[v].name) : "NULL",
                 stn_type_of(vt));
    }
  } else if (k->reds.len > 1) {
    for (int i = 0; i < k->reds.len; i++, n++)
      buf_printf(b, "%s&%s", n ? ", " : "",
                 s->results.data[i] >= 0 ? cname(p, p->vars.data[s->results.data[i]].name)
                                         : (k->reds.data[i].ty == TY_INT ? "stn_unused_int" : "stn_unused"));
  }
  if (extra)
    buf_printf(b, "%s%s", n ? ", " : "", extra);
  buf_puts(b, ");\n");
}

/* Does the block call a kernel (at any depth)? */
static int calls_kernel(const IrBlock *blk)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->kind == H_CALL || calls_kernel(&s->body) || calls_kernel(&s->els))
      return 1;
  }
  return 0;
}

/* main's outermost loops that call kernels report progress (stn.h:
 * stn_progress_*): before the loop its label and count, in it each
 * iteration, after it the end. */
static int reports_progress(Printer *pr, const IrStmt *s)
{
  return pr->loops == 0 && calls_kernel(&s->body);
}

static void progress_begin(Printer *pr, const IrStmt *s, int depth)
{
  const IrProgram *p = pr->p;
  Buf *b = pr->b;
  if (s->kind == H_WHILE) {
    buf_printf(b, "stn_progress_begin(\"%s: iteration\", -1);\n", p->name);
  } else {
    const IrNode *lo = &p->host.data[s->expr];
    buf_printf(b, "stn_progress_begin(\"%s: %s\", (long)", p->name, p->vars.data[s->var].name);
    print_expr(pr, s->expr2, P_MUL, 0);
    if (lo->op != OP_CONST || lo->name || lo->f != 0) {
      buf_puts(b, " - ");
      print_expr(pr, s->expr, P_MUL, 1);
    }
    buf_puts(b, ");\n");
  }
  indent(b, depth);
}

/* Checkpoints (stn.h: stn_ckpt_*): main's outermost loops that call
 * kernels (those that report progress) save, at the start of each
 * iteration, what the rest of the run depends on: every variable of main
 * and the fields the loop writes (kernels' stores, swaps, reads, temporal
 * blocking's pairs). Fields the loop only reads were set before it, and a
 * restarted run sets them again the same way. */
static void loop_writes(const IrProgram *p, const IrBlock *blk, char *w)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    for (int f = 0; s->kind == H_CALL && f < p->fields.len; f++)
      w[f] |= ir_stores_field(p->kernels.data[s->kernel], f);
    if (s->kind == H_SWAP)
      w[s->field] = w[s->field2] = 1;
    if (s->kind == H_READ) {
      w[s->field] = 1;
      for (int q = 0; q < s->comps.len; q++)
        w[s->comps.data[q]] = 1;
    }
    if (s->kind == H_FOR && s->tb)
      for (int q = 0; q < s->tb->npairs; q++)
        w[s->tb->cur[q]] = w[s->tb->next[q]] = 1;
    loop_writes(p, &s->body, w);
    loop_writes(p, &s->els, w);
  }
}

/* The table of what loop `id` saves; extra, extra2: more variables (the
 * steps a temporally blocked loop has done and its timed passes' choice,
 * or a while loop's count). A temporally blocked loop saves its variable
 * from var (its value as the single steps count it), so that checkpoints
 * of either schedule restart the other. */
static int print_ckpt_items(Printer *pr, const IrStmt *s, int id, const char *extra, const char *extra2, const char *var,
                            int depth)
{
  const IrProgram *p = pr->p;
  Buf *b = pr->b;
  char *w = xrealloc(NULL, (size_t)p->fields.len + 1);
  memset(w, 0, (size_t)p->fields.len + 1);
  loop_writes(p, &s->body, w);
  if (s->tb)
    for (int q = 0; q < s->tb->npairs; q++)
      w[s->tb->cur[q]] = w[s->tb->next[q]] = 1;
  int n = 0;
  buf_printf(b, "stn_ckpt_item stn_ckpt%d_[] = {  /* --checkpoint, --restart: main's variables and the fields this loop writes */\n", id);
  for (int v = 0; v < p->vars.len; v++) {
    const char *c = var && v == s->var ? var : cname(p, p->vars.data[v].name);
    indent(b, depth + 1);
    buf_printf(b, "{ \"%s\", &%s, sizeof %s, 0, 0 },\n", p->vars.data[v].name, c, c);
    n++;
  }
  /* a temporally blocked loop's extras are optional: a checkpoint of
   * single steps has neither, and one of an older stencilc no choice */
  const char *const extras[] = { extra, extra2 };
  for (int e = 0; e < 2; e++)
    if (extras[e]) {
      indent(b, depth + 1);
      buf_printf(b, "{ \"%s\", &%s, sizeof %s, 0, %s },\n", extras[e], extras[e], extras[e],
                 var ? "STN_CKPT_OPTIONAL" : "0");
      n++;
    }
  /* the timers around the loop: a restarted run's timer counts the run
   * before the checkpoint too (checkpoints of older stencilcs lack them) */
  for (int t = 0; t < pr->ntimers; t++) {
    const char *v = cname(p, p->vars.data[pr->timers[t]].name);
    indent(b, depth + 1);
    buf_printf(b, "{ \"stn_timer_%s\", &stn_t0_%s, sizeof stn_t0_%s, 0, STN_CKPT_OPTIONAL | STN_CKPT_TIMER },\n",
               p->vars.data[pr->timers[t]].name, v, v);
    n++;
  }
  for (int f = 0; f < p->fields.len; f++)
    if (w[f] && p->fields.data[f].scratch_of < 0) {
      indent(b, depth + 1);
      buf_printf(b, "{ \"%s\", 0, 0, &%s_, 0 },\n", p->fields.data[f].label, p->fields.data[f].name);
      n++;
    }
  indent(b, depth);
  buf_puts(b, "};\n");
  indent(b, depth);
  free(w);
  return n;
}

/* A loop the graph pass marked (IrStmt.graph): its iteration is a lambda
 * stn_bodyN_ that the loop calls, and stn_graphN_ replays s->graph of
 * them at once (runtime/stn_cuda.h stn_cuda_graph); v and end: the loop's
 * variable and its end as C expressions. */
typedef struct LoopGraph { int id; const char *v, *end; } LoopGraph;

/* The lambda (stn_bodyN_: stn_iterN_ counts a while loop's iterations for
 * checkpoints, with ids of its own) and the graph, before the loop (at
 * depth); the printer is past the line's indentation and is left so. */
static LoopGraph print_graph_decl(Printer *pr, const IrStmt *s, int depth, const char *v, const char *end)
{
  const IrProgram *p = pr->p;
  Buf *b = pr->b;
  LoopGraph g = { ++pr->graph_loops, v, end };
  int line = line_of(p, s->span);
  buf_printf(b, "auto stn_body%d_ = [&] {  /* an iteration of the loop at line %d: recorded once into a CUDA graph "
                "(passes/graph.c) */\n", g.id, line);
  pr->loops++;
  print_hblock(pr, &s->body, depth + 1);
  pr->loops--;
  indent(b, depth);
  buf_puts(b, "};\n");
  if (s->graph_guards) { /* whether iteration v runs none of the loop's ifs (passes/graph.c: they test v alone) */
    indent(b, depth);
    buf_printf(b, "auto stn_quiet%d_ = [&](long %s) { return ", g.id, v);
    for (int i = 0, n = 0; i < s->body.len; i++)
      if (s->body.data[i]->kind == H_IF) {
        buf_puts(b, n++ ? " && !(" : "!(");
        host_expr(pr, s->body.data[i]->expr);
        buf_puts(b, ")");
      }
    buf_printf(b, "; };  /* iteration %s runs none of the loop's ifs */\n", v);
  }
  indent(b, depth);
  buf_printf(b, "static stn_cuda_graph stn_graph%d_ = { \"%s:%d\", %d, %d };  /* %d iterations a replay%s */\n",
             g.id, p->src->name, line, s->graph_period, s->graph, s->graph,
             s->graph_period > 1 ? arena_printf(p->arena, " (a multiple of %d, after which the swaps leave every field "
                                                "where it was)", s->graph_period) : "");
  indent(b, depth);
  return g;
}

/* In the loop: s->graph iterations at once where the run time replays
 * them, else one. */
static void print_graph_run(Printer *pr, const IrStmt *s, int depth, int progress, const LoopGraph *g)
{
  Buf *b = pr->b;
  indent(b, depth);
  if (s->graph_guards)
    buf_printf(b, "if (stn_cuda_graph_run(&stn_graph%d_, %s - %s, stn_body%d_, stn_quiet%d_, %s)) {  /* %d iterations as one "
                  "CUDA graph, where no if of the loop runs */\n", g->id, g->end, g->v, g->id, g->id, g->v, s->graph);
  else
    buf_printf(b, "if (stn_cuda_graph_run(&stn_graph%d_, %s - %s, stn_body%d_)) {  /* %d iterations as one CUDA graph */\n",
               g->id, g->end, g->v, g->id, s->graph);
  indent(b, depth + 1);
  buf_printf(b, "%s += %d;\n", g->v, s->graph - 1);
  if (progress) {
    indent(b, depth + 1);
    buf_printf(b, "stn_progress_add(%d);\n", s->graph);
  }
  indent(b, depth + 1);
  buf_puts(b, "continue;\n");
  indent(b, depth);
  buf_puts(b, "}\n");
}

/* stn_tb_var = a + stn_tb_at: a checkpoint's loop variable */
static void print_tb_var(Printer *pr, const IrStmt *s)
{
  buf_puts(pr->b, "stn_tb_var = ");
  print_expr(pr, s->expr, P_ADD, 1);
  buf_puts(pr->b, " + stn_tb_at;\n");
}

/* A temporally blocked loop (passes/tblock.c): the (b - a) % T single
 * steps first, then passes of T fused steps, the last of which gives the
 * loop's reductions. On CUDA every step is single where fused passes
 * would not pay (NAME_tb_pays_, cg_cuda_tb.c). */
static void print_tb_loop(Printer *pr, const IrStmt *s, int depth)
{
  const IrProgram *p = pr->p;
  const IrTb *tb = s->tb;
  Buf *b = pr->b;
  const char *v = cname(p, p->vars.data[s->var].name);
  buf_printf(b, "{ /* temporal blocking: %s */\n", tb->why);
  indent(b, depth + 1);
  buf_puts(b, "const int stn_tb_steps = ");
  print_expr(pr, s->expr2, P_ADD, 1);
  buf_puts(b, " - ");
  print_expr(pr, s->expr, P_ADD, 1);
  buf_puts(b, ";\n");
  const char *kname = p->kernels.data[tb->kernel]->name;
  if (pr->target->tb_pays) {
    indent(b, depth + 1);
    buf_printf(b, "const bool stn_tb_pay = %s_tb_pays_();  /* else single steps: the fields fit in L2, or too few blocks */\n",
               kname);
  }
  int id = pr->progress ? ++pr->ckpt_loops : 0, nitems = 0;
  /* --tb=auto (IrTb.trial): each pass asks the run time whether it runs
   * as T single steps (timed against fused passes, or faster than them;
   * runtime/stn_cuda.h stn_cuda_tb_trial). A checkpoint saves the choice,
   * and a restart keeps it, so that the rest of the run follows the same
   * schedule as the run it resumes (the two can differ in the last bits). */
  int trial = pr->target->tb_pays && ir_tb_timed(tb);
  if (trial) {
    indent(b, depth + 1);
    buf_printf(b, "static stn_tb_trial stn_tb_trial_ = { \"%s\", %d, %d, %d, STN_TB_UNDECIDED, {} };  /* T; single steps, "
                  "half passes timed */\n", kname, tb->steps, tb->trial_single, tb->half != NULL);
    if (id) {
      indent(b, depth + 1);
      buf_puts(b, "int stn_tb_choice = STN_TB_UNDECIDED;  /* the timed passes' choice, in checkpoints */\n");
    }
  }
  indent(b, depth + 1);
  if (!id) {
    buf_puts(b, "int stn_tb_at = 0;  /* steps done */\n");
  } else {
    /* Checkpoints save the loop's variable as the single steps count it
     * (stn_tb_var, a + steps done) besides the steps done: a checkpoint
     * of single steps (another target, --tb=1) has no stn_tb_at, and its
     * steps come from the variable. */
    buf_puts(b, "int stn_tb_at = -1;  /* steps done (--restart resumes later; -1: from stn_tb_var) */\n");
    indent(b, depth + 1);
    buf_printf(b, "%s stn_tb_var = ", ctype(p->vars.data[s->var].ty));
    print_expr(pr, s->expr, P_ADD, 1);
    buf_printf(b, ";  /* %s as single steps count it, in checkpoints */\n", p->vars.data[s->var].name);
    indent(b, depth + 1);
    nitems = print_ckpt_items(pr, s, id, "stn_tb_at", trial ? "stn_tb_choice" : NULL, "stn_tb_var", depth + 1);
    buf_printf(b, "if (stn_ckpt_on)\n");
    indent(b, depth + 2);
    buf_printf(b, "stn_ckpt_point(%d, 0, stn_ckpt%d_, %d);\n", id, id, nitems);
    indent(b, depth + 1);
    buf_puts(b, "if (stn_tb_at < 0)\n");
    indent(b, depth + 2);
    buf_puts(b, "stn_tb_at = (int)(stn_tb_var - ");
    print_expr(pr, s->expr, P_MUL, 1);
    buf_puts(b, ");  /* none, or a checkpoint of single steps */\n");
    if (trial) {
      indent(b, depth + 1);
      buf_puts(b, "stn_tb_trial_resume(&stn_tb_trial_, stn_tb_choice);  /* a restart keeps the checkpoint's choice */\n");
    }
  }
  /* passes start after the single steps, on a pass boundary: a checkpoint
   * written with another schedule resumes in single steps */
  /* on: whether passes run; the single steps' end, the passes' count, the
   * first pass (a restart's) and the steps done before pass v. T = 1
   * (one-step passes, tblock.c tb_strip_single): no remainder, and every
   * step starts a pass. */
  int T = tb->steps;
  const char *pay = pr->target->tb_pays ? "stn_tb_pay" : "1", *on, *singles, *passes, *first, *at;
  if (T == 1) {
    on = arena_printf(p->arena, "%s;  /* one step a pass */", pay);
    singles = "(stn_tb_on ? 0 : stn_tb_steps)";
    passes = "(stn_tb_on ? stn_tb_steps : 0)";
    first = "stn_tb_on ? stn_tb_at : 0";
    at = v;
  } else {
    on = arena_printf(p->arena, "%s(stn_tb_at <= stn_tb_steps %% %d || (stn_tb_at - stn_tb_steps %% %d) %% %d == 0);",
                      pr->target->tb_pays ? "stn_tb_pay && " : "", T, T, T);
    singles = arena_printf(p->arena, "(stn_tb_on ? stn_tb_steps %% %d : stn_tb_steps)", T);
    passes = arena_printf(p->arena, "(stn_tb_on ? stn_tb_steps / %d : 0)", T);
    first = arena_printf(p->arena, "stn_tb_on && stn_tb_at > stn_tb_steps %% %d ? (stn_tb_at - stn_tb_steps %% %d) / %d : 0",
                         T, T, T);
    at = arena_printf(p->arena, "stn_tb_steps %% %d + %d * %s", T, T, v);
  }
  indent(b, depth + 1);
  buf_printf(b, "const int stn_tb_on = %s\n", on);
  indent(b, depth + 1);
  LoopGraph g = { 0 }; /* the single steps: a CUDA graph's where fused passes do not pay */
  if (s->graph && pr->graphs)
    g = print_graph_decl(pr, s, depth + 1, v, singles);
  buf_printf(b, "for (%s = stn_tb_at; %s < %s; %s++) {\n", v, v, singles, v);
  if (id) {
    indent(b, depth + 2);
    buf_printf(b, "if (stn_ckpt_on) {\n");
    indent(b, depth + 3);
    buf_printf(b, "stn_tb_at = %s;\n", v);
    indent(b, depth + 3);
    print_tb_var(pr, s);
    indent(b, depth + 3);
    buf_printf(b, "stn_ckpt_point(%d, %s, stn_ckpt%d_, %d);\n", id, v, id, nitems);
    indent(b, depth + 2);
    buf_puts(b, "}\n");
  }
  if (g.id)
    print_graph_run(pr, s, depth + 2, pr->progress, &g);
  if (pr->progress) {
    indent(b, depth + 2);
    buf_puts(b, "stn_progress_add(1);\n");
  }
  if (g.id) {
    indent(b, depth + 2);
    buf_printf(b, "stn_body%d_();\n", g.id);
  } else {
    print_hblock(pr, &s->body, depth + 2);
  }
  indent(b, depth + 1);
  buf_puts(b, "}\n");
  /* Step s + T - 1 is written into the next fields only when something
   * reads them later: main after the loop, or --save. */
  Buf prev = { 0 };
  if (tb->prev_live) {
    buf_puts(&prev, "1");
  } else {
    for (int q = 0; q < tb->npairs; q++)
      buf_printf(&prev, "%sstn_save_requested(\"%s\")", q ? " || " : "", p->fields.data[tb->next[q]].label);
  }
  indent(b, depth + 1);
  buf_printf(b, "const int stn_tb_prev = %s;\n", prev.s);
  buf_free(&prev);
  if (trial) {
    indent(b, depth + 1);
    buf_printf(b, "const int stn_tb_first = %s;\n", first);
    first = "stn_tb_first";
  }
  indent(b, depth + 1);
  buf_printf(b, "for (%s = %s; %s < %s; %s++)%s\n", v, first, v, passes, v, pr->progress || trial ? " {" : "");
  if (id) {
    indent(b, depth + 2);
    buf_printf(b, "if (stn_ckpt_on) {\n");
    indent(b, depth + 3);
    buf_printf(b, "stn_tb_at = %s;\n", at);
    indent(b, depth + 3);
    print_tb_var(pr, s);
    if (trial) {
      indent(b, depth + 3);
      buf_puts(b, "stn_tb_choice = stn_tb_trial_.state;\n");
    }
    indent(b, depth + 3);
    buf_printf(b, "stn_ckpt_point(%d, stn_tb_at, stn_ckpt%d_, %d);\n", id, id, nitems);
    indent(b, depth + 2);
    buf_puts(b, "}\n");
  }
  if (trial) {
    indent(b, depth + 2);
    buf_printf(b, "const int stn_tb_how = stn_cuda_tb_trial_how(&stn_tb_trial_, %s - stn_tb_first, %s - stn_tb_first);"
                  "  /* timed, or the fastest */\n", v, passes);
    if (tb->trial_single) {
      indent(b, depth + 2);
      buf_printf(b, "if (stn_tb_how == STN_TB_SINGLE) {  /* %d single steps */\n", T);
      indent(b, depth + 3);
      buf_printf(b, "for (int stn_tb_s = 0; stn_tb_s < %d; stn_tb_s++) {\n", T);
      print_hblock(pr, &s->body, depth + 4);
      indent(b, depth + 3);
      buf_puts(b, "}\n");
      indent(b, depth + 2);
      buf_puts(b, "} else ");
    } else {
      indent(b, depth + 2);
    }
    if (tb->half) {
      buf_printf(b, "if (stn_tb_how == STN_TB_HALF) {  /* two fused passes of %d steps */\n", tb->half->steps);
      indent(b, depth + 3);
      /* step T / 2 - 1 into next only where the second pass reads it (a
       * predicated store's step t - 2: IrTb.prev_live) */
      print_call(pr, s->body.data[0], ir_tb_stem(p, tb->half), tb->prev_live ? "stn_tb_prev" : "0");
      indent(b, depth + 3);
      print_call(pr, s->body.data[0], ir_tb_stem(p, tb->half), "stn_tb_prev");
      indent(b, depth + 2);
      buf_puts(b, "} else ");
    }
    buf_printf(b, "{  /* a fused pass of %d steps */\n", T);
    indent(b, depth + 3);
    print_call(pr, s->body.data[0], ir_tb_stem(p, tb), "stn_tb_prev");
    indent(b, depth + 2);
    buf_puts(b, "}\n");
    indent(b, depth + 2);
    buf_printf(b, "stn_cuda_tb_trial_mark(&stn_tb_trial_, %s - stn_tb_first);\n", v);
  } else {
    indent(b, depth + 2);
    print_call(pr, s->body.data[0], ir_tb_stem(p, tb), "stn_tb_prev");
  }
  if (pr->progress) {
    indent(b, depth + 2);
    buf_printf(b, "stn_progress_add(%d);\n", tb->steps);
  }
  if (pr->progress || trial) {
    indent(b, depth + 1);
    buf_puts(b, "}\n");
  }
  indent(b, depth);
  buf_puts(b, "}\n");
}

/* A loop's body, one loop deeper; the first statement counts the
 * iteration when the loop reports progress (and may take a checkpoint:
 * ckpt, the loop's id, with nitems items and the step `step`). */
static void print_loop_body(Printer *pr, const IrStmt *s, int depth, int progress, int ckpt, int nitems, const char *step,
                            const LoopGraph *g)
{
  int saved = pr->progress;
  if (ckpt) {
    indent(pr->b, depth);
    buf_printf(pr->b, "if (stn_ckpt_on)\n");
    indent(pr->b, depth + 1);
    buf_printf(pr->b, "stn_ckpt_point(%d, %s, stn_ckpt%d_, %d);\n", ckpt, step, ckpt, nitems);
  }
  if (g && g->id)
    print_graph_run(pr, s, depth, progress, g);
  if (progress) {
    indent(pr->b, depth);
    buf_puts(pr->b, "stn_progress_add(1);\n");
    pr->progress = 1;
  }
  if (g && g->id) {
    indent(pr->b, depth);
    buf_printf(pr->b, "stn_body%d_();\n", g->id);
  } else {
    pr->loops++;
    print_hblock(pr, &s->body, depth);
    pr->loops--;
  }
  pr->progress = saved;
}

static void progress_end(Printer *pr, int depth)
{
  indent(pr->b, depth);
  buf_puts(pr->b, "stn_progress_end();\n");
}

/* A write's or read's scale(lo, hi) (IrStmt.expr, expr2) as two arguments,
 * or `absent` without one. */
static void print_scale_args(Printer *pr, const IrStmt *s, const char *absent)
{
  if (s->expr < 0) {
    buf_puts(pr->b, absent);
    return;
  }
  host_expr(pr, s->expr);
  buf_puts(pr->b, ", ");
  host_expr(pr, s->expr2);
}

/* A write's call: the field to `path` (a C expression), an image with
 * its scale (NAN: from the data) and colours. */
static void print_write_call(Printer *pr, const IrStmt *s, const char *path)
{
  const IrProgram *p = pr->p;
  Buf *b = pr->b;
  if (s->expr < 0 && !s->colormap) {
    buf_printf(b, "%s(&%s_, %s);\n", pr->target->field_write, p->fields.data[s->field].name, path);
    return;
  }
  buf_printf(b, "%s(&%s_, %s, ", pr->target->field_write_image, p->fields.data[s->field].name, path);
  print_scale_args(pr, s, "NAN, NAN");
  buf_printf(b, ", \"%s\");\n", s->colormap ? s->colormap : "viridis");
}

static void print_hstmt(Printer *pr, const IrStmt *s, int depth)
{
  const IrProgram *p = pr->p;
  Buf *b = pr->b;
  line_comment(pr, s->span, depth);
  if (needs_sync(pr, s)) {
    indent(b, depth);
    buf_printf(b, "%s();\n", pr->target->sync);
  }
  indent(b, depth);
  switch (s->kind) {
  case H_ASSIGN:
    buf_printf(b, "%s = ", cname(p, p->vars.data[s->var].name));
    host_expr(pr, s->expr);
    buf_puts(b, ";\n");
    return;
  case H_CALL:
    print_call(pr, s, p->kernels.data[s->kernel]->name, NULL);
    return;
  case H_FOR: {
    int progress = reports_progress(pr, s);
    if (progress)
      progress_begin(pr, s, depth);
    if (s->tb) {
      pr->progress = progress;
      print_tb_loop(pr, s, depth);
      pr->progress = 0;
      if (progress)
        progress_end(pr, depth);
      return;
    }
    const char *v = cname(p, p->vars.data[s->var].name);
    const IrNode *hi = &p->host.data[s->expr2];
    int simple = hi->op == OP_CONST || hi->op == OP_PARAM;
    LoopGraph g = { 0 };
    if (s->graph && pr->graphs) {
      const char *end = arena_printf(p->arena, "stn_end_%s", v);
      if (simple) {
        Buf e = { 0 };
        Printer ep = *pr;
        ep.b = &e;
        host_expr(&ep, s->expr2);
        end = arena_strdup(p->arena, e.s);
        buf_free(&e);
      }
      g = print_graph_decl(pr, s, depth, v, end);
    }
    int id = progress ? ++pr->ckpt_loops : 0, nitems = 0;
    const char *step = NULL;
    if (id) {
      nitems = print_ckpt_items(pr, s, id, NULL, NULL, NULL, depth);
      Buf st = { 0 };
      Printer tp = *pr;
      tp.b = &st;
      buf_printf(&st, "(long)%s", v);
      const IrNode *lo = &p->host.data[s->expr];
      if (lo->op != OP_CONST || lo->name || lo->f != 0) {
        buf_puts(&st, " - ");
        print_expr(&tp, s->expr, P_MUL, 1);
      }
      step = arena_strdup(p->arena, st.s);
      buf_free(&st);
    }
    if (!simple) {
      buf_printf(b, "for (int stn_end_%s = ", v);
      host_expr(pr, s->expr2);
      buf_printf(b, ", stn_once_%s = 1; stn_once_%s; stn_once_%s = 0)\n", v, v, v);
      indent(b, depth);
    }
    buf_printf(b, "for (%s = ", v);
    host_expr(pr, s->expr);
    buf_printf(b, "; %s < ", v);
    if (simple)
      host_expr(pr, s->expr2);
    else
      buf_printf(b, "stn_end_%s", v);
    buf_printf(b, "; %s++) {\n", v);
    print_loop_body(pr, s, depth + 1, progress, id, nitems, step, &g);
    indent(b, depth);
    buf_puts(b, "}\n");
    if (progress)
      progress_end(pr, depth);
    return;
  }
  case H_WHILE: {
    int progress = reports_progress(pr, s);
    if (progress)
      progress_begin(pr, s, depth);
    int id = progress ? ++pr->ckpt_loops : 0, nitems = 0;
    const char *step = NULL;
    if (id) {
      step = arena_printf(p->arena, "stn_iter%d_++", id);
      buf_printf(b, "int stn_iter%d_ = 0;  /* iterations done */\n", id);
      indent(b, depth);
      nitems = print_ckpt_items(pr, s, id, arena_printf(p->arena, "stn_iter%d_", id), NULL, NULL, depth);
    }
    if (lazy_reads(pr, s->expr)) {
      buf_printf(b, "while ((%s(), ", pr->target->sync);
      host_expr(pr, s->expr);
      buf_puts(b, ")) {\n");
    } else {
      buf_puts(b, "while (");
      host_expr(pr, s->expr);
      buf_puts(b, ") {\n");
    }
    print_loop_body(pr, s, depth + 1, progress, id, nitems, step, NULL);
    indent(b, depth);
    buf_puts(b, "}\n");
    if (progress)
      progress_end(pr, depth);
    return;
  }
  case H_IF:
    buf_puts(b, "if (");
    host_expr(pr, s->expr);
    buf_puts(b, ") {\n");
    print_hblock(pr, &s->body, depth + 1);
    if (s->els.len) {
      indent(b, depth);
      buf_puts(b, "} else {\n");
      print_hblock(pr, &s->els, depth + 1);
    }
    indent(b, depth);
    buf_puts(b, "}\n");
    return;
  case H_BREAK:
    buf_puts(b, "break;\n");
    return;
  case H_SWAP:
    buf_printf(b, "stn_field_swap(&%s_, &%s_);\n", p->fields.data[s->field].name, p->fields.data[s->field2].name);
    return;
  case H_PRINT: {
    if (pr->progress) { /* off the terminal's line first */
      buf_puts(b, "stn_progress_clear();\n");
      indent(b, depth);
    }
    if (p->mpi) /* rank 0 speaks for all */
      buf_puts(b, "if (stn_dist.rank == 0) ");
    buf_puts(b, "printf(\"");
    for (int i = 0; i < s->items.len; i++) {
      const IrPrintItem *it = &s->items.data[i];
      if (i)
        buf_puts(b, " ");
      if (it->str)
        buf_puts(b, "%s");
      else
        buf_puts(b, p->host.data[it->expr].ty == TY_FLOAT || p->host.data[it->expr].ty == TY_DOUBLE ? "%.12g" : "%d");
    }
    buf_puts(b, "\\n\"");
    for (int i = 0; i < s->items.len; i++) {
      const IrPrintItem *it = &s->items.data[i];
      buf_puts(b, ", ");
      if (it->str)
        buf_printf(b, "\"%s\"", it->str);
      else if (p->host.data[it->expr].ty == TY_FLOAT) {
        buf_puts(b, "(double)");
        print_expr(pr, it->expr, P_UNARY, 0);
      } else
        host_expr(pr, it->expr);
    }
    buf_puts(b, ");\n");
    /* a number that is not one (nan, inf) gets a warning on stderr */
    for (int i = 0; i < s->items.len; i++) {
      const IrPrintItem *it = &s->items.data[i];
      if (it->str || (p->host.data[it->expr].ty != TY_FLOAT && p->host.data[it->expr].ty != TY_DOUBLE))
        continue;
      const char *label = i > 0 && s->items.data[i - 1].str ? s->items.data[i - 1].str : "a value";
      indent(b, depth);
      buf_puts(b, "stn_print_check((double)");
      print_expr(pr, it->expr, P_UNARY, 0);
      buf_printf(b, ", \"%s\", %d);\n", label, line_of(p, s->span));
    }
    return;
  }
  case H_TIMER: {
    /* the start: checkpoints inside save the time spent since, and a
     * restart moves it back (print_ckpt_items, STN_CKPT_TIMER) */
    const char *v = cname(p, p->vars.data[s->var].name);
    buf_puts(b, "{\n");
    indent(b, depth + 1);
    buf_printf(b, "double stn_t0_%s = %s();\n", v, pr->target->time_fn);
    int pushed = pr->ntimers < (int)(sizeof pr->timers / sizeof pr->timers[0]);
    if (pushed)
      pr->timers[pr->ntimers++] = s->var;
    print_hblock(pr, &s->body, depth + 1);
    pr->ntimers -= pushed;
    indent(b, depth + 1);
    buf_printf(b, "%s = %s() - stn_t0_%s;\n", v, pr->target->time_fn, v);
    indent(b, depth);
    buf_puts(b, "}\n");
    return;
  }
  case H_READ: {
    /* read FIELD from "PATH" (--load=FIELD=PATH reads another file) */
    const char *name = load_name(p, s);
    buf_puts(b, "{\n");
    indent(b, depth + 1);
    buf_printf(b, "const char *stn_path_ = stn_load_path(\"%s\", \"%s\");\n", name, s->path);
    int nf = s->comps.len ? s->comps.len : 1;
    for (int q = 0; q < nf; q++) {
      int f = s->comps.len ? s->comps.data[q] : s->field;
      indent(b, depth + 1);
      buf_printf(b, "const stn_read_opts stn_o%d_ = { %d, %d, %d, %d, ", q, s->comps.len, q, s->allow_nonfinite,
                 s->expr3 >= 0);
      if (s->expr3 >= 0)
        host_expr(pr, s->expr3);
      else
        buf_puts(b, "0");
      buf_puts(b, ", ");
      print_scale_args(pr, s, "0, 1");
      buf_puts(b, " };\n");
      indent(b, depth + 1);
      buf_printf(b, "stn_field_read(&%s_, stn_path_, &stn_o%d_);\n", p->fields.data[f].name, q);
    }
    indent(b, depth);
    buf_puts(b, "}\n");
    return;
  }
  case H_WRITE:
    if (s->args.len) {
      /* a numbered file, and the series file beside it */
      buf_puts(b, "{\n");
      indent(b, depth + 1);
      buf_printf(b, "const double stn_v_[] = { ");
      for (int a = 0; a < s->args.len; a++) {
        buf_puts(b, a ? ", " : "");
        buf_puts(b, "(double)");
        print_expr(pr, s->args.data[a], P_UNARY, 0);
      }
      buf_puts(b, " };\n");
      indent(b, depth + 1);
      buf_printf(b, "const int stn_i_[] = { ");
      for (int a = 0; a < s->args.len; a++)
        buf_printf(b, "%s%d", a ? ", " : "", p->host.data[s->args.data[a]].ty == TY_INT);
      buf_puts(b, " };\n");
      indent(b, depth + 1);
      buf_puts(b, "char stn_path_[4096];\n");
      indent(b, depth + 1);
      buf_printf(b, "stn_series_path(stn_path_, sizeof stn_path_, \"%s\", %d, stn_v_, stn_i_);\n", s->path, s->args.len);
      indent(b, depth + 1);
      buf_puts(b, "const int stn_errors_ = stn_write_errors();\n");
      indent(b, depth + 1);
      print_write_call(pr, s, "stn_path_");
      indent(b, depth + 1);
      buf_printf(b, "if (stn_write_errors() == stn_errors_)\n");
      indent(b, depth + 2);
      buf_printf(b, "stn_series_add(\"%s\", stn_path_, ", s->path);
      if (s->expr3 >= 0)
        host_expr(pr, s->expr3);
      else
        buf_puts(b, "stn_v_[0]");
      buf_puts(b, ");\n");
      indent(b, depth);
      buf_puts(b, "}\n");
      return;
    }
    print_write_call(pr, s, arena_printf(p->arena, "\"%s\"", s->path));
    return;
  }
}

static void print_hblock(Printer *pr, const IrBlock *blk, int depth)
{
  for (int i = 0; i < blk->len; i++)
    print_hstmt(pr, blk->data[i], depth);
}

/* Does main drop a result of a kernel with several reductions? Those need
 * a variable to receive it. */
static void dropped_results(const IrProgram *p, const IrBlock *blk, int *dbl, int *integer)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->kind == H_CALL && p->kernels.data[s->kernel]->reds.len > 1)
      for (int r = 0; r < s->results.len; r++)
        if (s->results.data[r] < 0) {
          if (p->kernels.data[s->kernel]->reds.data[r].ty == TY_INT)
            *integer = 1;
          else
            *dbl = 1;
        }
    dropped_results(p, &s->body, dbl, integer);
    dropped_results(p, &s->els, dbl, integer);
  }
}

/* boundary(value): a function of the ghost point's indices, which the
 * runtime calls for every point of the halo when the field is allocated. */
static void print_boundaries(Printer *pr, const IrProgram *p)
{
  Buf *b = pr->b;
  for (int i = 0; i < p->fields.len; i++) {
    const IrField *f = &p->fields.data[i];
    if (f->boundary < 0)
      continue;
    buf_printf(b, "/* %s:%d: the value of %s at each ghost point (i, j, k) */\n", p->src->name, line_of(p, f->span),
               f->label);
    buf_printf(b, "static double stn_boundary_%s(long i, long j, long k)\n{\n  (void)i, (void)j, (void)k;\n",
               f->name);
    buf_puts(b, "  return ");
    print_expr(pr, f->boundary, P_TOP, 0);
    buf_puts(b, ";\n}\n\n");
  }
}

/* Is there a blocked loop of upto's kernel before upto, in program order?
 * 1: yes; 0: not in blk; -1: blk reaches upto first. */
static int earlier_tb(const IrBlock *blk, const IrStmt *upto)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s == upto)
      return -1;
    if (s->tb && s->tb->kernel == upto->tb->kernel)
      return 1;
    int r = earlier_tb(&s->body, upto);
    if (!r)
      r = earlier_tb(&s->els, upto);
    if (r)
      return r;
  }
  return 0;
}

/* The temporally blocked kernels, once per kernel (the pass fuses a kernel
 * the same way wherever it blocks it). */
static void print_tbs(Buf *b, const IrProgram *p, const CgTarget *t, const IrBlock *blk)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->tb && earlier_tb(&p->main, s) != 1) {
      if (!t->print_tb)
        ice("target %s cannot print temporally blocked kernels", t->name);
      for (const IrTb *tb = s->tb; tb; tb = tb->half)
        t->print_tb(b, p, tb, t->opts);
    }
    print_tbs(b, p, t, &s->body);
    print_tbs(b, p, t, &s->els);
  }
}

static int has_tb(const IrBlock *blk)
{
  for (int i = 0; i < blk->len; i++)
    if (blk->data[i]->tb || has_tb(&blk->data[i]->body) || has_tb(&blk->data[i]->els))
      return 1;
  return 0;
}

/* NAME_tb_grid_() of each temporally blocked kernel, once per kernel as
 * print_tbs prints them, and of its half passes. */
static void print_tb_grid_calls(Buf *b, const IrProgram *p, const IrBlock *blk)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->tb && earlier_tb(&p->main, s) != 1)
      for (const IrTb *tb = s->tb; tb; tb = tb->half)
        buf_printf(b, "    (void)%s_grid_(&march_);\n", ir_tb_stem(p, tb));
    print_tb_grid_calls(b, p, &s->body);
    print_tb_grid_calls(b, p, &s->els);
  }
}

/* Before main's statements (a program's main, a library's P_main): the
 * fused kernels' launch set-up, which loads them, where the target asks
 * whether fused passes pay (CUDA). */
void print_tb_preloads(Buf *b, const IrProgram *p, const CgTarget *t)
{
  if (!t->tb_pays || !has_tb(&p->main))
    return;
  buf_puts(b, "  { /* the fused kernels' grids and shared memory now: CUDA loads a kernel at its first use, which would "
              "be in the loop's first passes, inside its timer */\n    int march_;\n");
  print_tb_grid_calls(b, p, &p->main);
  buf_puts(b, "  }\n");
}

/* The comment lines at the top of the .stn file become --help's text. */
void print_about(Buf *b, const Source *src)
{
  const char *s = src->text, *end = s + src->len;
  buf_puts(b, "\"");
  while (s < end) {
    while (s < end && (*s == ' ' || *s == '\t'))
      s++;
    if (end - s < 2 || s[0] != '/' || s[1] != '/')
      break;
    s += 2;
    if (s < end && *s == ' ')
      s++;
    for (; s < end && *s != '\n'; s++) {
      if (*s == '"' || *s == '\\')
        buf_printf(b, "\\%c", *s);
      else if ((unsigned char)*s >= 32)
        buf_printf(b, "%c", *s);
    }
    buf_puts(b, "\\n");
    if (s < end)
      s++;
  }
  buf_puts(b, "\"");
}


/* Everything before main: the params, consts, tables, grids, fields,
 * boundary functions and kernels. */
void print_definitions(Printer *pr)
{
  Buf *b = pr->b;
  const IrProgram *p = pr->p;
  const CgTarget *t = pr->target;
  buf_printf(b, "/* Generated by stencilc %s from %s (target: %s).\n"
                " * Edit the .stn file, not this one. */\n",
             STENCILC_VERSION, p->src->name, t->name);
  buf_puts(b, t->includes);
  buf_puts(b, "\n");

  buf_puts(b, "/* params: set with --NAME=value */\n");
  for (int i = 0; i < p->params.len; i++) {
    const IrParam *q = &p->params.data[i];
    buf_printf(b, "static %s %s = ", ctype(q->ty), cname(p, q->name));
    print_number(b, q->ty, q->def);
    buf_printf(b, ";  /* %s:%d */\n", p->src->name, line_of(p, q->span));
  }
  buf_puts(b, "static stn_param stn_params[] = {\n");
  for (int i = 0; i < p->params.len; i++) {
    const IrParam *q = &p->params.data[i];
    buf_printf(b, "  { \"%s\", %s, &%s, \"\", %d, %d, %.17g, %.17g },", q->name, stn_type_of(q->ty), cname(p, q->name),
               q->has_lo, q->has_hi, q->has_lo ? q->lo : 0.0, q->has_hi ? q->hi : 0.0);
    if (q->has_lo || q->has_hi)
      buf_printf(b, "  /* in %s..%s */", q->has_lo ? "lo" : "", q->has_hi ? "hi" : "");
    buf_puts(b, "\n");
  }
  if (!p->params.len)
    buf_puts(b, "  { 0 },\n");
  buf_puts(b, "};\n\n");

  /* Named scalar consts print by name, so declare each one used, once. */
  int any_const = 0;
  Vec(const char *) declared = { 0 };
  char *live = host_live(p);
  for (int ki = -1; ki < p->kernels.len; ki++) {
    const IrNodes *pool = ki < 0 ? &p->host : &p->kernels.data[ki]->nodes;
    for (int i = 0; i < pool->len; i++) {
      const IrNode *n = &pool->data[i];
      if (n->op != OP_CONST || !n->name || (ki < 0 && !live[i]))
        continue;
      int seen = 0;
      for (int j = 0; j < declared.len && !seen; j++)
        seen = streq(declared.data[j], n->name);
      if (seen)
        continue;
      vec_push(&declared, n->name);
      buf_printf(b, "%s %s %s = ", t->const_decl, ctype(n->ty), cname(p, n->name));
      print_number(b, n->ty, n->f);
      buf_puts(b, ";\n");
      any_const = 1;
    }
  }
  vec_free(&declared);
  free(live);
  for (int i = 0; i < p->tables.len; i++) {
    const IrTable *tab = &p->tables.data[i];
    /* Unrolled loops fold most table reads away; print what is still read
     * (a target with device copies needs the host copy only for main). */
    if (!table_used(p, i, t->print_tables ? TABLE_HOST : TABLE_ANY))
      continue;
    buf_printf(b, "static const %s %s[%d] = {", ctype(tab->ty), cname(p, tab->name), tab->len);
    for (int j = 0; j < tab->len; j++) {
      buf_puts(b, j ? ", " : " ");
      print_number(b, tab->ty, tab->vals[j]);
    }
    buf_puts(b, " };\n");
    any_const = 1;
  }
  if (t->print_tables)
    t->print_tables(b, p);
  if (any_const)
    buf_puts(b, "\n");

  for (int i = 0; i < p->grids.len; i++) {
    const IrGrid *g = &p->grids.data[i];
    buf_printf(b, "static stn_grid %s;  /* %s:%d, halo", cname(p, g->name), p->src->name, line_of(p, g->span));
    for (int d = 0; d < g->rank; d++)
      buf_printf(b, " %d:%d", g->halo_lo[d], g->halo_hi[d]);
    buf_puts(b, " */\n");
  }
  for (int i = 0; i < p->fields.len; i++) {
    const IrField *f = &p->fields.data[i];
    /* Named as the user names it (f[3]): --save and --help use it. */
    buf_printf(b, "static stn_field %s_ = { \"%s\", %s, &%s, 0, 0, 0, 0, 0 };\n", f->name, f->label, stn_type_of(f->ty),
               cname(p, p->grids.data[f->grid].name));
  }
  buf_puts(b, "static stn_field *stn_fields[] = {");
  for (int i = 0; i < p->fields.len; i++)
    buf_printf(b, "%s&%s_", i ? ", " : " ", p->fields.data[i].name);
  buf_puts(b, p->fields.len ? " };\n\n" : " 0 };\n\n");

  print_boundaries(pr, p);
  for (int i = 0; i < p->kernels.len; i++)
    t->print_kernel(b, p, p->kernels.data[i], t->opts);
  print_tbs(b, p, t, &p->main);

}

/* The grids from the params, the fields allocated, zeroed and bounded. */
void print_setup(Printer *pr)
{
  Buf *b = pr->b;
  const IrProgram *p = pr->p;
  const CgTarget *t = pr->target;
  for (int i = 0; i < p->grids.len; i++) {
    const IrGrid *g = &p->grids.data[i];
    const char *gn = cname(p, g->name);
    buf_printf(b, "  {\n    const long n[] = {");
    for (int d = 0; d < g->rank; d++) {
      buf_puts(b, d ? ", " : "");
      host_expr(pr, g->dims[d]);
    }
    buf_puts(b, "};\n    const int halo_lo[] = {");
    for (int d = 0; d < g->rank; d++)
      buf_printf(b, "%s%d", d ? ", " : "", g->halo_lo[d]);
    buf_puts(b, "}, halo_hi[] = {");
    for (int d = 0; d < g->rank; d++)
      buf_printf(b, "%s%d", d ? ", " : "", g->halo_hi[d]);
    buf_puts(b, "};\n    const char *const set_by[] = {");
    for (int d = 0; d < g->rank; d++) {
      Buf tmp = { 0 };
      Printer tp = *pr;
      tp.b = &tmp;
      host_expr(&tp, g->dims[d]);
      buf_printf(b, "%s\"%s\"", d ? ", " : "", tmp.s);
      buf_free(&tmp);
    }
    if (p->mpi) { /* this rank's part of the grid */
      buf_puts(b, "};\n    const int periodic[] = {");
      for (int d = 0; d < g->rank; d++)
        buf_printf(b, "%s%d", d ? ", " : "", g->wrap[d]);
      buf_printf(b, "};\n    stn_mpi_grid_init(&%s, \"%s\", %d, n, halo_lo, halo_hi, set_by, periodic);\n", gn, g->name,
                 g->rank);
    } else {
      buf_printf(b, "};\n    stn_grid_init(&%s, \"%s\", %d, n, halo_lo, halo_hi, set_by);\n", gn, g->name, g->rank);
    }
    for (int d = 0; d < g->rank; d++)
      if (g->periodic[d])
        buf_printf(b, "    stn_grid_periodic(&%s, %d, set_by[%d]);\n", gn, d, d);
    buf_puts(b, "  }\n");
  }
  for (int i = 0; i < p->fields.len; i++) {
    const IrField *f = &p->fields.data[i];
    buf_printf(b, "  %s(&%s_, \"%s\", %s, &%s);\n", t->field_alloc, f->name, f->label, stn_type_of(f->ty),
               cname(p, p->grids.data[f->grid].name));
    buf_printf(b, "  %s(&%s_);\n", t->field_zero, f->name);
    if (f->boundary >= 0)
      buf_printf(b, "  %s(&%s_, stn_boundary_%s);\n", t->field_boundary, f->name, f->name);
  }
  print_output_checks(b, p, &p->main);
  if (p->mpi)
    buf_puts(b, "  stn_mpi_setup_done();\n");
}

/* main's variables and statements. */
void print_main_body(Printer *pr)
{
  Buf *b = pr->b;
  const IrProgram *p = pr->p;
  int unused = 0, unused_int = 0;
  dropped_results(p, &p->main, &unused, &unused_int);
  if (unused)
    buf_puts(b, "  double stn_unused;\n");
  if (unused_int)
    buf_puts(b, "  int stn_unused_int;\n");
  for (int i = 0; i < p->vars.len; i++) {
    /* A variable only assigned (a result nobody prints) would be "set but
     * not used" to the C and CUDA compilers. */
    int read = 0;
    for (int j = 0; j < p->host.len && !read; j++)
      read = p->host.data[j].op == OP_VAR && p->host.data[j].ref == i;
    buf_printf(b, "  %s %s%s = 0;%s\n", ctype(p->vars.data[i].ty), cname(p, p->vars.data[i].name),
               read ? "" : " __attribute__((unused))", read ? "" : "  /* set, never read */");
  }
  buf_puts(b, "\n");
  char *lazy = xrealloc(NULL, (size_t)p->vars.len + 1);
  for (int i = 0; i < p->vars.len; i++)
    lazy[i] = 0;
  mark_lazy(p, &p->main, lazy);
  pr->lazy = lazy;
  print_hblock(pr, &p->main, 1);
  free(lazy);
}

/* --mpi: the target's calls for a distributed program (output gathered on
 * rank 0; MPI set up first and finished last), or t itself. */
const CgTarget *cg_mpi_target(const IrProgram *p, const CgTarget *t, CgTarget *dist)
{
  if (!p->mpi)
    return t;
  *dist = *t;
  dist->includes = arena_printf(p->arena, "%s#include \"stn_mpi.h\"\n", t->includes);
  dist->field_write = t->mpi_field_write ? t->mpi_field_write : "stn_mpi_field_write";
  dist->field_write_image = t->mpi_field_write_image ? t->mpi_field_write_image : "stn_mpi_field_write_image";
  dist->finish = t->mpi_finish ? t->mpi_finish : "stn_mpi_finish";
  return dist;
}

void cg_print_program(Buf *b, const IrProgram *p, const CgTarget *t)
{
  CgTarget dist;
  t = cg_mpi_target(p, t, &dist);
  Printer pr = { .b = b, .p = p, .pool = &p->host, .target = t, .graphs = 1 };
  print_definitions(&pr);
  buf_puts(b, "int main(int argc, char **argv)\n{\n");
  buf_printf(b, "  stn_program stn_program = { \"%s\", ", p->name);
  print_about(b, p->src);
  buf_printf(b, ", stn_params, %d, stn_fields, %d, 0, 0, 0, 0, 0, 0 };\n", p->params.len, p->fields.len);
  {
    /* what checkpoints and HDF5 files record: the .stn file and its hash (FNV-1a of its text) */
    unsigned long long h = 14695981039346656037ull;
    for (const Source *sf = p->src; sf; sf = sf->next) /* and the files it imports */
      for (int i = 0; i < sf->len; i++)
        h = (h ^ (unsigned char)sf->text[i]) * 1099511628211ull;
    const char *base = strrchr(p->src->name, '/');
    buf_printf(b, "  stn_program.source = \"%s\";\n  stn_program.hash = 0x%016llxull;\n", base ? base + 1 : p->src->name, h);
  }
  if (t->before_init)
    buf_printf(b, "  %s\n", t->before_init);
  if (p->mpi)
    buf_puts(b, "  stn_mpi_init(&stn_program, &argc, &argv);\n");
  buf_puts(b, "  stn_init(&stn_program, argc, argv);\n");
  if (t->after_init)
    buf_printf(b, "  %s\n", t->after_init);
  print_setup(&pr);
  {
    Buf deferred = { 0 };
    print_input_checks(b, p, &p->main, &p->main, &deferred);
    buf_printf(b, "  stn_load_fields(&stn_program, \"%s\");  /* --load=FIELD=PATH */\n", deferred.s ? deferred.s : "");
    buf_free(&deferred);
  }
  print_tb_preloads(b, p, t);
  print_main_body(&pr);
  buf_printf(b, "\n  %s(&stn_program);\n  return 0;\n}\n", t->finish);
}
