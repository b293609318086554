// Who runs a sampled recording's writer (cli/sampling.rs). Usage:
// sampled_threads N END [thread] — allocates N blocks of 64 bytes (a ring of
// 256 live ones, each written) and prints how many threads the process has
// ("threads=K", from /proc/self/task); with `thread`, a thread of its own then
// does the same N allocations and, once joined, the count is printed again.
// END is how it leaves: `exit` or `_exit` (stdout flushed first).
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long n;

static int threads(void) {
    DIR *d = opendir("/proc/self/task");
    int k = 0;
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') k++;
    closedir(d);
    return k;
}

static void *allocate(void *arg) {
    void *ring[256] = {0};
    for (long i = 0; i < n; i++) {
        free(ring[i & 255]);
        ring[i & 255] = malloc(64);
        memset(ring[i & 255], (int)i, 64);
    }
    for (int i = 0; i < 256; i++) free(ring[i]);
    return arg;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    n = atol(argv[1]);
    allocate(NULL);
    printf("threads=%d\n", threads());
    if (argc > 3 && strcmp(argv[3], "thread") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, allocate, NULL) != 0) return 3;
        pthread_join(t, NULL);
        printf("threads=%d\n", threads());
    }
    fflush(stdout);
    if (strcmp(argv[2], "_exit") == 0) _exit(0);
    exit(0);
}
