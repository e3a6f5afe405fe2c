"""MtiaBackend: Triton's compiler backend for target `cpu`, stages ttir -> mtia -> binary.

Triton always builds the first IR through `ASTSource.make_ir` (libtriton's code generator); the backend
wraps that method once so that, for MtiaOptions only, it returns the xDSL tt module of our frontend.
Must not import `triton.compiler` at import time (Triton imports this module while it initialises).
"""

import functools
import hashlib
from pathlib import Path
from types import ModuleType
from typing import Any

from triton.backends.compiler import BaseBackend, GPUTarget, Language
from xdsl.dialects.builtin import ModuleOp

from mtia_xdsl.options import MtiaOptions
from mtia_xdsl.runtime import binary, toolchain

BINARY_EXT = "binary"


class MtiaBackend(BaseBackend):
    """Compile Triton kernels for MTIA-2i through mtia_xdsl (target backend "cpu")."""

    binary_ext = BINARY_EXT

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        """Claim every target whose backend is "cpu" (Inductor passes its own arch and warp size)."""
        return target.backend == "cpu"

    def __init__(self, target: GPUTarget) -> None:
        super().__init__(target)
        self.binary_ext = BINARY_EXT
        install_make_ir_hook()

    def hash(self) -> str:
        """Return `package_hash()`: Triton's disk cache misses after any compiler change, even without a version
        bump."""
        return package_hash()

    def parse_options(self, options: dict[str, Any]) -> MtiaOptions:
        """Turn Triton's option dict (launch kwargs, autotune config) into MtiaOptions."""
        return MtiaOptions.from_dict(dict(options))

    def add_stages(self, stages: dict[str, Any], options: object, language: Language) -> None:
        """Register ttir (our tt module), mtia (buffer-level program) and binary (what the launcher runs).

        Raises: NotImplementedError for Gluon kernels.
        """
        if language != Language.TRITON:
            raise NotImplementedError(f"mtia_xdsl compiles Triton kernels only, not {language.name}")
        stages["ttir"] = lambda src, metadata: make_ttir(src, metadata)
        stages["mtia"] = lambda src, metadata: make_mtia(src, metadata, options)
        stages[BINARY_EXT] = lambda src, metadata: make_binary(src, metadata)

    def load_dialects(self, context: Any) -> None:
        """Load nothing into libtriton's context: our IR lives in xDSL."""

    def get_module_map(self) -> dict[str, ModuleType]:
        """Map `tl.extra.libdevice` to the CUDA names, as upstream TTIR spells them."""
        from triton.language.extra.cuda import libdevice

        return {"triton.language.extra.libdevice": libdevice}

    def get_codegen_implementation(self, options: Any) -> dict[str, Any]:
        """Return the hooks Triton's semantic layer calls (fp8 conversions, minimum dot size)."""
        import triton.language.extra.cuda as cuda

        return {
            "convert_custom_types": cuda.convert_custom_float8_sm80,
            "min_dot_size": lambda lhs_type, rhs_type: (16, 16, 16),
        }

    def pack_metadata(self, metadata: Any) -> tuple[Any, ...]:
        """Return what Triton hands the launcher as packed metadata (unused by our launcher)."""
        return (metadata.num_warps, metadata.num_ctas, metadata.shared)


def make_ttir(module: Any, metadata: dict[str, Any]) -> ModuleOp:
    """Check the frontend's tt module and record the kernel name in `metadata`.

    Raises: TypeError if `module` is a libtriton module (the make_ir hook was bypassed).
    """
    if not isinstance(module, ModuleOp):
        raise TypeError(
            "mtia_xdsl expected the xDSL tt module of its frontend but got "
            f"{type(module).__name__}; TTIR files go through `mtia-opt`, not triton.compile"
        )
    metadata["name"] = kernel_name(module)
    metadata["shared"] = 0
    return module


def make_mtia(module: ModuleOp, metadata: dict[str, Any], options: Any) -> ModuleOp:
    """Lower the tt module to the buffer-level mtia program (the default pipeline).

    Raises: LocalStorageOutOfResources (Triton's OutOfResources, which `@triton.autotune` skips) when
    the kernel's CBs do not fit a PE's local storage; PassFailedException for other located errors.
    """
    try:
        lowered = toolchain.lower(module, options)
    except Exception:
        _forget_last_result()  # mtia_xdsl.last_report() must not show an earlier kernel's report
        raise
    # capped at LS: a kernel whose CBs do not fit gets the machine model's located OutOfResources (naming
    # the kernel line and the largest CBs) rather than Triton's generic shared-memory check
    limit = getattr(getattr(options, "machine_config", None), "ls_bytes", None)
    shared = local_storage_bytes(lowered)
    metadata["shared"] = min(shared, limit) if limit else shared
    return lowered


