"""Runtime: the `mtia_xdsl.compile` API, kernel launching, and the Triton backend plugin `cpu`.

Modules: `api` (compile, CompiledKernel), `errors` (the OutOfResources subclasses), `launch` (arguments
and grids), `binary` (the plugin's kernel binary), `toolchain` (frontend, pipeline and machine entry
points), `triton_backend` (the Triton compiler backend and driver). The options live in `mtia_xdsl.options`.
"""
