/* 16 threads start together on a barrier and allocate at once. Prints a
 * checksum that does not depend on the interleaving. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 16
#define ROUNDS 4000
static pthread_barrier_t start;

static void *worker(void *arg) {
    long id = (long)arg, sum = 0;
    void *held[32] = {0};
    pthread_barrier_wait(&start);
    for (long i = 0; i < ROUNDS; i++) {
        size_t n = 16 + (size_t)((i * 7 + id * 13) % 500);
        free(held[i % 32]);
        held[i % 32] = malloc(n);
        memset(held[i % 32], (int)id, n);
        sum += (long)n;
    }
    for (int i = 0; i < 32; i++) free(held[i]);
    return (void *)sum;
}

int main(void) {
    pthread_t threads[THREADS];
    long total = 0;
    pthread_barrier_init(&start, NULL, THREADS);
    for (long t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++) {
        void *sum;
        pthread_join(threads[t], &sum);
        total += (long)sum;
    }
    printf("%d threads allocated %ld bytes\n", THREADS, total);
    return 0;
}
