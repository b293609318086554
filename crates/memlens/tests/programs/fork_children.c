/* The parent allocates 100 blocks, then forks two children that allocate
 * 300 and 500 blocks; each uses and frees its own blocks, each child prints
 * its pid and the parent waits for both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long churn(int count) {
    char *blocks[500];
    long sum = 0;
    for (int i = 0; i < count; i++) {
        blocks[i] = malloc(32 + (size_t)(i % 64));
        memset(blocks[i], i & 0x7f, 32);
    }
    for (int i = 0; i < count; i++) {
        sum += blocks[i][i % 32];
        free(blocks[i]);
    }
    return sum;
}

int main(void) {
    long sum = churn(100);
    pid_t children[2];
    for (int k = 0; k < 2; k++) {
        children[k] = fork();
        if (children[k] == 0) {
            long s = churn(300 + 200 * k);
            printf("child %d pid %d sum %ld\n", k, (int)getpid(), s);
            return 0;
        }
    }
    for (int k = 0; k < 2; k++) waitpid(children[k], NULL, 0);
    printf("parent sum %ld\n", sum);
    return 0;
}
