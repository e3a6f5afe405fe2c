/* mtia_runtime.h: the runtime API an emitted MTIA kernel calls, named after the hardware.
 *
 * One PE's scalar core runs a Triton program: it allocates circular buffers (CBs) in local storage (LS),
 * hands engine commands to the DMA engine, the DPE, the SE, the RE, the MLU and the vector core (VEC),
 * and synchronises with them through the CB protocol (reserve, push, wait, pop; see machine/interpret/cb.py).
 * Every function here is a C function taking plain integers, pointers and small POD structs by pointer, so
 * C++ (mtia_xdsl/backend/cpp.py), LLVM IR (backend/llvm.py) and a RISC-V cross build call the same ABI.
 *
 * Addresses: global memory is addressed by 64-bit byte addresses (`mtia_addr`, the device's view of a
 * tensor, as Triton passes pointers); the runtime maps them to memory. LS is a per-PE byte array; a CB's
 * slot k lives at LS offset `ls_offset + k * slot_bytes` as mtia-cb-allocate placed it.
 *
 * Recording: besides executing each command, the host runtime (host_runtime.cpp) records the command
 * stream with the dynamic facts only the run knows (the CB slot sequence numbers a command reads and
 * fills, DMA descriptor values, valid extents, scalar-instruction counts); the static work of a compute
 * command (elements, dtype, LUT use, MACs) is an argument the kernel passes. mtia_xdsl/backend/host.py turns
 * the record into machine/commands.py `Command`s with the same functions the machine model's interpreter
 * uses, and times them with machine/timing.py.
 *
 * Errors (a CB protocol violation, an access outside every mapped region) stop the program: the runtime
 * records the message (with the kernel location passed to the call) and returns to `mtia_host_call`.
 * Emitted kernels hold no objects with destructors, so that return is safe.
 *
 * Strings: `loc` is a "file:line:col" kernel location, `dtype` a MachineConfig dtype name ("f32", "f16",
 * "bf16", "i8", "i32", ...). The runtime keeps the pointers (pass string literals).
 */
#ifndef MTIA_RUNTIME_H
#define MTIA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MTIA_MAX_RANK 4
/* Largest tile rank a DMA descriptor or an effective shape describes. */

typedef uint64_t mtia_addr;
/* A global-memory byte address. */

typedef struct mtia_pe mtia_pe;
/* One PE running one program: its LS, CBs, program id and the record of its commands (opaque). */

/* The unit a command runs on (machine/commands.py Engine). */
enum mtia_engine {
    MTIA_SCALAR = 0,
    MTIA_DMA = 1,
    MTIA_DPE = 2,
    MTIA_SE = 3,
    MTIA_RE = 4,
    MTIA_MLU = 5,
    MTIA_VEC = 6
};

/* A DMA block: `rank` dimensions of `shape` elements of `elem_bytes` bytes, lane (i0, .., ik) at global
 * address base + (i0*strides[0] + .. + ik*strides[k]) * elem_bytes. Lanes with starts[d] <= i_d < bounds[d]
 * in every dimension move; the runtime clamps bounds and starts to [0, shape[d]]. */
typedef struct mtia_dma_desc {
    mtia_addr base;
    int32_t rank;
    int32_t elem_bytes;
    int64_t shape[MTIA_MAX_RANK];
    int64_t strides[MTIA_MAX_RANK];
    int64_t bounds[MTIA_MAX_RANK];
    int64_t starts[MTIA_MAX_RANK];
    int32_t has_starts;
    int32_t is_float;
    /* masked lanes of a load without `other` read as NaN (floats) or 0 (integers), as the model's LS */
    const char *dtype;
} mtia_dma_desc;

/* The static work of an engine compute command (machine/work.py body_work, written by the emitter) and
 * its effective shape: `nvalid` extents (0: the whole tile) of the output tile `out_shape`. */
typedef struct mtia_work {
    int64_t elems;
    const char *dtype;
    int32_t lut;
    int32_t out_rank;
    int64_t out_shape[MTIA_MAX_RANK];
    int32_t nvalid;
    int64_t valid[MTIA_MAX_RANK];
    int64_t ls_bytes; /* LS bytes the command reads and writes (machine/interpret/command_work.py) */
} mtia_work;

