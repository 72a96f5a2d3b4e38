/* cpu_tb3d.c: would a 2.5-D schedule make 3-D temporal blocking pay on the
 * CPU? stencilc's overlapped 3-D tiles (8x8x128 at T = 4, a halo of T on
 * every side) compute each point 4.25 times and lose to single steps
 * (0.67x, docs/benchmarks.md 2026-11-23 12:05). Here each thread takes a
 * tile of j x k (halo T on those sides only) and marches along i: step t
 * keeps its last three planes in a ring, and in the iteration that brings
 * plane s of step 0, step t computes plane s - t; its own points of step
 * T go out. Compared with the single steps after the same step count (bit
 * for bit: the same float operations in the same order), timed beside them.
 *
 * diffusion3d's step (7-point, float, fixed boundary values) on N^3.
 *
 *   cc -O3 -march=native -fopenmp -o cpu_tb3d bench/cpu_tb3d.c && ./cpu_tb3d [N STEPS]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static const float cc = 0.4f, ce = 0.1f;

/* One step over the interior; the boundary keeps its values. */
static void step(const float *restrict f, float *restrict fn, long n)
{
  const long s0 = n * n, s1 = n;
#pragma omp parallel for schedule(static)
  for (long i = 1; i < n - 1; i++)
    for (long j = 1; j < n - 1; j++) {
      const float *c = f + i * s0 + j * s1;
      float *o = fn + i * s0 + j * s1;
#pragma omp simd
      for (long k = 1; k < n - 1; k++)
        o[k] = cc * c[k] + ce * (c[k - s0] + c[k + s0] + c[k - s1] + c[k + s1] + c[k - 1] + c[k + 1]);
    }
}

/* T steps from f into out (f's boundary copied), tiles TJ x TK. */
static void march(const float *restrict f, float *restrict out, long n, int T, int TJ, int TK)
{
  const long s0 = n * n, s1 = n;
  const int WJ = TJ + 2 * T, WK = TK + 2 * T;
  const long plane = (long)WJ * WK;
  const long ntj = (n + TJ - 1) / TJ, ntk = (n + TK - 1) / TK;
#pragma omp parallel
  {
    float *ring = malloc(sizeof(float) * (size_t)(T + 1) * 3 * (size_t)plane);
#pragma omp for collapse(2) schedule(static)
    for (long tj = 0; tj < ntj; tj++)
      for (long tk = 0; tk < ntk; tk++) {
        const long j0 = tj * TJ - T, k0 = tk * TK - T; /* global index of the buffer's (0, 0) */
        for (long s = 0; s < n + T; s++) {
          /* step 0: plane s of f, the tile and its halo, inside the grid */
          if (s < n) {
            float *d = ring + ((size_t)0 * 3 + (size_t)(s % 3)) * plane;
            for (int y = 0; y < WJ; y++) {
              const long j = j0 + y;
              if (j < 0 || j >= n)
                continue;
              const long klo = k0 < 0 ? -k0 : 0, khi = k0 + WK > n ? n - k0 : WK;
              memcpy(d + (long)y * WK + klo, f + s * s0 + j * s1 + k0 + klo, sizeof(float) * (size_t)(khi - klo));
            }
          }
          for (int t = 1; t <= T; t++) {
            const long p = s - t; /* the plane step t computes */
            if (p < 0 || p >= n)
              continue;
            const float *a = ring + ((size_t)(t - 1) * 3) * plane;
            float *d = ring + ((size_t)t * 3 + (size_t)(p % 3)) * plane;
            const float *cm = a + (size_t)((p + 2) % 3) * plane, *c0 = a + (size_t)(p % 3) * plane,
                        *cp = a + (size_t)((p + 1) % 3) * plane;
            const int sh = T - t; /* valid range: own points and sh around */
            for (int y = T - sh; y < WJ - (T - sh); y++) {
              const long j = j0 + y;
              if (j < 0 || j >= n)
                continue;
              const long klo = k0 + (T - sh) < 0 ? -k0 : T - sh, khi = k0 + WK - (T - sh) > n ? n - k0 : WK - (T - sh);
              const float *r = c0 + (long)y * WK;
              float *o = d + (long)y * WK;
              if (p == 0 || p == n - 1 || j == 0 || j == n - 1) { /* boundary: keeps its value */
                memcpy(o + klo, r + klo, sizeof(float) * (size_t)(khi - klo));
                continue;
              }
              const long ilo = klo + k0 < 1 ? 1 - k0 : klo, ihi = khi + k0 > n - 1 ? n - 1 - k0 : khi;
              if (ilo > klo)
                o[klo] = r[klo];
              if (ihi < khi)
                o[khi - 1] = r[khi - 1];
              const float *m = cm + (long)y * WK, *q = cp + (long)y * WK;
#pragma omp simd
              for (long x = ilo; x < ihi; x++)
                o[x] = cc * r[x] + ce * (m[x] + q[x] + r[x - WK] + r[x + WK] + r[x - 1] + r[x + 1]);
            }
            if (t == T) { /* own points out */
              for (int y = T; y < T + TJ; y++) {
                const long j = j0 + y;
                if (j >= n)
                  break;
                const long khi = k0 + T + TK > n ? n - k0 : T + TK;
                memcpy(out + p * s0 + j * s1 + k0 + T, d + (long)y * WK + T, sizeof(float) * (size_t)(khi - T));
              }
            }
          }
        }
      }
    free(ring);
  }
}

