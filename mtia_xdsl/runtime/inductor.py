"""Inductor sees MTIA: simulated-time autotuning and MTIA device properties for `cpu_backend = "triton"`.

With `torch._inductor.config.cpu_backend = "triton"`, Inductor generates Triton kernels for device "cpu"
and Triton runs them through mtia_xdsl's backend on the machine model. Two of Inductor's host-facing
choices are then wrong for MTIA, and `install()` hooks both:

- **Benchmarking.** Inductor times candidate configurations (CachingAutotuner, coordinate descent,
  `select_algorithm`) with `benchmarker.benchmark(..., device="cpu")`, a host wall-clock loop. The hook
  registers a "cpu" benchmarker (`torch._inductor.runtime.benchmarking.register_benchmarker`) that runs
  the call once and returns the simulated MTIA time of every kernel it launched through our driver
  (`MtiaDriver.simulated_time_ms`): deterministic, and the choice is the best-simulated one. A call that
  launched nothing through our driver (a host library call) is timed on the host as before.
- **Matmuls.** CPU Inductor keeps mm, addmm and bmm as host library calls (extern_kernels.*) unless
  max-autotune asks for Triton templates. The hook wraps `torch._inductor.compile_fx._compile_fx_inner`
  (which lowers one graph, forward or backward; `compile_fx_inner` looks it up when called) so that,
  while our backend is active, GEMM_CONFIG is in force (where the user left Inductor's defaults): the
  templates, with their fused epilogues, run on the DPE, and template configurations are chosen by
  simulated time (`TritonCPUBenchmarkRequest.do_bench` is hooked like the benchmarker). Wrapping the
  entry point `compile_fx` instead missed a training step's backward graph, which AOTAutograd compiles
  lazily, at the first backward, after `compile_fx` has returned; `compile_fx` is wrapped as well, with the same
  settings, so that the key AOTAutograd's cache computes there sees them.
- **Mixed dtypes.** Inductor does not check that a matmul's operands share a dtype (eager refuses bf16 x f32); the
  hook (`_host_gemm_for_mixed_dtypes`) leaves such a matmul to ATen, which raises eager's RuntimeError when the
  compiled model runs, instead of a GEMM template that mtia_xdsl's frontend refuses at compile.
- **Host library choices.** `select_algorithm` (GEMM and conv templates) also lists extern choices,
  host library calls such as ATen's convolution, which have no MTIA time: their host wall time is not
  comparable with a template's simulated time. The hook wraps `AlgorithmSelectorCache.benchmark` so that
  they are a fallback only (`extern_as_fallback`): chosen when no template choice compiled and ran.
- **Embedding bags.** Inductor keeps `aten._embedding_bag` as a host call (a fallback), and
  `aten._embedding_bag_forward_only` too (what `embedding_bag` calls when the weight does not require grad: inference
  with frozen weights; same arguments and outputs); the hook adds a decomposition (`embedding_bag`) for both to
  Inductor's table that, while our backend is active, turns sum and mean bags into mtia_xdsl's gather-and-sum Triton
  kernel (`inductor_kernels`), run on MTIA. While our backend is active the `_compile_fx_inner` wrapper also sets
  Inductor's `post_grad_custom_post_pass` (a `CustomGraphPass` that runs the user's own pass after it; its uuid,
  `pass_uuid`, is mtia_xdsl's source digest, which so enters Inductor's FX graph and AOTAutograd cache keys, and a
  wrapper of `compile_fx` sets the same settings, since AOTAutograd computes its key there, before lowering) to
  `inductor_bag_groups.group_embedding_bags`: bags whose outputs are concatenated (DLRM's stack) become one launch
  writing the concatenated result, and bags independent of each other (two-tower's towers) one launch writing each
  bag's rows of one buffer; then `inductor_linear_groups.group_linears`, `inductor_bag_mlps.fuse_bag_mlps`
  (fixed-step bags and the layers they feed, one launch) and `inductor_jagged_bags.fuse_jagged_bags` (a bag by
  offsets, or a single fixed-step bag, and the addmm layers it feeds, their relu or tanh folded, one launch).
  Their backward, `aten._embedding_bag_backward` (a host call too), becomes mtia_xdsl's dense-gradient kernel
  (`embedding_bag_backward`) for the cases `inductor_kernels.backward_unsupported` accepts; its custom op is
  lowered (`torch._inductor.lowering.make_fallback`) without the exact-strides constraint Inductor gives custom
  ops by default, so a gradient that is a view of a computed tensor is read in place, not copied first.
- **Attention.** Inductor keeps `aten._scaled_dot_product_flash_attention_for_cpu` (SDPA on "cpu") as a host
  call; the hook's decomposition (`scaled_dot_product_attention`) turns the cases `inductor_attention.unsupported`
  accepts into mtia_xdsl's flash-attention Triton kernel (`inductor_attention`), run on MTIA. While our backend is
  active the wrappers also set Inductor's `joint_custom_post_pass` (a `CustomGraphPass` keyed like the post-grad one,
  then the user's own) to `inductor_causal_attention.fuse_causal_attention`: causal attention written out by hand
  (`masked_fill(~tril(ones(T, T)), -inf)` before the softmax, which none of Inductor's attention patterns matches)
  becomes SDPA with `is_causal=True`, so that kernel, in inference and training graphs alike.
- **Hand-written RMSNorm.** The same joint custom post pass then runs
  `inductor_rms_norm_pattern.fuse_rms_norms`: RMSNorm written out by hand, `x * rsqrt(x.pow(2).mean(-1,
  keepdim=True) + eps)` (Llama's; Hugging Face's in f32 with casts around it; on "cpu" also `nn.RMSNorm`, whose
  ATen composite is that graph), becomes mtia_xdsl's RMSNorm template (`inductor_norms.rms_norm`), the weight
  multiply after it as its epilogue, in inference and training graphs (the backward is aten's RMSNorm backward of
  the template's rstd where the norm's input feeds nothing else, else the stock backward reading that rstd), while
  `inductor_config.norm_templates` is on and `inductor_norms.unsupported_rms_norm` accepts the case.
- **topk.** Inductor keeps `aten.topk` as a host call; the hook's decomposition (`topk`) turns the short rows
  `inductor_topk.unsupported` accepts (an MoE router's) into mtia_xdsl's topk kernel, with aten's CPU results
  tie for tie.
- **LayerNorm and RMSNorm.** Inductor lowers `aten.native_layer_norm` and `aten._fused_rms_norm` into generic
  reduction kernels; the hook's decompositions (`inductor_norms.decompose_layer_norm`, `decompose_rms_norm`) turn
  the cases `inductor_norms.unsupported_layer_norm` / `unsupported_rms_norm` accept, in inference and training
  graphs (the lowering keeps Inductor's own where the template cannot fuse the norm's producer or consumer), into
  the custom ops `mtia_xdsl::layer_norm` / `mtia_xdsl::rms_norm`, whose Inductor lowerings are Triton templates
  written for MTIA (row blocks by DMA, row sums on the RE, the normalisation on the SE), BLOCK_M chosen by simulated
  time; the pointwise ops that follow fuse into them as an epilogue, the pointwise producer of their input as a
  prologue (`_norm_template_prologues` lets it past Inductor's GEMM-minded prologue heuristics). Off with
  `inductor_config.patch(norm_templates=False)` (mtia_xdsl.runtime.inductor_config) or MTIA_XDSL_NORM_TEMPLATES=0:
  Inductor's own decompositions again. The settings' values are part of `pass_uuid`, so cached output code of the
  other setting is not replayed.
- **Norm backwards.** Inductor decomposes `aten.native_layer_norm_backward` and `aten._fused_rms_norm_backward`
  into generic pointwise and reduction kernels; while `inductor_config.norm_templates` is on, the hook's
  decompositions (`inductor_norm_backward`) turn the cases its rules accept into mtia_xdsl's norm-backward Triton
  kernel (one launch: row blocks as DMA, dx's row sums on the RE, per-program column sums of dw and db, summed by an
  ordinary Inductor kernel), its BLOCK_M chosen by simulated time.
- **Linear + norm.** The post-grad custom pass then runs `inductor_linear_norms.fuse_linear_norms`: an addmm or
  mm (through views) whose output's only user is `mtia_xdsl::layer_norm` / `rms_norm` becomes
  `mtia_xdsl::linear_layer_norm` / `linear_rms_norm`, one Triton template launch (a K loop of `tl.dot`, the bias,
  the norm on the whole row block, the activation after it fused as an epilogue), BLOCK_M and BLOCK_K chosen by
  simulated time; shapes `inductor_linear_norms.unsupported_linear_norm` refuses stay two launches. The norm ops
  exist only while `inductor_config.norm_templates` is on, so the switch turns this off too.
- **Device properties.** `DeviceProperties.create(torch.device("cpu"))` reads
  `CpuInterface.Worker.get_device_properties`, the host's core count; Inductor's heuristics (grid sizes,
  persistent reductions, split reductions) read it as the number of SMs. The hook answers with the PE
  count of the MachineConfig preset of `MtiaOptions()` (`MachineConfig.n_pes`, 64 on MTIA-2i).

The hooks act only while `cpu_backend == "triton"` and mtia_xdsl's driver is Triton's active driver;
otherwise Inductor's own behaviour is unchanged (the C++ CPU backend keeps host timing and host cores).
Inside `stock_choices()` the benchmarking, host-library and device-property hooks step aside (Inductor's
own choices: host wall-clock autotuning, extern choices by host time, host cores) while matmuls and
embedding bags and attention still run on MTIA: the baseline `benchmarks/inductor.py` compares against.

Everything hooked is an internal of torch; it is tested against torch 2.13.0 (`PINNED_TORCH`). If an
attribute is missing, `install()` raises InductorHookError naming the torch version and the attribute.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import math
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from mtia_xdsl.runtime.inductor_torch import PINNED_TORCH as PINNED_TORCH
from mtia_xdsl.runtime.inductor_torch import InductorHookError as InductorHookError
from mtia_xdsl.runtime.inductor_torch import device_machine_config as device_machine_config
from mtia_xdsl.runtime.inductor_torch import mtia_active as mtia_active
from mtia_xdsl.runtime.inductor_torch import require as _require
from mtia_xdsl.runtime.inductor_torch import torch_internal as _torch_internal


class MtiaDeviceProperties:
    """What Inductor reads of a "cpu" device's properties, for MTIA.

    `multi_processor_count` is the PE count (MachineConfig.n_pes: 8 x 8 on MTIA-2i, S1);
    `local_storage_bytes` one PE's LS (MachineConfig.ls_bytes, 384 KB, S1/S6).
    """

    def __init__(self, machine: Any) -> None:
        self.multi_processor_count: int = machine.n_pes
        self.local_storage_bytes: int = machine.ls_bytes
        self.name = machine.name

    def __repr__(self) -> str:
        return (
            f"MtiaDeviceProperties(name={self.name!r}, multi_processor_count={self.multi_processor_count}, "
            f"local_storage_bytes={self.local_storage_bytes})"
        )


GEMM_CONFIG: dict[str, Any] = {
    "max_autotune_gemm": True,
    "max_autotune_gemm_backends": "TRITON,ATEN",
    "benchmark_epilogue_fusion": False,
}
"""Inductor settings under which mm, addmm and bmm (and their fused epilogues) become Triton templates
that run on the DPE instead of host library calls. ATEN stays listed as the fallback only
(`extern_as_fallback`): the host library call is chosen when no template takes the matmul (float64, int32),
where with templates only Inductor had no choice left and raised NoValidChoicesError. `benchmark_epilogue_fusion`
is off because torch 2.13's CPU Triton path writes the fused-template benchmark module with a wrong indentation."""


