/* Allocates, then leaves with _exit before anything is flushed. */
#include <stdlib.h>
#include <unistd.h>

int main(void) {
    static void *blocks[1000];
    for (int i = 0; i < 1000; i++) blocks[i] = malloc(32 + (size_t)i);
    for (int i = 0; i < 500; i++) free(blocks[i]);
    _exit(3);
}
