/* Allocates, then dies of SIGSEGV. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    static void *blocks[1000];
    for (int i = 0; i < 1000; i++) blocks[i] = malloc(40);
    puts("about to crash");
    fflush(stdout);
    volatile int *null = NULL;
    return *null;
}