def gemm_config(inductor_config: Any) -> dict[str, Any]:
    """The GEMM_CONFIG entries whose current value is Inductor's default (a user's own setting wins).

    The value is compared with the entry's default: `config._is_default` turns False for good once a
    `config.patch` has touched the entry, even after the patch ends.
    """
    entries = _torch_internal("torch._inductor.config._config")
    out = {}
    for name, value in GEMM_CONFIG.items():
        default = _require(entries[name], "default", f"torch._inductor.config._config[{name!r}]")
        if getattr(inductor_config, name) == default:
            out[name] = value
    return out


_installed = False
_stock_depth = 0
"""How many `stock_choices()` blocks are open (the choice hooks defer to Inductor's own while > 0)."""


def mtia_choices() -> bool:
    """True when Inductor's choices (autotuning timer, device properties) should describe MTIA: our
    backend is active and no `stock_choices()` block is open."""
    return _stock_depth == 0 and mtia_active()


@contextlib.contextmanager
def stock_choices() -> Iterator[None]:
    """Inductor's stock choices while our backend is active: inside the block, autotuning times candidates
    with Inductor's host wall-clock benchmarker and device properties describe the host (its cores),
    as before these hooks, and a host library call (ATen's convolution) wins over a template when its
    host time is shorter; mm/addmm/bmm still become Triton templates and embedding bags and attention still
    decompose, so that work still runs on MTIA and is counted. The baseline of `benchmarks/inductor.py`.

    Inductor caches device properties (`DeviceProperties.create`); the cache is cleared on entry and exit.
    Compile inside the block (after `torch._dynamo.reset()`), with Inductor's caches off, for a stock choice.
    """
    global _stock_depth
    cache_clear = _torch_internal("torch._inductor.runtime.hints.DeviceProperties.create.cache_clear")
    _stock_depth += 1
    cache_clear()
    try:
        yield
    finally:
        _stock_depth -= 1
        cache_clear()


