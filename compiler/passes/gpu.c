/* gpu.c: how each kernel runs on a GPU (--target=cuda); the CUDA printer
 * only prints this decision.
 *
 * Heuristic (docs/cuda.md): a kernel of rank 2 or 3 that reads neighbours
 * along dimension 0 streams: a 2-D thread block covers the fastest
 * dimensions and marches along dimension 0, so each plane it loads is
 * reused from registers and L1 for the next planes instead of being
 * fetched again by another block. Everything else (rank 1, or no reuse
 * along dimension 0) runs one thread per point. --cuda-strategy forces one.
 *
 * Block shapes: 64 threads along the contiguous dimension (two 128-byte
 * lines of floats per warp pair, coalesced) times 4 rows; 256 threads for
 * rank 1. Marching length: 16 planes, so a block's halo planes (2 of 18
 * for radius 1) cost 11% extra reads from L2 and the grid still has enough
 * blocks to fill the GPU at the examples' sizes. --block and --march
 * override; the run-time autotuner (issue 3) will replace these defaults. */
#include "passes/passes.h"

static int reads_along_dim0(const IrKernel *k)
{
  for (int i = 0; i < k->nodes.len; i++)
    if (k->nodes.data[i].op == OP_LOAD && k->nodes.data[i].off[0] != 0)
      return 1;
  return 0;
}

void pass_gpu(IrProgram *p, const PassOptions *o)
{
  if (o->target != TARGET_CUDA)
    return;
  for (int i = 0; i < p->kernels.len; i++) {
    IrKernel *k = p->kernels.data[i];
    k->gpu_atomic = o->atomic_reductions;
    if (o->cuda_strategy && streq(o->cuda_strategy, "naive")) {
      k->gpu = GPU_NAIVE;
      k->gpu_why = "naive: chosen with --cuda-strategy";
    } else if (o->cuda_strategy && streq(o->cuda_strategy, "stream") && k->rank >= 2) {
      k->gpu = GPU_STREAM;
      k->gpu_why = "stream: chosen with --cuda-strategy";
    } else if (o->cuda_strategy && streq(o->cuda_strategy, "stream")) {
      k->gpu = GPU_NAIVE;
      k->gpu_why = "naive: a 1-D kernel has no plane to march over (--cuda-strategy=stream ignored)";
    } else if (k->rank >= 2 && reads_along_dim0(k)) {
      k->gpu = GPU_STREAM;
      k->gpu_why = "stream: it reads neighbours along dimension 0, which marching reuses on chip";
    } else {
      k->gpu = GPU_NAIVE;
      k->gpu_why = k->rank == 1 ? "naive: 1-D" : "naive: no neighbour reads along dimension 0 to reuse";
    }
    k->block[0] = o->block[0] ? o->block[0] : (k->rank == 1 ? 256 : 64);
    k->block[1] = k->rank >= 2 ? (o->block[1] ? o->block[1] : 4) : 1;
    k->block[2] = 1;
    k->march = k->gpu == GPU_STREAM ? (o->march ? o->march : 16) : 1;
  }
}
