// RUN: not mtia-run %s --set dram_latncy_cycles=300 --arg f32:64 --arg 4 2>&1 | filecheck %s --check-prefix=FIELD
// RUN: not mtia-run %s --set ls_bytes=lots --arg f32:64 --arg 4 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not mtia-run %s --set clock_hz --arg f32:64 --arg 4 2>&1 | filecheck %s --check-prefix=FORM
// RUN: not mtia-run %s --set global_placement=hbm --arg f32:64 --arg 4 2>&1 | filecheck %s --check-prefix=CHOICE

// FIELD:  mtia-run: MachineConfig has no field 'dram_latncy_cycles'; did you mean 'dram_latency_cycles'
// VALUE:  mtia-run: MachineConfig field 'ls_bytes' expects an integer (unit: bytes), got 'lots'
// FORM:   mtia-run: --set 'clock_hz': expected FIELD=VALUE
// CHOICE: mtia-run: MachineConfig field 'global_placement' must be one of ('dram', 'sram', 'llc'), got 'hbm'
tt.func public @scale(%x: !tt.ptr<f32>, %n: i32) {
  %v = tt.load %x : !tt.ptr<f32>
  %w = arith.addf %v, %v : f32
  tt.store %x, %w : !tt.ptr<f32>
  tt.return
}
