/* A worker calls exit() while the other threads keep allocating. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *allocate_forever(void *arg) {
    (void)arg;
    for (long i = 0;; i++) free(malloc(16 + (size_t)(i % 300)));
    return NULL;
}

static void *exit_soon(void *arg) {
    (void)arg;
    for (int i = 0; i < 20000; i++) free(malloc(64));
    printf("exiting from a worker thread\n");
    exit(4);
}

int main(void) {
    pthread_t threads[5];
    for (int t = 0; t < 4; t++) pthread_create(&threads[t], NULL, allocate_forever, NULL);
    pthread_create(&threads[4], NULL, exit_soon, NULL);
    for (;;) free(malloc(128));
}
