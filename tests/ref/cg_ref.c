/*
 * cg_ref.c - serial reference implementation of examples/cg_poisson.stn.
 *
 * Preconditioned conjugate gradient (Jacobi preconditioner) for the 3-D
 * variable-coefficient Poisson problem -div(kappa grad u) = f on the unit
 * cube with u = 0 on the faces, discretised on N^3 points (boundary
 * included) with the 7-point stencil
 *   (A u)_c = sum over faces of (kappa_c + kappa_nb) / 2 * (u_c - u_nb).
 * The right-hand side is b = A ue for a known ue. Written plainly in C99,
 * textbook PCG, no OpenMP, sharing nothing with stencilc.
 *
 * Command line: --N=n --TOL=x --MAXIT=n (defaults 64, 1e-8, 2000).
 * Output: "Iterations : %d", "Relative residual : %.12g",
 *         "Solution error : %.12g" (max |x - ue| over interior points).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int N = 64;
static double TOL = 1e-8;
static int MAXIT = 2000;

#define ID(i, j, k) (((size_t)(i) * (size_t)N + (size_t)(j)) * (size_t)N + (size_t)(k))

static double *vec(void)
{
    double *v = calloc((size_t)N * N * N, sizeof(double));
    if (!v) {
        fprintf(stderr, "cg_ref: out of memory\n");
        exit(1);
    }
    return v;
}

/* out = A v at interior points (v is zero on the faces). */
static void apply_A(const double *kap, const double *v, double *out)
{
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
            for (int k = 1; k < N - 1; k++) {
                size_t c = ID(i, j, k);
                size_t nb[6] = { ID(i - 1, j, k), ID(i + 1, j, k), ID(i, j - 1, k),
                                 ID(i, j + 1, k), ID(i, j, k - 1), ID(i, j, k + 1) };
                double s = 0;
                for (int f = 0; f < 6; f++)
                    s += 0.5 * (kap[c] + kap[nb[f]]) * (v[c] - v[nb[f]]);
                out[c] = s;
            }
}

static double dot(const double *a, const double *b)
{
    double s = 0;
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
            for (int k = 1; k < N - 1; k++)
                s += a[ID(i, j, k)] * b[ID(i, j, k)];
    return s;
}

int main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        if (strncmp(argv[a], "--N=", 4) == 0)
            N = atoi(argv[a] + 4);
        else if (strncmp(argv[a], "--TOL=", 6) == 0)
            TOL = atof(argv[a] + 6);
        else if (strncmp(argv[a], "--MAXIT=", 8) == 0)
            MAXIT = atoi(argv[a] + 8);
        else {
            fprintf(stderr, "cg_ref: unknown argument '%s' (--N= --TOL= --MAXIT=)\n", argv[a]);
            return 1;
        }
    }
    if (N < 3) {
        fprintf(stderr, "cg_ref: N must be at least 3\n");
        return 1;
    }
    const double pi = 3.14159265358979323846, h = 1.0 / (N - 1);
    double *kap = vec(), *ue = vec(), *b = vec(), *dg = vec();
    double *x = vec(), *r = vec(), *z = vec(), *p = vec(), *q = vec();

    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < N; k++) {
                double X = pi * h * i, Y = pi * h * j, Z = pi * h * k;
                kap[ID(i, j, k)] = exp(2.0 * sin(2.0 * X) * sin(2.0 * Y) * sin(2.0 * Z));
                ue[ID(i, j, k)] = sin(X) * sin(Y) * sin(Z) * (1.0 + h * i);
            }
    apply_A(kap, ue, b);
    /* Diagonal of A. */
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
            for (int k = 1; k < N - 1; k++) {
                size_t c = ID(i, j, k);
                dg[c] = 0.5 * (6 * kap[c] + kap[ID(i - 1, j, k)] + kap[ID(i + 1, j, k)] + kap[ID(i, j - 1, k)] +
                               kap[ID(i, j + 1, k)] + kap[ID(i, j, k - 1)] + kap[ID(i, j, k + 1)]);
            }

    /* PCG from x = 0. */
    for (size_t c = 0; c < (size_t)N * N * N; c++) {
        r[c] = b[c];
        z[c] = dg[c] != 0 ? r[c] / dg[c] : 0;
        p[c] = z[c];
    }
    double rz = dot(r, z), bb = dot(b, b), rr = bb;
    int it = 0;
    while (it < MAXIT && rr > TOL * TOL * bb) {
        apply_A(kap, p, q);
        double alpha = rz / dot(p, q);
        for (size_t c = 0; c < (size_t)N * N * N; c++) {
            x[c] += alpha * p[c];
            r[c] -= alpha * q[c];
            z[c] = dg[c] != 0 ? r[c] / dg[c] : 0;
        }
        double rznew = dot(r, z);
        rr = dot(r, r);
        double beta = rznew / rz;
        rz = rznew;
        for (size_t c = 0; c < (size_t)N * N * N; c++)
            p[c] = z[c] + beta * p[c];
        it++;
    }
    double err = 0;
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
            for (int k = 1; k < N - 1; k++)
                err = fmax(err, fabs(x[ID(i, j, k)] - ue[ID(i, j, k)]));
    printf("Iterations : %d\n", it);
    printf("Relative residual : %.12g\n", sqrt(rr / bb));
    printf("Solution error : %.12g\n", err);
    return 0;
}
