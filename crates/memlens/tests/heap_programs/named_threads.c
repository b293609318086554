// Two named worker threads that each keep a growing and a churning set of
// blocks, and a main thread with a flat set (heap_cli.rs, tests 3 and 4).
// The trees by thread must show the names `parser` and `indexer`.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define KEEP 4000

static volatile unsigned sink;

static void *work(void *arg) {
    const char *name = arg;
    pthread_setname_np(pthread_self(), name);
    void **kept = calloc(KEEP, sizeof *kept);
    size_t base = strlen(name) * 16;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < KEEP / 20; i++) kept[round * (KEEP / 20) + i] = malloc(base + i % 64);
        for (int i = 0; i < 200; i++) {
            char *scratch = malloc(1000 + i);
            scratch[0] = (char)i;
            sink += (unsigned char)scratch[0];
            free(scratch);
        }
    }
    return kept;
}

int main(void) {
    pthread_t parser, indexer;
    void *flat[256];
    for (int i = 0; i < 256; i++) flat[i] = malloc(100);
    pthread_create(&parser, NULL, work, "parser");
    pthread_create(&indexer, NULL, work, "indexer");
    void *a, *b;
    pthread_join(parser, &a);
    pthread_join(indexer, &b);
    for (int i = 0; i < 256; i++) free(flat[i]);
    return a == b;
}
