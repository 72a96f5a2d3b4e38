// The march a temporally blocked kernel's wrapper picks at run time
// (stn_tb_march_for, runtime/stn_cuda.h) for the block slots an H100
// offers (132 SMs x blocks per SM from the kernel's occupancy). Host code
// only: it needs no GPU.
#include "stn_cuda.h"
#include <cstdio>

int main()
{
  // jacobi5 16384^2 --tb=8: 147 strips of 112 columns, 9 blocks per SM,
  // 24 rows of warm-up; 256 rows fill whole waves (the measured best).
  printf("jacobi5: %d\n", stn_tb_march_for(9 * 132, 147, 16384, 24, 256));
  // lbm_d2q9 4096^2 --tb=3 (3 blocks per SM) and --tb=2 (4): at 256 rows
  // the last of two waves is a third full; shorter marches fill them.
  printf("lbm T=3: %d\n", stn_tb_march_for(3 * 132, 34, 4096, 9, 256));
  printf("lbm T=2: %d\n", stn_tb_march_for(4 * 132, 34, 4096, 6, 256));
  // A grid of one strip and 100 rows: the shortest march allowed, two
  // blocks instead of one.
  printf("small: %d\n", stn_tb_march_for(1188, 1, 100, 24, 256));
  // No occupancy (the kernel cannot run): the default.
  printf("none: %d\n", stn_tb_march_for(0, 147, 16384, 24, 256));
  return 0;
}
