/* examples/lbm_d2q9.stn as a library named lbm (the header's name, not
 * the .stn file's): the host runs main's time loop itself, swapping the
 * nine-component pair f, fn by its name, and prints what the program
 * prints. Usage: lbm_host NY NX STEPS */
#include "lbm.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  if (argc != 4)
    return 2;
  lbm_params prm = lbm_defaults();
  prm.NY = atoi(argv[1]), prm.NX = atoi(argv[2]);
  int steps = atoi(argv[3]);
  lbm *c = lbm_create(&prm);
  if (lbm_points(c, "f[8]") != (long)prm.NY * prm.NX || lbm_points(c, "f[9]") != -1 || lbm_points(c, "f") != -1)
    return 1;
  if (lbm_swap(c, "f", "ux") != -1 || lbm_swap(c, "f[0]", "fn") != -1)
    return 1;
  lbm_init(c);
  double e2, r2, m0, m;
  lbm_profile(c, &e2, &r2, &m0);
  for (int n = 0; n < steps; n++) {
    lbm_step(c);
    if (lbm_swap(c, "f", "fn") != 0)
      return 1;
  }
  lbm_profile(c, &e2, &r2, &m);
  printf("L2 error : %.12g\n", sqrt(e2 / r2));
  printf("Mass change : %.12g\n", fabs(m - m0) / (prm.NX * prm.NY + m0));
  lbm_destroy(c);
  return 0;
}
