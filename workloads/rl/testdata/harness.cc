// Runs a serialized rl-physics program on the CPU with the kernels of
// workloads/kernels/rl.cu (included through host_shim.h), every block and
// thread in turn, and writes the final contents of every buffer.
//
// Input (little-endian): u32 nbuf; per buffer u64 size, bytes; u32 nops;
// per op: u32 namelen, name, u32 grid, u32 block, u32 nargs; per arg u8
// kind (0 scalar, 1 buffer); scalar: u32 size, u64 bits; buffer: u32 index,
// u64 offset. Output: every buffer's bytes in order.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

shim_dim3 blockIdx, threadIdx, blockDim;

#include "rl.cu"

template <typename... A, size_t... I>
static void invoke(void (*f)(A...), void** args, std::index_sequence<I...>) { f(*(A*)args[I]...); }
template <typename... A>
constexpr size_t arity(void (*)(A...)) { return sizeof...(A); }
#define K(name) {#name, {arity(name), [](void** a) { invoke(name, a, std::make_index_sequence<arity(name)>{}); }}}

// Each kernel with its parameter count, which every launch must match.
static std::map<std::string, std::pair<size_t, void (*)(void**)>> table = {
    K(rl_actuate), K(rl_integrate), K(rl_broadphase), K(rl_clear),
    K(rl_sphere_plane), K(rl_capsule_plane), K(rl_box_plane),
    K(rl_capsule_capsule), K(rl_sphere_capsule),
    K(rl_solve_sphere_plane), K(rl_solve_capsule_plane), K(rl_solve_box_plane),
    K(rl_solve_capsule_capsule), K(rl_solve_sphere_capsule),
    K(rl_solve_rods), K(rl_apply), K(rl_velocity), K(rl_observe),
};

static bool rd(void* p, size_t n) { return fread(p, 1, n, stdin) == n; }

int main() {
    uint32_t nbuf;
    if (!rd(&nbuf, 4)) return 2;
    std::vector<std::vector<unsigned char>> bufs(nbuf);
    for (auto& b : bufs) {
        uint64_t size;
        if (!rd(&size, 8)) return 2;
        b.resize(size);
        if (!rd(b.data(), size)) return 2;
    }
    uint32_t nops;
    if (!rd(&nops, 4)) return 2;
    for (uint32_t o = 0; o < nops; o++) {
        uint32_t len, grid, block, nargs;
        if (!rd(&len, 4)) return 2;
        std::string name(len, '\0');
        if (!rd(&name[0], len) || !rd(&grid, 4) || !rd(&block, 4) || !rd(&nargs, 4)) return 2;
        std::vector<uint64_t> slots(nargs);
        std::vector<void*> args(nargs);
        for (uint32_t i = 0; i < nargs; i++) {
            uint8_t kind;
            if (!rd(&kind, 1)) return 2;
            if (kind == 0) {
                uint32_t size;
                uint64_t bits;
                if (!rd(&size, 4) || !rd(&bits, 8)) return 2;
                slots[i] = bits;
            } else {
                uint32_t idx;
                uint64_t off;
                if (!rd(&idx, 4) || !rd(&off, 8) || idx >= nbuf) return 2;
                void* p = bufs[idx].data() + off;
                memcpy(&slots[i], &p, sizeof p);
            }
            args[i] = &slots[i];
        }
        auto it = table.find(name);
        if (it == table.end()) {
            fprintf(stderr, "unknown kernel %s\n", name.c_str());
            return 3;
        }
        if (it->second.first != nargs) {
            fprintf(stderr, "kernel %s takes %zu parameters, the launch passes %u\n", name.c_str(), it->second.first, nargs);
            return 3;
        }
        blockDim = {block, 1, 1};
        for (uint32_t b = 0; b < grid; b++) {
            blockIdx = {b, 0, 0};
            for (uint32_t t = 0; t < block; t++) {
                threadIdx = {t, 0, 0};
                it->second.second(args.data());
            }
        }
    }
    for (auto& b : bufs) fwrite(b.data(), 1, b.size(), stdout);
    return 0;
}
