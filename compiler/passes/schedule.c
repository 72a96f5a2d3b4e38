/* schedule.c: the CPU loop schedule of each kernel, decided here so that
 * the C printer only prints it. OpenMP: threads share the outermost loop
 * (static schedule, so the init kernels' first touch places pages where
 * the sweeps use them), and the contiguous innermost loop is `omp simd`. */
#include "passes/passes.h"

void pass_schedule(IrProgram *p, const PassOptions *o)
{
  for (int i = 0; i < p->kernels.len; i++) {
    IrKernel *k = p->kernels.data[i];
    if (o->target == TARGET_OPENMP) {
      k->omp_collapse = 1;
      k->simd = !o->no_simd;
    } else {
      k->omp_collapse = 0;
      k->simd = 0;
    }
  }
}