def _warn_unless_pinned(version: str) -> None:
    """Warn (RuntimeWarning) when torch `version` (local tag such as "+cpu" ignored) is not PINNED_TORCH.

    A missing internal raises InductorHookError, but a torch that keeps the names and changes what they do
    (another benchmarker path, another prologue codegen) would leave a hook silently unused or wrong: the
    hooks are tested against PINNED_TORCH only, so any other release is said so once, at install.
    """
    if version.split("+", 1)[0] != PINNED_TORCH:
        import warnings

        warnings.warn(
            f"mtia_xdsl's Inductor hooks are tested with torch {PINNED_TORCH}, not {version}: autotuning by simulated "
            f"time, device properties and matmul templates may silently differ; install torch=={PINNED_TORCH}",
            RuntimeWarning,
            stacklevel=3,
        )


def install() -> None:
    """Install the benchmarker and device-property hooks into the loaded torch (idempotent).

    Raises: InductorHookError if torch lacks an internal the hooks use (see PINNED_TORCH).
    """
    global _installed
    if _installed:
        return
    import torch

    _warn_unless_pinned(torch.__version__)
    bench = "torch._inductor.runtime.benchmarking"
    register = _torch_internal(f"{bench}.register_benchmarker")
    benchmark_cpu = _torch_internal(f"{bench}.Benchmarker.benchmark_cpu")
    dispatch = _torch_internal(f"{bench}._BENCHMARK_DISPATCH")
    worker = _torch_internal("torch._dynamo.device_interface.CpuInterface.Worker")
    host_properties = _torch_internal("torch._dynamo.device_interface.CpuInterface.Worker.get_device_properties")
    cache_clear = _torch_internal("torch._inductor.runtime.hints.DeviceProperties.create.cache_clear")
    request_cls = _torch_internal("torch._inductor.autotune_process.TritonCPUBenchmarkRequest")
    request_bench = _torch_internal("torch._inductor.autotune_process.TritonCPUBenchmarkRequest.do_bench")
    compile_fx = _torch_internal("torch._inductor.compile_fx")
    compile_entry = _torch_internal("torch._inductor.compile_fx._compile_fx_inner")
    compile_main = _torch_internal("torch._inductor.compile_fx.compile_fx")
    inductor_config = sys.modules["torch._inductor.config"]
    for name in GEMM_CONFIG:
        _torch_internal(f"torch._inductor.config.{name}")

    host_benchmark = dispatch.get("cpu")

    def benchmark(self: Any, fn: Callable[[], Any], warmup: int = 20, rep: int = 100, **kwargs: Any) -> float:
        if mtia_choices():
            from triton.runtime import driver

            time_ms = driver.active.simulated_time_ms(fn)
            if time_ms is not None:
                return time_ms
        if host_benchmark is not None:
            return host_benchmark(self, fn, warmup=warmup, rep=rep, **kwargs)
        return benchmark_cpu(self, fn, warmup=warmup, rep=rep)

    benchmark.__mtia_xdsl_hook__ = True  # type: ignore[attr-defined]
    register("cpu", benchmark, override=True)

    @functools.wraps(host_properties)
    def get_device_properties(device: Any = None) -> Any:
        if mtia_choices():
            return MtiaDeviceProperties(device_machine_config())
        return host_properties(device)

    get_device_properties.__mtia_xdsl_hook__ = True  # type: ignore[attr-defined]
    worker.get_device_properties = staticmethod(get_device_properties)

    @functools.wraps(request_bench)
    def do_bench(self: Any, fn: Callable[[], Any], *input_tensors: Any, out: Any = None) -> float:
        if mtia_choices():
            from triton.runtime import driver

            time_ms = driver.active.simulated_time_ms(fn)
            if time_ms is not None:
                return time_ms
        return request_bench(self, fn, *input_tensors, out=out)

    request_cls.do_bench = do_bench

    selector = _torch_internal("torch._inductor.select_algorithm.AlgorithmSelectorCache")
    selector_benchmark = _torch_internal("torch._inductor.select_algorithm.AlgorithmSelectorCache.benchmark")
    extern_caller = _torch_internal("torch._inductor.select_algorithm.ExternKernelCaller")

    @functools.wraps(selector_benchmark)
    def benchmark_choices(self: Any, choices: Any, *args: Any, **kwargs: Any) -> dict[Any, float]:
        timings = selector_benchmark(self, choices, *args, **kwargs)
        if mtia_choices():
            return extern_as_fallback(timings, lambda choice: isinstance(choice, extern_caller))
        return timings

    benchmark_choices.__mtia_xdsl_hook__ = True  # type: ignore[attr-defined]
    selector.benchmark = benchmark_choices
    _host_gemm_for_mixed_dtypes(_torch_internal("torch._inductor.choices.InductorChoices"))

    custom_pass_base = _torch_internal("torch._inductor.custom_graph_pass.CustomGraphPass")
    _torch_internal("torch._inductor.config.post_grad_custom_post_pass")
    _torch_internal("torch._inductor.pattern_matcher.stable_topological_sort")  # inductor_bag_groups sorts with it

    class GroupEmbeddingBags(custom_pass_base):  # type: ignore[misc, valid-type]
        """Inductor's post-grad custom pass while our backend is active: `group_embedding_bags`, `group_linears`,
        `fuse_bag_mlps` and `fuse_jagged_bags`, then the user's own post-grad custom pass (`user`), if any."""

        def __init__(self, user: Any) -> None:
            self.user = user

        def __call__(self, graph: Any) -> None:
            from mtia_xdsl.runtime.inductor_bag_groups import group_embedding_bags
            from mtia_xdsl.runtime.inductor_bag_mlps import fuse_bag_mlps
            from mtia_xdsl.runtime.inductor_jagged_bags import fuse_jagged_bags
            from mtia_xdsl.runtime.inductor_linear_groups import group_linears
            from mtia_xdsl.runtime.inductor_linear_norms import fuse_linear_norms

            group_embedding_bags(graph)
            group_linears(graph)
            fuse_linear_norms(graph)
            fuse_bag_mlps(graph)
            fuse_jagged_bags(graph)
            if self.user is not None:
                self.user(graph)

        def uuid(self) -> Any:
            return pass_uuid(self.user, custom_pass_base)

    _torch_internal("torch._inductor.config.joint_custom_post_pass")

    class FuseCausalAttention(custom_pass_base):  # type: ignore[misc, valid-type]
        """Inductor's joint-graph custom post pass while our backend is active:
        `inductor_causal_attention.fuse_causal_attention`, `inductor_rms_norm_pattern.fuse_rms_norms`, then the
        user's own joint custom post pass (`user`)."""

        def __init__(self, user: Any) -> None:
            self.user = user

        def __call__(self, graph: Any) -> None:
            from mtia_xdsl.runtime.inductor_causal_attention import fuse_causal_attention
            from mtia_xdsl.runtime.inductor_rms_norm_pattern import fuse_rms_norms

            fuse_causal_attention(graph)
            fuse_rms_norms(graph)
            if self.user is not None:
                self.user(graph)

        def uuid(self) -> Any:
            return pass_uuid(self.user, custom_pass_base)

    def mtia_settings() -> dict[str, Any]:
        settings = dict(gemm_config(inductor_config))
        user_pass = inductor_config.post_grad_custom_post_pass
        if not isinstance(user_pass, GroupEmbeddingBags):
            settings["post_grad_custom_post_pass"] = GroupEmbeddingBags(user_pass)
        user_joint_pass = inductor_config.joint_custom_post_pass
        if not isinstance(user_joint_pass, FuseCausalAttention):
            settings["joint_custom_post_pass"] = FuseCausalAttention(user_joint_pass)
        return settings

    def with_mtia_settings(compile_step: Any) -> Any:
        """`compile_step` run under `mtia_settings()` while our backend is active (else as it is)."""

        @functools.wraps(compile_step)
        def compile_with_mtia_settings(*args: Any, **kwargs: Any) -> Any:
            if not mtia_active():
                return compile_step(*args, **kwargs)
            with inductor_config.patch(mtia_settings()):
                return compile_step(*args, **kwargs)

        return compile_with_mtia_settings

    compile_fx._compile_fx_inner = with_mtia_settings(compile_entry)  # lowers each graph, forward or backward
    compile_fx.compile_fx = with_mtia_settings(compile_main)  # where AOTAutograd computes its cache key
    _masked_prologue_loads_read_zero(_torch_internal("torch._inductor.codegen.simd"))
    _norm_template_prologues(
        _torch_internal("torch._inductor.scheduler.Scheduler"),
        _torch_internal("torch._inductor.ir.TritonTemplateBuffer"),
    )
    table = _torch_internal("torch._inductor.decomposition.decompositions")
    table[torch_aten()._embedding_bag.default] = embedding_bag
    table[torch_aten()._embedding_bag_forward_only.default] = embedding_bag  # frozen weights: same op, no backward
    table[torch_aten().convolution.default] = convolution_without_bias
    table[torch_aten()._scaled_dot_product_flash_attention_for_cpu.default] = scaled_dot_product_attention
    table[torch_aten()._embedding_bag_backward.default] = embedding_bag_backward
    table[torch_aten().topk.default] = topk
    from mtia_xdsl.runtime import inductor_norm_backward as norm_backward
    from mtia_xdsl.runtime import inductor_norms

    table[torch_aten().native_layer_norm.default] = inductor_norms.decompose_layer_norm
    table[torch_aten()._fused_rms_norm.default] = inductor_norms.decompose_rms_norm
    table[torch_aten().native_layer_norm_backward.default] = norm_backward.native_layer_norm_backward
    table[torch_aten()._fused_rms_norm_backward.default] = norm_backward.fused_rms_norm_backward
    _flexible_fallback(_torch_internal("torch._inductor.lowering"))
    cache_clear()  # properties cached before the hook described the host
    register_custom_ops()
    _installed = True


