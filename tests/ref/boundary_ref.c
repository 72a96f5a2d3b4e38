/*
 * boundary_ref.c - plain C reference for tests/lit/run/boundary.stn.
 * Arrays carry explicit ghost layers (G points on every side) that hold
 * the boundary values; interior updates read them directly.
 *   --N= --M= --K= --T=   sizes and steps
 *   --save=PREFIX         writes PREFIX.u (double), PREFIX.v (float),
 *                         PREFIX.w (int): the points, C order, raw
 * Prints "sums : %.17g".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { G = 2 };
static int N = 9, M = 7, K = 6, T = 5;

#define I2(i, j) ((size_t)((i) + G) * (size_t)(M + 2 * G) + (size_t)((j) + G))
#define I3(i, j, k) (((size_t)((i) + G) * (size_t)(M + 2 * G) + (size_t)((j) + G)) * (size_t)(K + 2 * G) + (size_t)((k) + G))

static int inside2(int i, int j) { return i >= 0 && i < N && j >= 0 && j < M; }
static int inside3(int i, int j, int k) { return inside2(i, j) && k >= 0 && k < K; }

static void save(const char *prefix, const char *ext, const void *data, size_t elem, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.%s", prefix, ext);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, elem, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "boundary_ref: cannot write %s\n", path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const char *prefix = NULL;
    for (int a = 1; a < argc; a++) {
        if (!strncmp(argv[a], "--N=", 4)) N = atoi(argv[a] + 4);
        else if (!strncmp(argv[a], "--M=", 4)) M = atoi(argv[a] + 4);
        else if (!strncmp(argv[a], "--K=", 4)) K = atoi(argv[a] + 4);
        else if (!strncmp(argv[a], "--T=", 4)) T = atoi(argv[a] + 4);
        else if (!strncmp(argv[a], "--save=", 7)) prefix = argv[a] + 7;
        else { fprintf(stderr, "boundary_ref: unknown argument %s\n", argv[a]); return 1; }
    }
    size_t n2 = (size_t)(N + 2 * G) * (M + 2 * G), n3 = n2 * (size_t)(K + 2 * G);
    double *u = calloc(n2, sizeof *u), *un = calloc(n2, sizeof *un);
    float *v = calloc(n3, sizeof *v), *vn = calloc(n3, sizeof *vn);
    int *w = calloc(n2, sizeof *w);
    /* Ghost values: the same function in both buffers of a pair. */
    for (int i = -G; i < N + G; i++)
        for (int j = -G; j < M + G; j++) {
            if (!inside2(i, j)) {
                u[I2(i, j)] = un[I2(i, j)] = i < 0 ? 1.0 : 0.5 * j;
                w[I2(i, j)] = (i + 1) * 10;
            }
            for (int k = -G; k < K + G; k++)
                if (!inside3(i, j, k))
                    v[I3(i, j, k)] = vn[I3(i, j, k)] = (float)(0.25 * i + 0.125 * (j * k));
        }
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++)
                un[I2(i, j)] = u[I2(i, j)] + 0.2 * (u[I2(i - 1, j)] + u[I2(i + 1, j)] + u[I2(i, j - 1)] +
                                                    u[I2(i, j + 1)] - 4.0 * u[I2(i, j)]);
        double *td = u; u = un; un = td;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++)
                for (int k = 0; k < K; k++)
                    vn[I3(i, j, k)] = 0.4f * v[I3(i, j, k)] +
                        0.1f * (v[I3(i - 2, j, k)] + v[I3(i + 1, j, k)] + v[I3(i, j - 1, k)] +
                                v[I3(i, j + 2, k)] + v[I3(i, j, k - 1)] + v[I3(i, j, k + 1)]);
        float *tf = v; v = vn; vn = tf;
    }
    /* edges: w = w[-1, 0] + w[0, 1] + i, reading the values before the kernel. */
    int *wn = malloc(n2 * sizeof *wn);
    memcpy(wn, w, n2 * sizeof *w);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            wn[I2(i, j)] = w[I2(i - 1, j)] + w[I2(i, j + 1)] + i;
    double s = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            s += u[I2(i, j)] * (1 + i + 3 * j);
    printf("sums : %.17g\n", s);
    if (prefix) {
        double *pu = malloc((size_t)N * M * sizeof *pu);
        int *pw = malloc((size_t)N * M * sizeof *pw);
        float *pv = malloc((size_t)N * M * K * sizeof *pv);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) {
                pu[(size_t)i * M + j] = u[I2(i, j)];
                pw[(size_t)i * M + j] = wn[I2(i, j)];
                for (int k = 0; k < K; k++)
                    pv[((size_t)i * M + j) * K + k] = v[I3(i, j, k)];
            }
        save(prefix, "u", pu, sizeof *pu, (size_t)N * M);
        save(prefix, "v", pv, sizeof *pv, (size_t)N * M * K);
        save(prefix, "w", pw, sizeof *pw, (size_t)N * M);
    }
    return 0;
}
