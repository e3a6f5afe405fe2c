"""Run the LLVM IR of a kernel (backend/llvm.py) with llvmlite: parse, verify, JIT-compile, call it per program.

`run_llvm` parses and verifies the IR text, compiles it with llvmlite's MCJIT at -O2 and binds the runtime
functions it calls (backend/llvm.py RUNTIME_FUNCTIONS and the packed `@mtia_<kind>` commands) to
`_StandInRuntime`, then calls the kernel once per program id (x fastest) and times the recorded commands
with the machine model's timing model (`machine/timing.py`), so its cycles are the model's.

The stand-in runtime: until the C host runtime (`mtia_xdsl/backend/runtime/host_runtime.cpp`, built as a
shared library by backend/host.py) offers the functions the IR calls, they are Python callbacks that carry
out each command with the machine model's own implementation of its op (machine/interpret/: DMA,
DPE, RE, gathers, scatters, atomics, scalar loads and stores, CB protocol checks) and record it as the model
does. What the JIT-compiled code itself computes: the scalar core's control flow and arithmetic, and every
SE, VEC and MLU command (their bodies, as loops over tiles in a local-storage buffer). The tiles those
commands read are copied into that buffer (`@mtia_cb_front`) and their results read back from it when
the command is recorded (`@mtia_<engine>_compute`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IntegerType, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.backend.llvm import COMMAND_SIGNATURE, PACKED_COMMANDS, RUNTIME_FUNCTIONS, command_sites, runtime_name
from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import Command, SlotRef, command_kind
from mtia_xdsl.machine.interpret.cb import SimCB
from mtia_xdsl.machine.interpret.command_work import ComputeInfo
from mtia_xdsl.machine.interpret.formats import element_format, element_type_of
from mtia_xdsl.machine.interpret.masks import keep_valid, uninitialized, valid_count
from mtia_xdsl.machine.interpret.mtia import MtiaFunctions, PeState, set_pe_state
from mtia_xdsl.machine.interpret.mtia_atomics import MtiaAtomicFunctions
from mtia_xdsl.machine.interpret.mtia_indexed_dma import MtiaIndexedDmaFunctions
from mtia_xdsl.machine.interpret.tt import LaunchState, set_launch_state
from mtia_xdsl.machine.interpret.values import as_value
from mtia_xdsl.machine.placement import by_round, machine_config, reads_pe_id, run_placement
from mtia_xdsl.machine.reference import located_error_text, make_tt_interpreter, prepare_launch, sym_name
from mtia_xdsl.machine.report import build_report
from mtia_xdsl.machine.run import RunResult
from mtia_xdsl.machine.timing import TimingError, simulate
from mtia_xdsl.machine.work import COMPUTE_ENGINES, elem_count

_CTYPES = {
    "ptr": ctypes.c_void_p,
    "i1": ctypes.c_bool,
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "void": None,
}


def _ctype(t: Attribute) -> Any:
    if isinstance(t, IntegerType):
        return _CTYPES[f"i{t.width.data}"]
    if isinstance(t, Float32Type):
        return ctypes.c_float
    if isinstance(t, Float64Type):
        return ctypes.c_double
    name = "ptr" if t.name in ("llvm.ptr", "tt.ptr") else ("void" if t.name == "llvm.void" else None)
    if name is None:
        raise TypeError(f"no C type for {t}")
    return _CTYPES[name]


def _functype(params: Sequence[Attribute], result: Attribute) -> Any:
    return ctypes.CFUNCTYPE(_ctype(result), *[_ctype(p) for p in params])


def _i64s(addr: int, n: int) -> np.ndarray:
    return np.ctypeslib.as_array((ctypes.c_int64 * n).from_address(addr)) if n else np.zeros(0, np.int64)


def _unpack(raw: int, t: Attribute) -> Any:
    """A packed i64 operand (backend/llvm.py `pack`) as the machine model's runtime value of IR type `t`."""
    if isinstance(t, Float16Type):
        return np.array(raw & 0xFFFF, np.uint16).view(np.float16)[()]
    if isinstance(t, Float32Type) or element_format(t).name == "bf16":
        return np.array(raw & 0xFFFFFFFF, np.uint32).view(np.float32)[()]
    if isinstance(t, Float64Type):
        return np.array(raw, np.int64).view(np.float64)[()]
    if isinstance(t, IntegerType) and t.width.data == 1:
        return np.bool_(raw & 1)
    return np.array(raw, np.int64).astype(element_format(t).compute)[()]


