// Frees and allocations after main returns: in an atexit handler, in a
// C++ global object's destructor and in an __attribute__((destructor)).
// Nothing uses stdio, whose buffers are never freed, so every block is
// freed by the end: a complete trace shows no leak.
#include <cstdlib>
#include <cstring>
#include <unistd.h>

static void *for_atexit;
static void *for_destructor_attribute;

struct Registry {
    void *blocks[100] = {};
    ~Registry() {
        for (void *b : blocks) std::free(b);
        std::free(std::malloc(300));  // an allocation in a static destructor
    }
};
static Registry registry;

static void at_exit_handler() {
    std::free(for_atexit);
    std::free(std::malloc(200));  // an allocation in an atexit handler
}

__attribute__((destructor)) static void destructor_attribute() {
    std::free(for_destructor_attribute);
    std::free(std::malloc(400));  // an allocation in a destructor function
}

int main() {
    for (int i = 0; i < 100; i++) registry.blocks[i] = std::malloc(64 + i);
    for_atexit = std::malloc(1000);
    for_destructor_attribute = std::malloc(2000);
    std::atexit(at_exit_handler);
    const char done[] = "main returns\n";
    return write(1, done, std::strlen(done)) > 0 ? 0 : 1;
}
