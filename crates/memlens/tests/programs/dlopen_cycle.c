/* Loads, runs and unloads the library named by argv[1] twenty times in a
 * row, each cycle far shorter than the recorder's writer period. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    long total = 0;
    for (int i = 0; i < 20; i++) {
        void *lib = dlopen(argv[1], RTLD_NOW);
        if (!lib) { fprintf(stderr, "dlopen failed: %s\n", dlerror()); return 1; }
        long (*run)(long) = (long (*)(long))dlsym(lib, "run_in_thread");
        if (!run) return 1;
        total += run(100);
        if (dlclose(lib) != 0) return 1;
    }
    printf("20 loads counted %ld\n", total);
    return 0;
}
