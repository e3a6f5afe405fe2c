// riscv_main.cpp: a process that runs an emitted kernel's programs on the host runtime and writes their
// records to a file, for targets Python cannot load a library into (a riscv64 binary under qemu-riscv64).
//
// Linked with the kernel's translation unit (backend/cpp.py's output, which defines `mtia_kernel_entry`) by
// mtia_xdsl/backend/riscv.py, which writes the launch file and reads the result file:
//
//   launch (int64 words): MAGIC ls_bytes cb_ids collective
//                         nregions (base nbytes data[ceil(nbytes / 8)])*
//                         nargs args*  grid[3] num_pes[2]
//                         nprograms (pid[3] pe_xy[2] ncalls nbytes results[ceil(nbytes / 8)])*
//   result (int64 words): per program run: status (0 ok: nwords words* nstrings (len bytes[ceil(len / 8)])*;
//                                                  2 stopped at a cross-PE reduction (its writes undone):
//                                                    call pe_axis kind dtype loc input (each a len bytes blob);
//                                                  1 error: len bytes[ceil(len / 8)], and nothing follows)
//                         then, if no program failed, each region's bytes as in the launch file.
//
// Programs run in the launch file's order, on one mtia_pe, as host.py runs them in-process; `ncalls` results
// (concatenated, `nbytes` in all) of its cross-PE reductions are known (mtia_host_set_collective). With
// `collective` set, memory is saved before each program and restored when it stops at a reduction whose
// result is not known yet (backend/collective.py reruns it).
#include <cstdio>
#include <cstring>
#include <vector>

#include "mtia_runtime.h"

extern "C" void mtia_kernel_entry(mtia_pe *pe, const int64_t *args);

namespace {

const int64_t MAGIC = 0x32305652'4149544dLL;  // "MTIARV02" little-endian

struct Reader {
    std::vector<int64_t> w;
    size_t at = 0;
    int64_t next() { return at < w.size() ? w[at++] : 0; }
    bool ok() const { return at <= w.size(); }
};

void put_bytes(std::vector<int64_t> &out, const void *p, int64_t n) {
    out.push_back(n);
    size_t first = out.size();
    out.resize(first + (size_t)((n + 7) / 8), 0);
    memcpy(out.data() + first, p, (size_t)n);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s LAUNCH RESULT\n", argv[0]);
        return 2;
    }
    Reader in;
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    int64_t word;
    while (fread(&word, 8, 1, f) == 1) in.w.push_back(word);
    fclose(f);
    if (in.next() != MAGIC) {
        fprintf(stderr, "%s: not a launch file\n", argv[1]);
        return 2;
    }
    int64_t ls_bytes = in.next();
    int32_t cb_ids = (int32_t)in.next();
    const bool collective = in.next() != 0;
    int64_t nregions = in.next();
    std::vector<std::vector<int64_t>> regions((size_t)nregions);
    std::vector<int64_t> sizes((size_t)nregions);
    for (int64_t r = 0; r < nregions; ++r) {
        int64_t base = in.next(), nbytes = in.next();
        sizes[(size_t)r] = nbytes;
        regions[(size_t)r].assign((size_t)((nbytes + 7) / 8), 0);
        for (auto &x : regions[(size_t)r]) x = in.next();
        mtia_host_map((mtia_addr)base, regions[(size_t)r].data(), nbytes);
    }
    std::vector<int64_t> args((size_t)in.next());
    for (auto &a : args) a = in.next();
    int32_t grid[3], npes[2];
    for (auto &g : grid) g = (int32_t)in.next();
    for (auto &p : npes) p = (int32_t)in.next();
    int64_t nprograms = in.next();
    std::vector<int64_t> out;
    mtia_pe *pe = mtia_host_pe_new(ls_bytes, cb_ids);
    bool failed = false;
    for (int64_t k = 0; k < nprograms && !failed && in.ok(); ++k) {
        int32_t pid[3], xy[2];
        for (auto &p : pid) p = (int32_t)in.next();
        for (auto &p : xy) p = (int32_t)in.next();
        int64_t ncalls = in.next(), nbytes = in.next();
        std::vector<int64_t> results((size_t)((nbytes + 7) / 8));
        for (auto &x : results) x = in.next();
        mtia_host_set_program(pe, pid, grid, xy, npes);
        mtia_host_set_collective(pe, ncalls, results.data(), nbytes);
        std::vector<std::vector<int64_t>> saved;
        if (collective) saved = regions;
        int32_t status = mtia_host_call(pe, mtia_kernel_entry, args.data());
        if (status == 2) {  // waits for its group's result: undo its writes, report its input
            for (size_t r = 0; r < regions.size(); ++r)
                memcpy(regions[r].data(), saved[r].data(), regions[r].size() * sizeof(int64_t));
            int64_t n = 0, call = 0;
            int32_t axis = 0;
            const char *kind = nullptr, *dtype = nullptr, *loc = nullptr;
            const void *input = mtia_host_collective_wait(pe, &n, &call, &kind, &dtype, &axis, &loc);
            out.insert(out.end(), {2, call, axis});
            for (const char *text : {kind, dtype, loc}) put_bytes(out, text, (int64_t)strlen(text));
            put_bytes(out, input, n);
            continue;
        }
        if (status != 0) {
            out.push_back(1);
            const char *e = mtia_host_error(pe);
            put_bytes(out, e, (int64_t)strlen(e));
            failed = true;
            break;
        }
        out.push_back(0);
        int64_t n = 0;
        const int64_t *rec = mtia_host_record(pe, &n);
        out.push_back(n);
        out.insert(out.end(), rec, rec + n);
        int64_t nstrings = mtia_host_string_count(pe);
        out.push_back(nstrings);
        for (int64_t s = 0; s < nstrings; ++s) {
            const char *text = mtia_host_string(pe, s);
            put_bytes(out, text, (int64_t)strlen(text));
        }
    }
    if (!failed)
        for (int64_t r = 0; r < nregions; ++r) put_bytes(out, regions[(size_t)r].data(), sizes[(size_t)r]);
    mtia_host_pe_free(pe);
    f = fopen(argv[2], "wb");
    if (!f || fwrite(out.data(), 8, out.size(), f) != out.size()) return 2;
    fclose(f);
    return 0;
}