def pass_uuid(user: Any, custom_pass_base: type) -> Any:
    """The uuid of mtia_xdsl's post-grad custom pass run before the user's `user` (None, or Inductor's
    `CustomGraphPass`): mtia_xdsl's `package_hash()` (the digest of its sources, Triton's backend hash), the values
    of mtia_xdsl's settings (`inductor_config`, sorted by name) and `user.uuid()`. Inductor's FX graph and
    AOTAutograd cache keys include it, so output code cached by another version of mtia_xdsl (its passes,
    decompositions, kernels and hooks decide that code) or under other settings (`norm_templates` off: the
    decompositions take Inductor's own lowering) is not replayed.

    Returns None (Inductor then bypasses both caches, as for any pass it cannot key) when `user` is a plain
    callable or its uuid is None.
    """
    from mtia_xdsl.runtime import inductor_config
    from mtia_xdsl.runtime.triton_backend import compiler

    key = (compiler.package_hash(), tuple(sorted(inductor_config.get_config_copy().items())))
    if user is None:
        return (*key, None)
    user_uuid = user.uuid() if isinstance(user, custom_pass_base) else None
    return None if user_uuid is None else (*key, user_uuid)


SAME_DTYPE_GEMMS = ("mm", "addmm", "bmm", "baddbmm")
"""Inductor's names (`op_name` of `InductorChoices.get_template_configs`) of the GEMMs whose operands ATen requires
to have one dtype (eager raises RuntimeError otherwise: "expected m1 and m2 to have the same dtype, ...")."""


