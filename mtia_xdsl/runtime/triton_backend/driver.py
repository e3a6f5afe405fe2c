"""MtiaDriver: Triton's driver for target `cpu`: loads kernel binaries, launches them on the machine model.

The driver is active only when no other Triton driver (CUDA, HIP, ...) is, so installing mtia_xdsl on a
GPU host changes nothing there. Its benchmarker returns the modelled kernel time, so `@triton.autotune`
picks configurations by simulated MTIA time, not host wall-clock time.
Must not import `triton.compiler` or `triton.runtime` at import time.
"""

import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any

from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase

from mtia_xdsl.machine.config import DEFAULT_CHIP, MachineConfig
from mtia_xdsl.options import MtiaOptions
from mtia_xdsl.runtime import binary, toolchain
from mtia_xdsl.runtime.launch import KernelLaunchError, kernel_location, runtime_args

TARGET = GPUTarget("cpu", DEFAULT_CHIP, 1)


def target_machine_config() -> MachineConfig:
    """The MachineConfig of the chip the driver targets (`TARGET.arch`'s preset): what its device properties
    describe, and what Inductor's device properties and mtia_xdsl's own Inductor kernels size for."""
    return MachineConfig.preset(TARGET.arch)


_CPP_TYPES = {
    "i1": "bool",
    "i8": "int8_t",
    "i16": "int16_t",
    "i32": "int32_t",
    "i64": "int64_t",
    "u1": "bool",
    "u8": "uint8_t",
    "u16": "uint16_t",
    "u32": "uint32_t",
    "u64": "uint64_t",
    "fp16": "float",
    "bf16": "float",
    "fp32": "float",
    "f32": "float",
    "fp64": "double",
}


