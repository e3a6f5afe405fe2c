"""transforms/walker.typed_walker rewrites what xDSL's PatternRewriteWalker rewrites, in the same order."""

from xdsl.passes import PassPipeline
from xdsl.pattern_rewriter import PatternRewriteWalker
from xdsl.transforms import get_all_passes as xdsl_passes

from examples.layer_norm import _layer_norm_fwd_fused
from mtia_xdsl.dialects import make_context, mtia
from mtia_xdsl.frontend import build_tt_module
from mtia_xdsl.transforms import get_all_passes
from mtia_xdsl.transforms.mtia_vector_codegen import FoldBroadcastIntoConsumers, FuseIntoConsumer
from mtia_xdsl.transforms.walker import typed_walker
from mtia_xdsl.utils.clone import clone_op


def test_typed_walker_fuses_layer_norm_as_xdsl_walker() -> None:
    signature = {"X": "*fp32", "Y": "*fp32", "W": "*fp32", "B": "*fp32", "Mean": "*fp32", "Rstd": "*fp32",
                 "stride": "i32", "N": "i32", "eps": "fp32", "BLOCK_SIZE": "constexpr"}  # fmt: skip
    module = build_tt_module(_layer_norm_fwd_fused, signature, {"BLOCK_SIZE": 256})
    spec = "tt-inline,mtia-set-target,convert-tt-to-mtia,canonicalize,cse"
    PassPipeline.parse_spec({**xdsl_passes(), **get_all_passes()}, spec).apply(make_context(), module)
    ours, xdsl = clone_op(module), clone_op(module)
    for pattern, reverse in ((FoldBroadcastIntoConsumers(), False), (FuseIntoConsumer(), True)):
        typed_walker(pattern, mtia.EngineComputeOp, walk_reverse=reverse).rewrite_module(ours)
        PatternRewriteWalker(pattern, walk_reverse=reverse).rewrite_module(xdsl)
    assert str(ours) == str(xdsl) != str(module)  # the same rewrites, and there were some