def mixed_dtypes(op_name: str, dtypes: list[Any]) -> bool:
    """True when GEMM `op_name`'s operands (their `dtypes`: bias first for addmm, then mat1 and mat2) differ in dtype
    where ATen requires one (`SAME_DTYPE_GEMMS`)."""
    return op_name in SAME_DTYPE_GEMMS and len(set(dtypes)) > 1


def _host_gemm_for_mixed_dtypes(choices_cls: Any) -> None:
    """Leave a GEMM whose operands differ in dtype (bf16 x f32) to ATen while our backend is active.

    Inductor does not check the operands' dtypes of mm, addmm, bmm and baddbmm: Dynamo's fake tensors pass them, and
    a Triton template was generated with `tl.dot` of a bf16 and an f32 block, which mtia_xdsl's frontend refuses
    (a KernelError "Both operands must be same dtype" out of torch.compile). The hook drops every choice but ATen's
    (`ExternKernelChoice`) from `InductorChoices._finalize_template_configs` (torch's hook for changing the choices)
    for such operands, so the compiled model calls ATen, which raises what eager raises (RuntimeError, "expected
    m1 and m2 to have the same dtype, but got: c10::BFloat16 != float"), when the model runs, as Inductor's C++ CPU
    backend does.
    """
    finalize = _require(choices_cls, "_finalize_template_configs", "torch._inductor.choices.InductorChoices")
    extern_choice = _torch_internal("torch._inductor.select_algorithm.ExternKernelChoice")

    @functools.wraps(finalize)
    def finalize_template_configs(
        self: Any, template_choices: Any, kernel_inputs: Any, templates: Any, op_name: str, *args: Any, **kwargs: Any
    ) -> list[Any]:
        choices = finalize(self, template_choices, kernel_inputs, templates, op_name, *args, **kwargs)
        if mtia_active() and mixed_dtypes(op_name, [node.get_dtype() for node in kernel_inputs.nodes()]):
            return [choice for choice in choices if isinstance(choice.template, extern_choice)]
        return choices

    finalize_template_configs.__mtia_xdsl_hook__ = True  # type: ignore[attr-defined]
    choices_cls._finalize_template_configs = finalize_template_configs


