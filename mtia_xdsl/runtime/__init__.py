"""Runtime: the `mtia_xdsl.compile` API, kernel launching, and the Triton backend plugin `cpu`.

Modules: `api` (compile, CompiledKernel), `errors` (LocalStorageOutOfResources), `launch` (arguments and grids),
`binary` (the plugin's kernel binary), `toolchain` (frontend, pipeline and machine entry points),
`triton_backend` (the Triton compiler backend and driver).
"""
