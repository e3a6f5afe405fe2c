"""mtia_xdsl.utils.lazy_formats: op formats parsed on first use, the same programs as xDSL's eager parse."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from xdsl.dialects import arith, cf, math, scf
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.irdl.declarative_assembly_format import FormatProgram
from xdsl.utils.exceptions import PyRDLOpDefinitionError

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.utils import lazy_formats
from mtia_xdsl.utils.lazy_formats import LazyFormatProgram

ROOT = Path(__file__).resolve().parents[2]


def _formatted_ops() -> list[Any]:
    ops: list[Any] = []
    for dialect in (tt.TT, mtia.MTIA, arith.Arith, math.Math, scf.Scf, cf.Cf):
        defined: list[Any] = list(dialect.operations)
        ops += [op for op in defined if op.get_irdl_definition().assembly_format is not None]
    return ops


def test_every_lazy_program_is_the_eager_one() -> None:
    """Each format of the dialects a compile imports parses, on first use, into xDSL's program for it."""
    eager = lazy_formats._EAGER[0]  # pyright: ignore[reportPrivateUsage]
    ops = _formatted_ops()
    assert len(ops) > 50
    lazy = 0
    for op in ops:
        op_def = op.get_irdl_definition()
        program = op.parse.__func__.__closure__  # the closure get_accessors_from_op_def made holds the program
        held = next(c.cell_contents for c in program if isinstance(c.cell_contents, LazyFormatProgram | FormatProgram))
        if isinstance(held, LazyFormatProgram):
            lazy += 1
            assert held.program() == eager(op_def.assembly_format, op_def), op_def.name
    assert lazy > 50  # imported after install(): the formats are the lazy ones


def _define_bad_op(op_name: str) -> type[IRDLOperation]:
    """Define an op `op_name` whose assembly format does not parse (a dangling `->`)."""

    @irdl_op_definition
    class BadOp(IRDLOperation):
        name = op_name
        x = operand_def()
        r = result_def()
        assembly_format = "$x attr-dict : type($x) ->"

    return BadOp


def test_a_bad_format_of_a_lazy_dialect_fails_at_first_print() -> None:
    op = _define_bad_op("tt.test_bad_format").create(operands=[], result_types=[])
    with pytest.raises(PyRDLOpDefinitionError, match="assembly format"):
        op.print(None)  # type: ignore[arg-type]


def test_a_bad_format_of_another_dialect_fails_at_definition() -> None:
    with pytest.raises(PyRDLOpDefinitionError, match="assembly format"):
        _define_bad_op("mine.test_bad_format")


def test_a_compile_does_not_parse_formats() -> None:
    """Importing the frontend and the passes leaves xDSL's format parser unimported (what makes it cheap)."""
    code = (
        "import sys, mtia_xdsl.frontend, mtia_xdsl.pipeline, mtia_xdsl.transforms.convert_tt_to_mtia; "
        "print('xdsl.irdl.declarative_assembly_format_parser' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "False"
