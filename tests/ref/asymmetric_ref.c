/* asymmetric_ref.c: plain serial C for tests/lit/run/asymmetric.stn.
 * u and v are N x M x K doubles (C order); the sweep covers 2 <= i < N-2
 * (likewise j, k), writes v, then u and v swap roles. Boundary points of v
 * keep their initial values (v = u at the start). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int N = 12, M = 9, K = 17, T = 3;

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

int main(int argc, char **argv)
{
  const char *save = NULL;
  for (int a = 1; a < argc; a++) {
    if (arg_int(argv[a], "--N", &N) || arg_int(argv[a], "--M", &M) || arg_int(argv[a], "--K", &K) ||
        arg_int(argv[a], "--T", &T))
      continue;
    if (strncmp(argv[a], "--save=u=", 9) == 0) {
      save = argv[a] + 9;
      continue;
    }
    fprintf(stderr, "unknown argument %s\n", argv[a]);
    return 1;
  }
  long n = (long)N * M * K;
  double *u = malloc(sizeof *u * n), *v = malloc(sizeof *v * n);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      for (int k = 0; k < K; k++) {
        u[at(i, j, k)] = sin(0.1 * i + 0.2 * j * j + 0.3 * k) + 0.01 * i * j;
        v[at(i, j, k)] = u[at(i, j, k)];
      }
  double sum = 0;
  for (int t = 0; t < T; t++) {
    sum = 0;
    for (int i = 2; i < N - 2; i++)
      for (int j = 2; j < M - 2; j++)
        for (int k = 2; k < K - 2; k++) {
          double x = 0.11 * u[at(i + 1, j, k)] + 0.12 * u[at(i - 1, j, k)] + 0.13 * u[at(i, j + 2, k)]
                   + 0.14 * u[at(i, j - 1, k)] + 0.15 * u[at(i, j, k + 1)] + 0.16 * u[at(i, j, k - 2)]
                   + 0.17 * u[at(i + 1, j - 1, k + 1)] + 0.18 * u[at(i - 2, j + 1, k)] + 0.05 * u[at(i, j, k)];
          v[at(i, j, k)] = x;
          sum += x * (i + 2 * j + 3 * k);
        }
    double *tmp = u;
    u = v;
    v = tmp;
  }
  printf("sum : %.17g\n", sum);
  if (save) {
    FILE *f = fopen(save, "wb");
    if (!f || fwrite(u, sizeof *u, n, f) != (size_t)n || fclose(f)) {
      perror(save);
      return 1;
    }
  }
  free(u);
  free(v);
  return 0;
}
