/* cg.h: the code generators. Each prints a program from the IR after the
 * passes have made every decision. */
#ifndef STN_CG_H
#define STN_CG_H
#include "ir/ir.h"

/* C (openmp == 0) or C with OpenMP pragmas (openmp == 1). */
void cg_c_program(Buf *b, const IrProgram *p, int openmp);
/* CUDA: kernels as the gpu pass decided, fields resident on the device. */
void cg_cuda_program(Buf *b, const IrProgram *p);
/* A temporally blocked kernel as overlapped tiles (cg_c_tb.c). */
void cg_c_print_tb(Buf *b, const IrProgram *p, const IrTb *tb, int openmp);
#endif
