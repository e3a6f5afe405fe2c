"""mtia_xdsl's Inductor settings module (`mtia_xdsl.runtime.inductor_config`): its environment variable."""

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(("value", "expected"), [("0", "False"), ("1", "True")])
def test_environment_variable_sets_norm_templates(value: str, expected: str) -> None:
    """MTIA_XDSL_NORM_TEMPLATES=0 turns the norm templates off, 1 on (it overrides the default)."""
    env = {**os.environ, "MTIA_XDSL_NORM_TEMPLATES": value}
    code = "from mtia_xdsl.runtime import inductor_config as c; print(c.norm_templates)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected


def test_environment_variable_other_than_0_or_1_is_refused() -> None:
    """A value torch would keep as a string ("false", which is truthy) is refused with the values to use, instead of
    leaving the templates on against the user's intent."""
    env = {**os.environ, "MTIA_XDSL_NORM_TEMPLATES": "false"}
    code = "from mtia_xdsl.runtime import inductor_config"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert out.returncode != 0
    assert "MTIA_XDSL_NORM_TEMPLATES='false': set it to 1" in out.stderr and "or 0" in out.stderr, out.stderr