def _masked_prologue_loads_read_zero(simd: Any) -> None:
    """Make Inductor re-mask every fused GEMM prologue while our backend is active.

    A prologue (a pointwise producer of a template's input, such as attention's transposing copy before its
    output projection) loads under the template's mask (`a_mask`, lanes past K) with no `other`, and Inductor
    takes those lanes for 0: when `prologue_preserves_zero_mask` finds the prologue maps 0 to 0 it drops its
    `tl.where(a_mask, value, 0.0)`. On MTIA a masked-off lane with no `other` reads as unwritten LS, NaN
    (machine/interpret/mtia.py), and NaN x 0 in `tl.dot` made the whole output NaN whenever K was no multiple
    of BLOCK_K. The hook answers False while our backend is active, so the `tl.where` is always written.
    """
    preserves_zero = _require(simd, "prologue_preserves_zero_mask", "torch._inductor.codegen.simd")

    @functools.wraps(preserves_zero)
    def prologue_preserves_zero_mask(prologue: Any) -> bool:
        return False if mtia_active() else preserves_zero(prologue)

    prologue_preserves_zero_mask.__mtia_xdsl_hook__ = True  # type: ignore[attr-defined]
    simd.prologue_preserves_zero_mask = prologue_preserves_zero_mask


def _norm_template_prologues(scheduler_cls: Any, template_cls: Any) -> None:
    """Let the pointwise producer of a norm template's input (`inductor_norms`) fuse into it as a prologue while our
    backend is active: a post-norm residual add (`LN(x + h)`), an embedding lookup.

    Inductor's heuristic (`Scheduler.check_prologue_fusion_heuristics_fusable`) takes a prologue only if it reads no
    more bytes than it writes, for a GEMM's input is read many times; a norm template reads each element of its
    input once, so a residual add (two reads, one write) is no loss there and saves the round trip through DRAM
    and a launch. (A producer that gathers or transposes never gets here: `inductor_norms._gathers` keeps Inductor's
    lowering for it.) And a template with mutated inputs refuses every prologue
    (`TritonTemplateBuffer.has_aliasing_or_mutation_for_prologue_fusion`): a norm template's mutated inputs are its
    mean and rstd, fresh buffers no prologue writes.
    """
    from mtia_xdsl.runtime.inductor_norms import is_norm_template

    where = "torch._inductor.scheduler.Scheduler"
    heuristics = _require(scheduler_cls, "check_prologue_fusion_heuristics_fusable", where)
    mutation = _require(
        template_cls, "has_aliasing_or_mutation_for_prologue_fusion", "torch._inductor.ir.TritonTemplateBuffer"
    )

    @functools.wraps(heuristics)
    def check_prologue_fusion_heuristics_fusable(self: Any, prologue: Any, template: Any, why: Any) -> bool:
        if mtia_active() and is_norm_template(template.get_template_node_or_throw()):
            return True
        return heuristics(self, prologue, template, why)

    @functools.wraps(mutation)
    def has_aliasing_or_mutation_for_prologue_fusion(self: Any, scheduler_node: Any) -> bool:
        if mtia_active() and is_norm_template(self):
            return False
        return mutation(self, scheduler_node)

    check_prologue_fusion_heuristics_fusable.__mtia_xdsl_hook__ = True  # type: ignore[attr-defined]
    scheduler_cls.check_prologue_fusion_heuristics_fusable = check_prologue_fusion_heuristics_fusable
    template_cls.has_aliasing_or_mutation_for_prologue_fusion = has_aliasing_or_mutation_for_prologue_fusion


def _flexible_fallback(lowering: Any) -> None:
    """Lower `mtia_xdsl::embedding_bag_backward` as a host-side call of the op (what Inductor does for a custom op
    it has no lowering of) without a layout constraint. Inductor's default for a custom op is eager's exact
    strides, so each input that is a view of a computed tensor got its own copy kernel with those strides (in
    dlrm_train's backward, one per table's slice of the interaction gradient); the kernel reads grad at any
    strides, so the views are passed as they are."""
    from mtia_xdsl.runtime import inductor_kernels

    op = inductor_kernels.embedding_bag_backward._opoverload  # pyright: ignore[reportFunctionMemberAccess]
    if op not in _require(lowering, "lowerings", "torch._inductor.lowering"):
        _require(lowering, "make_fallback", "torch._inductor.lowering")(op, layout_constraint=None, warn=False)


