/* Four named threads allocate and free blocks of mixed sizes at once, so glibc gives
 * them thread arenas; the main thread keeps a few long-lived blocks in the main heap
 * and one large block that glibc serves with mmap. The threads meet on a barrier
 * half-way, so all are alive at once. Prints a checksum that does not
 * depend on the interleaving. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 3000
static pthread_barrier_t start, middle;

static void *worker(void *arg) {
    long id = (long)arg, sum = 0;
    char name[16];
    snprintf(name, sizeof name, "worker-%ld", id);
    pthread_setname_np(pthread_self(), name);
    void *held[64] = {0};
    pthread_barrier_wait(&start);
    for (long i = 0; i < ROUNDS; i++) {
        /* All threads are alive together here, so each keeps its own arena. */
        if (i == ROUNDS / 2) pthread_barrier_wait(&middle);
        size_t n = 8 + (size_t)((i * 37 + id * 11) % 700);
        free(held[i % 64]);
        held[i % 64] = malloc(n);
        memset(held[i % 64], (int)id, n);
        sum += (long)n;
    }
    for (int i = 0; i < 64; i++) free(held[i]);
    return (void *)sum;
}

int main(void) {
    pthread_t threads[THREADS];
    long total = 0;
    void *keep[16];
    for (int i = 0; i < 16; i++) keep[i] = calloc(1, 48 + 16 * (size_t)i);
    char *big = malloc(1 << 20);
    memset(big, 1, 1 << 20);
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_barrier_init(&middle, NULL, THREADS);
    for (long t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++) {
        void *sum;
        pthread_join(threads[t], &sum);
        total += (long)sum;
    }
    total += big[12345];
    free(big);
    for (int i = 0; i < 16; i++) free(keep[i]);
    printf("%d threads allocated %ld bytes\n", THREADS, total);
    return 0;
}
