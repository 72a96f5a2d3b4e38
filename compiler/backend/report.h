/* report.h: --report and --report=json (report.c). */
#ifndef STN_REPORT_H
#define STN_REPORT_H
#include "ir/ir.h"

typedef struct ReportOptions {
  int json;
  double bandwidth;        /* GB/s for the predicted times (--bandwidth) */
  const char *gpu;         /* whose time model (--gpu: "H100", "H200") */
  const char *ptxas;       /* the output of nvcc -Xptxas -v on the CUDA code, or NULL */
} ReportOptions;

/* cpu: the program through the OpenMP pipeline; gpu: through CUDA's. */
void report_print(FILE *f, const IrProgram *cpu, const IrProgram *gpu, const ReportOptions *o);
#endif
