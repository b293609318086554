// The program the viewer's end-to-end test records: a small service with one leak.
// A worker thread ("worker") keeps every request in a list that is never freed
// (`remember_request`, steady growth); the main thread replaces blocks of a fixed pool
// (`refill_cache`, fills up, then flat) and formats temporary replies
// (`format_reply`, freed at once). A second phase (`late_index`) only starts halfway,
// so drilling into it and travelling back in time falls back to an ancestor.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct request {
    struct request *next;
    long id;
    char payload[240];
};

static struct request *history;
static void *late[4096];
static volatile uint64_t sink;
static uint64_t seed = 0x2545F4914F6CDD1Dull;

static uint64_t next_random(void) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

static void pause_a_little(void) {
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) void remember_request(long id) {
    struct request *r = malloc(sizeof *r);
    r->id = id;
    memset(r->payload, (int)id, sizeof r->payload);
    r->next = history;
    history = r;
}

__attribute__((noinline)) void late_index(long i) {
    char *entry = malloc(96);
    memset(entry, (int)i, 96);
    late[i % 4096] = entry;
    sink += (uint64_t)entry[i % 96];
}

static void *worker(void *arg) {
    long requests = (long)(intptr_t)arg;
    for (long i = 0; i < requests; i++) {
        remember_request(i);
        if (i > requests / 2) late_index(i);
        if (i % 200 == 0) pause_a_little();
    }
    return NULL;
}

#define POOL 2048
static void *pool[POOL];

__attribute__((noinline)) void refill_cache(void) {
    size_t slot = next_random() % POOL;
    free(pool[slot]);
    pool[slot] = malloc(256 + next_random() % 768);
    memset(pool[slot], 1, 64);
}

__attribute__((noinline)) void format_reply(void) {
    size_t n = 64 + next_random() % 1024;
    char *reply = malloc(n);
    memset(reply, 'x', n);
    sink += (uint64_t)reply[n / 2];
    free(reply);
}

int main(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, worker, (void *)(intptr_t)12000);
    pthread_setname_np(thread, "worker");
    for (long i = 0; i < 12000; i++) {
        refill_cache();
        format_reply();
        if (i % 200 == 0) pause_a_little();
    }
    pthread_join(thread, NULL);
    return 0;
}
