/* heat: a C program that gets its stencil kernel from heat.stn, generated
 * at build time by stencilc (library mode: gen/TARGET/heat.h and heat.c,
 * or heat.cu). The program owns the data and the time loop: it sets the
 * initial temperature, calls the kernel, swaps, and reads the result back,
 * then checks it against the same steps written as plain C.
 *
 *   ./heat [STEPS [N]]          default 500 steps on 256 x 256
 *   STN_PROFILE=1 ./heat        the kernel's time and bandwidth at the end */
#include "heat.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The reference: the same explicit step, plainly written. */
static double plain_step(const double *u, double *un, int nx, int ny, double nu)
{
  double heat = 0;
  for (int y = 1; y < ny - 1; y++)
    for (int x = 1; x < nx - 1; x++) {
      const double *c = u + (long)y * nx + x;
      double v = *c + nu * (c[-nx] + c[nx] + c[-1] + c[1] - 4.0 * *c);
      un[(long)y * nx + x] = v;
      heat += v;
    }
  return heat;
}

int main(int argc, char **argv)
{
  int steps = argc > 1 ? atoi(argv[1]) : 500;
  heat_params prm = heat_defaults();
  if (argc > 2)
    prm.NX = prm.NY = atoi(argv[2]);
  if (steps < 1 || prm.NX < 3) {
    fprintf(stderr, "usage: heat [STEPS [N]]  (STEPS >= 1, N >= 3)\n");
    return 2;
  }
  const int nx = prm.NX, ny = prm.NY;
  const double nu = 0.2; /* stable for nu <= 0.25 */

  heat *h = heat_create(&prm);
  long n = heat_points(h, "u");
  double *u = calloc((size_t)n, sizeof *u), *un = calloc((size_t)n, sizeof *un);
  double *got = malloc(sizeof *got * (size_t)n);
  if (!u || !un || !got) {
    fprintf(stderr, "heat: out of memory for %ld points\n", n);
    return 1;
  }
  /* a hot square in the middle */
  double heat0 = 0;
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      if (abs(2 * x - nx) < nx / 4 && abs(2 * y - ny) < ny / 4) {
        u[(long)y * nx + x] = 1.0;
        heat0 += 1.0;
      }
  heat_set(h, "u", u);

  double heat = 0, plain_heat = 0;
  for (int s = 0; s < steps; s++) {
    heat = heat_step(h, nu);
    heat_swap(h, "u", "un");
  }
  heat_get(h, "u", got);

  for (int s = 0; s < steps; s++) {
    plain_heat = plain_step(u, un, nx, ny, nu);
    double *t = u;
    u = un, un = t;
  }
  double diff = 0;
  for (long i = 0; i < n; i++)
    diff = fmax(diff, fabs(got[i] - u[i]));

  printf("heat: %d steps on %d x %d: total heat %.6f (from %.0f; plain C %.6f)\n", steps, nx, ny, heat, heat0, plain_heat);
  printf("heat: largest difference from plain C: %.3g\n", diff);
  heat_destroy(h);
  free(u), free(un), free(got);
  if (!(diff <= 1e-12) || !(fabs(heat - plain_heat) <= 1e-9 * heat0)) {
    fprintf(stderr, "heat: FAIL: the generated kernel and plain C disagree\n");
    return 1;
  }
  return 0;
}
