/* Calls every allocation function, in two threads, plus blocks large enough
 * for glibc to map them with mmap (slow calls), so `memlens record --latency`
 * has a latency to measure for each kind of call. Prints what it did. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 1000

static void *work(void *arg) {
    long sum = 0;
    (void)arg;
    for (long i = 0; i < ROUNDS; i++) {
        char *p = malloc(16 + (size_t)(i % 200));
        char *q = calloc(4, 8 + (size_t)(i % 50));
        p = realloc(p, 300 + (size_t)(i % 500));
        p[0] = (char)i;
        sum += p[0] + q[0];
        free(q);
        free(p);
    }
    return (void *)sum;
}

int main(void) {
    pthread_t other;
    void *other_sum = NULL;
    if (pthread_create(&other, NULL, work, NULL) != 0) return 1;
    long sum = (long)work(NULL);
    pthread_join(other, &other_sum);

    void *a = NULL;
    if (posix_memalign(&a, 64, 100) != 0) return 1;
    free(a);
    free(aligned_alloc(32, 64));
    free(memalign(128, 256));
    free(valloc(1000));
    /* Mapped with mmap and unmapped by free: microseconds, not nanoseconds. */
    char *big = malloc(64 << 20);
    big[0] = 1;
    free(big);
    char *zeroed = calloc(1, 32 << 20);
    sum += zeroed[12345];
    free(zeroed);
    /* glibc frees the block and returns NULL. */
    void *gone = realloc(malloc(10), 0);
    printf("rounds=%d threads=2 sum=%ld other=%ld gone=%s\n", ROUNDS, sum,
           (long)other_sum, gone == NULL ? "yes" : "no");
    return 0;
}
