// The easyTravel leak of the AntTracks paper, in C++ (heap_cli.rs, test 2):
// a `std::unordered_map` caches journey prices by a `Journey` key whose
// `operator==` never finds an equal key, so every lookup misses and inserts a
// new entry and the cache grows without bound. The insertion happens in
// `cached_price`; the map's nodes and bucket arrays are allocated by
// libstdc++ code inlined into it and by `operator new`. Other code churns:
// a session table that keeps a flat size, and temporary vectors and strings
// built per request.
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

struct Journey {
    std::string from;
    std::string to;
    int day;
    // The bug: compares the wrong way round, so no key ever equals another.
    bool operator==(const Journey &other) const { return from == other.from && to != other.to && day == other.day; }
};

struct JourneyHash {
    std::size_t operator()(const Journey &j) const {
        return std::hash<std::string>()(j.from) * 31 + std::hash<std::string>()(j.to) * 7 + j.day;
    }
};

// A process-lifetime singleton, never torn down (as servers often do).
static auto &price_cache = *new std::unordered_map<Journey, std::string, JourneyHash>;
static std::uint64_t seed = 0x9E3779B97F4A7C15ull;
static volatile std::size_t sink;

static std::uint64_t next_random() {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

static const char *const cities[] = {"LNZ", "VIE", "SZG", "GRZ", "INN", "KLU", "BER", "MUC"};

__attribute__((noinline)) std::string compute_price(const Journey &j) {
    return std::string(40 + j.day % 40, 'p');
}

__attribute__((noinline)) const std::string &cached_price(const Journey &j) {
    auto found = price_cache.find(j);
    if (found != price_cache.end()) return found->second;
    return price_cache.emplace(j, compute_price(j)).first->second;
}

static std::deque<std::vector<char>> sessions;

__attribute__((noinline)) void touch_session() {
    sessions.emplace_back(200 + next_random() % 800, 's');
    if (sessions.size() > 3000) sessions.pop_front();
}

__attribute__((noinline)) std::size_t render_page(const std::string &price) {
    std::vector<std::string> lines;
    for (int i = 0; i < 8; i++) lines.push_back(price + " line " + std::to_string(i) + std::string(32, 'x'));
    std::size_t total = 0;
    for (const auto &l : lines) total += l.size();
    return total;
}

int main(int argc, char **argv) {
    long requests = argc > 1 ? std::atol(argv[1]) : 40000;
    for (long i = 0; i < requests; i++) {
        Journey j{cities[next_random() % 8], cities[next_random() % 8], int(next_random() % 30)};
        touch_session();
        sink += render_page(cached_price(j));
    }
    return int(sink & 1);
}