def local_storage_bytes(module: ModuleOp) -> int:
    """Return the LS bytes per PE the kernel's circular buffers occupy (Triton's `metadata.shared`).

    What upstream reports as a kernel's shared memory is, on MTIA, the PE-private local storage its CBs
    take: the end of the highest CB mtia-cb-allocate placed (CBs alive at different times share bytes; the
    sum of depth x tile bytes for a program not allocated), at least 1, so host code that divides
    `max_shared_mem` by it, as tutorial 02 does, works for a kernel without CBs. A sum here made Triton's
    launcher refuse kernels that fit (causal FlashAttention: 433,536 B summed, 165,632 B placed).
    """
    from mtia_xdsl.machine.report import cb_report, cb_summary

    return max(1, cb_summary(cb_report(module)).ls_high_water_bytes)


def _forget_last_result() -> None:
    from triton.runtime import driver

    if hasattr(driver.active, "last_result"):
        driver.active.last_result = None


def make_binary(module: ModuleOp, metadata: dict[str, Any]) -> bytes:
    """Serialise the buffer-level program, with kernel source locations, for `load_binary`."""
    from io import StringIO

    from xdsl.printer import Printer

    text = StringIO()
    # generic form: xDSL 0.74 misplaces loc(...) in the custom form of ops such as scf.while
    Printer(stream=text, print_debuginfo=True, print_generic_format=True).print_op(module)
    return binary.encode(metadata["name"], text.getvalue(), int(metadata.get("num_warps", 1)))


def kernel_name(module: ModuleOp) -> str:
    """Return the symbol name of the first public function in `module`.

    Raises: ValueError if the module defines no function.
    """
    for op in module.body.ops:
        sym = op.properties.get("sym_name") or op.attributes.get("sym_name")
        visibility = op.properties.get("sym_visibility") or op.attributes.get("sym_visibility")
        if sym is not None and str(visibility) != '"private"':
            return str(sym.data)  # pyright: ignore[reportAttributeAccessIssue]
    raise ValueError("the kernel module defines no public function")


def source_digest(root: Path) -> str:
    """Return a short digest of every .py file under `root` (paths and contents, in sorted order)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def package_hash() -> str:
    """Return `mtia_xdsl-<version>-<source_digest of the package's .py files>` (the digest read once a process, ~5 ms).

    The one fingerprint of mtia_xdsl's code for every cache that keeps its output: Triton's backend hash
    (`MtiaBackend.hash`, so kernel binaries) and the uuid of mtia_xdsl's Inductor custom pass (so Inductor's FX
    graph and AOTAutograd caches, see `inductor.pass_uuid`).
    """
    import mtia_xdsl

    return f"mtia_xdsl-{mtia_xdsl.__version__}-{_package_digest()}"


@functools.cache
def _package_digest() -> str:
    """`source_digest` of the mtia_xdsl package directory, once a process."""
    import mtia_xdsl

    return source_digest(Path(mtia_xdsl.__file__).parent)


def install_make_ir_hook() -> None:
    """Wrap `ASTSource.make_ir` once so MtiaOptions build the tt module with mtia_xdsl's frontend.

    Other options (another backend active in the same process) reach the original method unchanged.
    Also wraps `ASTSource.hash` to include the kernel's file: our binaries carry kernel locations that the
    machine model's errors and traces print, and Triton's key (source text and first line) would let a
    kernel with the same source in another file reuse them.
    """
    from triton.compiler.compiler import ASTSource

    original = ASTSource.make_ir
    if getattr(original, "__mtia_xdsl_hook__", False):
        return
    original_hash = ASTSource.hash

    @functools.wraps(original_hash)
    def hash_with_file(self: Any) -> str:
        code = getattr(getattr(self.fn, "fn", None), "__code__", None)
        filename = code.co_filename if code is not None else ""
        return hashlib.sha256(f"{original_hash(self)}-{filename}".encode()).hexdigest()

    ASTSource.hash = hash_with_file  # pyright: ignore[reportAttributeAccessIssue]

    @functools.wraps(original)
    def make_ir(self: Any, target: Any, options: Any, codegen_fns: Any, module_map: Any, context: Any) -> Any:
        if not isinstance(options, MtiaOptions):
            return original(self, target, options, codegen_fns, module_map, context)
        return toolchain.build_tt_module(self.fn, dict(self.signature), dict(self.constants), dict(self.attrs), options)

    make_ir.__mtia_xdsl_hook__ = True  # type: ignore[attr-defined]
    ASTSource.make_ir = make_ir  # pyright: ignore[reportAttributeAccessIssue]
