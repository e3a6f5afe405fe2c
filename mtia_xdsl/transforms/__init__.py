"""Pass registry: lazy factories keyed by the pass's command-line name."""

from collections.abc import Callable

from xdsl.passes import ModulePass

from mtia_xdsl.utils.lazy_formats import install as _install_lazy_formats

_install_lazy_formats()  # before a pass module imports xDSL's dialects (utils/lazy_formats.py)


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Return every mtia_xdsl pass by its MLIR-style name."""

    def convert_tt_to_mtia() -> type[ModulePass]:
        from mtia_xdsl.transforms.convert_tt_to_mtia import ConvertTtToMtiaPass

        return ConvertTtToMtiaPass

    def cb_bufferize() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_cb_bufferize import MtiaCbBufferizePass

        return MtiaCbBufferizePass

    def test_memory_access() -> type[ModulePass]:
        from mtia_xdsl.transforms.analysis.memory_access import TestMtiaMemoryAccessPass

        return TestMtiaMemoryAccessPass

    def test_cb_liveness() -> type[ModulePass]:
        from mtia_xdsl.transforms.analysis.cb_liveness import TestMtiaCbLivenessPass

        return TestMtiaCbLivenessPass

    def cb_allocate() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_cb_allocate import MtiaCbAllocatePass

        return MtiaCbAllocatePass

    def set_target() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_set_target import MtiaSetTargetPass

        return MtiaSetTargetPass

    def tt_inline() -> type[ModulePass]:
        from mtia_xdsl.transforms.tt_inline import TtInlinePass

        return TtInlinePass

    def tt_lift_early_returns() -> type[ModulePass]:
        from mtia_xdsl.transforms.tt_lift_early_returns import TtLiftEarlyReturnsPass

        return TtLiftEarlyReturnsPass

    def tt_rewrite_tensor_descriptor() -> type[ModulePass]:
        from mtia_xdsl.transforms.tt_rewrite_tensor_descriptor import TtRewriteTensorDescriptorPass

        return TtRewriteTensorDescriptorPass

    def vector_codegen() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_vector_codegen import MtiaVectorCodegenPass

        return MtiaVectorCodegenPass

    def rematerialize_constants() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_rematerialize_constants import MtiaRematerializeConstantsPass

        return MtiaRematerializeConstantsPass

    def rematerialize_index_tiles() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_rematerialize_index_tiles import MtiaRematerializeIndexTilesPass

        return MtiaRematerializeIndexTilesPass

    def effective_shape() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_effective_shape import MtiaEffectiveShapePass

        return MtiaEffectiveShapePass

    def software_pipeline() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_software_pipeline import MtiaSoftwarePipelinePass

        return MtiaSoftwarePipelinePass

    def cb_sizing() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_cb_sizing import MtiaCbSizingPass

        return MtiaCbSizingPass

    def pe_mapping() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_pe_mapping import MtiaPeMappingPass

        return MtiaPeMappingPass

    def sub_tile() -> type[ModulePass]:
        from mtia_xdsl.transforms.mtia_sub_tile import MtiaSubTilePass

        return MtiaSubTilePass

    return {
        "mtia-sub-tile": sub_tile,
        "mtia-vector-codegen": vector_codegen,
        "mtia-effective-shape": effective_shape,
        "mtia-rematerialize-constants": rematerialize_constants,
        "mtia-rematerialize-index-tiles": rematerialize_index_tiles,
        "mtia-software-pipeline": software_pipeline,
        "mtia-cb-sizing": cb_sizing,
        "mtia-pe-mapping": pe_mapping,
        "tt-inline": tt_inline,
        "tt-rewrite-tensor-descriptor-to-pointer": tt_rewrite_tensor_descriptor,
        "tt-lift-early-returns": tt_lift_early_returns,
        "convert-tt-to-mtia": convert_tt_to_mtia,
        "mtia-cb-bufferize": cb_bufferize,
        "test-mtia-memory-access": test_memory_access,
        "test-mtia-cb-liveness": test_cb_liveness,
        "mtia-cb-allocate": cb_allocate,
        "mtia-set-target": set_target,
    }
