/* poisson: a C program that runs a conjugate-gradient loop whose operator
 * and vector updates are the kernels of poisson.stn, generated at build
 * time by stencilc through CMake (stencilc_add_kernels, CMakeLists.txt).
 * The loop, its scalars and its stopping test are the host's; the vectors
 * stay where the kernels run (on the GPU with STENCIL_TARGET=cuda).
 *
 *   ./poisson [N [TOL]]      default 129 points per side, relative residual 1e-10
 *
 * Exits 1 when CG does not converge or the solution is not within the
 * discretisation error of the known one. */
#include "poisson.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  poisson_params prm = poisson_defaults();
  if (argc > 1)
    prm.N = atoi(argv[1]);
  double tol = argc > 2 ? atof(argv[2]) : 1e-10;
  if (prm.N < 5 || !(tol > 0)) {
    fprintf(stderr, "usage: poisson [N [TOL]]  (N >= 5, TOL > 0)\n");
    return 2;
  }
  poisson *ps = poisson_create(&prm);
  double rr = poisson_start(ps), rr0 = rr;
  int it = 0, maxit = 10 * prm.N;
  while (it < maxit && rr > tol * tol * rr0) {
    double alpha = rr / poisson_apply(ps);
    double rrnew = poisson_update(ps, alpha);
    poisson_direction(ps, rrnew / rr);
    rr = rrnew;
    it++;
  }
  double h = 1.0 / (prm.N - 1), err = poisson_error(ps);
  printf("poisson: %d x %d, CG: %d iterations, relative residual %.2e\n", prm.N, prm.N, it, sqrt(rr / rr0));
  printf("poisson: largest error %.3e (2 h^2 = %.3e)\n", err, 2 * h * h);
  poisson_destroy(ps);
  if (rr > tol * tol * rr0 || !(err < 2 * h * h)) { /* second order: about 1.2 h^2 */
    fprintf(stderr, "poisson: FAIL: %s\n", rr > tol * tol * rr0 ? "CG did not converge" : "the error is not O(h^2)");
    return 1;
  }
  return 0;
}
