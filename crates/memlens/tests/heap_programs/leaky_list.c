// A service loop with one leak among steadily churning allocation sites
// (heap_cli.rs, test 1). `remember_request` appends a node to a linked list
// that is never freed, so its live memory grows linearly with time. Three
// other sites churn: each replaces blocks of a large pool (1–4 MiB live) or
// allocates and frees temporaries; their live sets fill in a warm-up phase and
// then stay flat. At the end the pools are left live, as a program that exits
// without cleaning up does, so "live at exit" alone does not find the leak.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct request {
    struct request *next;
    long id;
    char payload[48];
};

static struct request *history;
static uint64_t seed = 0x2545F4914F6CDD1Dull;
static volatile uint64_t sink;

static uint64_t next_random(void) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

__attribute__((noinline)) void remember_request(long id) {
    struct request *r = malloc(sizeof *r);
    r->id = id;
    memset(r->payload, (int)id, sizeof r->payload);
    r->next = history;
    history = r;
}

#define BUFFERS 1024
static void *buffers[BUFFERS];

__attribute__((noinline)) void refill_buffer(void) {
    size_t slot = next_random() % BUFFERS;
    free(buffers[slot]);
    buffers[slot] = malloc(512 + next_random() % 3584);
    memset(buffers[slot], 1, 64);
}

#define SESSIONS 4096
static char *sessions[SESSIONS];

__attribute__((noinline)) void renew_session(void) {
    size_t slot = next_random() % SESSIONS;
    free(sessions[slot]);
    sessions[slot] = malloc(256);
    sessions[slot][0] = 1;
}

__attribute__((noinline)) void format_reply(void) {
    size_t n = 64 + next_random() % 2048;
    char *reply = malloc(n);
    memset(reply, 'x', n);
    sink += (uint64_t)reply[n / 2];
    free(reply);
}

int main(int argc, char **argv) {
    long requests = argc > 1 ? atol(argv[1]) : 60000;
    for (int i = 0; i < BUFFERS; i++) refill_buffer();
    for (int i = 0; i < SESSIONS; i++) renew_session();
    for (long i = 0; i < requests; i++) {
        refill_buffer();
        renew_session();
        format_reply();
        format_reply();
        remember_request(i);
    }
    return (int)(sink & 1);
}
