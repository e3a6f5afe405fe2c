// host_runtime.cpp: the host implementation of mtia_runtime.h.
//
// Executes every command on the caller's memory (global addresses mapped with mtia_host_map, LS a byte
// array per PE) and records the command stream; mtia_xdsl/backend/host.py turns the record into
// machine/commands.py Commands with the machine model's own functions and times them.
//
// CBs are checked as the model's SimCB checks them (machine/interpret/cb.py): reserving a full CB, waiting
// on an empty one, reading without a wait, pushing an unwritten slot, ending with tiles in a CB are errors
// naming the kernel line. The CB allocation is checked as the model's CbSpace checks it: a CB ID must be below
// the PE's CB IDs (MachineConfig.cb_ids), a CB ID is held by one CB with tiles at a time, and a command must
// not read a tile whose LS bytes another CB has written since (an allocation giving CBs alive together
// overlapping bytes). A hand-edited CB ID or LS offset that breaks them is an error naming the call.
//
// Record format (int64 words), one entry per event:
//   REC_CB   handle cb_id depth slot_bytes ls_offset
//   REC_CMD  opcode engine kind loc scalar_instrs nwaits (cb seq)* nfills (cb seq)* npayload payload*
//   REC_END  tail_scalar_instrs
// Strings (kind, loc, dtype) are ids into the PE's string table (mtia_host_string). The payload per opcode
// is documented at each `finish(...)` call; host.py reads it.
#include "mtia_runtime.h"

#include <algorithm>
#include <csetjmp>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

enum : int64_t { REC_CB = 1, REC_CMD = 2, REC_END = 3 };
enum : int64_t {
    OP_DMA = 1,
    OP_COMPUTE = 2,
    OP_DPE = 3,
    OP_RE = 4,
    OP_CB_READ = 5,
    OP_SCALAR_MEM = 6,
    OP_LANES = 7,  // gather, scatter, atomics: active lanes and their extent
    OP_RE_LINK = 8,       // mtia.re_allreduce's RE network command
    OP_GATHER_ROWS = 9,   // mtia.dma_gather_rows: the runs it read
};
const int WAITING = 2;  // longjmp value and mtia_host_call status of a program stopped at a cross-PE reduction

struct Region {
    mtia_addr base;
    uint8_t *host;
    int64_t nbytes;
};

std::vector<Region> g_regions;  // sorted by base

struct Cb {
    int32_t cb_id, depth;
    int64_t slot_bytes, ls_offset;
    const char *loc;
    int64_t pushed = 0, popped = 0, visible = 0, waited = 0;
    std::vector<bool> reserved;  // written flag of each reserved slot, oldest first
    std::vector<std::string> clobbered;  // per slot: who wrote its LS bytes through another CB since ("": no one)
    bool holds() const { return visible > 0 || !reserved.empty(); }
};

struct Slot {
    int64_t cb, seq;
    bool operator==(const Slot &o) const { return cb == o.cb && seq == o.seq; }
};

}  // namespace

struct mtia_pe {
    std::vector<uint8_t> ls;
    int32_t cb_ids = 0;  // CB IDs of the PE's CP (MachineConfig.cb_ids)
    std::vector<Cb> cbs;
    std::vector<int64_t> record;
    std::vector<const char *> strings;
    std::map<const char *, int64_t> string_ids;
    std::vector<std::string> owned;  // strings made at run time (dtype names of scalar ops)
    int64_t scalar = 0;
    int32_t pid[3] = {0, 0, 0}, grid[3] = {1, 1, 1}, pe_xy[2] = {0, 0}, npes[2] = {1, 1};
    // the command being issued (mtia_cmd_begin .. *_end)
    int32_t engine = 0;
    const char *kind = nullptr, *loc = nullptr;
    std::vector<Slot> waits, fills;
    std::string error;
    jmp_buf *jump = nullptr;
    // cross-PE reductions (mtia_re_allreduce): results the host gave, the next call, the input it stopped at
    std::vector<uint8_t> coll_results, coll_input;
    int64_t coll_ncalls = 0, coll_call = 0, coll_offset = 0, coll_wait_call = 0;
    const char *coll_kind = nullptr, *coll_dtype = nullptr, *coll_loc = nullptr;
    int32_t coll_axis = 0;
};

