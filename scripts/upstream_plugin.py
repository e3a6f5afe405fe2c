"""pytest plugin for running upstream Triton's unit tests from a checkout (see scripts/upstream_tests.sh).

Upstream's tests expect fixtures from their own conftest (a `--device` option and `device`,
`fresh_knobs`, `fresh_triton_cache`, `with_allocator`); a checkout of the python/ subtree may lack it, so
this plugin provides the same fixtures (skipped where the checkout's own conftest already defines them)
plus what the comparison needs:

- `--mtia-sample N`: keep N of the collected tests, chosen by a hash of the test id (the same tests in
  every run and mode, independent of collection order);
- `--mtia-results PATH`: write {test id: [outcome, one-line reason]} as JSON, outcome one of
  passed / failed / skipped;
- `--mtia-timeout S`: fail a test that runs longer than S seconds (SIGALRM; 0 = no limit).

Load it with `-p upstream_plugin` and `scripts/` on PYTHONPATH.
"""

from __future__ import annotations

import hashlib
import json
import signal
import tempfile
from typing import Any

import pytest

_OUTCOMES: dict[str, list[str]] = {}
"""Test id -> [outcome, one-line reason] of this session."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mtia_xdsl upstream comparison")
    group.addoption("--mtia-sample", type=int, default=0, help="keep this many tests (hash of the id)")
    group.addoption("--mtia-results", default="", help="write each test's outcome as JSON here")
    group.addoption("--mtia-timeout", type=float, default=0.0, help="per-test time limit in seconds")


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> Any:
    """Add `--device` once the checkout's conftest (python/test/conftest.py) had its turn to define it: this
    plugin loads first (-p), and a second definition there fails that conftest ("already added")."""
    yield
    try:
        parser.addoption("--device", action="store", default="cpu")
    except ValueError:  # the checkout's conftest defines it
        pass


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "interpreter: the test runs under Triton's interpreter")


def _sample_key(nodeid: str) -> str:
    return hashlib.sha1(nodeid.encode()).hexdigest()


@pytest.hookimpl(trylast=True)  # after -m and -k deselection
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    n = config.getoption("--mtia-sample")
    if not n or n >= len(items):
        return
    keep = set(sorted((item.nodeid for item in items), key=_sample_key)[:n])
    deselected = [item for item in items if item.nodeid not in keep]
    items[:] = [item for item in items if item.nodeid in keep]
    config.hook.pytest_deselected(items=deselected)


class _Timeout(Exception):
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    seconds = item.config.getoption("--mtia-timeout")
    if not seconds:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _Timeout(f"test ran longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # skip: (file, line, reason)
        return str(longrepr[2])[:300]
    crash = getattr(getattr(longrepr, "reprcrash", None), "message", None)
    text = crash if crash is not None else str(longrepr)
    return text.strip().splitlines()[0][:300] if text.strip() else ""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    outcomes = _OUTCOMES
    previous = outcomes.get(report.nodeid)
    if report.when == "call" or report.outcome != "passed":
        if previous is None or previous[0] == "passed":
            outcomes[report.nodeid] = [report.outcome, _reason(report)]
    elif previous is None:
        outcomes[report.nodeid] = ["passed", ""]


_RESULTS_PATH: list[str] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    path = session.config.getoption("--mtia-results")
    if path:
        _RESULTS_PATH.append(path)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    """Rewrite the outcome file after every test, so an interrupted run keeps what it measured."""
    if _RESULTS_PATH:
        with open(_RESULTS_PATH[0], "w") as f:
            json.dump(_OUTCOMES, f, indent=1, sort_keys=True)


# Fixtures upstream's tests use (their conftest's names and meanings); a conftest in the checkout wins.


@pytest.fixture
def device(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--device")


@pytest.fixture
def fresh_triton_cache() -> Any:
    from triton import knobs

    with tempfile.TemporaryDirectory() as tmpdir, knobs.cache.scope(), knobs.runtime.scope():
        knobs.cache.dir = tmpdir
        yield tmpdir


def _fresh_knobs(skipped: set[str] | None) -> Any:
    from triton._internal_testing import _fresh_knobs_impl

    fresh, reset = _fresh_knobs_impl(skipped_attr=skipped) if skipped else _fresh_knobs_impl()
    try:
        yield fresh()
    finally:
        reset()


@pytest.fixture
def fresh_knobs() -> Any:
    yield from _fresh_knobs({"build", "nvidia", "amd"})


@pytest.fixture
def fresh_knobs_including_libraries() -> Any:
    yield from _fresh_knobs(None)


@pytest.fixture
def with_allocator() -> Any:
    import triton
    from triton._internal_testing import default_alloc_fn
    from triton.runtime._allocation import NullAllocator

    triton.set_allocator(default_alloc_fn)
    try:
        yield
    finally:
        triton.set_allocator(NullAllocator())
