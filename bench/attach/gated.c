/* The shared workload (../shared/bench/alloc-bench.c) behind a gate: the program
 * starts, waits until the file named by $GATE exists (at once when $GATE is unset),
 * then runs the workload's main and prints how long that took, in seconds, on
 * stdout. bench/attach/run.sh opens the gate once `memlens attach` has attached, so
 * the time printed is the workload's while attached — and, with the gate open from
 * the start, its time alone and under `memlens record`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define main alloc_bench_main
#include "alloc-bench.c"
#undef main

int main(int argc, char **argv) {
    const char *gate = getenv("GATE");
    while (gate && access(gate, F_OK) != 0) usleep(1000);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = alloc_bench_main(argc, argv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.4f\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    return status;
}
