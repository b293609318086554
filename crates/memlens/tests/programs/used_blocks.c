/* Allocates 1000 blocks of different sizes, writes and reads every one and
 * frees them, then prints the sum: the program a shell script `exec`s in
 * `processes.rs`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    (void)argv;
    enum { N = 1000 };
    static char *blocks[N];
    long sum = 0;
    for (int i = 0; i < N; i++) {
        size_t n = 16 + (size_t)(i % 100);
        blocks[i] = malloc(n);
        memset(blocks[i], (i + argc) & 0x7f, n);
    }
    for (int i = 0; i < N; i++) {
        sum += blocks[i][i % 16];
        free(blocks[i]);
    }
    printf("%d arguments; sum %ld\n", argc - 1, sum);
    return 0;
}
