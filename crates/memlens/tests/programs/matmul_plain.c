/* matmul_plain.c — a matrix multiply with no memlens macros at all, for
 * crates/memlens/tests/cache_record.rs: its matrices come from malloc and
 * calloc, a global holds the checksum, and it exits with status 3, so the
 * test checks heap-site and global regions, the reference count against
 * Cachegrind's, and the exit status. Built with -O3, so the set-up loops use
 * SIMD loads and stores. Usage: matmul_plain N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double checksum[4];

static double *matrix(int n)
{
    return malloc((size_t)n * n * sizeof(double));
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32;
    double *a = matrix(n);
    double *b = matrix(n);
    double *c = calloc((size_t)n * n, sizeof(double));
    if (!a || !b || !c)
        return 1;
    for (int i = 0; i < n * n; i++) {
        a[i] = i % 7;
        b[i] = i % 5;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = c[i * n + j];
            for (int k = 0; k < n; k++)
                s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
    memcpy(a, c, (size_t)n * n * sizeof(double));
    for (int i = 0; i < n * n; i++)
        checksum[i % 4] += a[i];
    printf("%f\n", checksum[0] + checksum[1] + checksum[2] + checksum[3]);
    free(a);
    free(b);
    free(c);
    return 3;
}
