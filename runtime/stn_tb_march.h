/* stn_tb_march.h: the rows a block of a 2-D temporally blocked pass
 * marches, from the grid's area. Plain C, shared by the CUDA runtime
 * (stn_cuda.h, stn_tb_march_choose) and the compiler's time model
 * (compiler/passes/tbmodel.c, its warm rows), so the two cannot drift. */
#ifndef STN_TB_MARCH_H
#define STN_TB_MARCH_H
#include <math.h>

/* Rows per block of a 2-D strip pass from the grid's area (IrTb.march_area,
 * passes/tblock.c area_march), with side = sqrt(rows x columns) / 8192:
 * light steps 128 side^1.5 rows, heavier ones 171 side (sqrt(rows x
 * columns) / 48), both times sqrt(warm / 24) (warm: the rows a block
 * computes beyond its own; a longer warm-up asks a longer march), from
 * 32 to 384 rows, in bands of equal length. Measured on the H100,
 * docs/benchmarks.md 2026-11-27 15:55-17:12: j2d5pt best at 48 rows at
 * 4096^2, 128 at 8192^2, 192-256 at 12288^2, 347-384 at 16384^2 (so a
 * power of the side, not the side: 1.5 put 8 light stencils at 1.00x to
 * 1.10x of sqrt / 64 from 8192^2 to 20480^2, 0.96x to 1.21x at 4096^2
 * and 6144^2); 4096 x 16384 either way round at 96-128, as 8192^2; the
 * heavier ones at 4096^2 0.91x to 1.08x at the power 1.5 and 200 rows,
 * and past 256 rows 0.98x to 1.10x of the waves' choice at 12288^2 to
 * 20480^2. */
static inline int stn_tb_march_area(long rows, long columns, int warm, int light)
{
  if (rows <= 0 || columns <= 0 || warm <= 0)
    return 0;
  const double side = sqrt((double)rows * (double)columns) / 8192;
  double want = (light ? 128 * side * sqrt(side) : 8192.0 / 48 * side) * sqrt(warm / 24.0);
  if (want > 384)
    want = 384;
  const long m = want < 32 ? 32 : (long)want, bands = (rows + m - 1) / m;
  return (int)((rows + bands - 1) / bands);
}

#endif
