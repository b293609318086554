/* Free stacks and the program's own mappings (`memlens record --free-stacks
 * --mmap`): blocks allocated in `make_a` are freed in `drop_a`, a different
 * function; `map_pool` maps anonymous memory with mmap, touches every page,
 * and unmaps its upper half, so a partial munmap leaves half the mapping.
 * Everything allocated is used (written and read back into the printed
 * checksum), so the compiler keeps every call. Built by
 * `crates/memlens/tests/cli/free_stacks.rs`. */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BLOCKS 64
#define POOL_PAGES 64
#define PAGE 4096

/* A block of `size` bytes filled with `seed`. */
__attribute__((noinline)) static char *make_a(size_t size, int seed) {
    char *p = malloc(size);
    if (!p) abort();
    memset(p, seed, size);
    return p;
}

/* Frees a block made by `make_a`, returning one of its bytes. */
__attribute__((noinline)) static long drop_a(char *p, size_t size) {
    long kept = p[size - 1];
    free(p);
    return kept;
}

/* Maps POOL_PAGES anonymous pages, touches each, unmaps the upper half; the
 * lower half stays mapped until the end. */
__attribute__((noinline)) static char *map_pool(long *sum) {
    size_t len = (size_t)POOL_PAGES * PAGE;
    char *pool = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pool == MAP_FAILED) abort();
    for (size_t i = 0; i < len; i += PAGE) pool[i] = (char)(i / PAGE);
    for (size_t i = 0; i < len; i += PAGE) *sum += pool[i];
    if (munmap(pool + len / 2, len / 2) != 0) abort();
    return pool;
}

int main(void) {
    char *blocks[BLOCKS];
    long sum = 0;
    for (int i = 0; i < BLOCKS; i++) blocks[i] = make_a(100 + (size_t)i * 8, i);
    char *pool = map_pool(&sum);
    for (int i = 0; i < BLOCKS; i++) sum += drop_a(blocks[i], 100 + (size_t)i * 8);
    sum += pool[PAGE];
    printf("sum=%ld\n", sum);
    return 0;
}
