/* Parent and child both allocate after a fork; each frees only what it
 * allocated itself after the fork. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static long churn(int count, size_t size) {
    void **blocks = malloc(sizeof(void *) * (size_t)count);
    long sum = 0;
    for (int i = 0; i < count; i++) {
        blocks[i] = malloc(size + (size_t)i % 64);
        sum += (long)(size + (size_t)i % 64);
    }
    for (int i = 0; i < count; i++) free(blocks[i]);
    free(blocks);
    return sum;
}

int main(void) {
    churn(100, 32);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        long sum = churn(1000, 48);
        printf("child allocated %ld bytes\n", sum);
        return 5;
    }
    long sum = churn(2000, 24);
    int status = 0;
    waitpid(pid, &status, 0);
    printf("parent allocated %ld bytes; child exited with %d\n", sum, WEXITSTATUS(status));
    return 0;
}
