// RUN: mtia-opt %s -t mlir | filecheck %s --check-prefix=MLIR
// RUN: not mtia-opt %s -t x86-asm 2>&1 | filecheck %s --check-prefix=OTHER

// `-t` offers the targets of mtia_xdsl.backend.get_all_targets ("mlir" prints the module, mtia-cpp and mtia-llvm emit code); xDSL's other
// targets, which do not translate tt or mtia ops, are not offered.
// MLIR:      builtin.module {
// MLIR-NEXT:   tt.func public @k() {
// MLIR-NEXT:     tt.return
// OTHER:     invalid choice: 'x86-asm' (choose from mlir, mtia-cpp, mtia-llvm)
tt.func public @k() {
  tt.return
}
