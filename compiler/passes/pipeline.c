/* pipeline.c: the passes, in the order they run. This table is the one
 * place to read what the compiler does to a program between lowering and
 * printing; --list-passes prints it, --dump-after=NAME shows each result. */
#include "passes/passes.h"
#include <string.h>

const Pass pass_list[] = {
  { "fold",     "constant folding, exact algebraic simplification, and x*0 and x+0 (-fno-fold-zeros)", pass_fold },
  { "hoist",    "loop levels of every value; division by invariants, or by a value that divides "
                "more than once, becomes multiplication by a reciprocal", pass_hoist },
  { "cse",      "common-subexpression elimination (value numbering), after hoist so that "
                "equal reciprocals merge", pass_cse },
  { "mpi",      "--mpi: halo exchanges before each kernel (sides and widths its reads need), overlap, and the "
                "decomposition the report shows", pass_mpi },
  { "schedule", "CPU loop schedule: OpenMP parallel loop and SIMD loop", pass_schedule },
  { "tblock",   "temporal blocking: time loops of one kernel and swaps run as passes of several fused steps", pass_tblock },
  { "gpu",      "GPU strategy (naive or streaming), block shape and marching length of each kernel", pass_gpu },
  { "graph",    "CUDA: time loops whose iterations only launch kernels and swap fields replayed as CUDA graphs", pass_graph },
  { "cost",     "flops and minimum bytes per point of each kernel", pass_cost },
};
const int pass_count = sizeof pass_list / sizeof pass_list[0];

void pass_run_pipeline(IrProgram *p, const PassOptions *o)
{
  if (o->verify)
    ir_verify(p, "lower");
  if (o->dump_after && (streq(o->dump_after, "all") || streq(o->dump_after, "lower"))) {
    fprintf(o->dump, "; --- after lower ---\n");
    ir_print_program(o->dump, p);
  }
  for (int i = 0; i < pass_count; i++) {
    pass_list[i].run(p, o);
    if (o->verify)
      ir_verify(p, pass_list[i].name);
    if (o->dump_after && (streq(o->dump_after, "all") || streq(o->dump_after, pass_list[i].name))) {
      fprintf(o->dump, "; --- after %s ---\n", pass_list[i].name);
      ir_print_program(o->dump, p);
    }
  }
}

int pass_option_next(const char **s, PassOptionItem *it)
{
  if (!*s)
    return 0;
  const char *p = *s, *end = strchr(p, ',');
  size_t n = end ? (size_t)(end - p) : strlen(p);
  const char *eq = memchr(p, '=', n);
  it->text = p;
  it->len = n;
  it->name = eq ? p : NULL;
  it->name_len = eq ? (size_t)(eq - p) : 0;
  it->value = eq ? eq + 1 : p;
  it->value_len = eq ? n - it->name_len - 1 : n;
  *s = end ? end + 1 : NULL;
  return 1;
}

const char *pass_option_for_kernel(const char *spec, const char *name, size_t *len)
{
  PassOptionItem it, all = { 0 };
  for (const char *s = spec; pass_option_next(&s, &it);) {
    if (it.len == 0)
      continue; /* an empty item (main.c refuses them) */
    if (!it.name)
      all = it;
    else if (it.name_len == strlen(name) && strncmp(it.name, name, it.name_len) == 0) {
      *len = it.value_len;
      return it.value;
    }
  }
  *len = all.value_len;
  return all.value;
}

void pass_remap_roots(IrKernel *k, const int *map)
{
  for (int i = 0; i < k->effects.len; i++) {
    k->effects.data[i].val = map[k->effects.data[i].val];
    if (k->effects.data[i].pred >= 0)
      k->effects.data[i].pred = map[k->effects.data[i].pred];
  }
  for (int d = 0; d < k->rank; d++) {
    k->lo[d] = map[k->lo[d]];
    k->hi[d] = map[k->hi[d]];
  }
}

/* Keep the nodes the roots reach, in order; renumber operands. */
void pass_compact(IrKernel *k)
{
  int n = k->nodes.len;
  char *live = xrealloc(NULL, (size_t)n + 1);
  int *map = xrealloc(NULL, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    live[i] = 0;
  for (int i = 0; i < k->effects.len; i++) {
    live[k->effects.data[i].val] = 1;
    if (k->effects.data[i].pred >= 0)
      live[k->effects.data[i].pred] = 1;
  }
  for (int d = 0; d < k->rank; d++)
    live[k->lo[d]] = live[k->hi[d]] = 1;
  for (int i = n - 1; i >= 0; i--) {
    if (!live[i])
      continue;
    IrNode *nd = &k->nodes.data[i];
    for (int a = 0; a < op_info[nd->op].nargs; a++)
      live[nd->arg[a]] = 1;
  }
  int w = 0;
  for (int i = 0; i < n; i++) {
    if (!live[i])
      continue;
    IrNode nd = k->nodes.data[i];
    for (int a = 0; a < op_info[nd.op].nargs; a++)
      nd.arg[a] = map[nd.arg[a]];
    map[i] = w;
    k->nodes.data[w++] = nd;
  }
  k->nodes.len = w;
  pass_remap_roots(k, map);
  free(live);
  free(map);
}
