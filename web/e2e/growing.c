// The program the live-view end-to-end test records with `memlens record --view`: for
// about SECONDS seconds (default 5) it keeps a 64 KiB block every 10 ms
// (`grow_cache`, the heap grows steadily) and allocates and frees a few short-lived
// buffers (`churn`), then prints a checksum of what it kept.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *kept[100000];
static volatile unsigned long sink;

__attribute__((noinline)) void grow_cache(int i) {
    kept[i] = malloc(65536);
    memset(kept[i], i, 65536);
}

__attribute__((noinline)) void churn(int i) {
    char *p = malloc(1000 + i % 100);
    memset(p, i, 100);
    sink += (unsigned char)p[i % 100];
    free(p);
}

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 5;
    if (seconds < 1 || seconds > 900) seconds = 5;
    struct timespec pause = {0, 10 * 1000 * 1000};
    for (int i = 0; i < seconds * 100; i++) {
        grow_cache(i);
        for (int k = 0; k < 50; k++) churn(k);
        nanosleep(&pause, NULL);
    }
    unsigned long sum = 0;
    for (int i = 0; i < seconds * 100; i++) sum += (unsigned char)kept[i][i % 65536];
    printf("%lu %lu\n", sum, sink);
    return 0;
}
