"""Conformance corpus: each kernel op for op against libtriton's TTIR, and run on hypothesis-drawn inputs
through the tt reference interpreter and the machine model, both compared with Triton's interpreter (or
the case's torch reference where Triton's interpreter is wrong; the case says why).

Known gaps (tests/conformance/known_gaps.py) are xfail(strict=True): a fix shows up as XPASS.
"""

from __future__ import annotations

import pytest
from checks import check_machine, check_tt, check_ttir
from corpus import all_cases
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from known_gaps import GAPS
from spec import HypothesisDraw

CASES = all_cases()

settings.register_profile(
    "conformance",
    max_examples=2,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a known gap would re-run many times
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CONFORMANCE = settings.get_profile("conformance")


def _params(check: str) -> list[object]:
    params = []
    for name in sorted(CASES):
        gap = GAPS.get(name, {}).get(check)
        marks = [pytest.mark.xfail(strict=True, reason=f"[{gap[0]}] {gap[1]}")] if gap else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.mark.parametrize("name", _params("ttir"))
def test_ttir_matches_upstream(name: str) -> None:
    check_ttir(CASES[name])


@pytest.mark.parametrize("name", _params("tt"))
@CONFORMANCE
@given(data=st.data())
def test_tt_interpreter(name: str, data: st.DataObject) -> None:
    case = CASES[name]
    check_tt(case, case.build(HypothesisDraw(data)))


@pytest.mark.parametrize("name", _params("machine"))
@CONFORMANCE
@given(data=st.data())
def test_machine_model(name: str, data: st.DataObject) -> None:
    case = CASES[name]
    check_machine(case, case.build(HypothesisDraw(data)))
