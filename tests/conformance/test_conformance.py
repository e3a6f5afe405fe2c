"""Conformance corpus: each kernel op for op against libtriton's TTIR, and run through the tt reference
interpreter and the machine model, both compared with Triton's interpreter (or the case's torch reference
where Triton's interpreter is wrong; the case says why).

Each run check takes the seeded launches `refresh_gaps.py` uses (so a recorded gap fails reliably) and then
hypothesis-drawn ones (derandomized, so a run is reproducible; no shrinking, so a known gap stays cheap).
Known gaps (known_gaps.py) are xfail(strict=True): a fix shows up as XPASS.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from checks import SEEDS, check_machine, check_tt, check_ttir, example_launch
from corpus import all_cases
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from known_gaps import GAPS
from spec import Case, HypothesisDraw, Launch

CASES = all_cases()

settings.register_profile(
    "conformance",
    max_examples=2,
    deadline=None,
    database=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
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


def _seeded_then_drawn(case: Case, check: Callable[[Case, Launch], None]) -> None:
    for seed in SEEDS:
        check(case, example_launch(case, seed))

    @CONFORMANCE
    @given(data=st.data())
    def drawn(data: st.DataObject) -> None:
        check(case, case.build(HypothesisDraw(data)))

    drawn()


def test_corpus_size() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize("name", _params("ttir"))
def test_ttir_matches_upstream(name: str) -> None:
    check_ttir(CASES[name])


@pytest.mark.parametrize("name", _params("tt"))
def test_tt_interpreter(name: str) -> None:
    _seeded_then_drawn(CASES[name], check_tt)


@pytest.mark.parametrize("name", _params("machine"))
def test_machine_model(name: str) -> None:
    _seeded_then_drawn(CASES[name], check_machine)
