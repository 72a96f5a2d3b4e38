/* cost.c: flops and minimum bytes moved per point of each kernel.
 * Flops are the floating-point operations computed per point (after
 * hoisting, so invariant work does not count), plus one per floating
 * reduction contribution. Bytes are what a perfect cache would move:
 * each field read once and each field written once per point. */
#include "passes/passes.h"


void pass_cost(IrProgram *p, const PassOptions *o)
{
  int nf = p->fields.len;
  char *read = xrealloc(NULL, (size_t)nf + 1), *written = xrealloc(NULL, (size_t)nf + 1);
  for (int i = 0; i < p->kernels.len; i++) {
    IrKernel *k = p->kernels.data[i];
    for (int f = 0; f < nf; f++)
      read[f] = written[f] = 0;
    k->flops = k->bytes_read = k->bytes_written = k->fields_read = k->fields_written = 0;
    for (int j = 0; j < k->nodes.len; j++) {
      IrNode *n = &k->nodes.data[j];
      int per_point = n->level < 0 || n->level >= k->rank;
      if (per_point && (op_info[n->op].flags & F_FLOP) && (n->ty == TY_FLOAT || n->ty == TY_DOUBLE))
        k->flops++;
      if (n->op == OP_LOAD)
        read[n->ref] = 1;
    }
    for (int j = 0; j < k->effects.len; j++) {
      IrEffect *e = &k->effects.data[j];
      if (e->kind == EFF_STORE)
        written[e->ref] = 1;
      else if (k->reds.data[e->ref].ty != TY_INT)
        k->flops++;
    }
    for (int f = 0; f < nf; f++) {
      int sz = type_bytes(p->fields.data[f].ty);
      k->fields_read += read[f];
      k->fields_written += written[f];
      k->bytes_read += read[f] * sz;
      k->bytes_written += written[f] * sz;
    }
  }
  free(read);
  free(written);
}
