/*
 * diffusion3d_ref.c - serial reference implementation of examples/diffusion3d.stn.
 *
 * 3D heat equation df/dt = kappa * laplacian(f) on the unit cube, explicit
 * Euler in time with the 7-point stencil, written plainly in C99 with no
 * OpenMP, for checking the programs that stencilc generates. It reproduces
 * the .stn's arithmetic exactly:
 *   - the initial condition is computed in double and stored to float;
 *   - ce and cc are computed in double on the host and converted to float
 *     (they are float kernel parameters);
 *   - the step is float arithmetic, evaluated left to right:
 *     fn = cc*f + ce*(((((f[i-1] + f[i+1]) + f[j-1]) + f[j+1]) + f[k-1]) + f[k+1]);
 *   - the total is summed in double over every point, the peak is the max.
 * Boundary values never change (fn's boundary is a copy of f's initially).
 *
 * Command line (the same as the generated program):
 *   --N=n          grid size N x N x N (default 64)
 *   --STEPS=n      number of time steps (default 100)
 *   --save=f=PATH  write the final f to PATH: N*N*N raw native float32
 *                  values in C order (last index fastest), no header
 * Output: "Steps : n", "Total heat : %.12g", "Peak : %.12g".
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long N = 64;
static long STEPS = 100;
static const double kappa = 0.1;
static const double pi = 3.14159265358979323846;

/* Index of point (i, j, k) in a C-order N x N x N array. */
#define IDX(i, j, k) ((((size_t)(i) * (size_t)N) + (size_t)(j)) * (size_t)N + (size_t)(k))

static void usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "diffusion3d_ref: %s: '%s'\n", msg, arg);
    fprintf(stderr, "usage: diffusion3d_ref [--N=n] [--STEPS=n] [--save=f=PATH]\n");
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
        fprintf(stderr, "diffusion3d_ref: out of memory\n");
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
        fprintf(stderr, "diffusion3d_ref: error writing %s\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *save_f = NULL;

    for (int n = 1; n < argc; n++) {
        const char *arg = argv[n];
        if (strncmp(arg, "--N=", 4) == 0)
            N = parse_long(arg, arg + 4, 3);
        else if (strncmp(arg, "--STEPS=", 8) == 0)
            STEPS = parse_long(arg, arg + 8, 0);
        else if (strncmp(arg, "--save=f=", 9) == 0 && arg[9] != '\0')
            save_f = arg + 9;
        else
            usage_error("unknown or malformed argument", arg);
    }

    size_t npts = (size_t)N * (size_t)N * (size_t)N;
    float *f = alloc_field(npts);
    float *fn = alloc_field(npts);

    /* kernel init over G: computed in double, stored to float. */
    for (long i = 0; i < N; i++)
        for (long j = 0; j < N; j++)
            for (long k = 0; k < N; k++) {
                double dx = 1.0 / N;
                double kw = 2.0 * pi;
                double v = 0.125 * (1.0 - cos(kw * dx * (i + 0.5)))
                                 * (1.0 - cos(kw * dx * (j + 0.5)))
                                 * (1.0 - cos(kw * dx * (k + 0.5)));
                f[IDX(i, j, k)] = (float)v;
                fn[IDX(i, j, k)] = f[IDX(i, j, k)];
            }

    /* Host-side coefficients, in double; the kernel takes them as float. */
    double dx = 1.0 / N;
    double dt = 0.1 * dx * dx / kappa;
    double ce_d = kappa * dt / (dx * dx);
    float ce = (float)ce_d;
    float cc = (float)(1.0 - 6.0 * ce_d);

    const size_t si = (size_t)N * (size_t)N; /* one step in i */
    const size_t sj = (size_t)N;             /* one step in j */
    const size_t sk = 1;                     /* one step in k */

    for (long n = 0; n < STEPS; n++) {
        /* kernel step over interior(G), float arithmetic. */
        for (long i = 1; i < N - 1; i++)
            for (long j = 1; j < N - 1; j++)
                for (long k = 1; k < N - 1; k++) {
                    size_t x = IDX(i, j, k);
                    float sum = f[x - si] + f[x + si];
                    sum = sum + f[x - sj];
                    sum = sum + f[x + sj];
                    sum = sum + f[x - sk];
                    sum = sum + f[x + sk];
                    fn[x] = cc * f[x] + ce * sum;
                }
        /* swap f, fn */
        float *tmp = f;
        f = fn;
        fn = tmp;
    }

    /* kernel stats over G: double sum and max of f. */
    double total = 0.0;
    double peak = -INFINITY;
    for (size_t x = 0; x < npts; x++) {
        total += f[x];
        if (f[x] > peak)
            peak = f[x];
    }

    printf("Steps : %ld\n", STEPS);
    printf("Total heat : %.12g\n", total);
    printf("Peak : %.12g\n", peak);

    int status = 0;
    if (save_f != NULL && save_field(save_f, f, npts) != 0)
        status = 1;
    free(f);
    free(fn);
    return status;
}