class MtiaUtils:
    """Binary loading and device queries, as Triton's CompiledKernel calls them on `driver.active.utils`.

    The numbers host code reads get MTIA meanings (docs/machine.md, "What Triton's driver reports"):
    a PE runs one program at a time and owns its scalar core's registers and its local storage (LS).
    """

    def load_binary(self, name: str, kernel: bytes, shared: int, device: Any) -> tuple[Any, Any, int, int, int]:
        """Parse a kernel binary; return (module, function, n_regs, n_spills, n_max_threads).

        n_regs is `MachineConfig.scalar_registers // num_warps` (at least 1): a program holds the whole register
        file whatever `num_warps` says, so CUDA's occupancy formula `max_num_regs // (n_regs * warpSize *
        num_warps)` gives one program per PE. n_spills is 0 (no register allocation is modelled);
        n_max_threads is 1 thread per program.
        """
        loaded = binary.load(kernel)
        registers = target_machine_config().scalar_registers
        n_regs = max(1, registers // max(1, loaded.num_warps))
        return loaded, loaded, n_regs, 0, 2**31 - 1

    def unload_module(self, module: Any) -> None:
        """Release nothing: a loaded kernel is plain Python data."""

    def get_device_properties(self, device: Any = None) -> dict[str, Any]:
        """Return the device properties upstream's host code reads, for the MTIA-2i machine model.

        multiprocessor_count: PEs (64); max_shared_mem: LS bytes per PE (MachineConfig.ls_bytes);
        max_num_regs: the scalar core's registers (MachineConfig.scalar_registers); warpSize: 1 (one thread
        per program); clock rates in kHz as CUDA reports them (MachineConfig.clock_hz; memory clock: none
        modelled, 0); mem_bus_width in bits: 0 (not modelled).
        """
        config = target_machine_config()
        return {
            "max_shared_mem": config.ls_bytes,
            "multiprocessor_count": config.n_pes,
            "warpSize": 1,
            "max_num_regs": config.scalar_registers,
            "sm_clock_rate": int(config.clock_hz // 1000),
            "mem_clock_rate": 0,
            "mem_bus_width": 0,
        }


class MtiaLauncher:
    """Run one compiled kernel on the machine model with the arguments Triton's JIT passes."""

    def __init__(self, src: Any, metadata: Any, driver: "MtiaDriver | None" = None) -> None:
        self.fn = getattr(src, "fn", None) or getattr(src, "name", "kernel")
        self.signature: dict[Any, Any] = dict(src.signature)
        self.options = MtiaOptions.from_dict(metadata._asdict())
        self.driver = driver

    def __call__(
        self,
        grid_x: int,
        grid_y: int,
        grid_z: int,
        stream: Any,
        function: Any,
        packed_metadata: Any,
        launch_metadata: Any,
        enter_hook: Callable[..., Any] | None,
        exit_hook: Callable[..., Any] | None,
        *args: Any,
    ) -> Any:
        """Launch: `args` are all kernel arguments in order, constexprs included.

        Raises: KernelLaunchError for bad arguments (see `runtime_args`).
        """
        run_args = runtime_args(self.fn, self.signature, args)
        grid = (grid_x, grid_y, grid_z)
        if not all(isinstance(g, int) and not isinstance(g, bool) and g >= 0 for g in grid):
            raise KernelLaunchError(
                f"{kernel_location(self.fn)}: error: the grid {grid} must be non-negative integers; "
                "use triton.cdiv to round sizes up"
            )
        if grid_x * grid_y * grid_z == 0:
            if self.driver is not None:
                self.driver.last_result = None  # nothing ran: no report
            return None
        if not isinstance(function, binary.LoadedKernel):
            raise KernelLaunchError(
                f"{kernel_location(self.fn)}: error: the kernel was not loaded by "
                "mtia_xdsl's driver (is another Triton driver active?)"
            )
        if enter_hook is not None:
            enter_hook(launch_metadata)
        if self.driver is not None:
            self.driver.last_result = None  # a failed run leaves no report of an earlier launch behind
        from mtia_xdsl.machine.run import reuse_interpreters

        reuse_interpreters(function.module)  # a loaded kernel's module is never edited
        result = toolchain.run_kernel(function.module, (grid_x, grid_y, grid_z), run_args, self.options)
        if self.driver is not None:
            self.driver.last_result = result
            if self.driver.measured_us is not None:
                self.driver.measured_us.append(float(result.report.time_us))
        if exit_hook is not None:
            exit_hook(launch_metadata)
        return result


class _DeviceInterface:
    """torch.cpu, but `Event(enable_timing=True)` raises RuntimeError saying how to get the simulated time."""

    def __getattr__(self, name: str) -> Any:
        import torch

        return getattr(torch.cpu, name)

    def Event(self, enable_timing: bool = False, **kwargs: Any) -> Any:  # torch's spelling
        """Return torch.cpu's event; Raises: RuntimeError for a timing event (triton.testing.do_bench)."""
        import torch

        if enable_timing:
            raise RuntimeError(
                "triton.testing.do_bench times with device events, which the MTIA machine model has none of (a host "
                "clock would time the simulation); for a kernel's simulated time in ms use "
                "triton.runtime.driver.active.get_benchmarker()(fn), as @triton.autotune does, or "
                "mtia_xdsl.last_report().time_us after a launch"
            )
        return torch.cpu.Event()


class MtiaDriver(DriverBase):
    """Triton driver for the MTIA machine model on the host CPU (device "cpu", target cpu/mtia2i)."""

    def __init__(self) -> None:
        super().__init__()
        self.utils = MtiaUtils()
        self.launcher_cls = functools.partial(MtiaLauncher, driver=self)
        self.last_result: Any = None
        """RunResult of the most recent launch through this driver (read by the benchmarker)."""
        self.measured_us: list[float] | None = None
        """While `simulated_time_ms` runs: the modelled time (us) of each launch, in order."""

    @classmethod
    def is_active(cls) -> bool:
        """Be active only when torch sees no CUDA/HIP device and no other Triton driver is active."""
        torch = sys.modules.get("torch")
        if torch is None:
            import torch
        if torch.cuda.is_available():
            return False
        from triton.backends import backends

        return not any(b.driver is not cls and b.driver.is_active() for b in backends.values())

    def map_python_to_cpp_type(self, ty: str) -> str:
        """Return the C++ type of a Triton signature type (pointers are `void*`)."""
        return "void*" if ty.startswith("*") else _CPP_TYPES.get(ty, ty)

    def get_current_target(self) -> GPUTarget:
        """Return the MTIA-2i target."""
        return TARGET

    def get_active_torch_device(self) -> Any:
        """Return torch's CPU device: kernels read and write host tensors."""
        import torch

        return torch.device("cpu")

    def get_current_device(self) -> int:
        """Return device index 0 (one machine model per process)."""
        return 0

    def set_current_device(self, device: Any) -> None:
        """Accept any device index: there is one machine model."""

    def get_current_stream(self, device: Any = None) -> int:
        """Return stream 0: launches run synchronously."""
        return 0

    def get_device_interface(self) -> Any:
        """Return torch's CPU device module (has `synchronize`), whose timing events are refused.

        `triton.testing.do_bench` times with `Event(enable_timing=True)`: a host clock would time the simulation,
        not MTIA, and simulated times (~1 us) would make it run the model ~10^5 times (its repeat count is its
        time budget over one run's time), so such an event raises RuntimeError naming the benchmarker to use.
        """
        return _DeviceInterface()

    def get_empty_cache_for_benchmark(self) -> Any:
        """Return a small buffer; the machine model has no host cache to flush."""
        import torch

        return torch.empty(1, dtype=torch.int8)

    def clear_cache(self, cache: Any) -> None:
        """Do nothing: there is no cache state to clear between modelled runs."""

    def simulated_time_ms(self, call: Callable[[], Any]) -> float | None:
        """Run `call` once; return the summed modelled time (ms) of the kernels it launched, None if none.

        Used by Inductor's benchmarker hook (`mtia_xdsl.runtime.inductor`): a call may launch several
        kernels (a template and its epilogue), and all of them run on MTIA.
        """
        self.measured_us = []
        try:
            call()
            measured = self.measured_us
        finally:
            self.measured_us = None
        return sum(measured) / 1000.0 if measured else None

    def get_benchmarker(self) -> Callable[..., Any]:
        """Return the benchmarker that reports modelled kernel time in milliseconds."""
        return self.benchmark

    def benchmark(
        self, kernel_call: Callable[[], Any], *, quantiles: Sequence[float] | None = None, **kwargs: Any
    ) -> float | list[float]:
        """Run `kernel_call` once and return the modelled time (ms), once per quantile if given.

        The model is deterministic, so every quantile is the same number.
        Raises: RuntimeError if `kernel_call` launched no kernel through this driver.
        """
        self.last_result = None
        kernel_call()
        if self.last_result is None:
            raise RuntimeError("the benchmarked call launched no kernel through the mtia_xdsl driver")
        time_ms = float(self.last_result.report.time_us) / 1000.0
        return [time_ms] * len(quantiles) if quantiles else time_ms
