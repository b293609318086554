/* A library loaded with dlopen: dynamic TLS (`__thread` in a dlopen'ed
 * object is allocated lazily, possibly with malloc, on first use in each
 * thread) and allocations from a thread it starts. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static __thread char *scratch;
static __thread long counters[64];

static void *worker(void *arg) {
    long n = (long)arg, sum = 0;
    for (long i = 0; i < n; i++) {
        free(scratch);
        scratch = malloc(32 + (size_t)(i % 200));
        memset(scratch, 1, 32);
        counters[i % 64]++;
        sum += counters[i % 64];
    }
    free(scratch);
    scratch = NULL;
    return (void *)sum;
}

long run_in_thread(long n) {
    pthread_t thread;
    void *sum = NULL;
    pthread_create(&thread, NULL, worker, (void *)n);
    pthread_join(thread, &sum);
    return (long)sum + (long)worker((void *)n);
}
