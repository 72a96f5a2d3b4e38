/*
 * himeno_ref.c - serial reference implementation of examples/himeno.stn.
 *
 * This is the classic RIKEN Himeno benchmark (point-Jacobi solution of a 3D
 * Poisson equation with a 19-point stencil), written plainly in C99 with no
 * OpenMP, for checking the programs that stencilc generates. It follows the
 * original mat_set / mat_set_init / jacobi routines:
 *   a[0..2] = 1, a[3] = 1/6, b[0..2] = 0, c[0..2] = 1, wrk1 = 0, bnd = 1,
 *   p[i][j][k] = (float)(i*i) / (float)((NI-1)*(NI-1)), wrk2 = p;
 * each sweep computes wrk2 = p + omega*ss over the interior, accumulating
 * ss*ss in a double gosa, then copies the interior of wrk2 back into p (the
 * original's copy-back; the .stn swaps p and wrk2 instead, which is the same
 * because neither array's boundary is ever written).
 *
 * Command line (the same as the generated program):
 *   --NI=n --NJ=n --NK=n   grid size (default 65 x 65 x 129, size S)
 *   --ITERS=n              number of Jacobi sweeps (default 100)
 *   --save=p=PATH          write the final p to PATH: NI*NJ*NK raw native
 *                          float32 values in C order (k fastest), no header
 * Output: the grid size, the iteration count and "Gosa : %.12g".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long NI = 65, NJ = 65, NK = 129;
static long ITERS = 100;
static const float omega = 0.8f;

/* Index of point (i, j, k) in a C-order NI x NJ x NK array. */
#define IDX(i, j, k) ((((size_t)(i) * (size_t)NJ) + (size_t)(j)) * (size_t)NK + (size_t)(k))

static void usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "himeno_ref: %s: '%s'\n", msg, arg);
    fprintf(stderr, "usage: himeno_ref [--NI=n] [--NJ=n] [--NK=n] [--ITERS=n] [--save=p=PATH]\n");
    exit(1);
}

/* Parses the integer after "--NAME=" in arg; rejects junk and values < min. */
static long parse_long(const char *arg, const char *text, long min)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || errno != 0)
        usage_error("not an integer", arg);
    if (v < min)
        usage_error("value too small", arg);
    return v;
}

static float *alloc_field(size_t n)
{
    float *f = malloc(n * sizeof *f);
    if (f == NULL) {
        fprintf(stderr, "himeno_ref: out of memory\n");
        exit(1);
    }
    return f;
}

static int save_field(const char *path, const float *f, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (fp == NULL) {
        perror(path);
        return -1;
    }
    size_t written = fwrite(f, sizeof *f, n, fp);
    if (fclose(fp) != 0 || written != n) {
        fprintf(stderr, "himeno_ref: error writing %s\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *save_p = NULL;

    for (int n = 1; n < argc; n++) {
        const char *arg = argv[n];
        if (strncmp(arg, "--NI=", 5) == 0)
            NI = parse_long(arg, arg + 5, 3);
        else if (strncmp(arg, "--NJ=", 5) == 0)
            NJ = parse_long(arg, arg + 5, 3);
        else if (strncmp(arg, "--NK=", 5) == 0)
            NK = parse_long(arg, arg + 5, 3);
        else if (strncmp(arg, "--ITERS=", 8) == 0)
            ITERS = parse_long(arg, arg + 8, 0);
        else if (strncmp(arg, "--save=p=", 9) == 0 && arg[9] != '\0')
            save_p = arg + 9;
        else
            usage_error("unknown or malformed argument", arg);
    }

    size_t npts = (size_t)NI * (size_t)NJ * (size_t)NK;
    float *a[4], *b[3], *c[3];
    for (int m = 0; m < 4; m++)
        a[m] = alloc_field(npts);
    for (int m = 0; m < 3; m++) {
        b[m] = alloc_field(npts);
        c[m] = alloc_field(npts);
    }
    float *wrk1 = alloc_field(npts);
    float *bnd = alloc_field(npts);
    float *p = alloc_field(npts);
    float *wrk2 = alloc_field(npts);

    printf("Grid size : %ld x %ld x %ld\n", NI, NJ, NK);
    printf("Iterations : %ld\n", ITERS);

    /* mat_set and mat_set_init of the original, over every point. */
    for (long i = 0; i < NI; i++)
        for (long j = 0; j < NJ; j++)
            for (long k = 0; k < NK; k++) {
                size_t x = IDX(i, j, k);
                a[0][x] = 1.0f;
                a[1][x] = 1.0f;
                a[2][x] = 1.0f;
                a[3][x] = (float)(1.0 / 6.0);
                b[0][x] = 0.0f;
                b[1][x] = 0.0f;
                b[2][x] = 0.0f;
                c[0][x] = 1.0f;
                c[1][x] = 1.0f;
                c[2][x] = 1.0f;
                wrk1[x] = 0.0f;
                bnd[x] = 1.0f;
                p[x] = (float)(i * i) / (float)((NI - 1) * (NI - 1));
                wrk2[x] = p[x];
            }

    /* Offsets of the neighbours in the flattened array. */
    const size_t si = (size_t)NJ * (size_t)NK; /* one step in i */
    const size_t sj = (size_t)NK;              /* one step in j */
    const size_t sk = 1;                       /* one step in k */

    double gosa = 0.0;
    for (long n = 0; n < ITERS; n++) {
        gosa = 0.0;
        for (long i = 1; i < NI - 1; i++)
            for (long j = 1; j < NJ - 1; j++)
                for (long k = 1; k < NK - 1; k++) {
                    size_t x = IDX(i, j, k);
                    float s0 = a[0][x] * p[x + si]
                             + a[1][x] * p[x + sj]
                             + a[2][x] * p[x + sk]
                             + b[0][x] * (p[x + si + sj] - p[x + si - sj]
                                          - p[x - si + sj] + p[x - si - sj])
                             + b[1][x] * (p[x + sj + sk] - p[x - sj + sk]
                                          - p[x + sj - sk] + p[x - sj - sk])
                             + b[2][x] * (p[x + si + sk] - p[x - si + sk]
                                          - p[x + si - sk] + p[x - si - sk])
                             + c[0][x] * p[x - si]
                             + c[1][x] * p[x - sj]
                             + c[2][x] * p[x - sk]
                             + wrk1[x];
                    float ss = (s0 * a[3][x] - p[x]) * bnd[x];
                    gosa += (double)(ss * ss);
                    wrk2[x] = p[x] + omega * ss;
                }
        /* Copy the new interior back into p. */
        for (long i = 1; i < NI - 1; i++)
            for (long j = 1; j < NJ - 1; j++)
                for (long k = 1; k < NK - 1; k++)
                    p[IDX(i, j, k)] = wrk2[IDX(i, j, k)];
    }

    printf("Gosa : %.12g\n", gosa);

    int status = 0;
    if (save_p != NULL && save_field(save_p, p, npts) != 0)
        status = 1;

    for (int m = 0; m < 4; m++)
        free(a[m]);
    for (int m = 0; m < 3; m++) {
        free(b[m]);
        free(c[m]);
    }
    free(wrk1);
    free(bnd);
    free(p);
    free(wrk2);
    return status;
}
