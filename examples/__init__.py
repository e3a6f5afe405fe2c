"""Example Triton kernels, written exactly as for a GPU (tutorial style), run on MTIA-2i."""