CUSTOM_OP_MODULES = (
    "inductor_kernels", "inductor_attention", "inductor_topk", "inductor_linear_groups", "inductor_bag_mlps",
    "inductor_jagged_bags", "inductor_norms", "inductor_norm_backward", "inductor_linear_norms",
)  # fmt: skip
"""The modules of mtia_xdsl.runtime defining the custom ops (`torch.ops.mtia_xdsl.*`) that the decompositions above
put into Inductor's output code."""


def register_custom_ops() -> None:
    """Import `CUSTOM_OP_MODULES`, registering their custom ops. The decompositions import them when they run, but
    output code from Inductor's FX graph cache (a later process compiling the same graph) calls the ops with no
    decomposition run: `torch.ops.mtia_xdsl.topk` was an AttributeError there."""
    for name in CUSTOM_OP_MODULES:
        importlib.import_module(f"mtia_xdsl.runtime.{name}")


def extern_as_fallback(timings: dict[Any, float], is_extern: Callable[[Any], bool]) -> dict[Any, float]:
    """Timings of one `select_algorithm` autotuning (choice -> ms) with host library calls as a fallback only.

    An extern choice (`ExternKernelCaller`: ATen's convolution, addmm, ...) runs on the host and has no
    simulated MTIA time; the benchmarker times it by the host's wall clock, which is not comparable with
    a template's simulated time (cnn's convolutions went to ATen that way, and ran off MTIA, uncounted in
    benchmarks/inductor.py's simulated time). So when any other choice (a Triton template, which
    compiled and ran on the machine model) has a finite time, every extern choice gets `inf` and is not
    chosen; when none has (no template compiled or fit), the timings are returned as they are and
    Inductor picks the fastest host call, as before.
    """
    if not any(math.isfinite(t) for choice, t in timings.items() if not is_extern(choice)):
        return timings
    return {choice: math.inf if is_extern(choice) else t for choice, t in timings.items()}


def torch_aten() -> Any:
    """`torch.ops.aten` (torch imported when first needed)."""
    import torch

    return torch.ops.aten


