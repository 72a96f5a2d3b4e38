/*
 * jacobi2d_ref.c - serial reference implementation of examples/jacobi2d.stn.
 *
 * 2D Helmholtz equation u_xx + u_yy - alpha*u = f on [-1,1]^2, exact solution
 * u = (1 - x^2)(1 - y^2), solved by relaxed Jacobi until the residual drops
 * below TOL or MAXIT sweeps have run. Written plainly in C99 with no OpenMP,
 * for checking the programs that stencilc generates. All arithmetic is
 * double and follows the .stn's evaluation order. The grid is N x M, C order:
 * i (x, spacing dx) runs along dim 0, j (y, spacing dy) along dim 1.
 *
 * Command line (the same as the generated program):
 *   --N=n --M=n     grid size (default 200 x 200)
 *   --alpha=x       Helmholtz constant (default 1.0)
 *   --relax=x       relaxation factor (default 0.5)
 *   --TOL=x         residual tolerance (default 1e-10)
 *   --MAXIT=n       maximum number of sweeps (default 1000)
 *   --save=u=PATH   write the final u to PATH: N*M raw native float64
 *                   values in C order (j fastest), no header
 * Output: "Iterations : %d", "Residual : %.12g", "Solution Error : %.12g".
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int N = 200, M = 200;
static double alpha = 1.0;
static double relax = 0.5;
static double TOL = 1e-10;
static int MAXIT = 1000;

/* Index of point (i, j) in a C-order N x M array. */
#define IDX(i, j) ((size_t)(i) * (size_t)M + (size_t)(j))

static void usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "jacobi2d_ref: %s: '%s'\n", msg, arg);
    fprintf(stderr, "usage: jacobi2d_ref [--N=n] [--M=n] [--alpha=x] [--relax=x] [--TOL=x]"
                    " [--MAXIT=n] [--save=u=PATH]\n");
    exit(1);
}

/* Parses the integer after "--NAME=" in arg; rejects junk and values < min. */
static int parse_int(const char *arg, const char *text, long min)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || errno != 0 || v > 1000000000L)
        usage_error("not an integer (or too large)", arg);
    if (v < min)
        usage_error("value too small", arg);
    return (int)v;
}

/* Parses the floating-point number after "--NAME=" in arg. */
static double parse_double(const char *arg, const char *text)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (*text == '\0' || *end != '\0' || errno != 0)
        usage_error("not a number", arg);
    return v;
}

static double *alloc_field(size_t n)
{
    double *f = malloc(n * sizeof *f);
    if (f == NULL) {
        fprintf(stderr, "jacobi2d_ref: out of memory\n");
        exit(1);
    }
    return f;
}

static int save_field(const char *path, const double *f, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (fp == NULL) {
        perror(path);
        return -1;
    }
    size_t written = fwrite(f, sizeof *f, n, fp);
    if (fclose(fp) != 0 || written != n) {
        fprintf(stderr, "jacobi2d_ref: error writing %s\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *save_u = NULL;

    for (int n = 1; n < argc; n++) {
        const char *arg = argv[n];
        if (strncmp(arg, "--N=", 4) == 0)
            N = parse_int(arg, arg + 4, 3);
        else if (strncmp(arg, "--M=", 4) == 0)
            M = parse_int(arg, arg + 4, 3);
        else if (strncmp(arg, "--alpha=", 8) == 0)
            alpha = parse_double(arg, arg + 8);
        else if (strncmp(arg, "--relax=", 8) == 0)
            relax = parse_double(arg, arg + 8);
        else if (strncmp(arg, "--TOL=", 6) == 0)
            TOL = parse_double(arg, arg + 6);
        else if (strncmp(arg, "--MAXIT=", 8) == 0)
            MAXIT = parse_int(arg, arg + 8, 0);
        else if (strncmp(arg, "--save=u=", 9) == 0 && arg[9] != '\0')
            save_u = arg + 9;
        else
            usage_error("unknown or malformed argument", arg);
    }

    size_t npts = (size_t)N * (size_t)M;
    double *u = alloc_field(npts);
    double *uold = alloc_field(npts);
    double *f = alloc_field(npts);

    double dx = 2.0 / (N - 1);
    double dy = 2.0 / (M - 1);
    double ax = 1.0 / (dx * dx);
    double ay = 1.0 / (dy * dy);
    double b = -2.0 / (dx * dx) - 2.0 / (dy * dy) - alpha;

    /* kernel initialize over G */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            double x = -1.0 + dx * i;
            double y = -1.0 + dy * j;
            u[IDX(i, j)] = 0.0;
            uold[IDX(i, j)] = 0.0;
            f[IDX(i, j)] = -alpha * (1.0 - x * x) * (1.0 - y * y)
                           - 2.0 * (1.0 - x * x) - 2.0 * (1.0 - y * y);
        }

    double error = 10.0 * TOL;
    int k = 0;
    while (k < MAXIT && error > TOL) {
        /* swap u, uold */
        double *tmp = u;
        u = uold;
        uold = tmp;

        /* kernel sweep over interior(G), sum of resid^2 */
        error = 0.0;
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < M - 1; j++) {
                size_t x = IDX(i, j);
                double resid = (ax * (uold[x - M] + uold[x + M])
                                + ay * (uold[x - 1] + uold[x + 1])
                                + b * uold[x] - f[x]) / b;
                u[x] = uold[x] - relax * resid;
                error += resid * resid;
            }
        error = sqrt(error) / (N * M);
        k = k + 1;
    }

    printf("Iterations : %d\n", k);
    printf("Residual : %.12g\n", error);

    /* kernel error_check over G */
    double e = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            double x = -1.0 + dx * i;
            double y = -1.0 + dy * j;
            double d = u[IDX(i, j)] - (1.0 - x * x) * (1.0 - y * y);
            e += d * d;
        }
    printf("Solution Error : %.12g\n", sqrt(e) / (N * M));

    int status = 0;
    if (save_u != NULL && save_field(save_u, u, npts) != 0)
        status = 1;
    free(u);
    free(uold);
    free(f);
    return status;
}