static double now(void) { return omp_get_wtime(); }

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 256;
  int steps = argc > 2 ? atoi(argv[2]) : 24;
  size_t sz = (size_t)n * n * n;
  float *f0 = malloc(sz * sizeof(float)), *a = malloc(sz * sizeof(float)), *b = malloc(sz * sizeof(float));
  float *c = malloc(sz * sizeof(float)), *d = malloc(sz * sizeof(float));
  for (size_t x = 0; x < sz; x++)
    f0[x] = (float)((x * 2654435761u) % 1000) / 1000.0f;
  printf("N = %ld, %d steps, %d threads\n", n, steps, omp_get_max_threads());
  /* the single steps, best of 3 */
  double best1 = 1e30;
  for (int rep = 0; rep < 3; rep++) {
    memcpy(a, f0, sz * sizeof(float));
    memcpy(b, f0, sz * sizeof(float));
    double t0 = now();
    for (int s = 0; s < steps; s++) {
      step(a, b, n);
      float *t = a; a = b; b = t;
    }
    double t1 = now() - t0;
    if (t1 < best1)
      best1 = t1;
  }
  printf("single steps            %8.4f s\n", best1);
  static const int shapes[][3] = { {2, 16, 256}, {2, 32, 256}, {2, 64, 256}, {4, 16, 256}, {4, 32, 256}, {4, 64, 256},
                                   {4, 32, 128}, {4, 64, 128}, {8, 32, 256}, {8, 64, 256}, {4, 128, 256}, {8, 128, 256} };
  for (size_t x = 0; x < sizeof shapes / sizeof shapes[0]; x++) {
    int T = shapes[x][0], TJ = shapes[x][1], TK = shapes[x][2];
    if (steps % T)
      continue;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
      memcpy(c, f0, sz * sizeof(float));
      memcpy(d, f0, sz * sizeof(float));
      double t0 = now();
      for (int s = 0; s < steps; s += T) {
        march(c, d, n, T, TJ, TK);
        /* the boundary of the output: f's (fixed) */
        float *t = c; c = d; d = t;
      }
      double t1 = now() - t0;
      if (t1 < best)
        best = t1;
    }
    double md = 0;
    for (size_t y = 0; y < sz; y++)
      md = fmax(md, fabs((double)c[y] - (double)a[y]));
    printf("2.5-D T=%d tile %3dx%-3d  %8.4f s  %5.2fx  max|diff| %g\n", T, TJ, TK, best, best1 / best, md);
  }
  return 0;
}
