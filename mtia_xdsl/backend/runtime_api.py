"""Facts of the runtime API (runtime/mtia_runtime.h) that both emitters (C++ and LLVM IR) write against."""

MAX_RANK = 4
"""MTIA_MAX_RANK of runtime/mtia_runtime.h: the dimensions of the runtime API's DMA descriptor and of an effective
shape in a compute command's record, for both emitters (`MachineConfig.dma_max_rank`, 4 by default, is the
compiler's limit on the boxes it builds; tests/backend/test_cpp.py checks the header's value)."""