def _pack(value: Any, t: Attribute) -> int:
    """The machine model's scalar `value` of IR type `t` as an i64 (inverse of `_unpack`)."""
    v = np.asarray(value)
    if isinstance(t, Float16Type):
        return int(v.astype(np.float16).view(np.uint16))
    if isinstance(t, Float32Type) or element_format(t).name == "bf16":
        return int(v.astype(np.float32).view(np.uint32))
    if isinstance(t, Float64Type):
        return int(v.astype(np.float64).view(np.int64))
    return int(v.astype(np.int64))


@dataclass
class _StandInRuntime:
    """The runtime functions the emitted IR calls, for one launch (see the module docstring)."""

    program: ModuleOp
    kernel: Operation
    interpreter: Any
    ls: np.ndarray
    """Local storage of the PE running the current program (bytes)."""
    sites: list[Operation] = field(default_factory=list)
    cbs: list[SimCB] = field(default_factory=list)
    state: PeState | None = None
    waits: list[SlotRef] = field(default_factory=list)
    """Tiles the command being issued reads (`@mtia_cb_front` since the last command)."""
    error: str | None = None
    _handle: dict[Operation, int] = field(default_factory=dict)
    """cb_alloc op -> handle of the CB it made last (this program)."""
    pid: tuple[int, int, int] = (0, 0, 0)
    infos: dict[Operation, ComputeInfo] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sites = command_sites(self.kernel)
        self.ls_base = self.ls.ctypes.data

    # -- the callbacks -------------------------------------------------------------------------------------
    def callbacks(self) -> dict[str, Callable[..., Any]]:
        """Python implementations of every runtime function, guarded (see `_guard`)."""
        impl: dict[str, tuple[Callable[..., Any], Any]] = {
            "mtia_scalar_instrs": (self.scalar_instrs, None),
            "mtia_cb_alloc": (self.cb_alloc, 0),
            **{f"mtia_cb_{k}": (self.cb_count, None) for k in ("reserve", "push", "wait", "pop")},
            "mtia_cb_front": (self.cb_front, self.ls_base),
            "mtia_cb_back": (self.cb_back, self.ls_base),
            **{f"mtia_{e}_compute": (self.compute, None) for e in ("se", "vec", "mlu")},
        }
        for op_type in PACKED_COMMANDS:
            impl[runtime_name(op_type.name)] = (self.packed, None)
        return {name: self._guard(fn, fallback) for name, (fn, fallback) in impl.items()}

    def _guard(self, fn: Callable[..., Any], fallback: Any) -> Callable[..., Any]:
        """`fn`, turned into a no-op returning `fallback` once an error happened (the kernel then runs to its
        end without effect: a C callback cannot unwind the JIT-compiled caller); the first error is kept."""

        def guarded(*args: Any) -> Any:
            if self.error is not None:
                return fallback
            try:
                return fn(*args)
            except Exception as e:
                op = self.sites[args[0]] if fn is not self.scalar_instrs and args else None
                if not isinstance(e, InterpretationError):
                    e = InterpretationError(f"internal error of the LLVM stand-in runtime ({type(e).__name__}: {e})")
                self.error = located_error_text(e, op, self.pid)
                return fallback

        return guarded

    def scalar_instrs(self, n: int) -> None:
        assert self.state is not None
        self.state.scalar_instrs += n

    def cb_alloc(self, site: int, cb_id: int, ls_offset: int, depth: int, tile_bytes: int) -> int:
        op = self.sites[site]
        (cb,) = self.interpreter.run_op(op, ())
        self.cbs.append(cb)
        self._handle[op] = len(self.cbs) - 1
        return len(self.cbs) - 1

    def cb_count(self, site: int, cb: int, count: int) -> None:
        self.interpreter.run_op(self.sites[site], (self.cbs[cb],))

    def _slot_address(self, cb: SimCB, seq: int) -> int:
        return self.ls_base + cb.ls_offset + (seq % cb.depth) * cb.slot_bytes

    def cb_front(self, site: int, handle: int) -> int:
        """Front tile of a CB read by the command at `site`: copied into LS; its address."""
        cb, op = self.cbs[handle], self.sites[site]
        value, slot = cb.front(op)
        if slot not in self.waits:
            self.waits.append(slot)
        addr = self._slot_address(cb, slot.seq)
        fmt = element_format(element_type_of(cb.tile))
        shape = tuple(cb.tile.get_shape()) if isinstance(cb.tile, TensorType) else ()
        raw = fmt.to_storage(np.broadcast_to(np.asarray(value, dtype=fmt.compute), shape))
        start = addr - self.ls_base
        self.ls[start : start + raw.nbytes] = np.ascontiguousarray(raw).view(np.uint8).reshape(-1)
        return addr

    def cb_back(self, site: int, handle: int) -> int:
        """LS address of the slot the command at `site` writes in a CB: its oldest unwritten reserved slot."""
        cb, op = self.cbs[handle], self.sites[site]
        free = [i for i, s in enumerate(cb.reserved) if s is None]
        if not free:
            raise cb._error("a command writes a CB slot that was not reserved (missing cb_reserve)", op)  # pyright: ignore[reportPrivateUsage]
        return self._slot_address(cb, cb.pushed + free[0])

    def _read_tile(self, cb: SimCB, seq: int) -> Any:
        fmt = element_format(element_type_of(cb.tile))
        shape = tuple(cb.tile.get_shape()) if isinstance(cb.tile, TensorType) else ()
        start = self._slot_address(cb, seq) - self.ls_base
        count = int(np.prod(shape, dtype=np.int64))
        raw = self.ls[start : start + count * fmt.size_bytes].view(fmt.storage).reshape(shape)
        return as_value(fmt.from_storage(raw.copy()), cb.tile)

    def compute(self, site: int, valid_addr: int) -> None:
        """Record the SE/VEC/MLU command at `site`: its results (in LS) into its output CBs; its Command."""
        op = self.sites[site]
        assert isinstance(op, mtia.EngineComputeOp) and self.state is not None
        info = self.infos.get(op) or self.infos.setdefault(op, ComputeInfo.of(op))
        valid = [int(v) for v in _i64s(valid_addr, len(op.valid))] if op.valid else []
        outs = [self._cb_of(op, o) for o in op.outs]
        fills = []
        for cb in outs:
            seq = cb.popped if info.inplace else cb.pushed + [s is None for s in cb.reserved].index(True)
            value = self._read_tile(cb, seq)
            if valid:
                value = keep_valid(value, valid, cb.tile, uninitialized(cb.tile))
            fills.append(cb.update(value, op) if info.inplace else cb.write(value, op))
        elems = info.elems
        if valid:
            out_t = cb.tile
            out_elems = max(elem_count(out_t), 1)
            elems = -(-info.elems * int(valid_count(valid, list(out_t.get_shape()))) // out_elems)  # pyright: ignore
        self.state.issue(
            Command(
                COMPUTE_ENGINES[type(op)],
                command_kind(op.name),
                info.where,
                tuple(self.waits),
                tuple(fills),
                elems=elems,
                dtype=info.dtype,
                lut=info.lut,
                ls_bytes=info.ls_bytes,
            )
        )
        self.waits = []

    def _cb_of(self, op: Operation, v: Any) -> SimCB:
        """The SimCB operand `v` of `op` names: the latest CB its cb_alloc made."""
        return self.cbs[self._handle[v.owner]]

    def packed(self, site: int, args_addr: int, results_addr: int) -> None:
        """A command the model's own implementation carries out (DMA, DPE, RE, ...): unpack, run, pack."""
        op = self.sites[site]
        raw = _i64s(args_addr, len(op.operands))
        inputs = tuple(
            self.cbs[int(r)] if isinstance(v.type, mtia.CircularBufferType) else _unpack(int(r), v.type)
            for r, v in zip(raw, op.operands, strict=True)
        )
        results = self.interpreter.run_op(op, inputs)
        out = _i64s(results_addr, len(op.results))
        for k, (value, r) in enumerate(zip(results, op.results, strict=True)):
            out[k] = _pack(value, r.type)
        self.waits = []

    # -- per program ---------------------------------------------------------------------------------------
    def start(self, pid: tuple[int, int, int], state: PeState) -> None:
        self.pid, self.state, self.cbs, self.waits, self._handle = pid, state, [], [], {}


def run_llvm(
    llir: str,
    grid: Sequence[int],
    args: list[Any],
    *,
    program: ModuleOp,
    config: Any = None,
    options: Any = None,
    kernel_name: str | None = None,
) -> RunResult:
    """Run LLVM IR `llir` (emitted from the buffer-level `program`) for every program id of `grid` and time it.

    `args` are the non-constexpr kernel arguments in order (torch CPU tensors for pointers, Python numbers for
    scalars), as for `machine.run.run_kernel`; results go into the tensors when every program finished.
    `config` (a MachineConfig) overrides the chip of `options` / the program.
    Raises: InterpretationError naming the kernel line and program id (as the machine model does);
    RuntimeError if llvmlite rejects the IR.
    """
    import llvmlite.binding as llvm

    launch = prepare_launch(program, grid, args, kernel_name)
    cfg = config if config is not None else machine_config(program, options)
    placement = run_placement(launch.kernel, launch.grid, cfg, options)
    interpreter = make_tt_interpreter(program)
    for functions in (MtiaFunctions(), MtiaAtomicFunctions(), MtiaIndexedDmaFunctions()):
        interpreter.register_implementations(functions)
    runtime = _StandInRuntime(program, launch.kernel, interpreter, np.zeros(cfg.ls_bytes, np.uint8))
    keep = _bind(llvm, runtime)
    engine = _compile(llvm, llir)
    name = sym_name(launch.kernel)
    params = [t for t in launch.kernel.function_type.inputs.data]  # type: ignore[attr-defined]
    kernel = _functype([*params, *[IntegerType(32)] * 6], llvm_dialect.LLVMVoidType())(engine.get_function_address(name))
    values = [v.item() if isinstance(v, np.generic | np.ndarray) else v for v in launch.values]
    pids = list(launch.program_ids())
    if reads_pe_id(launch.kernel) and len(pids) > placement.subgrid.n_pes:
        pids = by_round(pids, placement)
    traces = []
    runs_cache: dict[tuple, tuple] = {}
    last_op = launch.kernel.regions[0].block.last_op
    for pid in pids:
        state = PeState([pid], cfg, runs_cache=runs_cache)
        runtime.start(pid, state)
        set_pe_state(interpreter, state)
        set_launch_state(interpreter, LaunchState(launch.memory, pid, launch.grid, placement, {}, {}))
        kernel(*values, *pid, *launch.grid)
        if runtime.error is not None:
            raise InterpretationError(f"{runtime.error}; no tensor was written")
        traces.extend(state.traces(last_op))
    del keep
    gx, gy, _ = launch.grid
    traces.sort(key=lambda t: t.program_id[0] + gx * (t.program_id[1] + gy * t.program_id[2]))
    try:
        timeline = simulate(traces, cfg, placement.mapping, launch.grid, subgrid=placement.subgrid)
    except TimingError as e:
        raise InterpretationError(f"{e}; no tensor was written") from None
    launch.memory.commit()
    return RunResult(build_report(timeline, name), timeline, traces)




def _bind(llvm: Any, runtime: _StandInRuntime) -> list[Any]:
    """Make every runtime function's symbol point at its callback; return the ctypes objects to keep alive."""
    keep = []
    for name, fn in runtime.callbacks().items():
        params, result = RUNTIME_FUNCTIONS.get(name, COMMAND_SIGNATURE)
        cfn = _functype(params, result)(fn)
        keep.append(cfn)
        llvm.add_symbol(name, ctypes.cast(cfn, ctypes.c_void_p).value)
    return keep


def _compile(llvm: Any, llir: str) -> Any:
    """Parse, verify and JIT-compile `llir` at -O2; return the execution engine."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libgcc = ctypes.util.find_library("gcc_s")  # f16 <-> f32 helpers on hosts without F16C
    if libgcc:
        llvm.load_library_permanently(libgcc)
    try:
        mod = llvm.parse_assembly(llir)
        mod.verify()
    except RuntimeError as e:
        raise RuntimeError(f"llvmlite rejected the LLVM IR: {e}") from None
    target = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=2
    )  # the host's own instructions (f16 conversions with F16C instead of libgcc helpers the JIT cannot find)
    engine = llvm.create_mcjit_compiler(mod, target)
    engine.finalize_object()
    engine.run_static_constructors()
    return engine