/* -- program ------------------------------------------------------------------------------------- */
int32_t mtia_program_id(mtia_pe *pe, int32_t axis);   /* tl.program_id(axis) */
int32_t mtia_num_programs(mtia_pe *pe, int32_t axis); /* tl.num_programs(axis): the launch grid */
int32_t mtia_pe_id(mtia_pe *pe, int32_t axis);        /* the PE running this program (placement) */
int32_t mtia_num_pes(mtia_pe *pe, int32_t axis);

/* Count `n` scalar-core instructions (what machine/interpret/pe_state.ScalarCoreCounter counts: every op
 * run outside an engine body except the engine commands); they precede the next command. */
void mtia_scalar_instrs(mtia_pe *pe, int64_t n);

/* A failed device assertion (tl.device_assert): stops the program with `message` at `loc`. */
void mtia_assert_fail(mtia_pe *pe, const char *message, const char *loc);
/* The current command's mtia.extract_slice of `size` lanes at dynamic `offset` along dimension `dim` of a
   tile of `extent`: an error at the command's line unless 0 <= offset <= extent - size (the model's rule). */
void mtia_slice_check(mtia_pe *pe, int64_t offset, int64_t size, int64_t extent, int32_t dim);

/* -- circular buffers ---------------------------------------------------------------------------- */
/* Allocate the program's next CB (returned handle 0, 1, ... in allocation order) under CB ID `cb_id`,
 * `depth` slots of `slot_bytes` at LS offset `ls_offset`. */
int32_t mtia_cb_alloc(mtia_pe *pe, int32_t cb_id, int32_t depth, int64_t slot_bytes, int64_t ls_offset,
                      const char *loc);
void mtia_cb_reserve(mtia_pe *pe, int32_t cb, int32_t n, const char *loc); /* producer: claim n slots */
void mtia_cb_push(mtia_pe *pe, int32_t cb, int32_t n, const char *loc);    /* producer: publish them */
void mtia_cb_wait(mtia_pe *pe, int32_t cb, int32_t n, const char *loc);    /* consumer: wait for n tiles */
void mtia_cb_pop(mtia_pe *pe, int32_t cb, int32_t n, const char *loc);     /* consumer: release them */
void *mtia_cb_front_ptr(mtia_pe *pe, int32_t cb, const char *loc); /* LS bytes of the front tile (no command) */
/* The scalar core reads the front tile of `cb` into `dst` (a SCALAR command): a one-element tile into a
 * scalar, or the whole tile (`nbytes` = the tile's bytes) into a local array. */
void mtia_cb_read(mtia_pe *pe, int32_t cb, void *dst, int64_t nbytes, const char *loc);

/* -- DMA ------------------------------------------------------------------------------------------ */
/* Load block `d` into the next reserved slot of `cb`; masked lanes get *other (one element) if given. */
void mtia_dma_load(mtia_pe *pe, int32_t cb, const mtia_dma_desc *d, const void *other, const char *loc);
/* Store the valid lanes of the front tile of `cb` to block `d`. */
void mtia_dma_store(mtia_pe *pe, int32_t cb, const mtia_dma_desc *d, const char *loc);
/* Store a scalar value (rank-0 block `d`) from `src`, no CB. */
void mtia_dma_store_scalar(mtia_pe *pe, const void *src, const mtia_dma_desc *d, const char *loc);
/* Store the valid lanes of block `d` from a tile the scalar core holds (`src`, row-major, d->shape), no CB and
 * no command (as the model's dma_store of a value outside a CB, e.g. an mtia.re_allreduce result). */
void mtia_dma_store_value(mtia_pe *pe, const void *src, const mtia_dma_desc *d, const char *loc);
/* Indexed DMA (mtia.dma_gather_rows, embedding rows): fill the next reserved slot of `cb` with block `d`
 * (shape, strides, bounds; no starts), lane i = (i0, .., ik) read from global address
 *   d->base + (index[i] * row_stride + i0*strides[0] + .. + ik*strides[k]) * elem_bytes
 * where index[i] is the element of the front tile of `index_cb` (signed integers of `index_bytes` bytes, shape
 * `index_shape` of d->rank extents, each 1 or the block's: it broadcasts). Lanes past the bounds get *other
 * (one element) if given, else NaN (floats) or 0. `ls_bytes`: the block's and the index tile's bytes. One DMA
 * command (kind "dma_gather_rows") with one descriptor per contiguous run of read bytes. */
