/* periodic_ref.c: plain serial C for tests/lit/run/periodic.stn, with the
 * wrap-around written out: a read at x + o along a periodic dimension of
 * size n reads ((x + o) % n + n) % n; along a non-periodic dimension it
 * reads the halo, which holds zeros. Fields start at zero; each step
 * writes the new field over its region, then the two swap.
 *   --save=PATH writes PATH.a, PATH.b, PATH.c (raw doubles, C order). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int N = 7, M = 5, K = 6, T = 4;

static int wrap(int x, int n) { return (x % n + n) % n; }

static int arg_int(const char *arg, const char *name, int *out)
{
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0 || arg[n] != '=')
    return 0;
  *out = atoi(arg + n + 1);
  return 1;
}

/* b on N x M, periodic in j; i outside [0, N) reads 0. */
static double B(const double *b, int i, int j) { return i < 0 || i >= N ? 0.0 : b[(long)i * M + wrap(j, M)]; }
/* c on N x M x K, periodic in i and k; j outside [0, M) reads 0. */
static double C(const double *c, int i, int j, int k)
{
  return j < 0 || j >= M ? 0.0 : c[((long)wrap(i, N) * M + j) * K + wrap(k, K)];
}

static void save(const char *path, const char *ext, const double *x, long n)
{
  char name[4096];
  snprintf(name, sizeof name, "%s.%s", path, ext);
  FILE *f = fopen(name, "wb");
  if (!f || fwrite(x, sizeof *x, n, f) != (size_t)n || fclose(f)) {
    perror(name);
    exit(1);
  }
}

int main(int argc, char **argv)
{
  const char *path = NULL;
  for (int q = 1; q < argc; q++) {
    if (arg_int(argv[q], "--N", &N) || arg_int(argv[q], "--M", &M) || arg_int(argv[q], "--K", &K) ||
        arg_int(argv[q], "--T", &T))
      continue;
    if (strncmp(argv[q], "--save=", 7) == 0) {
      path = argv[q] + 7;
      continue;
    }
    fprintf(stderr, "unknown argument %s\n", argv[q]);
    return 1;
  }
  long n1 = N, n2 = (long)N * M, n3 = (long)N * M * K;
  double *a = calloc(n1, 8), *an = calloc(n1, 8), *b = calloc(n2, 8), *bn = calloc(n2, 8);
  double *c = calloc(n3, 8), *cn = calloc(n3, 8), *t;
  for (int i = 0; i < N; i++) {
    a[i] = sin(0.7 * i) + 0.1 * i;
    for (int j = 0; j < M; j++) {
      b[(long)i * M + j] = sin(0.3 * i + 0.5 * j * j);
      for (int k = 0; k < K; k++)
        c[((long)i * M + j) * K + k] = cos(0.2 * i + 0.3 * j + 0.45 * k * k);
    }
  }
  for (int s = 0; s < T; s++) {
    for (int i = 0; i < N; i++)
      an[i] = 0.5 * a[i] + 0.3 * a[wrap(i + 1, N)] + 0.15 * a[wrap(i - 2, N)] + 0.05 * a[wrap(i + 3, N)];
    t = a, a = an, an = t;
    for (int i = 1; i < N - 1; i++)
      for (int j = 0; j < M; j++)
        bn[(long)i * M + j] = 0.4 * B(b, i, j) + 0.2 * B(b, i + 1, j) + 0.1 * B(b, i - 1, j) + 0.2 * B(b, i, j + 1)
                            + 0.1 * B(b, i, j - 2);
    t = b, b = bn, bn = t;
    for (int i = 0; i < N; i++)
      for (int j = 1; j < M - 1; j++)
        for (int k = 0; k < K; k++)
          cn[((long)i * M + j) * K + k] = 0.3 * C(c, i, j, k) + 0.1 * C(c, i + 1, j, k) + 0.15 * C(c, i - 1, j, k)
                                        + 0.1 * C(c, i, j + 1, k) + 0.05 * C(c, i, j - 1, k) + 0.2 * C(c, i, j, k + 1)
                                        + 0.1 * C(c, i, j, k - 3) + 0.01 * C(c, i - 2, j + 1, k + 3);
    t = c, c = cn, cn = t;
  }
  double s1 = 0, s2 = 0, s3 = 0;
  for (int i = 0; i < N; i++) {
    s1 += a[i] * (1 + i);
    for (int j = 0; j < M; j++) {
      s2 += b[(long)i * M + j] * (1 + i + 2 * j);
      for (int k = 0; k < K; k++)
        s3 += c[((long)i * M + j) * K + k] * (1 + i + 2 * j + 3 * k);
    }
  }
  printf("sums : %.17g %.17g %.17g\n", s1, s2, s3);
  if (path) {
    save(path, "a", a, n1);
    save(path, "b", b, n2);
    save(path, "c", c, n3);
  }
  return 0;
}
