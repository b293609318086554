// Exceptions thrown and caught through frames that allocate.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

__attribute__((noinline)) long descend(int depth, int limit) {
    std::vector<std::string> held;
    held.emplace_back(100 + depth, 'x');
    auto block = std::make_unique<long[]>(32 + depth);
    block[0] = depth;
    if (depth == limit) throw std::runtime_error("bottom reached at depth " + std::to_string(depth));
    return descend(depth + 1, limit) + block[0] + (long)held[0].size();
}

int main() {
    long caught = 0, message_bytes = 0;
    for (int i = 0; i < 2000; i++) {
        try {
            descend(0, 1 + i % 12);
        } catch (const std::exception &e) {
            caught++;
            message_bytes += (long)std::string(e.what()).size();
        }
    }
    std::printf("caught %ld exceptions, %ld message bytes\n", caught, message_bytes);
    return 0;
}
