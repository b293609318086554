/* Places a "phase 2" mark through the recorder's C API, found with dlsym
 * so the program also runs without the recorder, and runs for about 300 ms
 * so periodic marks fall inside it. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void allocate_for_ms(long ms) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        free(malloc(100));
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

int main(void) {
    void (*mark)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "memlens_mark");
    allocate_for_ms(150);
    if (mark) mark("phase 2");
    allocate_for_ms(150);
    puts("phases done");
    return 0;
}
