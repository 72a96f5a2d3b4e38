/* cg_cuda.h: what the CUDA printer (cg_cuda.c) shares with the printer
 * of its temporally blocked kernels (cg_cuda_tb.c). */
#ifndef STN_CG_CUDA_H
#define STN_CG_CUDA_H
#include "backend/cg_common.h"

const char *cuda_red_op(RedOp op);
/* A level-0 value the per-point code needs: computed by the host wrapper
 * and passed to the kernel, under this name. */
int cuda_passed(const IrKernel *k, const int *use_level, int id);
const char *cuda_passed_name(const IrProgram *p, const IrKernel *k, char **names, int id);
/* The end of a kernel with reductions: each block combines its threads'
 * values (first_thread: the condition that picks one thread) into its
 * partial, or into the result by atomics. */
/* A wrapper's reduction bookkeeping: ops_, the static stn_reduction red_,
 * and where the results go (dst_, dst_type_). */
void cuda_print_red_decls(Buf *b, const IrKernel *k);
void cuda_print_block_reduce(Buf *b, const IrProgram *p, const IrKernel *k, const char *first_thread);
void cg_cuda_print_tb(Buf *b, const IrProgram *p, const IrTb *tb, const void *opts);
/* The device function of k's variant v (passes/gpu.c, decide_variants;
 * v = 0: the first, or the only one): NAME_kernel_, NAME_kernel_altV_ (--report
 * finds their registers in ptxas's output by it). */
const char *cuda_kernel_fn(const IrProgram *p, const IrKernel *k, int v);
#endif
