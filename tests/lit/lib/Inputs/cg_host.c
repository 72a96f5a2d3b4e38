/* A host program that runs examples/cg_poisson.stn's solver loop itself,
 * through the library API (stencilc --emit=lib): the kernels are the
 * matrix-vector product and the BLAS-1 updates, the loop and the scalars
 * are the host's, as in the FEM prior work. Prints what the program's
 * main prints, so the test can compare the two. Usage: cg_host N TOL. */
#include "cg_poisson.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  cg_poisson_params prm = cg_poisson_defaults();
  if (argc > 1)
    prm.N = atoi(argv[1]);
  if (argc > 2)
    prm.TOL = atof(argv[2]);
  cg_poisson *cg = cg_poisson_create(&prm);
  cg_poisson_init(cg);
  double rz, bb, rr;
  cg_poisson_setup(cg, &rz, &bb);
  rr = bb;
  int it = 0;
  while (it < prm.MAXIT && rr > prm.TOL * prm.TOL * bb) {
    double pq = cg_poisson_apply(cg);
    double rznew;
    cg_poisson_update(cg, rz / pq, &rznew, &rr);
    cg_poisson_direction(cg, rznew / rz);
    rz = rznew;
    it++;
  }
  printf("Iterations : %d\n", it);
  printf("Relative residual : %.15g\n", sqrt(rr / bb));
  printf("Solution error : %.15g\n", cg_poisson_error(cg));
  /* the solution, through get: its largest value is about 2 (u = sin.. * (1 + x)) */
  long n = cg_poisson_points(cg, "x");
  double *x = malloc(sizeof *x * (size_t)n);
  if (!x || cg_poisson_get(cg, "x", x) != 0)
    return 1;
  double mx = 0;
  for (long i = 0; i < n; i++)
    mx = fmax(mx, x[i]);
  printf("Points : %ld\nMax x : %.15g\n", n, mx);
  free(x);
  cg_poisson_destroy(cg);
  return 0;
}