namespace {

[[noreturn]] void fail(mtia_pe *pe, const char *loc, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pe->error = std::string(loc ? loc : "<unknown location>") + ": error: " + buf;
    if (pe->jump) longjmp(*pe->jump, 1);
    fprintf(stderr, "%s\n", pe->error.c_str());
    abort();
}

int64_t sid(mtia_pe *pe, const char *s) {
    if (!s) s = "";
    auto it = pe->string_ids.find(s);
    if (it != pe->string_ids.end()) return it->second;
    int64_t id = (int64_t)pe->strings.size();
    pe->strings.push_back(s);
    pe->string_ids[s] = id;
    return id;
}

Cb &cb_of(mtia_pe *pe, int32_t cb, const char *loc) {
    if (cb < 0 || cb >= (int32_t)pe->cbs.size()) fail(pe, loc, "CB handle %d was not allocated", cb);
    return pe->cbs[cb];
}

std::string cb_text(const Cb &c, int32_t h) {
    char buf[200];
    snprintf(buf, sizeof buf, " (CB #%d, CB ID %d, %d slot(s) of %lld bytes, allocated at %s)", h, c.cb_id,
             c.depth, (long long)c.slot_bytes, c.loc ? c.loc : "?");
    return buf;
}

uint8_t *slot_ptr(mtia_pe *pe, Cb &c, int64_t seq) {
    return pe->ls.data() + c.ls_offset + (seq % c.depth) * c.slot_bytes;
}

uint8_t *global(mtia_pe *pe, mtia_addr addr, int64_t nbytes, const char *loc) {
    auto it = std::upper_bound(g_regions.begin(), g_regions.end(), addr,
                               [](mtia_addr a, const Region &r) { return a < r.base; });
    if (it != g_regions.begin()) {
        --it;
        if (addr >= it->base && addr + (mtia_addr)nbytes <= it->base + (mtia_addr)it->nbytes)
            return it->host + (addr - it->base);
    }
    fail(pe, loc, "access of %lld byte(s) at address 0x%llx is outside every tensor argument", (long long)nbytes,
         (unsigned long long)addr);
}

// A command is about to read tile `seq` of CB `h`: its LS bytes must hold what this CB wrote there.
void check_read(mtia_pe *pe, int32_t h, int64_t seq, const char *loc) {
    Cb &c = pe->cbs[(size_t)h];
    const std::string &by = c.clobbered[(size_t)(seq % c.depth)];
    if (!by.empty())
        fail(pe, loc,
             "%s reads a tile whose LS bytes another CB has written since: %s (the CB allocation gives CBs alive "
             "at the same time overlapping bytes)%s",
             pe->kind ? pe->kind : "a command", by.c_str(), cb_text(c, h).c_str());
}

// Tile `seq` of CB `h` was written: the slots of other CBs sharing its LS bytes no longer hold their tiles.
void wrote(mtia_pe *pe, int32_t h, int64_t seq, const char *loc) {
    Cb &c = pe->cbs[(size_t)h];
    int64_t lo = c.ls_offset + (seq % c.depth) * c.slot_bytes, hi = lo + c.slot_bytes;
    c.clobbered[(size_t)(seq % c.depth)].clear();
    for (size_t o = 0; o < pe->cbs.size(); ++o) {
        if ((int32_t)o == h) continue;
        Cb &other = pe->cbs[o];
        for (int32_t j = 0; j < other.depth; ++j) {
            int64_t olo = other.ls_offset + j * other.slot_bytes;
            if (lo < olo + other.slot_bytes && olo < hi)
                other.clobbered[(size_t)j] = "CB #" + std::to_string(h) + " (CB ID " + std::to_string(c.cb_id) +
                                             "), written at " + (loc ? loc : "?");
        }
    }
}

// The front tile of `c` for a command (checks the wait and that no other CB overwrote it), its slot.
Slot front(mtia_pe *pe, int32_t h, const char *loc) {
    Cb &c = cb_of(pe, h, loc);
    if (c.waited < 1 || c.visible < 1)
        fail(pe, loc, "a command reads a CB without a cb_wait for its tile%s", cb_text(c, h).c_str());
    check_read(pe, h, c.popped, loc);
    return Slot{h, c.popped};
}

// The next unwritten reserved slot of `c` (marked written).
Slot next_write(mtia_pe *pe, int32_t h, const char *loc) {
    Cb &c = cb_of(pe, h, loc);
    for (size_t i = 0; i < c.reserved.size(); ++i) {
        if (!c.reserved[i]) {
            c.reserved[i] = true;
            wrote(pe, h, c.pushed + (int64_t)i, loc);
            return Slot{h, c.pushed + (int64_t)i};
        }
    }
    fail(pe, loc, "a command writes a CB slot that was not reserved (missing cb_reserve)%s", cb_text(c, h).c_str());
}

void put(mtia_pe *pe, std::initializer_list<int64_t> words) {
    pe->record.insert(pe->record.end(), words.begin(), words.end());
}

void add_unique(std::vector<Slot> &v, Slot s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

// Record the command begun by mtia_cmd_begin (or set up by the caller) with `payload`.
void finish(mtia_pe *pe, int64_t opcode, const std::vector<int64_t> &payload) {
    put(pe, {REC_CMD, opcode, pe->engine, sid(pe, pe->kind), sid(pe, pe->loc), pe->scalar});
    pe->scalar = 0;
    pe->record.push_back((int64_t)pe->waits.size());
    for (auto &s : pe->waits) put(pe, {s.cb, s.seq});
    pe->record.push_back((int64_t)pe->fills.size());
    for (auto &s : pe->fills) put(pe, {s.cb, s.seq});
    pe->record.push_back((int64_t)payload.size());
    pe->record.insert(pe->record.end(), payload.begin(), payload.end());
    pe->waits.clear();
    pe->fills.clear();
    pe->kind = nullptr;
}

void begin(mtia_pe *pe, int32_t engine, const char *kind, const char *loc) {
    pe->engine = engine;
    pe->kind = kind;
    pe->loc = loc;
    pe->waits.clear();
    pe->fills.clear();
}

void nan_or_zero(uint8_t *dst, int32_t elem_bytes, int32_t is_float) {
    if (!is_float) {
        memset(dst, 0, (size_t)elem_bytes);
    } else if (elem_bytes == 4) {
        float f = NAN;
        memcpy(dst, &f, 4);
    } else if (elem_bytes == 8) {
        double f = NAN;
        memcpy(dst, &f, 8);
    } else if (elem_bytes == 2) {
        uint16_t h = 0x7e00;  // f16 NaN; bf16 reads 0x7fc0 as NaN too: both have the quiet bit set
        memcpy(dst, &h, 2);
    } else {
        memset(dst, 0xff, (size_t)elem_bytes);
    }
}

// Clamp the descriptor's bounds and starts to its shape (machine/interpret/dma_trace.py dma_block).
void clamp(const mtia_dma_desc *d, int64_t *bounds, int64_t *starts) {
    for (int k = 0; k < d->rank; ++k) {
        bounds[k] = std::min(std::max(d->bounds[k], (int64_t)0), d->shape[k]);
        starts[k] = d->has_starts ? std::min(std::max(d->starts[k], (int64_t)0), d->shape[k]) : 0;
    }
}

// Visit every lane of the block (row-major); fn(lane index, inside, global element offset).
template <class F>
void each_lane(const mtia_dma_desc *d, const int64_t *bounds, const int64_t *starts, F fn) {
    int64_t idx[MTIA_MAX_RANK] = {0, 0, 0, 0};
    int64_t total = 1;
    for (int k = 0; k < d->rank; ++k) total *= d->shape[k];
    for (int64_t lane = 0; lane < total; ++lane) {
        bool inside = true;
        int64_t off = 0;
        for (int k = 0; k < d->rank; ++k) {
            inside = inside && idx[k] >= starts[k] && idx[k] < bounds[k];
            off += idx[k] * d->strides[k];
        }
        fn(lane, inside, off);
        for (int k = d->rank - 1; k >= 0; --k) {
            if (++idx[k] < d->shape[k]) break;
            idx[k] = 0;
        }
    }
}

void dma_payload(mtia_pe *pe, const mtia_dma_desc *d, const int64_t *bounds, int64_t load, int64_t whole_tile,
                 int64_t slot_bytes) {
    // payload: load base rank elem_bytes dtype whole_tile slot_bytes strides[rank] bounds[rank]
    std::vector<int64_t> p = {load, (int64_t)d->base, d->rank, d->elem_bytes, sid(pe, d->dtype), whole_tile,
                              slot_bytes};
    for (int k = 0; k < d->rank; ++k) p.push_back(d->strides[k]);
    for (int k = 0; k < d->rank; ++k) p.push_back(bounds[k]);
    finish(pe, OP_DMA, p);
}

const char *intern(mtia_pe *pe, const char *s) {
    for (auto &o : pe->owned)
        if (o == s) return o.c_str();
    pe->owned.emplace_back(s);
    return pe->owned.back().c_str();
}

template <class T>
T rmw(const char *op, T a, T b, bool *ok) {
    *ok = true;
    if (!strcmp(op, "add")) return (T)(a + b);
    if (!strcmp(op, "max")) return a > b ? a : b;
    if (!strcmp(op, "min")) return a < b ? a : b;
    if (!strcmp(op, "xchg")) return b;
    *ok = false;
    return a;
}

template <class T>
T rmw_bits(const char *op, T a, T b, bool *ok) {
    if (!strcmp(op, "and")) return (T)(a & b);
    if (!strcmp(op, "or")) return (T)(a | b);
    if (!strcmp(op, "xor")) return (T)(a ^ b);
    return rmw<T>(op, a, b, ok);
}

}  // namespace

extern "C" {

int32_t mtia_program_id(mtia_pe *pe, int32_t axis) { return pe->pid[axis]; }
int32_t mtia_num_programs(mtia_pe *pe, int32_t axis) { return pe->grid[axis]; }
int32_t mtia_pe_id(mtia_pe *pe, int32_t axis) { return pe->pe_xy[axis]; }
int32_t mtia_num_pes(mtia_pe *pe, int32_t axis) { return pe->npes[axis]; }
void mtia_scalar_instrs(mtia_pe *pe, int64_t n) { pe->scalar += n; }

void mtia_assert_fail(mtia_pe *pe, const char *message, const char *loc) {
    fail(pe, loc, "assertion failed in program (%d, %d, %d): %s", pe->pid[0], pe->pid[1], pe->pid[2], message);
}

void mtia_slice_check(mtia_pe *pe, int64_t offset, int64_t size, int64_t extent, int32_t dim) {
    if (offset < 0 || offset > extent - size)
        fail(pe, pe->loc,
             "%s: extract_slice: offset %lld + size %lld leaves dimension %d of the tile (extent %lld); keep 0 <= "
             "offset <= %lld",
             pe->kind ? pe->kind : "a command", (long long)offset, (long long)size, dim, (long long)extent,
             (long long)(extent - size));
}

int32_t mtia_cb_alloc(mtia_pe *pe, int32_t cb_id, int32_t depth, int64_t slot_bytes, int64_t ls_offset,
                      const char *loc) {
    if (depth < 1) fail(pe, loc, "mtia_cb_alloc: a CB needs at least one slot, got depth %d", depth);
    if (cb_id < 0 || cb_id >= pe->cb_ids)
        fail(pe, loc, "mtia_cb_alloc: CB ID %d is not below the %d CB IDs of a PE's CP (MachineConfig.cb_ids)",
             cb_id, pe->cb_ids);
    if (ls_offset < 0 || ls_offset + depth * slot_bytes > (int64_t)pe->ls.size())
        fail(pe, loc, "mtia_cb_alloc: CB LS bytes [%lld, %lld) are outside the PE's %lld bytes of LS",
             (long long)ls_offset,
             (long long)(ls_offset + depth * slot_bytes), (long long)pe->ls.size());
    Cb c;
    c.cb_id = cb_id;
    c.depth = depth;
    c.slot_bytes = slot_bytes;
    c.ls_offset = ls_offset;
    c.loc = loc;
    c.clobbered.assign((size_t)depth, std::string());
    pe->cbs.push_back(c);
    int32_t h = (int32_t)pe->cbs.size() - 1;
    put(pe, {REC_CB, h, cb_id, depth, slot_bytes, ls_offset});
    return h;
}

void mtia_cb_reserve(mtia_pe *pe, int32_t h, int32_t n, const char *loc) {
    Cb &c = cb_of(pe, h, loc);
    if (c.visible + (int64_t)c.reserved.size() + n > c.depth)
        fail(pe, loc,
             "cb_reserve of %d slot(s) would wait forever: %lld published and %lld reserved of %d; pop tiles "
             "first or deepen the CB%s",
             n, (long long)c.visible, (long long)c.reserved.size(), c.depth, cb_text(c, h).c_str());
    if (!c.holds()) {  // the CB starts holding a tile: its CB ID must be free
        int64_t holding = 0;
        for (size_t o = 0; o < pe->cbs.size(); ++o) {
            const Cb &other = pe->cbs[o];
            if ((int32_t)o == h || !other.holds()) continue;
            ++holding;
            if (other.cb_id == c.cb_id)
                fail(pe, loc, "mtia_cb_reserve: CB ID %d is still in use by CB #%d, which holds tiles%s", c.cb_id,
                     (int)o, cb_text(c, h).c_str());
        }
        if (holding >= pe->cb_ids)
            fail(pe, loc,
                 "mtia_cb_reserve: more than the %d CB IDs of a PE's CP (MachineConfig.cb_ids) would be in use%s",
                 pe->cb_ids, cb_text(c, h).c_str());
    }
    c.reserved.insert(c.reserved.end(), (size_t)n, false);
}

void mtia_cb_push(mtia_pe *pe, int32_t h, int32_t n, const char *loc) {
    Cb &c = cb_of(pe, h, loc);
    bool ok = n <= (int32_t)c.reserved.size();
    for (int32_t i = 0; ok && i < n; ++i) ok = c.reserved[(size_t)i];
    if (!ok) fail(pe, loc, "cb_push of %d slot(s) that no command wrote%s", n, cb_text(c, h).c_str());
    c.reserved.erase(c.reserved.begin(), c.reserved.begin() + n);
    c.visible += n;
    c.pushed += n;
}

void mtia_cb_wait(mtia_pe *pe, int32_t h, int32_t n, const char *loc) {
    Cb &c = cb_of(pe, h, loc);
    if (c.visible < n)
        fail(pe, loc, "cb_wait for %d tile(s) would wait forever: %lld published%s", n, (long long)c.visible,
             cb_text(c, h).c_str());
    c.waited = std::max(c.waited, (int64_t)n);
}

void mtia_cb_pop(mtia_pe *pe, int32_t h, int32_t n, const char *loc) {
    Cb &c = cb_of(pe, h, loc);
    if (c.waited < n || c.visible < n)
        fail(pe, loc, "cb_pop of %d tile(s) but only %lld were waited for%s", n, (long long)c.waited,
             cb_text(c, h).c_str());
    c.visible -= n;
    c.popped += n;
    c.waited -= n;
}

void *mtia_cb_front_ptr(mtia_pe *pe, int32_t h, const char *loc) {
    Slot s = front(pe, h, loc);
    return slot_ptr(pe, pe->cbs[h], s.seq);
}

void mtia_cb_read(mtia_pe *pe, int32_t h, void *dst, int64_t nbytes, const char *loc) {
    begin(pe, MTIA_SCALAR, "cb_read", loc);
    Slot s = front(pe, h, loc);
    memcpy(dst, slot_ptr(pe, pe->cbs[h], s.seq), (size_t)nbytes);
    pe->waits.push_back(s);
    finish(pe, OP_CB_READ, {});
}

void mtia_dma_load(mtia_pe *pe, int32_t h, const mtia_dma_desc *d, const void *other, const char *loc) {
    begin(pe, MTIA_DMA, "dma_load", loc);
    Slot s = next_write(pe, h, loc);
    Cb &c = pe->cbs[h];
    uint8_t *dst = slot_ptr(pe, c, s.seq);
    int64_t bounds[MTIA_MAX_RANK], starts[MTIA_MAX_RANK];
    clamp(d, bounds, starts);
    const int32_t eb = d->elem_bytes;
    each_lane(d, bounds, starts, [&](int64_t lane, bool inside, int64_t off) {
        uint8_t *to = dst + lane * eb;
        if (inside)
            memcpy(to, global(pe, d->base + (mtia_addr)(off * eb), eb, loc), (size_t)eb);
        else if (other)
            memcpy(to, other, (size_t)eb);
        else
            nan_or_zero(to, eb, d->is_float);
    });
    pe->fills.push_back(s);
    dma_payload(pe, d, bounds, 1, other != nullptr, c.slot_bytes);
}

void mtia_dma_store(mtia_pe *pe, int32_t h, const mtia_dma_desc *d, const char *loc) {
    begin(pe, MTIA_DMA, "dma_store", loc);
    Slot s = front(pe, h, loc);
    Cb &c = pe->cbs[h];
    const uint8_t *src = slot_ptr(pe, c, s.seq);
    int64_t bounds[MTIA_MAX_RANK], starts[MTIA_MAX_RANK];
    clamp(d, bounds, starts);
    const int32_t eb = d->elem_bytes;
    each_lane(d, bounds, starts, [&](int64_t lane, bool inside, int64_t off) {
        if (inside) memcpy(global(pe, d->base + (mtia_addr)(off * eb), eb, loc), src + lane * eb, (size_t)eb);
    });
    pe->waits.push_back(s);
    dma_payload(pe, d, bounds, 0, 1, c.slot_bytes);
}

void mtia_dma_store_scalar(mtia_pe *pe, const void *src, const mtia_dma_desc *d, const char *loc) {
    // a store of a value the scalar core holds: no CB, no command (as the model's dma_store of a non-CB value)
    memcpy(global(pe, d->base, d->elem_bytes, loc), src, (size_t)d->elem_bytes);
}

void mtia_dma_store_value(mtia_pe *pe, const void *src, const mtia_dma_desc *d, const char *loc) {
    // a store of a tile the scalar core holds: no CB, no command (as the model's dma_store of a non-CB value)
    int64_t bounds[MTIA_MAX_RANK], starts[MTIA_MAX_RANK];
    clamp(d, bounds, starts);
    const int32_t eb = d->elem_bytes;
    const uint8_t *from = (const uint8_t *)src;
    each_lane(d, bounds, starts, [&](int64_t lane, bool inside, int64_t off) {
        if (inside) memcpy(global(pe, d->base + (mtia_addr)(off * eb), eb, loc), from + lane * eb, (size_t)eb);
    });
}

void mtia_dma_gather_rows(mtia_pe *pe, int32_t h, int32_t index_cb, const int64_t *index_shape, int32_t index_bytes,
                          int64_t row_stride, const mtia_dma_desc *d, const void *other, int64_t ls_bytes,
                          const char *loc) {
    begin(pe, MTIA_DMA, "dma_gather_rows", loc);
    Slot is = front(pe, index_cb, loc);
    const uint8_t *index = slot_ptr(pe, pe->cbs[index_cb], is.seq);
    Slot s = next_write(pe, h, loc);
    uint8_t *dst = slot_ptr(pe, pe->cbs[h], s.seq);
    int64_t bounds[MTIA_MAX_RANK], starts[MTIA_MAX_RANK];
    mtia_dma_desc plain = *d;
    plain.has_starts = 0;
    clamp(&plain, bounds, starts);
    const int32_t eb = d->elem_bytes;
    int64_t idx[MTIA_MAX_RANK] = {0, 0, 0, 0}, total = 1;
    for (int k = 0; k < d->rank; ++k) total *= d->shape[k];
    // payload: active ls_bytes dtype elem_bytes nruns (addr bytes)*: the contiguous runs of the read bytes
    std::vector<int64_t> runs;
    int64_t active = 0;
    for (int64_t lane = 0; lane < total; ++lane) {
        bool inside = true;
        int64_t off = 0, at = 0;
        for (int k = 0; k < d->rank; ++k) {
            inside = inside && idx[k] < bounds[k];
            off += idx[k] * d->strides[k];
            at = at * index_shape[k] + (index_shape[k] == 1 ? 0 : idx[k]);
        }
        uint8_t *to = dst + lane * eb;
        if (inside) {
            int64_t row = 0;
            if (index_bytes == 8) {
                memcpy(&row, index + at * 8, 8);
            } else if (index_bytes == 4) {
                int32_t v;
                memcpy(&v, index + at * 4, 4);
                row = v;
            } else if (index_bytes == 2) {
                int16_t v;
                memcpy(&v, index + at * 2, 2);
                row = v;
            } else {
                row = (int8_t)index[at];
            }
            mtia_addr addr = d->base + (mtia_addr)((row * row_stride + off) * eb);
            memcpy(to, global(pe, addr, eb, loc), (size_t)eb);
            ++active;
            size_t n = runs.size();
            if (n && (mtia_addr)(runs[n - 2] + runs[n - 1]) == addr)
                runs[n - 1] += eb;
            else
                runs.insert(runs.end(), {(int64_t)addr, (int64_t)eb});
        } else if (other) {
            memcpy(to, other, (size_t)eb);
        } else {
            nan_or_zero(to, eb, d->is_float);
        }
        for (int k = d->rank - 1; k >= 0; --k) {
            if (++idx[k] < d->shape[k]) break;
            idx[k] = 0;
        }
    }
    pe->waits.push_back(is);
    pe->fills.push_back(s);
    std::vector<int64_t> p = {active, ls_bytes, sid(pe, d->dtype), eb, (int64_t)runs.size() / 2};
    p.insert(p.end(), runs.begin(), runs.end());
    finish(pe, OP_GATHER_ROWS, p);
}

void mtia_scalar_load(mtia_pe *pe, mtia_addr addr, void *dst, int32_t nbytes, const char *dtype, const char *loc) {
    begin(pe, MTIA_SCALAR, "scalar_load", loc);
    memcpy(dst, global(pe, addr, nbytes, loc), (size_t)nbytes);
    // payload: store addr nbytes dtype
    finish(pe, OP_SCALAR_MEM, {0, (int64_t)addr, nbytes, sid(pe, intern(pe, dtype))});
}

void mtia_scalar_store(mtia_pe *pe, mtia_addr addr, const void *src, int32_t nbytes, const char *dtype,
                       const char *loc) {
    begin(pe, MTIA_SCALAR, "scalar_store", loc);
    memcpy(global(pe, addr, nbytes, loc), src, (size_t)nbytes);
    finish(pe, OP_SCALAR_MEM, {1, (int64_t)addr, nbytes, sid(pe, intern(pe, dtype))});
}

void mtia_cmd_begin(mtia_pe *pe, int32_t engine, const char *kind, const char *loc) { begin(pe, engine, kind, loc); }

const void *mtia_cmd_in(mtia_pe *pe, int32_t h) {
    Slot s = front(pe, h, pe->loc);
    add_unique(pe->waits, s);
    return slot_ptr(pe, pe->cbs[h], s.seq);
}

void *mtia_cmd_out(mtia_pe *pe, int32_t h) {
    Slot s = next_write(pe, h, pe->loc);
    pe->fills.push_back(s);
    return slot_ptr(pe, pe->cbs[h], s.seq);
}

void *mtia_cmd_inout(mtia_pe *pe, int32_t h) {
    Cb &c = cb_of(pe, h, pe->loc);
    if (c.waited < 1 || c.visible < 1)
        fail(pe, pe->loc, "an inplace command updates a CB tile without a cb_wait for it%s", cb_text(c, h).c_str());
    Slot s{h, c.popped};
    check_read(pe, h, s.seq, pe->loc);
    wrote(pe, h, s.seq, pe->loc);
    add_unique(pe->waits, s);  // the command reads the tile it updates: a wait on it, as the model records
    pe->fills.push_back(s);
    return slot_ptr(pe, c, s.seq);
}

void mtia_compute_end(mtia_pe *pe, const mtia_work *w) {
    // payload: elems dtype lut ls_bytes out_rank out_shape[out_rank] nvalid valid[nvalid]
    std::vector<int64_t> p = {w->elems, sid(pe, w->dtype), w->lut, w->ls_bytes, w->out_rank};
    for (int k = 0; k < w->out_rank; ++k) p.push_back(w->out_shape[k]);
    p.push_back(w->nvalid);
    for (int k = 0; k < w->nvalid; ++k) p.push_back(w->valid[k]);
    finish(pe, OP_COMPUTE, p);
}

void mtia_dpe_end(mtia_pe *pe, int64_t batch, int64_t m, int64_t n, int64_t k, const char *dtype,
                  int32_t input_precision, int64_t ls_bytes, int32_t nvalid, const int64_t *valid) {
    // payload: batch m n k dtype input_precision ls_bytes nvalid valid[nvalid]
    std::vector<int64_t> p = {batch, m, n, k, sid(pe, dtype), input_precision, ls_bytes, nvalid};
    for (int i = 0; i < nvalid; ++i) p.push_back(valid[i]);
    finish(pe, OP_DPE, p);
}

void mtia_re_end(mtia_pe *pe, int32_t in_rank, const int64_t *in_shape, const char *dtype, int64_t ls_bytes,
                 int32_t nvalid, const int64_t *valid) {
    // payload: dtype ls_bytes in_rank in_shape[in_rank] nvalid valid[nvalid]
    std::vector<int64_t> p = {sid(pe, dtype), ls_bytes, in_rank};
    for (int i = 0; i < in_rank; ++i) p.push_back(in_shape[i]);
    p.push_back(nvalid);
    for (int i = 0; i < nvalid; ++i) p.push_back(valid[i]);
    finish(pe, OP_RE, p);
}

static void lanes_payload(mtia_pe *pe, const mtia_addr *addrs, const uint8_t *mask, int64_t n, int32_t eb,
                          int64_t read, int64_t write, int64_t ls_bytes, const char *dtype) {
    // payload: active lo hi read write ls_bytes dtype elem_bytes
    int64_t active = 0;
    mtia_addr lo = ~(mtia_addr)0, hi = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (mask && !mask[i]) continue;
        ++active;
        lo = std::min(lo, addrs[i]);
        hi = std::max(hi, addrs[i]);
    }
    finish(pe, OP_LANES, {active, (int64_t)lo, (int64_t)hi + eb, read, write, ls_bytes, sid(pe, dtype), eb});
}

void *mtia_global(mtia_pe *pe, mtia_addr addr, int64_t nbytes, const char *loc) {
    return global(pe, addr, nbytes, loc ? loc : pe->loc);
}

int64_t mtia_storage_extent(mtia_pe *, mtia_addr addr, int32_t elem_bytes) {
    auto it = std::upper_bound(g_regions.begin(), g_regions.end(), addr,
                               [](mtia_addr a, const Region &r) { return a < r.base; });
    if (it == g_regions.begin()) return 0;
    --it;
    mtia_addr end = it->base + (mtia_addr)it->nbytes;
    return addr < end ? (int64_t)((end - addr) / (mtia_addr)elem_bytes) : 0;
}

void mtia_lanes_end(mtia_pe *pe, const mtia_addr *addrs, const uint8_t *mask, int64_t n, int32_t elem_bytes,
                    int32_t read, int32_t write, int64_t ls_bytes, const char *dtype) {
    lanes_payload(pe, addrs, mask, n, elem_bytes, read, write, ls_bytes, dtype);
}

void mtia_gather(mtia_pe *pe, void *dst, const mtia_addr *addrs, const uint8_t *mask, const void *other, int64_t n,
                 int32_t eb, int64_t ls_bytes, const char *dtype) {
    uint8_t *to = (uint8_t *)dst;
    for (int64_t i = 0; i < n; ++i) {
        if (!mask || mask[i])
            memcpy(to + i * eb, global(pe, addrs[i], eb, pe->loc), (size_t)eb);
        else if (other)
            memcpy(to + i * eb, other, (size_t)eb);
        else
            memset(to + i * eb, 0, (size_t)eb);
    }
    lanes_payload(pe, addrs, mask, n, eb, 1, 0, ls_bytes, dtype);
}

void mtia_scatter(mtia_pe *pe, const void *src, const mtia_addr *addrs, const uint8_t *mask, int64_t n, int32_t eb,
                  const char *dtype) {
    const uint8_t *from = (const uint8_t *)src;
    for (int64_t i = 0; i < n; ++i)
        if (!mask || mask[i]) memcpy(global(pe, addrs[i], eb, pe->loc), from + i * eb, (size_t)eb);
    lanes_payload(pe, addrs, mask, n, eb, 0, 1, 0, dtype);
}

void mtia_atomic_rmw(mtia_pe *pe, const char *op, void *old, const mtia_addr *addrs, const void *val,
                     const uint8_t *mask, int64_t n, int32_t eb, const char *dtype, int64_t ls_bytes) {
    for (int64_t i = 0; i < n; ++i) {
        if (mask && !mask[i]) continue;
        uint8_t *p = global(pe, addrs[i], eb, pe->loc);
        bool ok = true;
        if (!strcmp(dtype, "f32")) {
            float a, b, r;
            memcpy(&a, p, 4);
            memcpy(&b, (const uint8_t *)val + i * 4, 4);
            r = rmw<float>(op, a, b, &ok);
            if (old) memcpy((uint8_t *)old + i * 4, &a, 4);
            memcpy(p, &r, 4);
        } else if (!strcmp(dtype, "i32")) {
            int32_t a, b, r;
            memcpy(&a, p, 4);
            memcpy(&b, (const uint8_t *)val + i * 4, 4);
            r = rmw_bits<int32_t>(op, a, b, &ok);
            if (old) memcpy((uint8_t *)old + i * 4, &a, 4);
            memcpy(p, &r, 4);
        } else if (!strcmp(dtype, "i64")) {
            int64_t a, b, r;
            memcpy(&a, p, 8);
            memcpy(&b, (const uint8_t *)val + i * 8, 8);
            r = rmw_bits<int64_t>(op, a, b, &ok);
            if (old) memcpy((uint8_t *)old + i * 8, &a, 8);
            memcpy(p, &r, 8);
        } else {
            ok = false;
        }
        if (!ok) fail(pe, pe->loc, "atomic %s on %s is not supported by the host runtime", op, dtype);
    }
    lanes_payload(pe, addrs, mask, n, eb, 1, 1, ls_bytes, dtype);
}

void mtia_re_allreduce(mtia_pe *pe, void *data, int64_t n, int32_t eb, const char *dtype, const char *kind,
                       int32_t pe_axis, const char *loc) {
    const int64_t nbytes = n * eb;
    if (pe->coll_call >= pe->coll_ncalls) {  // the group's result is not known yet: stop, the host reruns us
        pe->coll_input.assign((const uint8_t *)data, (const uint8_t *)data + nbytes);
        pe->coll_wait_call = pe->coll_call;
        pe->coll_kind = kind;
        pe->coll_dtype = dtype;
        pe->coll_axis = pe_axis;
        pe->coll_loc = loc;
        if (pe->jump) longjmp(*pe->jump, WAITING);
        fail(pe, loc, "re_reduce outside mtia_host_call");
    }
    if (pe->coll_offset + nbytes > (int64_t)pe->coll_results.size())
        fail(pe, loc, "re_reduce result %lld: the host gave fewer bytes than the %lld the tile has",
             (long long)pe->coll_call, (long long)nbytes);
    memcpy(data, pe->coll_results.data() + pe->coll_offset, (size_t)nbytes);
    pe->coll_offset += nbytes;
    ++pe->coll_call;
    begin(pe, MTIA_RE, "re_link", loc);
    // payload: elems dtype pe_axis group_size
    finish(pe, OP_RE_LINK, {n, sid(pe, dtype), pe_axis, pe->npes[pe_axis == 0 ? 0 : 1]});
}

// -- host side ------------------------------------------------------------------------------------------

mtia_pe *mtia_host_pe_new(int64_t ls_bytes, int32_t cb_ids) {
    mtia_pe *pe = new mtia_pe;
    pe->ls.assign((size_t)ls_bytes, 0);
    pe->cb_ids = cb_ids;
    return pe;
}

void mtia_host_pe_free(mtia_pe *pe) { delete pe; }

void mtia_host_map(mtia_addr base, void *host, int64_t nbytes) {
    g_regions.push_back(Region{base, (uint8_t *)host, nbytes});
    std::sort(g_regions.begin(), g_regions.end(), [](const Region &a, const Region &b) { return a.base < b.base; });
}

void mtia_host_unmap_all(void) { g_regions.clear(); }

void mtia_host_set_program(mtia_pe *pe, const int32_t *pid3, const int32_t *grid3, const int32_t *pe_xy,
                           const int32_t *num_pes_xy) {
    for (int k = 0; k < 3; ++k) {
        pe->pid[k] = pid3[k];
        pe->grid[k] = grid3[k];
    }
    for (int k = 0; k < 2; ++k) {
        pe->pe_xy[k] = pe_xy[k];
        pe->npes[k] = num_pes_xy[k];
    }
}

int32_t mtia_host_call(mtia_pe *pe, mtia_entry entry, const int64_t *args) {
    pe->record.clear();
    pe->cbs.clear();
    pe->strings.clear();
    pe->string_ids.clear();
    pe->error.clear();
    pe->scalar = 0;
    pe->coll_call = 0;
    pe->coll_offset = 0;
    jmp_buf jump;
    pe->jump = &jump;
    int status = setjmp(jump);
    if (status != 0) {
        pe->jump = nullptr;
        return status == WAITING ? WAITING : 1;
    }
    entry(pe, args);
    for (size_t h = 0; h < pe->cbs.size(); ++h) {
        Cb &c = pe->cbs[h];
        if (c.visible || !c.reserved.empty())
            fail(pe, c.loc,
                 "the program ends with %lld published and %lld reserved tile(s) left in a CB (unbalanced CB "
                 "protocol)%s",
                 (long long)c.visible, (long long)c.reserved.size(), cb_text(c, (int32_t)h).c_str());
    }
    put(pe, {REC_END, pe->scalar});
    pe->jump = nullptr;
    return 0;
}

const char *mtia_host_error(mtia_pe *pe) { return pe->error.c_str(); }

void mtia_host_set_collective(mtia_pe *pe, int64_t ncalls, const void *results, int64_t nbytes) {
    pe->coll_ncalls = ncalls;
    pe->coll_results.assign((const uint8_t *)results, (const uint8_t *)results + nbytes);
}

const void *mtia_host_collective_wait(mtia_pe *pe, int64_t *nbytes, int64_t *call, const char **kind,
                                      const char **dtype, int32_t *pe_axis, const char **loc) {
    *loc = pe->coll_loc;
    *nbytes = (int64_t)pe->coll_input.size();
    *call = pe->coll_wait_call;
    *kind = pe->coll_kind;
    *dtype = pe->coll_dtype;
    *pe_axis = pe->coll_axis;
    return pe->coll_input.data();
}

const int64_t *mtia_host_record(mtia_pe *pe, int64_t *n) {
    *n = (int64_t)pe->record.size();
    return pe->record.data();
}

const char *mtia_host_string(mtia_pe *pe, int64_t id) {
    return id >= 0 && id < (int64_t)pe->strings.size() ? pe->strings[(size_t)id] : "";
}

int64_t mtia_host_string_count(mtia_pe *pe) { return (int64_t)pe->strings.size(); }

}  // extern "C"
