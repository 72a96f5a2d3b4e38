/* cg.h: the code generators. Each prints a program from the IR after the
 * passes have made every decision. */
#ifndef STN_CG_H
#define STN_CG_H
#include "ir/ir.h"

/* C (openmp == 0) or C with OpenMP pragmas (openmp == 1). */
void cg_c_program(Buf *b, const IrProgram *p, int openmp);
/* CUDA: kernels as the gpu pass decided, fields resident on the device. */
void cg_cuda_program(Buf *b, const IrProgram *p);
/* Library mode (--emit=lib, cg_lib.c): src gets the program's kernels and
 * a C API in place of main, hdr the API's declarations; src includes
 * header_name. */
void cg_c_library(Buf *src, Buf *hdr, const IrProgram *p, int openmp, const char *header_name);
void cg_cuda_library(Buf *src, Buf *hdr, const IrProgram *p, const char *header_name);
/* A temporally blocked kernel as overlapped tiles (cg_c_tb.c). */
void cg_c_print_tb(Buf *b, const IrProgram *p, const IrTb *tb, int openmp);
#endif