void mtia_dma_gather_rows(mtia_pe *pe, int32_t cb, int32_t index_cb, const int64_t *index_shape, int32_t index_bytes,
                          int64_t row_stride, const mtia_dma_desc *d, const void *other, int64_t ls_bytes,
                          const char *loc);

/* -- scalar memory access (SCALAR commands) ------------------------------------------------------- */
void mtia_scalar_load(mtia_pe *pe, mtia_addr addr, void *dst, int32_t nbytes, const char *dtype, const char *loc);
void mtia_scalar_store(mtia_pe *pe, mtia_addr addr, const void *src, int32_t nbytes, const char *dtype,
                       const char *loc);

/* -- engine commands ------------------------------------------------------------------------------ */
/* A compute command (DPE, SE, RE, MLU, VEC, or a SCALAR gather/scatter) is issued as
 *   mtia_cmd_begin(pe, MTIA_SE, "se_compute", loc);
 *   const float *x = (const float *)mtia_cmd_in(pe, cb_x);   // reads the front tile (recorded as a wait)
 *   float *y = (float *)mtia_cmd_out(pe, cb_y);              // writes the next reserved slot (a fill)
 *   ... the engine's work on LS ...
 *   mtia_compute_end(pe, &work);                             // or mtia_dpe_end / mtia_re_end / ...
 */
void mtia_cmd_begin(mtia_pe *pe, int32_t engine, const char *kind, const char *loc);
const void *mtia_cmd_in(mtia_pe *pe, int32_t cb);
void *mtia_cmd_out(mtia_pe *pe, int32_t cb);
void *mtia_cmd_inout(mtia_pe *pe, int32_t cb); /* update the front tile in place: a wait and a fill */
/* SE / VEC / MLU compute (mtia.se_compute, mtia.vec_compute, mtia.mlu_compute). */
void mtia_compute_end(mtia_pe *pe, const mtia_work *w);
/* DPE matmul of [batch x] M x K by K x N tiles of `dtype`; input_precision 0 tf32, 1 tf32x3, 2 ieee
 * (mtia.dpe_matmul); `nvalid` 3 with valid = (M, N, K) extents, or 0. */
void mtia_dpe_end(mtia_pe *pe, int64_t batch, int64_t m, int64_t n, int64_t k, const char *dtype,
                  int32_t input_precision, int64_t ls_bytes, int32_t nvalid, const int64_t *valid);
/* RE reduce of a tile of `in_rank` dims `in_shape` (mtia.re_reduce); `nvalid` extents or 0. */
void mtia_re_end(mtia_pe *pe, int32_t in_rank, const int64_t *in_shape, const char *dtype, int64_t ls_bytes,
                 int32_t nvalid, const int64_t *valid);
/* Gather `n` elements of `elem_bytes` from the addresses `addrs` (lanes with mask[i] != 0, or all) into
 * `dst`; masked lanes get *other (or 0). Scatter writes `src`. A SCALAR command each. */
void mtia_gather(mtia_pe *pe, void *dst, const mtia_addr *addrs, const uint8_t *mask, const void *other, int64_t n,
                 int32_t elem_bytes, int64_t ls_bytes, const char *dtype);
void mtia_scatter(mtia_pe *pe, const void *src, const mtia_addr *addrs, const uint8_t *mask, int64_t n,
                  int32_t elem_bytes, const char *dtype);
/* Atomic read-modify-write of `n` lanes (op: "add", "max", "min", "and", "or", "xor", "xchg"; dtype as
 * the lanes); old values into `old` (may be NULL). */
void mtia_atomic_rmw(mtia_pe *pe, const char *op, void *old, const mtia_addr *addrs, const void *val,
                     const uint8_t *mask, int64_t n, int32_t elem_bytes, const char *dtype, int64_t ls_bytes);

/* The scalar core's view of global memory for gathers, scatters and atomics the kernel code performs itself:
 * the bytes [addr, addr + nbytes) (an error naming `loc` if they are outside every tensor). */
void *mtia_global(mtia_pe *pe, mtia_addr addr, int64_t nbytes, const char *loc);
/* Elements of `elem_bytes` from `addr` to the end of the tensor storage holding it, 0 when none does
 * (mtia.storage_extent: the bound clipping an LS gather's box DMA at the end of its tensor). */
int64_t mtia_storage_extent(mtia_pe *pe, mtia_addr addr, int32_t elem_bytes);
/* End the SCALAR command begun by mtia_cmd_begin that accessed `n` lanes at `addrs` (active where mask[i] != 0,
 * or all): records its active lanes, their byte extent, bytes read/written and LS bytes. */
