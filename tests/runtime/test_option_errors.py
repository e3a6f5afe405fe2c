"""Bad compile options are a ValueError naming the option, raised by mtia_xdsl.compile (not a pass failure later)."""

import pytest

import mtia_xdsl
from examples import vector_add


def test_an_unknown_machine_preset_names_the_option_and_the_presets():
    with pytest.raises(ValueError, match=r"machine must be one of 'mtia2i', 'small_test', got 'mtia3'"):
        mtia_xdsl.compile(vector_add.add_kernel, options={"machine": "mtia3"})
