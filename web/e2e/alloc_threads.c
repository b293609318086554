/* A multithreaded allocation workload for the allocation-map lens's end-to-end test:
 * four worker threads (each with its own glibc arena) build and free lists of
 * same-sized nodes in bursts, keep a few long-lived buffers, grow an array with
 * realloc and take one large mmap'd block; the main thread allocates a persistent
 * table first and frees everything at the end. Each pattern has its own function,
 * so colour-by site separates them. Built by e2e/alloc.test.mjs with
 * `cc -O1 -g -fno-omit-frame-pointer -pthread`. */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORKERS 4
#define ROUNDS 12

struct node {
    struct node *next;
    char payload[40];
};

static void pause_us(long us) {
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}

/* A list of `n` same-sized nodes, allocated in one burst. */
__attribute__((noinline)) static struct node *build_list(int n) {
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *x = malloc(sizeof *x);
        memset(x->payload, i, sizeof x->payload);
        x->next = head;
        head = x;
    }
    return head;
}

__attribute__((noinline)) static void free_list(struct node *head) {
    while (head) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
}

/* A buffer that lives for most of the run. */
__attribute__((noinline)) static char *keep_buffer(size_t size) {
    char *b = malloc(size);
    memset(b, 1, size);
    return b;
}

/* An array grown by doubling with realloc. */
__attribute__((noinline)) static int *grow_array(int *a, size_t n) {
    a = realloc(a, n * sizeof *a);
    for (size_t i = n / 2; i < n; i++) a[i] = (int)i;
    return a;
}

/* Short-lived scratch blocks of many sizes. */
__attribute__((noinline)) static void scratch(int round) {
    for (int i = 0; i < 64; i++) {
        size_t size = 16 + (size_t)((i * 37 + round * 11) % 500);
        char *s = malloc(size);
        s[0] = (char)i;
        free(s);
    }
}

static void *worker(void *arg) {
    long id = (long)arg;
    char *kept[ROUNDS];
    int *array = NULL;
    char *big = keep_buffer(140 * 1024 + (size_t)id * 4096);
    for (int r = 0; r < ROUNDS; r++) {
        struct node *list = build_list(150 + 40 * (int)id);
        kept[r] = keep_buffer(200 + 100 * (size_t)r);
        array = grow_array(array, (size_t)16 << (r % 8));
        scratch(r);
        pause_us(1500);
        free_list(list);
        pause_us(500);
    }
    for (int r = 0; r < ROUNDS; r += 2) free(kept[r]);
    pause_us(2000);
    for (int r = 1; r < ROUNDS; r += 2) free(kept[r]);
    free(array);
    free(big);
    return NULL;
}

/* The main thread's table, alive for the whole run. */
__attribute__((noinline)) static void **make_table(int n) {
    void **t = calloc((size_t)n, sizeof *t);
    for (int i = 0; i < n; i++) t[i] = malloc(24 + (size_t)(i % 5) * 8);
    return t;
}

int main(void) {
    void **table = make_table(500);
    pthread_t threads[WORKERS];
    for (long i = 0; i < WORKERS; i++) {
        pthread_create(&threads[i], NULL, worker, (void *)i);
        pause_us(3000);
    }
    for (int i = 0; i < WORKERS; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < 500; i++) free(table[i]);
    free(table);
    puts("alloc_threads: done");
    return 0;
}
