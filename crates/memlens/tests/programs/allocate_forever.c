/* Writes its pid to the file argv[1], then allocates until it is killed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    void *held[1024] = {0};
    FILE *f = fopen(argv[1], "w");
    if (!f) return 1;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    for (unsigned long i = 0;; i++) {
        free(held[i % 1024]);
        held[i % 1024] = malloc(16 + i % 1000);
    }
}
