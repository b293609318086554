// The program the viewer's end-to-end test records: a small service with one leak.
// A worker thread ("worker") keeps every request in a list that is never freed
// (`remember_request`, steady growth); the main thread replaces blocks of a fixed pool
// (`refill_cache`, fills up, then flat) and formats temporary replies
// (`format_reply`, freed at once). A second phase (`late_index`) only starts halfway,
// so drilling into it and travelling back in time falls back to an ancestor. The two
// threads take turns (see `turn`), so the trace tells the same story on a busy machine.
// An optional argument sets the number of rounds (default 60): less work, a smaller
// leak (the base run of `memlens view --base`).
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

/* The two threads take turns, a round each: main refills and replies, then the
 * worker remembers requests. Each round's allocations thus come in the same order
 * whatever the scheduler does, and the leak grows in every round up to the end. */
#define ROUNDS 60
static int rounds = ROUNDS;
#define PER_ROUND 200
static pthread_barrier_t turn;

/* One round of requests: a frame between the thread and the leak, so the leak's
 * stack has three frames with file:line (the viewer's tooltip test). */
__attribute__((noinline)) long serve_round(int round, long id) {
    for (int k = 0; k < PER_ROUND; k++, id++) {
        remember_request(id);
        if (round >= rounds / 2) late_index(id);
    }
    return id;
}

static void *worker(void *arg) {
    (void)arg;
    long id = 0;
    for (int round = 0; round < rounds; round++) {
        pthread_barrier_wait(&turn); /* main's part of the round is done */
        id = serve_round(round, id);
        pause_a_little();
        pthread_barrier_wait(&turn); /* the worker's part is done */
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

int main(int argc, char **argv) {
    if (argc > 1) rounds = atoi(argv[1]);
    if (rounds < 2 || rounds > ROUNDS) rounds = ROUNDS;
    pthread_t thread;
    pthread_barrier_init(&turn, NULL, 2);
    pthread_create(&thread, NULL, worker, NULL);
    pthread_setname_np(thread, "worker");
    for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < PER_ROUND; k++) {
            refill_cache();
            format_reply();
        }
        pause_a_little();
        pthread_barrier_wait(&turn);
        pthread_barrier_wait(&turn);
    }
    pthread_join(thread, NULL);
    return 0;
}
