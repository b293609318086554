// A workload whose allocations are known exactly, for the sampling tests
// (cli/sampling.rs). Usage: sampled_sizes ROUNDS — each round makes, through
// three sites of different size mixes,
//   small_objects  32 blocks of 16–271 bytes (many small blocks: large weights)
//   buffers        2 blocks of 1–8 KiB
//   big_tables     1 block of 20–84 KiB, every 8th round
// from a fixed xorshift stream, so every run allocates the same sizes in the
// same order. Blocks live in a ring of 512 slots (freed 512 allocations later),
// plus every 4th buffer is grown once with realloc (a free and a fresh block in
// a sampled recording). Every block is written, so no call can be elided.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 512
static void *ring[RING];
static unsigned next;
static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void) {
    uint64_t x = state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return state = x;
}

static void keep(void *p, size_t n) {
    memset(p, 1, n);
    free(ring[next]);
    ring[next] = p;
    next = (next + 1) % RING;
}

__attribute__((noinline)) static void small_objects(void) {
    for (int i = 0; i < 32; i++) {
        size_t n = 16 + rnd() % 256;
        keep(malloc(n), n);
    }
}

__attribute__((noinline)) static void buffers(long round) {
    for (int i = 0; i < 2; i++) {
        size_t n = 1024 + rnd() % 7169;
        char *p = malloc(n);
        if (round % 4 == 0 && i == 0) {
            memset(p, 2, n);
            n += 512;
            p = realloc(p, n);
        }
        keep(p, n);
    }
}

__attribute__((noinline)) static void big_tables(void) {
    size_t n = 20480 + rnd() % 65536;
    keep(malloc(n), n);
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 10000;
    for (long r = 0; r < rounds; r++) {
        small_objects();
        buffers(r);
        if (r % 8 == 0)
            big_tables();
    }
    for (int i = 0; i < RING; i++)
        free(ring[i]);
    printf("rounds=%ld\n", rounds);
    return 0;
}
