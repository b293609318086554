// A program with one leak for the export tests (cli/export_pprof.rs): two threads
// each call `leak_records`, which keeps every block it allocates, and
// `temporaries`, which frees what it allocates; a realloc'd buffer grows and is
// freed. Every block is written to, so no compiler can drop an allocation. The
// argument is the number of rounds per thread (default 2000).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;

__attribute__((noinline)) char *leak_records(int n) {
    char *p = malloc(n);
    memset(p, 1, n);
    return p;
}

__attribute__((noinline)) void temporaries(int n) {
    char *p = malloc(n);
    memset(p, 2, n);
    sink += p[n - 1];
    free(p);
}

static void *work(void *arg) {
    long rounds = (long)arg;
    char **kept = malloc(rounds * sizeof *kept);
    char *grown = NULL;
    for (long i = 0; i < rounds; i++) {
        temporaries(200 + (int)(i % 100));
        kept[i] = leak_records(48 + (int)(i % 32));
        grown = realloc(grown, 16 * (i % 64 + 1));
        grown[0] = (char)i;
    }
    for (long i = 0; i < rounds; i++) sink += kept[i][0];
    free(grown);
    free(kept);
    return NULL;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 2000;
    pthread_t t;
    pthread_create(&t, NULL, work, (void *)rounds);
    work((void *)rounds);
    pthread_join(t, NULL);
    printf("%ld\n", (long)sink);
    return 0;
}
