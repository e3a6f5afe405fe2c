"""Kernel variable names become SSA name hints only where xDSL keeps a non-empty name."""

from mtia_xdsl.frontend.handles import value_name


def test_a_name_xdsl_would_empty_is_no_name() -> None:
    # xDSL drops a trailing `_<digits>`: `_1` (Triton's unpacked `_0, _1 = ...`) would be the empty name,
    # which xDSL then refuses when an op is cloned.
    assert value_name("_1") is None
    assert value_name("x_1") == "x"
    assert value_name("m.strides.0") == "m_strides"
    assert value_name("0x") is None
