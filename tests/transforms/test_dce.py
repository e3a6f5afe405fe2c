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


def test_per_class_answers_match_xdsl_on_a_lowered_kernel() -> None:
    """dead_without_uses / is_trivially_dead (cached per op class) answer as xDSL's functions on every op of
    a tt module and of its buffer-level program, asked twice (the second answers come from the cache)."""
    from xdsl.transforms.dead_code_elimination import is_trivially_dead as xdsl_is_trivially_dead
    from xdsl.transforms.dead_code_elimination import would_be_trivially_dead

    from examples.vector_add import add_kernel
    from mtia_xdsl.frontend import build_tt_module
    from mtia_xdsl.pipeline import lower
    from mtia_xdsl.transforms.dce import dead_without_uses, is_trivially_dead

    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    tt_module = build_tt_module(add_kernel, {**signature, "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 64})
    program = lower(tt_module.clone())
    ops = [*tt_module.walk(), *program.walk()]
    assert len({type(op) for op in ops}) > 15
    for _ in range(2):
        assert [dead_without_uses(op) for op in ops] == [would_be_trivially_dead(op) for op in ops]
        assert [is_trivially_dead(op) for op in ops] == [xdsl_is_trivially_dead(op) for op in ops]


# A CFG region with a block no branch reaches: xDSL's region_dce only visits blocks reachable from the entry
# block, so it erases the unreachable block (its terminator and side effects included) and everything only it
# used; a user canonicalizing their own CFG functions next to our dialects must get the same.
CFG_TEXT = """
func.func @cfg(%p: !tt.ptr<f32>, %x: f32) {
  %used_only_unreachable = arith.addf %x, %x : f32
  cf.br ^live
^dead_block:
  tt.store %p, %used_only_unreachable : !tt.ptr<f32>
  cf.br ^live
^live:
  tt.store %p, %x : !tt.ptr<f32>
  func.return
}
"""


def test_region_dce_erases_unreachable_blocks_as_xdsl() -> None:
    ours, theirs = (Parser(make_context(), CFG_TEXT).parse_module() for _ in range(2))
    changed_ours = region_dce(ours.body)
    changed_theirs = xdsl_region_dce(theirs.body)
    assert str(ours) == str(theirs)
    assert changed_ours == changed_theirs
    assert str(theirs).count("tt.store") == 1 and "arith.addf" not in str(theirs)


def test_canonicalize_uses_our_sweep_only_inside_the_compile_driver() -> None:
    from xdsl.transforms import canonicalize

    from mtia_xdsl.transforms.dce import canonicalize_with_region_dce

    before = canonicalize.region_dce  # pyright: ignore[reportPrivateImportUsage]
    assert before is not region_dce  # an embedder's canonicalize is xDSL's own
    with canonicalize_with_region_dce():
        with canonicalize_with_region_dce():  # nested (a compile inside a compile) keeps the swap
            assert canonicalize.region_dce is region_dce  # pyright: ignore[reportPrivateImportUsage]
        assert canonicalize.region_dce is region_dce  # pyright: ignore[reportPrivateImportUsage]
    assert canonicalize.region_dce is before  # pyright: ignore[reportPrivateImportUsage]


# Every block reached and every op live: nothing to erase (the walk that finds liveness also tells that all
# blocks were reached, so no count of the ops is needed); an empty block other than the entry one, or a block
# no branch reaches, must still send the region to xDSL's erasing sweep.
ALL_LIVE_CFG_TEXT = """
func.func @cfg(%p: !tt.ptr<f32>, %x: f32, %c: i1) {
  %y = arith.addf %x, %x : f32
  cf.cond_br %c, ^a, ^b
^a:
  tt.store %p, %y : !tt.ptr<f32>
  cf.br ^b
^b:
  func.return
}
"""


def _cfg_pair(text: str):
    return tuple(Parser(make_context(), text).parse_module() for _ in range(2))


def test_region_dce_no_change_on_a_live_cfg_as_xdsl() -> None:
    ours, theirs = _cfg_pair(ALL_LIVE_CFG_TEXT)
    assert region_dce(ours.body) is False
    assert xdsl_region_dce(theirs.body) is False
    assert str(ours) == str(theirs)


def test_region_dce_erases_an_empty_block_as_xdsl() -> None:
    from xdsl.dialects import func
    from xdsl.ir import Block

    ours, theirs = _cfg_pair(ALL_LIVE_CFG_TEXT)
    for module in (ours, theirs):
        body = next(op for op in module.walk() if isinstance(op, func.FuncOp)).body
        body.add_block(Block())  # unreached and empty, as a rewrite can leave one
    assert "^bb" in str(ours) or str(ours).count("^") == 3
    changed_ours = region_dce(ours.body)
    changed_theirs = xdsl_region_dce(theirs.body)
    assert changed_ours is True and changed_theirs is True
    assert str(ours) == str(theirs)


def test_region_dce_on_a_reached_empty_block_as_xdsl() -> None:
    from xdsl.dialects import func

    ours, theirs = _cfg_pair(ALL_LIVE_CFG_TEXT)
    for module in (ours, theirs):
        body = next(op for op in module.walk() if isinstance(op, func.FuncOp)).body
        last = body.last_block
        assert last is not None and last.first_op is not None
        last.first_op.detach()  # ^b, reached from both branches, left empty mid-rewrite
    changed_ours = region_dce(ours.body)
    changed_theirs = xdsl_region_dce(theirs.body)
    assert changed_ours == changed_theirs
    assert str(ours) == str(theirs)
