/* A multi-threaded request server with a slow leak (memlens attach's test
 * program): WORKERS threads each serve REQUESTS requests, one every PACE_US
 * microseconds; each request parses into a buffer, builds a response, keeps
 * it in a small per-thread cache, and every 20th request leaks a session
 * record. The output (a checksum of every response) does not depend on timing;
 * the exit status is 3, so a changed status shows. Usage: request_server
 * [REQUESTS per worker] [PACE_US]. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define CACHE 8
static int requests = 20000, pace_us = 500, workers = 4;

struct session { struct session *next; char user[200]; uint64_t id; };
static struct session *sessions;
static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) char *parse_request(int worker, int i) {
    char *buf = malloc(96);
    snprintf(buf, 96, "GET /item/%d/%d HTTP/1.1", worker, i);
    return buf;
}

__attribute__((noinline)) char *build_response(const char *request, int i) {
    size_t n = 64 + (size_t)(i % 7) * 32;
    char *body = calloc(1, n);
    snprintf(body, n, "200 OK %s", request);
    body = realloc(body, n * 2);
    memset(body + n, 'x', n - 1);
    body[2 * n - 1] = 0;
    return body;
}

__attribute__((noinline)) void leak_session(int worker, int i) {
    struct session *s = malloc(sizeof *s);
    s->id = (uint64_t)worker << 32 | (unsigned)i;
    snprintf(s->user, sizeof s->user, "user-%d-%d", worker, i);
    pthread_mutex_lock(&sessions_lock);
    s->next = sessions; /* never freed: the slow leak */
    sessions = s;
    pthread_mutex_unlock(&sessions_lock);
}

__attribute__((noinline)) uint64_t handle_request(int worker, int i, char **cache) {
    char *request = parse_request(worker, i);
    char *response = build_response(request, i);
    uint64_t sum = 0;
    for (const char *p = response; *p; p++) sum = sum * 31 + (unsigned char)*p;
    free(request);
    free(cache[i % CACHE]);
    cache[i % CACHE] = response;
    if (i % 20 == 0) leak_session(worker, i);
    return sum;
}

static void *worker_main(void *arg) {
    int worker = (int)(intptr_t)arg;
    char *cache[CACHE] = {0};
    uint64_t sum = 0;
    for (int i = 0; i < requests; i++) {
        sum ^= handle_request(worker, i, cache);
        if (pace_us) usleep(pace_us);
    }
    for (int k = 0; k < CACHE; k++) free(cache[k]);
    return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv) {
    /* Where Yama's ptrace_scope is 1, only ancestors may trace: let the test's
     * `memlens attach`, a sibling, do it (a no-op without Yama). */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    if (argc > 1) requests = atoi(argv[1]);
    if (argc > 2) pace_us = atoi(argv[2]);
    pthread_t threads[16];
    for (int w = 0; w < workers; w++)
        pthread_create(&threads[w], NULL, worker_main, (void *)(intptr_t)w);
    uint64_t total = 0;
    for (int w = 0; w < workers; w++) {
        void *r;
        pthread_join(threads[w], &r);
        total ^= (uint64_t)(uintptr_t)r;
    }
    size_t leaked = 0;
    for (struct session *s = sessions; s; s = s->next) leaked++;
    printf("served %d requests, checksum %016llx, %zu sessions\n", requests * workers,
           (unsigned long long)total, leaked);
    return 3;
}
