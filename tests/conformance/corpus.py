"""The conformance corpus: every case of every kernels_*.py module, by kernel name."""

from __future__ import annotations

import importlib

from spec import Case

MODULES = (
    "kernels_elementwise",
    "kernels_reduce_scan",
    "kernels_memory",
    "kernels_control",
    "kernels_dtypes",
    "kernels_random",
    "kernels_layout",
)


def all_cases() -> dict[str, Case]:
    """Return every case by kernel name (names are unique across the corpus)."""
    cases: dict[str, Case] = {}
    for module_name in MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name == module_name:
                continue
            raise
        for case in module.CASES:
            if case.name in cases:
                raise ValueError(f"two corpus kernels named {case.name}")
            cases[case.name] = case
    return cases
