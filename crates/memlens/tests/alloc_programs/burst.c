// A run that allocates in one burst at its end: idle (asleep) for 1.5 s, then
// N blocks of mixed sizes allocated, written, summed and freed in quick
// succession, one in 64 kept until exit. Its mean allocation rate says nothing
// about where its blocks are; the allocation map's window of it must be placed
// by where they are. Usage: burst N.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    struct timespec idle = {1, 500000000};
    nanosleep(&idle, NULL);
    char **kept = calloc((size_t)n / 64 + 1, sizeof *kept);
    unsigned long sum = 0;
    for (long i = 0; i < n; i++) {
        size_t size = 16 + (size_t)(i * 37 % 200);
        char *p = malloc(size);
        if (!p) return 1;
        memset(p, (int)(i & 0x7f), size);
        sum += (unsigned char)p[size / 2];
        if (i % 64 == 0) kept[i / 64] = p;
        else free(p);
    }
    printf("%lu\n", sum);
    for (long i = 0; i < n / 64 + 1; i++) free(kept[i]);
    free(kept);
    return 0;
}
