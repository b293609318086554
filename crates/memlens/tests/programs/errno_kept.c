/* errno set by a failed call survives the allocation functions that
 * follow it, in the main thread and in a new thread (whose first
 * allocation sets up the recorder's per-thread state). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int check(const char *where) {
    int bad = 0;
    void *p;
#define EXPECT_ENOENT(call)                                                   \
    errno = 0;                                                                \
    if (open("/nonexistent/memlens-test", O_RDONLY) >= 0) return 1;           \
    call;                                                                     \
    if (errno != ENOENT) { printf("%s: %s changed errno to %d\n", where, #call, errno); bad = 1; }
    EXPECT_ENOENT(p = malloc(100))
    EXPECT_ENOENT(free(p))
    EXPECT_ENOENT(p = calloc(10, 10))
    EXPECT_ENOENT(p = realloc(p, 5000))
    EXPECT_ENOENT(free(p))
    EXPECT_ENOENT(if (posix_memalign(&p, 64, 100) != 0) return 1)
    EXPECT_ENOENT(free(p))
    EXPECT_ENOENT(p = aligned_alloc(64, 128))
    EXPECT_ENOENT(free(p))
    return bad;
}

static void *in_thread(void *arg) {
    (void)arg;
    return (void *)(long)check("new thread");
}

int main(void) {
    int bad = check("main thread");
    pthread_t thread;
    void *thread_bad;
    pthread_create(&thread, NULL, in_thread, NULL);
    pthread_join(thread, &thread_bad);
    bad |= (int)(long)thread_bad;
    puts(bad ? "errno changed" : "errno preserved");
    return bad;
}
