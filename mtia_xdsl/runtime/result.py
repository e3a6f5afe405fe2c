"""KernelRun: what one launch on the machine model produced (report, timeline, traces), for users.

Wraps the machine's RunResult with the user-facing helpers: the text report and the Chrome/Perfetto
trace of engine activity (one process per PE, one track per engine).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # not imported by a compile without a launch (the timing model's import was ~1/4 of a cold compile)
    from mtia_xdsl.machine.commands import ProgramTrace
    from mtia_xdsl.machine.report import Report
    from mtia_xdsl.machine.timing import Timeline


@dataclass(frozen=True)
class KernelRun:
    """One kernel launch on the machine model: its report, timeline and recorded command traces.

    Example: mtia_xdsl.last_run().write_trace("add.json")  # open in https://ui.perfetto.dev
    """

    report: Report
    timeline: Timeline
    """Every engine command's span (cycles) and the chip totals."""
    traces: list[ProgramTrace]
    """The engine commands each program issued, in program order."""

    @classmethod
    def from_result(cls, result: Any) -> KernelRun | None:
        """Wrap a machine RunResult (anything with report, timeline, traces); None if `result` is None."""
        if result is None:
            return None
        if isinstance(result, KernelRun):
            return result
        return cls(result.report, result.timeline, list(getattr(result, "traces", [])))

    def format(self) -> str:
        """Return the report as a readable text table."""
        return self.report.format()

    def chrome_trace(self) -> dict[str, Any]:
        """Return the Chrome/Perfetto trace-event JSON object of this run (microseconds of model time)."""
        from mtia_xdsl.machine.trace import chrome_trace

        return chrome_trace(self.timeline)

    def write_trace(self, path: str | Path) -> Path:
        """Write the Chrome/Perfetto trace JSON to `path` and return the path.

        Raises: OSError if the file cannot be written.
        """
        from mtia_xdsl.machine.trace import write_chrome_trace

        return write_chrome_trace(self.timeline, path)
