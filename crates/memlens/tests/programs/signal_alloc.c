/* SIGALRM fires every millisecond (setitimer) while the main loop
 * allocates, and the handler allocates too. glibc's malloc is not
 * async-signal-safe, so the handler allocates only when the main loop is
 * not inside a malloc-family call; that keeps the program well defined with
 * and without the recorder. Between allocations the loop computes for a
 * while, so most signals arrive there. It runs until the handler has
 * allocated 50 times; both counts vary from run to run, so they go to the
 * file argv[1], not to stdout. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t in_malloc;
static volatile long handler_allocations;
static volatile unsigned long sink;

static void on_alarm(int sig) {
    (void)sig;
    if (in_malloc) return;
    char *p = malloc(64);
    if (p) {
        memset(p, 0, 64);
        free(p);
        handler_allocations++;
    }
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every_ms = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &every_ms, NULL);
    long sum = 0, i;
    for (i = 0; i < 2000 || handler_allocations < 50; i++) {
        unsigned long h = (unsigned long)i;
        for (int k = 0; k < 2000; k++) h = h * 6364136223846793005ul + 1442695040888963407ul;
        sink = h;
        in_malloc = 1;
        char *p = malloc(16 + (size_t)(i % 256));
        in_malloc = 0;
        p[0] = (char)i;
        sum += p[0];
        in_malloc = 1;
        free(p);
        in_malloc = 0;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    FILE *out = fopen(argv[1], "w");
    if (!out) return 1;
    fprintf(out, "%ld %ld\n", i, handler_allocations);
    fclose(out);
    printf("main loop done\n");
    return 0;
}
