"""mtia_xdsl.transforms.dce.region_dce erases exactly what xDSL's region_dce erases."""

from xdsl.parser import Parser
from xdsl.transforms.dead_code_elimination import region_dce as xdsl_region_dce

from mtia_xdsl.dialects import make_context
from mtia_xdsl.transforms.dce import region_dce

# dead: %dead (a pure chain), %unused_loop (a loop whose only result is unused and whose body is pure),
# %d2 (used only by the dead %d3); live: the store, the loop feeding it and everything they read,
# including a value defined above the loop and read inside it.
TEXT = """
func.func @k(%p: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %f1 = arith.constant 1.0 : f32
  %dead = arith.addi %n, %c1 : i32
  %d2 = arith.muli %dead, %dead : i32
  %d3 = arith.subi %d2, %c1 : i32
  %outside = arith.addf %f1, %f1 : f32
  %unused_loop = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0) -> (i32) : i32 {
    %b = arith.addi %a, %c1 : i32
    scf.yield %b : i32
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %f1) -> (f32) : i32 {
    %unused_in_body = arith.mulf %acc, %acc : f32
    %next = arith.addf %acc, %outside : f32
    scf.yield %next : f32
  }
  tt.store %p, %sum : !tt.ptr<f32>
  func.return
}
"""


def _module():
    return Parser(make_context(), TEXT).parse_module()


def test_region_dce_erases_what_xdsl_erases() -> None:
    ours, theirs = _module(), _module()
    before = str(ours)
    changed_ours = region_dce(ours.body)
    changed_theirs = xdsl_region_dce(theirs.body)
    assert str(ours) == str(theirs)
    assert changed_ours and changed_theirs
    assert "%dead" not in str(ours) and "%unused_in_body" not in str(ours) and str(ours) != before
    assert "%outside" in str(ours) and "tt.store" in str(ours)


def test_region_dce_reports_no_change_on_live_code() -> None:
    module = _module()
    region_dce(module.body)
    text = str(module)
    assert region_dce(module.body) is False
    assert str(module) == text
