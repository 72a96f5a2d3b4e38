/* A host program using examples/himeno.stn as a library (stencilc
 * --emit=lib), compiled as C and as C++. Two contexts of different sizes
 * run interleaved: each must give what a program of its size gives alone.
 * Also checks get/set/swap/points and their errors, then runs main's
 * statements (himeno_main) on a third context. Usage:
 *   himeno_host SWEEPS PFILE_A PFILE_B     (p of each context, raw floats) */
#include "himeno.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok, const char *what)
{
  if (!ok) {
    fprintf(stderr, "himeno_host: FAIL: %s\n", what);
    exit(1);
  }
}

static void save(himeno *h, const char *path)
{
  long n = himeno_points(h, "p");
  float *p = (float *)malloc(sizeof *p * (size_t)n);
  check(p && himeno_get(h, "p", p) == 0, "get p");
  FILE *f = fopen(path, "wb");
  check(f && fwrite(p, sizeof *p, (size_t)n, f) == (size_t)n && fclose(f) == 0, "write p");
  free(p);
}

int main(int argc, char **argv)
{
  check(argc == 4, "usage: himeno_host SWEEPS PFILE_A PFILE_B");
  int sweeps = atoi(argv[1]);
  himeno_params pa = himeno_defaults(), pb = himeno_defaults();
  check(pa.NI == 65 && pa.NJ == 65 && pa.NK == 129 && pa.ITERS == 100, "defaults are the .stn file's");
  pa.NI = 33, pa.NJ = 33, pa.NK = 65;
  pb.NI = 17, pb.NJ = 25, pb.NK = 33;
  himeno *a = himeno_create(&pa), *b = himeno_create(&pb);
  check(himeno_points(a, "p") == 33L * 33 * 65 && himeno_points(b, "p") == 17L * 25 * 33, "points");
  check(himeno_points(a, "nosuch") == -1 && himeno_get(a, "nosuch", NULL) == -1, "unknown field");
  check(himeno_swap(a, "p", "wrk2") == 0 && himeno_swap(a, "p", "wrk2") == 0, "swap twice");
  check(himeno_swap(a, "p", "p") == -1 && himeno_swap(a, "p", "nosuch") == -1, "bad swap");
  himeno_init(a);
  himeno_init(b);
  double ga = 0, gb = 0;
  for (int s = 0; s < sweeps; s++) {
    ga = himeno_jacobi(a); /* wrk2 = the sweep of p; then swap, as main does */
    check(himeno_swap(a, "p", "wrk2") == 0, "swap a");
    gb = himeno_jacobi(b);
    check(himeno_swap(b, "p", "wrk2") == 0, "swap b");
  }
  printf("Gosa A : %.9e\nGosa B : %.9e\n", ga, gb);
  save(a, argv[2]);
  save(b, argv[3]);
  /* set, then get: the same points back */
  long n = himeno_points(b, "wrk1");
  float *in = (float *)malloc(sizeof *in * (size_t)n), *out = (float *)malloc(sizeof *out * (size_t)n);
  check(in && out, "memory");
  for (long i = 0; i < n; i++)
    in[i] = (float)i * 0.5f;
  check(himeno_set(b, "wrk1", in) == 0 && himeno_get(b, "wrk1", out) == 0, "set and get wrk1");
  check(memcmp(in, out, sizeof *in * (size_t)n) == 0, "wrk1 comes back as set");
  free(in);
  free(out);
  himeno_destroy(a);
  himeno_destroy(b);
  /* main's statements on a third context: prints what the program prints */
  himeno_params pc = himeno_defaults();
  pc.NI = 17, pc.NJ = 17, pc.NK = 33, pc.ITERS = 3;
  himeno *c = himeno_create(&pc);
  himeno_main(c);
  himeno_destroy(c);
  printf("ok\n");
  return 0;
}
