// A request-serving loop at scale, with one slow leak (cli/scale.rs,
// bench/index/run.sh and bench/live/run.sh). Usage: server THREADS REQUESTS
// [RATE] — each of THREADS worker threads (default 2) serves REQUESTS requests
// (default 100000), as fast as it can or, with RATE, at RATE requests a second
// (sleeping between batches of 100, as a server waits for its clients).
//
// Every request allocates, uses and frees temporaries of mixed sizes:
//   parse_request  a parse buffer of 512–4095 bytes            malloc + free
//   parse_header   two header strings of 16–143 bytes          2 × (malloc + free)
//   build_response a response of 256–2303 bytes                malloc, then either
//                  freed at once (odd requests) or kept by cache_response (even
//                  ones) in a per-thread cache of CACHE_SLOTS entries that frees
//                  its oldest entry to make room (a FIFO approximation of LRU).
// That is 8 events (allocations + frees) per request once the caches are full.
// The leak: every 1000th request, remember_session allocates a small session
// record (96 bytes) that is linked into a list and never freed, so its live
// memory grows linearly for the whole run while everything else is flat once
// the caches have warmed up. At exit the caches and the sessions stay live, as
// in a program that exits without cleaning up. In all:
//
//   events = THREADS × (8 × REQUESTS − CACHE_SLOTS + REQUESTS / 1000)
//          ≈ 8.001 × THREADS × REQUESTS
//
// plus a few dozen from the C library and thread start-up. Every block is
// written and its bytes are summed into a volatile checksum through an escape
// barrier, so the compiler cannot delete a malloc/free pair.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE_SLOTS 4096
#define SESSION_EVERY 1000

struct session {
    struct session *next;
    long request;
    char token[80];
};

struct worker {
    pthread_t thread;
    long requests;
    long rate;
    uint64_t seed;
    uint64_t checksum;
    char *cache[CACHE_SLOTS];
    size_t cache_next;
    struct session *sessions;
};

static volatile uint64_t checksum;

// Makes `p` escape: the compiler must assume the block is read elsewhere.
static inline void escape(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

static uint64_t next_random(struct worker *w) {
    w->seed ^= w->seed << 13;
    w->seed ^= w->seed >> 7;
    w->seed ^= w->seed << 17;
    return w->seed;
}

// Sums a few bytes spread over the block.
static uint64_t sum_bytes(const char *p, size_t n) {
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i += 61) sum += (unsigned char)p[i];
    return sum + (unsigned char)p[n - 1];
}

__attribute__((noinline)) uint64_t parse_request(struct worker *w, long id) {
    size_t n = 512 + next_random(w) % 3584;
    char *buffer = malloc(n);
    memset(buffer, (int)(id & 0x7f), n);
    escape(buffer);
    uint64_t sum = sum_bytes(buffer, n);
    free(buffer);
    return sum;
}

__attribute__((noinline)) uint64_t parse_header(struct worker *w, const char *name) {
    size_t n = 16 + next_random(w) % 128;
    char *header = malloc(n);
    snprintf(header, n, "%s: %llu", name, (unsigned long long)w->seed);
    escape(header);
    uint64_t sum = sum_bytes(header, n);
    free(header);
    return sum;
}

__attribute__((noinline)) char *build_response(struct worker *w, long id) {
    size_t n = 256 + next_random(w) % 2048;
    char *response = malloc(n);
    memset(response, 'r', n);
    response[0] = (char)id;
    escape(response);
    return response;
}

__attribute__((noinline)) void cache_response(struct worker *w, char *response) {
    free(w->cache[w->cache_next]);
    w->cache[w->cache_next] = response;
    w->cache_next = (w->cache_next + 1) % CACHE_SLOTS;
}

__attribute__((noinline)) void remember_session(struct worker *w, long id) {
    struct session *s = malloc(sizeof *s);
    s->request = id;
    memset(s->token, (int)(id & 0x7f), sizeof s->token);
    s->next = w->sessions;
    w->sessions = s;
    escape(s);
}

__attribute__((noinline)) void serve(struct worker *w, long id) {
    uint64_t sum = parse_request(w, id);
    sum += parse_header(w, "Host");
    sum += parse_header(w, "Accept");
    char *response = build_response(w, id);
    sum += sum_bytes(response, 256);
    if (id % 2 == 0) {
        cache_response(w, response);
    } else {
        free(response);
    }
    if (id % SESSION_EVERY == SESSION_EVERY - 1) remember_session(w, id);
    w->checksum += sum;
}

// With a rate, sleeps until request `id` is due.
static void pace(struct worker *w, long id, const struct timespec *start) {
    long long due = (long long)(id * 1000000000.0 / (double)w->rate);
    struct timespec at = {start->tv_sec + (time_t)(due / 1000000000),
                          start->tv_nsec + (long)(due % 1000000000)};
    if (at.tv_nsec >= 1000000000) {
        at.tv_sec += 1;
        at.tv_nsec -= 1000000000;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
}

static void *work(void *arg) {
    struct worker *w = arg;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long id = 0; id < w->requests; id++) {
        if (w->rate > 0 && id % 100 == 0) pace(w, id, &start);
        serve(w, id);
    }
    checksum += w->checksum;
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    long requests = argc > 2 ? atol(argv[2]) : 100000;
    long rate = argc > 3 ? atol(argv[3]) : 0;
    if (threads < 1 || requests < 0 || rate < 0) {
        fprintf(stderr, "usage: server THREADS REQUESTS [RATE]\n");
        return 2;
    }
    struct worker *workers = calloc((size_t)threads, sizeof *workers);
    for (int t = 0; t < threads; t++) {
        workers[t].requests = requests;
        workers[t].rate = rate;
        workers[t].seed = 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull * (uint64_t)t;
        if (pthread_create(&workers[t].thread, NULL, work, &workers[t]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    for (int t = 0; t < threads; t++) pthread_join(workers[t].thread, NULL);
    return 0;
}
