/* matmul_regions.c — a matrix multiply that names its three matrices with
 * MEMLENS_NAME_REGION and records only the multiply (MEMLENS_START/STOP),
 * for crates/memlens/tests/cache_record.rs. Prints each matrix's address and
 * length so the test can check the recorded regions. Usage: matmul_regions N */
#include <stdio.h>
#include <stdlib.h>

#include "memlens.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32;
    size_t bytes = (size_t)n * n * sizeof(double);
    double *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    if (!a || !b || !c)
        return 1;
    for (int i = 0; i < n * n; i++) {
        a[i] = i % 7;
        b[i] = i % 5;
        c[i] = 0;
    }
    MEMLENS_NAME_REGION(a, bytes, "A");
    MEMLENS_NAME_REGION(b, bytes, "B");
    MEMLENS_NAME_REGION(c, bytes, "C");
    printf("A %lx %zu\nB %lx %zu\nC %lx %zu\n", (unsigned long)a, bytes, (unsigned long)b,
           bytes, (unsigned long)c, bytes);
    fflush(stdout);
    MEMLENS_START();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = c[i * n + j];
            for (int k = 0; k < n; k++)
                s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
    MEMLENS_STOP();
    printf("%f\n", c[n * n - 1]);
    free(a);
    free(b);
    free(c);
    return 0;
}
