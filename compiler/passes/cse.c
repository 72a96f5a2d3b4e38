/* cse.c: common-subexpression elimination by value numbering. Two nodes
 * with the same opcode, type, operands (sorted for commutative ops) and
 * immediates compute the same value; later ones are replaced by the first.
 * Loads of one field at one offset are one value, since kernels never see
 * their own stores to other points. */
#include "passes/passes.h"
#include <string.h>

static int same(const IrNode *a, const IrNode *b)
{
  if (a->op != b->op || a->ty != b->ty || a->ref != b->ref || a->imm != b->imm)
    return 0;
  if (a->op == OP_CONST) /* a named const prints as its name: keep names apart */
    return (a->f == b->f || (a->f != a->f && b->f != b->f)) &&
           (a->name == b->name || (a->name && b->name && strcmp(a->name, b->name) == 0));
  if (memcmp(a->off, b->off, sizeof a->off) != 0)
    return 0;
  int n = op_info[a->op].nargs;
  if (memcmp(a->arg, b->arg, sizeof(int) * (size_t)n) == 0)
    return 1;
  return n == 2 && (op_info[a->op].flags & F_COMM) && a->arg[0] == b->arg[1] && a->arg[1] == b->arg[0];
}

static unsigned hash(const IrNode *n)
{
  unsigned h = (unsigned)n->op * 31u + (unsigned)n->ty * 7u + (unsigned)n->ref * 131u + (unsigned)n->imm;
  if (n->op == OP_CONST) {
    unsigned long long bits;
    memcpy(&bits, &n->f, sizeof bits);
    h ^= (unsigned)(bits ^ (bits >> 32));
  }
  for (int d = 0; d < MAX_RANK; d++)
    h = h * 17u + (unsigned)n->off[d];
  int na = op_info[n->op].nargs;
  if (na == 2 && (op_info[n->op].flags & F_COMM))
    h += (unsigned)(n->arg[0] + n->arg[1]) * 2654435761u;
  else
    for (int a = 0; a < na; a++)
      h = h * 2654435761u + (unsigned)n->arg[a];
  return h;
}

static void cse_kernel(IrKernel *k)
{
  int n = k->nodes.len;
  int size = 16;
  while (size < 2 * n)
    size *= 2;
  int *table = xrealloc(NULL, sizeof(int) * (size_t)size);
  int *map = xrealloc(NULL, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < size; i++)
    table[i] = -1;
  for (int i = 0; i < n; i++) {
    IrNode *nd = &k->nodes.data[i];
    for (int a = 0; a < op_info[nd->op].nargs; a++)
      nd->arg[a] = map[nd->arg[a]];
    /* c ? x : x is x: the arms became one value only now (lbm's
     * bounce-back mask picks between two loads that merged) */
    if (nd->op == OP_SELECT && nd->arg[1] == nd->arg[2]) {
      map[i] = nd->arg[1];
      continue;
    }
    unsigned h = hash(nd) & (unsigned)(size - 1);
    map[i] = i;
    for (;;) {
      int j = table[h];
      if (j < 0) {
        table[h] = i;
        break;
      }
      if (same(&k->nodes.data[j], nd)) {
        map[i] = j;
        if (!k->nodes.data[j].name)
          k->nodes.data[j].name = nd->name;
        break;
      }
      h = (h + 1) & (unsigned)(size - 1);
    }
  }
  pass_remap_roots(k, map);
  free(table);
  free(map);
  pass_compact(k);
}

void pass_cse(IrProgram *p, const PassOptions *o)
{
  if (o->no_cse)
    return;
  for (int i = 0; i < p->kernels.len; i++)
    cse_kernel(p->kernels.data[i]);
}