void mtia_lanes_end(mtia_pe *pe, const mtia_addr *addrs, const uint8_t *mask, int64_t n, int32_t elem_bytes,
                    int32_t read, int32_t write, int64_t ls_bytes, const char *dtype);

/* -- cross-PE reduction (mtia.re_allreduce, language extension re_reduce) ----------------------------- */
/* Reduce the `n` elements at `data` (a tile or one scalar, `elem_bytes` each, of `dtype`) elementwise with
 * `kind` (the combiner's arith op name: addf, addi, maxnumf, minsi, ...) across the programs of this round
 * on the PEs of this PE's row (`pe_axis` 0) or column (1), and write the result over `data`. Records the RE
 * command of kind "re_link" (machine/interpret/mtia_renet.py). The host runs programs one at a time, so the
 * group's result comes from the host: a program's k-th call takes result k of mtia_host_set_collective;
 * past those, the runtime keeps the input (mtia_host_collective_wait) and stops the program with status 2
 * (waiting for the rest of its group); the host reruns it from the start once the result is known. */
void mtia_re_allreduce(mtia_pe *pe, void *data, int64_t n, int32_t elem_bytes, const char *dtype, const char *kind,
                       int32_t pe_axis, const char *loc);

/* -- host side (host_runtime.cpp): make PEs, map memory, run a program, read its record ------------ */
typedef void (*mtia_entry)(mtia_pe *pe, const int64_t *args);
/* The emitted translation unit's entry: unpacks `args` (pointers as addresses, integers, float bits). */

mtia_pe *mtia_host_pe_new(int64_t ls_bytes, int32_t cb_ids); /* LS bytes and CB IDs of a PE */
void mtia_host_pe_free(mtia_pe *pe);
/* Map global addresses [base, base + nbytes) to host bytes `host` (for every PE; call before running). */
void mtia_host_map(mtia_addr base, void *host, int64_t nbytes);
void mtia_host_unmap_all(void);
/* Set the program the next call runs: program id, grid, PE (local index, axes). */
void mtia_host_set_program(mtia_pe *pe, const int32_t *pid3, const int32_t *grid3, const int32_t *pe_xy,
                           const int32_t *num_pes_xy);
/* Run `entry` for the current program; 0 on success, 2 if it stopped at a cross-PE reduction whose result
 * is not known yet (mtia_host_collective_wait), else 1 and the error text is `mtia_host_error(pe)`. Clears
 * the previous record. */
int32_t mtia_host_call(mtia_pe *pe, mtia_entry entry, const int64_t *args);
const char *mtia_host_error(mtia_pe *pe);
/* The results of the next call's first `ncalls` cross-PE reductions, concatenated in call order
 * (`nbytes` in all; copied). */
void mtia_host_set_collective(mtia_pe *pe, int64_t ncalls, const void *results, int64_t nbytes);
/* After a call returned 2: the input of the reduction it stopped at (`*nbytes` bytes), its call index among
 * the program's reductions, kind, dtype, PE axis and kernel location. */
const void *mtia_host_collective_wait(mtia_pe *pe, int64_t *nbytes, int64_t *call, const char **kind,
                                      const char **dtype, int32_t *pe_axis, const char **loc);
/* The record of the last call: `*n` int64 words (format in host_runtime.cpp) and its string table. */
const int64_t *mtia_host_record(mtia_pe *pe, int64_t *n);
const char *mtia_host_string(mtia_pe *pe, int64_t id);
int64_t mtia_host_string_count(mtia_pe *pe);

/* -- helpers for kernel code ---------------------------------------------------------------------- */
static inline float mtia_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0x1fu) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else {
        int e = -1;
        do {
            ++e;
            man <<= 1;
        } while ((man & 0x400u) == 0);
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t mtia_f32_to_f16(float f) { /* round to nearest even */
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflow to inf */
    if (ax < 0x38800000u) {                                    /* subnormal or zero */
        if (ax < 0x33000000u) return (uint16_t)sign;
        uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) ++r;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ax + 0xc8000fffu + ((ax >> 13) & 1u); /* rebias exponent and round */
    return (uint16_t)(sign | (r >> 13));
}

static inline float mtia_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t mtia_f32_to_bf16(float f) { /* round to nearest even */
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

#ifdef __cplusplus
}
#endif

#endif /* MTIA_RUNTIME_H */
