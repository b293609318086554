/* Loads the library named by argv[1], runs its allocating thread, and
 * unloads it. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "dlopen failed: %s\n", dlerror());
        return 1;
    }
    long (*run)(long) = (long (*)(long))dlsym(lib, "run_in_thread");
    if (!run) return 1;
    long sum = run(5000);
    printf("library threads counted %ld\n", sum);
    return dlclose(lib);
}
