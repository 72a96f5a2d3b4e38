/*
 * fieldcmp.c - compare two raw field dumps element by element.
 *
 *   fieldcmp --type=float|double|int --atol=X [--rtol=Y] A B
 *
 * A and B are raw files of native float32 (--type=float) or float64
 * (--type=double) or int32 (--type=int) values with no header, as written by the --save=FIELD=PATH
 * option of the generated programs and of the references in tests/ref/.
 * The files must have the same size. Element n passes when
 *   |a[n] - b[n]| <= atol + rtol * |b[n]|      (rtol defaults to 0)
 * and a NaN in either file is always a failure. B is the reference.
 *
 * Prints the number of elements and the largest absolute difference with
 * its index; on failure prints "FAIL:" lines (the first few bad elements and
 * a count). Exit status: 0 pass, 1 fail, 2 bad usage or unreadable file.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPORTED 10 /* bad elements listed one by one */

static void usage(const char *msg)
{
    fprintf(stderr, "fieldcmp: %s\n", msg);
    fprintf(stderr, "usage: fieldcmp --type=float|double|int --atol=X [--rtol=Y] A B\n");
    exit(2);
}

static double parse_tol(const char *arg, const char *text)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (*text == '\0' || *end != '\0' || errno != 0 || !(v >= 0.0)) {
        fprintf(stderr, "fieldcmp: bad tolerance '%s'\n", arg);
        usage("tolerances must be numbers >= 0");
    }
    return v;
}

/* Reads a whole file into a malloc'd buffer; sets *size to its length. */
static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        fprintf(stderr, "fieldcmp: cannot open %s: %s\n", path, strerror(errno));
        exit(2);
    }
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            fprintf(stderr, "fieldcmp: out of memory reading %s\n", path);
            exit(2);
        }
        len += fread(buf + len, 1, cap - len, fp);
        if (len < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    if (ferror(fp)) {
        fprintf(stderr, "fieldcmp: error reading %s\n", path);
        exit(2);
    }
    fclose(fp);
    *size = len;
    return buf;
}

/* Element n of a buffer of floats or doubles, as a double. */
static double element(const unsigned char *buf, size_t n, size_t elsize, int is_int)
{
    if (is_int) {
        int v;
        memcpy(&v, buf + n * elsize, sizeof v);
        return v;
    }
    if (elsize == sizeof(float)) {
        float v;
        memcpy(&v, buf + n * elsize, sizeof v);
        return v;
    } else {
        double v;
        memcpy(&v, buf + n * elsize, sizeof v);
        return v;
    }
}

int main(int argc, char **argv)
{
    size_t elsize = 0;
    int is_int = 0;
    const char *type = NULL;
    double atol = -1.0, rtol = 0.0;
    const char *files[2];
    int nfiles = 0;

    for (int n = 1; n < argc; n++) {
        const char *arg = argv[n];
        if (strcmp(arg, "--type=float") == 0) {
            elsize = sizeof(float);
            type = "float";
        } else if (strcmp(arg, "--type=int") == 0) {
            elsize = sizeof(int);
            is_int = 1;
            type = "int";
        } else if (strcmp(arg, "--type=double") == 0) {
            elsize = sizeof(double);
            type = "double";
        } else if (strncmp(arg, "--atol=", 7) == 0) {
            atol = parse_tol(arg, arg + 7);
        } else if (strncmp(arg, "--rtol=", 7) == 0) {
            rtol = parse_tol(arg, arg + 7);
        } else if (strncmp(arg, "--", 2) == 0) {
            fprintf(stderr, "fieldcmp: unknown option '%s'\n", arg);
            usage("bad option");
        } else if (nfiles < 2) {
            files[nfiles++] = arg;
        } else {
            usage("too many files");
        }
    }
    if (elsize == 0)
        usage("--type=float, --type=double or --type=int is required");
    if (atol < 0.0)
        usage("--atol=X is required");
    if (nfiles != 2)
        usage("two files are required");

    size_t size_a, size_b;
    unsigned char *a = read_file(files[0], &size_a);
    unsigned char *b = read_file(files[1], &size_b);

    if (size_a != size_b) {
        printf("FAIL: sizes differ: %s has %zu bytes, %s has %zu bytes\n",
               files[0], size_a, files[1], size_b);
        return 1;
    }
    if (size_a % elsize != 0) {
        printf("FAIL: %zu bytes is not a whole number of %s elements\n", size_a, type);
        return 1;
    }
    size_t count = size_a / elsize;
    if (count == 0) {
        printf("FAIL: the files are empty\n");
        return 1;
    }

    size_t nbad = 0, nnan = 0, max_index = 0;
    double max_diff = 0.0;
    for (size_t n = 0; n < count; n++) {
        double va = element(a, n, elsize, is_int);
        double vb = element(b, n, elsize, is_int);
        double diff = fabs(va - vb);
        int bad;
        if (isnan(va) || isnan(vb)) {
            bad = 1;
            nnan++;
        } else {
            bad = !(diff <= atol + rtol * fabs(vb));
            if (diff > max_diff) {
                max_diff = diff;
                max_index = n;
            }
        }
        if (bad) {
            if (nbad < MAX_REPORTED)
                printf("FAIL: element %zu: %.17g vs %.17g (diff %.6g)\n", n, va, vb, diff);
            nbad++;
        }
    }

    printf("elements: %zu (%s)\n", count, type);
    printf("max abs diff: %.6g at element %zu (%.17g vs %.17g)\n", max_diff, max_index,
           element(a, max_index, elsize, is_int), element(b, max_index, elsize, is_int));
    if (nbad > 0) {
        printf("FAIL: %zu of %zu elements differ by more than atol=%g + rtol=%g*|ref|"
               " (%zu NaN)\n", nbad, count, atol, rtol, nnan);
        return 1;
    }
    printf("PASS: atol=%g rtol=%g\n", atol, rtol);
    free(a);
    free(b);
    return 0;
}
