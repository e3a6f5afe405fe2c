"""mtia_xdsl.compile names a wrong `constexprs` key or a constexpr without a value (found by the breaker)."""

import pytest

import mtia_xdsl
from examples.vector_add import add_kernel

SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}


def test_a_constexpr_position_past_the_parameters_is_a_type_error_naming_it() -> None:
    """It was a bare IndexError ("list index out of range") from inside mtia_xdsl."""
    with pytest.raises(TypeError, match=r"constexprs position 9 .* add_kernel has 5 parameters"):
        mtia_xdsl.compile(add_kernel, None, {9: 128})


def test_a_constexpr_name_that_is_no_parameter_is_named() -> None:
    """It was "no type for parameters ['BLOCK_SIZE']", which did not say that 'BLOCK' was the misspelling."""
    with pytest.raises(TypeError, match=r"constexprs name unknown parameters \['BLOCK'\]"):
        mtia_xdsl.compile(add_kernel, SIG, {"BLOCK": 128})


def test_a_signature_constexpr_without_a_value_says_to_give_it() -> None:
    """It was "AttributeError: 'NoneType' object has no attribute 'dtype'" at a line of the kernel body."""
    with pytest.raises(TypeError, match=r"'BLOCK_SIZE' is constexpr in the signature but has no value"):
        mtia_xdsl.compile(add_kernel, {**SIG, "BLOCK_SIZE": "constexpr"})
