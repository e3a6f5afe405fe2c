"""Chrome/Perfetto trace of engine activity: one process per PE, one track per engine (and overlap lane).

Open the written JSON in https://ui.perfetto.dev or chrome://tracing. Timestamps are microseconds of
model time; each event carries the command kind, the kernel location (and its "file:line", the key of the
report's hot lines) and the cycles.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mtia_xdsl.machine.commands import Engine
from mtia_xdsl.machine.timeline import command_bytes, line_key
from mtia_xdsl.machine.timing import CommandSpan, Timeline

_ENGINE_ORDER = {e: k for k, e in enumerate(Engine)}
_LANES_PER_ENGINE = 100


def chrome_trace(timeline: Timeline) -> dict[str, Any]:
    """Return the trace as a Chrome trace-event JSON object (`{"traceEvents": [...]}`).

    Units: `ts` and `dur` in microseconds. Commands that overlap on one engine (DMA commands in flight)
    go to separate lanes "dma", "dma #2", ... so every track is a proper nesting-free timeline. When the
    LLC's write-behind of stores to DRAM outlasts every command, a process "LLC -> DRAM" (pid `n_pes`)
    shows that tail as one async "write_behind" slice (phases "b" and "e") up to the kernel's end.
    """
    cfg = timeline.config
    us_per_cycle = 1e6 / cfg.clock_hz
    events: list[dict[str, Any]] = []
    threads: set[tuple[int, int]] = set()
    by_track: dict[tuple[int, Engine], list[CommandSpan]] = {}
    for span in timeline.spans:
        by_track.setdefault((span.pe, span.engine), []).append(span)
    for (pe, engine), spans in sorted(by_track.items(), key=lambda kv: (kv[0][0], _ENGINE_ORDER[kv[0][1]])):
        lane_ends: list[float] = []
        for span in sorted(spans, key=lambda s: (s.start_cycle, s.end_cycle, s.program, s.index)):
            lane = next((k for k, end in enumerate(lane_ends) if end <= span.start_cycle), len(lane_ends))
            if lane == len(lane_ends):
                lane_ends.append(span.end_cycle)
            else:
                lane_ends[lane] = span.end_cycle
            tid = _ENGINE_ORDER[engine] * _LANES_PER_ENGINE + min(lane, _LANES_PER_ENGINE - 1)
            threads.add((pe, tid))
            prog = timeline.programs[span.program] if timeline.programs else None
            program = prog.program_id if prog is not None else span.program
            global_bytes, ls_bytes = command_bytes(prog.commands[span.index]) if prog is not None else (0.0, 0.0)
            events.append(
                {
                    "name": span.kind,
                    "cat": engine.value,
                    "ph": "X",
                    "pid": pe,
                    "tid": tid,
                    "ts": span.start_cycle * us_per_cycle,
                    "dur": max(0.0, span.end_cycle - span.start_cycle) * us_per_cycle,
                    "args": {
                        "loc": span.loc,
                        "line": line_key(span.loc),
                        "program_id": list(program) if isinstance(program, tuple) else program,
                        "command": span.index,
                        "issue_cycle": span.issue_cycle,
                        "start_cycle": span.start_cycle,
                        "end_cycle": span.end_cycle,
                        "global_bytes": global_bytes,
                        "ls_bytes": ls_bytes,
                    },
                }
            )
    meta = _metadata(timeline, threads)
    last = max((s.end_cycle for s in timeline.spans), default=0.0)
    if timeline.write_behind_end_cycle > last:  # the kernel's tail: the LLC writes the last stores on to DRAM
        pid = cfg.n_pes
        meta.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": "LLC -> DRAM"}})
        meta.append({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}})
        tail = {"name": "write_behind", "cat": "dram", "id": 1, "pid": pid, "tid": 0}
        events.append({**tail, "ph": "b", "ts": last * us_per_cycle, "args": {"start_cycle": last}})
        events.append({**tail, "ph": "e", "ts": timeline.write_behind_end_cycle * us_per_cycle,
                       "args": {"end_cycle": timeline.write_behind_end_cycle}})  # fmt: skip
    return {"traceEvents": meta + events, "displayTimeUnit": "ns"}


def write_chrome_trace(timeline: Timeline, path: str | Path) -> Path:
    """Write the Chrome/Perfetto trace JSON of `timeline` to `path` and return the path."""
    out = Path(path)
    out.write_text(json.dumps(chrome_trace(timeline)))
    return out


def _metadata(timeline: Timeline, threads: set[tuple[int, int]]) -> list[dict[str, Any]]:
    cfg = timeline.config
    engines = list(Engine)
    meta: list[dict[str, Any]] = []
    for pe in sorted({pe for pe, _ in threads}):
        row, col = cfg.pe_coords(pe)
        meta.append({"name": "process_name", "ph": "M", "pid": pe, "args": {"name": f"PE {pe} ({row},{col})"}})
        meta.append({"name": "process_sort_index", "ph": "M", "pid": pe, "args": {"sort_index": pe}})
    for pe, tid in sorted(threads):
        engine, lane = engines[tid // _LANES_PER_ENGINE], tid % _LANES_PER_ENGINE
        name = engine.value if lane == 0 else f"{engine.value} #{lane + 1}"
        meta.append({"name": "thread_name", "ph": "M", "pid": pe, "tid": tid, "args": {"name": name}})
        meta.append({"name": "thread_sort_index", "ph": "M", "pid": pe, "tid": tid, "args": {"sort_index": tid}})
    return meta
