/* recoef_ref.c: plain serial C for tests/lit/run/recoef.stn.
 * a, b, u and v are N x M x K floats (C order). The sweep covers the
 * interior, writes v from u (float arithmetic, left to right), sums v in
 * double, then u and v swap roles; between the two time loops a and b
 * change everywhere. Boundary points of v keep their initial values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int N = 20, M = 14, K = 37, T = 5;

static long at(int i, int j, int k) { return ((long)i * M + j) * K + k; }

static int arg_int(const char *arg, const char *name, int *out)
{
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0 || arg[n] != '=')
    return 0;
  char *end;
  long v = strtol(arg + n + 1, &end, 10);
  if (*end || v < 1) {
    fprintf(stderr, "bad value in %s\n", arg);
    exit(1);
  }
  *out = (int)v;
  return 1;
}

static float *u, *v, *a, *b;

static double sweeps(void)
{
  double s = 0;
  for (int t = 0; t < T; t++) {
    s = 0;
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < M - 1; j++)
        for (int k = 1; k < K - 1; k++) {
          float around = u[at(i - 1, j, k)] + u[at(i + 1, j, k)];
          around = around + u[at(i, j - 1, k)];
          around = around + u[at(i, j + 1, k)];
          around = around + u[at(i, j, k - 1)];
          around = around + u[at(i, j, k + 1)];
          float x = b[at(i, j, k)] * u[at(i, j, k)] + a[at(i, j, k)] * 0.1f * around;
          v[at(i, j, k)] = x;
          s += (double)x;
        }
    float *tmp = u;
    u = v;
    v = tmp;
  }
  return s;
}

int main(int argc, char **argv)
{
  const char *save = NULL;
  for (int i = 1; i < argc; i++) {
    if (arg_int(argv[i], "--N", &N) || arg_int(argv[i], "--M", &M) || arg_int(argv[i], "--K", &K) ||
        arg_int(argv[i], "--T", &T))
      continue;
    if (strncmp(argv[i], "--save=u=", 9) == 0) {
      save = argv[i] + 9;
      continue;
    }
    fprintf(stderr, "unknown argument %s\n", argv[i]);
    return 1;
  }
  long n = (long)N * M * K;
  u = malloc(sizeof *u * n), v = malloc(sizeof *v * n), a = malloc(sizeof *a * n), b = malloc(sizeof *b * n);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      for (int k = 0; k < K; k++) {
        a[at(i, j, k)] = (float)(1.0 + 0.01 * i);
        b[at(i, j, k)] = (float)(0.5 + 0.001 * k);
        u[at(i, j, k)] = (float)sin(0.1 * i + 0.2 * j + 0.3 * k);
        v[at(i, j, k)] = u[at(i, j, k)];
      }
  printf("first : %.17g\n", sweeps());
  for (long x = 0; x < n; x++) {
    a[x] = 2.0f - a[x];
    b[x] = 0.9f * b[x];
  }
  printf("second : %.17g\n", sweeps());
  if (save) {
    FILE *f = fopen(save, "wb");
    if (!f || fwrite(u, sizeof *u, n, f) != (size_t)n || fclose(f)) {
      perror(save);
      return 1;
    }
  }
  free(u);
  free(v);
  free(a);
  free(b);
  return 0;
}
