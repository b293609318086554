/* The real program behind a wrapper script that `exec`s it. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    (void)argv;
    static void *blocks[1234];
    for (int i = 0; i < 1234; i++) blocks[i] = malloc(24);
    for (int i = 0; i < 1234; i++) free(blocks[i]);
    printf("real program ran with %d arguments\n", argc - 1);
    return 0;
}
