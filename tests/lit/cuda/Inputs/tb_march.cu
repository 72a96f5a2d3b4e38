// The march a temporally blocked kernel's wrapper picks at run time
// (stn_tb_march_for, runtime/stn_cuda.h) for the block slots an H100
// offers (132 SMs x blocks per SM from the kernel's occupancy). Host code
// only: it needs no GPU.
#include "stn_cuda.h"
#include <cstdio>

int main()
{
  // jacobi5 16384^2 --tb=8: 147 strips of 112 columns, 9 blocks per SM,
  // 24 rows of warm-up; 256 rows fill whole waves (the measured best; 255
  // would end 0.4% sooner, less than the 2% a shorter march must gain).
  printf("jacobi5: %d\n", stn_tb_march_for(9 * 132, 147, 16384, 24, 256));
  printf("jacobi5 at 255 and 256 rows: %g %g\n", stn_tb_makespan(9 * 132, 147, 16384, 24, 255),
         stn_tb_makespan(9 * 132, 147, 16384, 24, 256));
  // lbm_d2q9 4096^2 --tb=3 (3 blocks per SM) and --tb=2 (4): at 256 rows
  // the last of two waves is a third full; shorter marches fill them
  // (--tb=3 at 179 rows, the same 23 bands as 180, measured 1.41x single
  // steps, 256 rows 1.12x). Of the marches within 2% of the earliest end,
  // the longest.
  printf("lbm T=3: %d\n", stn_tb_march_for(3 * 132, 34, 4096, 9, 256));
  printf("lbm T=2: %d\n", stn_tb_march_for(4 * 132, 34, 4096, 6, 256));
  // Himeno L --tb=2: 19 x 22 tiles, 257 planes, 2 blocks of 512 threads per
  // SM. Whole waves alone would say 43 planes (6 bands of 43); 48 ends
  // sooner because its last band is short (measured: 0.4591 ms per sweep
  // at 48 against 0.4684 at 43).
  printf("himeno: %d\n", stn_tb_march_for(2 * 132, 19 * 22, 257, 6, 48));
  printf("himeno at 48 and 43 planes: %g %g\n", stn_tb_makespan(2 * 132, 19 * 22, 257, 6, 48),
         stn_tb_makespan(2 * 132, 19 * 22, 257, 6, 43));
  // Four slots, nine blocks per band: the slots a band's first blocks free
  // take its last ones (checked against a heap-based simulation).
  printf("small slots: %g\n", stn_tb_makespan(4, 9, 36, 1, 7));
  // A grid of one strip and 100 rows: two blocks instead of one; 65 rows
  // end within 2% of 64's end.
  printf("small: %d\n", stn_tb_march_for(1188, 1, 100, 24, 256));
  // No occupancy (the kernel cannot run): the default.
  printf("none: %d\n", stn_tb_march_for(0, 147, 16384, 24, 256));
  // Fused passes or single steps (stn_tb_pays_for), an H100's 50 MB of L2
  // and 132 SMs: diffusion3d 128^3 fits in L2 (two fields of 130^3 floats
  // in a 130 x 130 x 144 allocation), 192^3 does not; lbm 320 x 128 does
  // not fill the GPU however large its fields would be.
  const double l2 = 52428800;
  printf("diffusion3d 128: %d\n", stn_tb_pays_for(2.0 * 130 * 130 * 144 * 4, l2, 252, 132));
  printf("diffusion3d 192: %d\n", stn_tb_pays_for(2.0 * 194 * 194 * 208 * 4, l2, 256, 132));
  printf("lbm 320x128, 10 blocks: %d\n", stn_tb_pays_for(1e9, l2, 10, 132));
  // 2-D strip passes march from the grid's area (stn_tb_march_area), side
  // = sqrt(rows x columns) / 8192: light steps 128 side^1.5 rows (H100:
  // j2d5pt best at 48 rows at 4096^2, 128 at 8192^2, 192-256 at 12288^2,
  // 347-384 at 16384^2; 4096 x 16384 either way round at 96-128), heavier
  // ones sqrt(rows x columns) / 48 (pm2d, biharm2d, box2ddiv best at 64-96
  // rows at 4096^2, 192-240 at 8192^2, j2d9pt.double past 256 at 16384^2);
  // times sqrt(warm / 24), 32 to 384 rows, in bands of equal length.
  printf("area light 4096^2 8192^2 12288^2 16384^2 20480^2: %d %d %d %d %d\n",
         stn_tb_march_area(4098, 4098, 24, 1), stn_tb_march_area(8194, 8194, 24, 1),
         stn_tb_march_area(12290, 12290, 24, 1), stn_tb_march_area(16386, 16386, 24, 1),
         stn_tb_march_area(20482, 20482, 24, 1));
  printf("area light 4096 x 16384 and 16384 x 4096: %d %d\n", stn_tb_march_area(4098, 16386, 24, 1),
         stn_tb_march_area(16386, 4098, 24, 1));
  printf("area light, 4 steps of reach 1, 8192^2: %d\n", stn_tb_march_area(8194, 8194, 12, 1));
  printf("area light 301^2: %d\n", stn_tb_march_area(303, 303, 24, 1));
  printf("area heavier 4096^2 8192^2 12288^2 16384^2 20480^2: %d %d %d %d %d\n", stn_tb_march_area(4098, 4098, 24, 0),
         stn_tb_march_area(8194, 8194, 24, 0), stn_tb_march_area(12290, 12290, 24, 0),
         stn_tb_march_area(16386, 16386, 24, 0), stn_tb_march_area(20482, 20482, 24, 0));
  printf("area none: %d\n", stn_tb_march_area(0, 303, 24, 1));
  // What the wrapper asks (stn_cuda_tb_march, which adds the kernel's
  // occupancy and the GPU's SMs): the area's march at two blocks an SM or
  // more, else, or for 3-D passes (STN_TB_MARCH_WAVES), or where the area
  // gives none, the waves' (jacobi5 16384^2's 147 strips: 256 rows).
  printf("choose light, 2 blocks an SM, 8192^2: %d\n",
         stn_tb_march_choose(STN_TB_MARCH_AREA_LIGHT, 2, 132, 74, 8194, 8194, 24, 256));
  printf("choose heavier, 2 blocks an SM, 8192^2: %d\n",
         stn_tb_march_choose(STN_TB_MARCH_AREA_HEAVY, 2, 132, 74, 8194, 8194, 24, 256));
  printf("choose light, 1 block an SM (the waves): %d\n",
         stn_tb_march_choose(STN_TB_MARCH_AREA_LIGHT, 1, 132, 147, 16384, 16384, 24, 256));
  printf("choose the waves, 9 blocks an SM: %d\n",
         stn_tb_march_choose(STN_TB_MARCH_WAVES, 9, 132, 147, 16384, 16384, 24, 256));
  printf("choose light, no rows: %d\n", stn_tb_march_choose(STN_TB_MARCH_AREA_LIGHT, 9, 132, 147, 16384, 0, 24, 256));
  return 0;
}