def convolution_without_bias(
    x: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: int,
) -> Any:
    """`aten.convolution` with a bias, while our backend is active: the convolution without it, then the bias
    added per output channel (a pointwise kernel Inductor may fuse), as Inductor already does for every device
    but "cpu". Its Triton conv templates take no bias argument, so on "cpu" a template choice was benchmarked
    with the bias as an extra positional argument and failed the compile ("too many positional arguments").

    Returns NotImplemented (Inductor lowers the op as it is) when our backend is not active or there is no bias.
    """
    if bias is None or not mtia_active():
        return NotImplemented
    aten = torch_aten()
    result = aten.convolution.default(x, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    return result + bias.view([-1] + [1] * (result.dim() - 2))


def embedding_bag(
    weight: Any,
    indices: Any,
    offsets: Any,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Any = None,
    include_last_offset: bool = False,
    padding_idx: int = -1,
) -> Any:
    """`aten._embedding_bag` (sum or mean bags of rows, by offsets), or `aten._embedding_bag_forward_only` (its
    twin when the weight does not require grad; same arguments and outputs), on MTIA while our backend is active:
    the custom op `mtia_xdsl::embedding_bag` (`inductor_kernels.embedding_bag_sum`), mtia_xdsl's Triton kernel
    that gathers each bag's rows by indexed DMA (`mtia.dma_gather_rows`) and sums them on the SE, one program per
    bag. It returns the op's four outputs as aten's CPU kernel does (offset2bag and the bag sizes, which its
    backward reads).

    Before, the bags were a matmul by the 0/1 bag-membership matrix (`member @ weight[indices]` on the DPE):
    four to six kernels per bag op (the lookup, the membership matmul, the offsets' end and the sizes), 4.22 us
    of jagged_sum's call where the gather-and-sum kernel and the MLP take 1.6 us (benchmarks/inductor.py --hot).

    Returns NotImplemented (Inductor keeps the op, a host call) when our backend is not active, for mode max,
    a padding index, or indices or offsets that are not 1-D.
    """
    if not mtia_active() or mode not in (0, 1) or (padding_idx is not None and padding_idx >= 0):
        return NotImplemented
    if indices.dim() != 1 or offsets.dim() != 1 or weight.dim() != 2:
        return NotImplemented
    from mtia_xdsl.runtime import inductor_kernels

    return inductor_kernels.embedding_bag_sum(
        weight.contiguous(), indices, offsets, mode, per_sample_weights, include_last_offset
    )


def embedding_bag_backward(
    grad: Any,
    indices: Any,
    offsets: Any,
    offset2bag: Any,
    bag_size: Any,
    maximum_indices: Any,
    num_weights: int,
    scale_grad_by_freq: bool,
    mode: int,
    sparse: bool,
    per_sample_weights: Any,
    padding_idx: int = -1,
) -> Any:
    """`aten._embedding_bag_backward` (the weight gradient of sum or mean bags, what autograd's formula for
    `aten._embedding_bag` calls) on MTIA while our backend is active: the custom op
    `mtia_xdsl::embedding_bag_backward` (`inductor_kernels.embedding_bag_backward`), mtia_xdsl's Triton kernel
    that writes the dense gradient with one-hot matrix products on the DPE, one launch (offset2bag and
    maximum_indices are not read: bags come from the offsets).

    Returns NotImplemented (Inductor keeps the op, a host call) when our backend is not active or for a case
    `inductor_kernels.backward_unsupported` names (sparse, scale_grad_by_freq, mode max, other dtypes, too large).
    """
    if not mtia_active():
        return NotImplemented
    from mtia_xdsl.runtime import inductor_kernels

    why = inductor_kernels.backward_unsupported(grad, indices, offsets, num_weights, scale_grad_by_freq, mode, sparse)
    if why is not None:
        return NotImplemented
    return inductor_kernels.embedding_bag_backward(
        grad, indices, offsets, bag_size, num_weights, mode, per_sample_weights, padding_idx
    )


def topk(x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """`aten.topk` on MTIA while our backend is active: the custom op `mtia_xdsl::topk` (`inductor_topk.topk`),
    mtia_xdsl's Triton kernel that picks each short row's k largest (or smallest) as aten's CPU kernel does, ties
    and NaNs included, one launch.

    Returns NotImplemented (Inductor keeps the op, a host call) when our backend is not active or for a case
    `inductor_topk.unsupported` names (rows longer than `inductor_topk.MAX_N`, another dim, other dtypes).
    """
    if not mtia_active():
        return NotImplemented
    from mtia_xdsl.runtime import inductor_topk

    if inductor_topk.unsupported(x, k, dim, sorted) is not None:
        return NotImplemented
    return inductor_topk.topk(x, k, largest, sorted)


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    attn_mask: Any = None,
    scale: float | None = None,
) -> Any:
    """`aten._scaled_dot_product_flash_attention_for_cpu` (what `F.scaled_dot_product_attention` becomes on "cpu")
    on MTIA while our backend is active: the custom op `mtia_xdsl::scaled_dot_product_attention`
    (`inductor_attention.flash_attention`), mtia_xdsl's flash-attention Triton kernel, one launch; its two outputs
    are aten's, so autograd's backward formula for the aten op (a host call) still applies.

    Returns NotImplemented (Inductor keeps the op, a host call) when our backend is not active or for a case
    `inductor_attention.unsupported` names (dropout, an attention mask, grouped-query heads, other head dims or
    dtypes, symbolic sizes).
    """
    if not mtia_active():
        return NotImplemented
    from mtia_xdsl.runtime import inductor_attention

    if inductor_attention.unsupported(query, key, value, dropout_p, attn_mask) is not None:
        return NotImplemented
    return inductor_attention.flash_attention(query, key, value, is_causal, scale)


_PER_COMPILE_LINES = ("# AOT ID:", "# kernel path:")
"""Comment lines of Inductor's output code that name the compile (a counter) or a fresh cache directory."""
_BACKEND_HASH = re.compile(r"('backend_hash': )'[0-9A-Fa-f]+'")
"""The backend hash in a kernel's `inductor_meta` (see `normalized_output_code`)."""


def normalized_output_code(code: str) -> str:
    """Inductor's output code without what differs between two compiles of the same kernels: the comment
    lines naming the compile (the AOT ID counter, the kernel path in a fresh cache directory) and the
    `backend_hash` in every kernel's metadata (Triton's backend hash, a digest of mtia_xdsl's source files:
    it changes with any edit of the package, even one that leaves every kernel as it was). Equal texts mean
    the same kernels, the same configurations and the same calls (the run-to-run identity check of
    benchmarks/inductor.py)."""
    lines = (line for line in code.splitlines() if not line.lstrip().startswith(_PER_COMPILE_LINES))
    return _BACKEND_HASH.sub(r"\1'-'", "\n".join(lines))


HOOK_AFTER = "torch._inductor.compile_fx"
"""The module whose loading triggers `install()`: Inductor's entry point, imported by torch.compile when
it first compiles, after torch._dynamo has finished importing (Triton, and so this backend, is imported
while torch._dynamo is still half-initialised, too early to hook anything)."""


def install_when_inductor_loads() -> None:
    """Call `install()` now if Inductor's entry point is loaded, else right after it loads.

    Inductor reads device properties and registers nothing for us before torch.compile runs, so
    installing when `HOOK_AFTER` has been executed is early enough and never imports torch._inductor.
    """
    module = sys.modules.get(HOOK_AFTER)
    if module is not None and hasattr(module, "compile_fx"):
        install()
    elif not any(isinstance(f, _InstallAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _InstallAfterImport())


class _InstallAfterImport:
    """A meta-path finder that runs `install()` once `HOOK_AFTER` has been executed, then removes itself."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != HOOK_AFTER:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return None
        exec_module = spec.loader.exec_module
        finder = self

        def exec_then_install(module: Any) -> None:
            exec_module(module)
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
            install()

        spec.loader.exec_module = exec_then_install  # type: ignore[method-assign]
        return spec
