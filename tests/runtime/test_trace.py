"""The Python trace API: `mtia_xdsl.last_run()` and `.write_trace(path)` on a real launch.

The written Chrome/Perfetto JSON must parse, name one process per PE used and one track per engine
(DMA commands in flight at once get extra lanes "dma #2", ...), and carry every command of the timeline
with its start and duration.
"""

import json
from collections import defaultdict
from typing import Any

import pytest
import torch
import triton

import mtia_xdsl
from examples import softmax, vector_add


@pytest.fixture(autouse=True)
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))


def _launch_softmax() -> Any:
    x = torch.randn(6, 100, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(softmax.softmax(x), torch.softmax(x, dim=1))
    return mtia_xdsl.last_run()


def test_last_run_write_trace_matches_the_timeline(tmp_path: Any) -> None:
    run = _launch_softmax()
    assert run is not None and run.report is mtia_xdsl.last_report()
    path = run.write_trace(tmp_path / "softmax.json")
    data = json.loads(path.read_text())
    events = [e for e in data["traceEvents"] if e["ph"] == "X"]
    timeline = run.timeline
    # the LLC's write-behind of the last stores to DRAM ends the kernel after the last command
    drain = {e["ph"]: e for e in data["traceEvents"] if e["name"] == "write_behind"}
    assert sorted(drain) == ["b", "e"] and drain["b"]["pid"] == timeline.config.n_pes
    assert len(events) == len(timeline.spans) > 0
    us_per_cycle = 1e6 / timeline.config.clock_hz
    spans = {(s.pe, s.program, s.index): s for s in timeline.spans}
    for e in events:
        program = e["args"]["program_id"]
        index = [k for k, p in enumerate(timeline.programs) if list(p.program_id) == program]
        span = spans[(e["pid"], index[0], e["args"]["command"])]
        assert e["cat"] == span.engine.value and e["name"] == span.kind
        assert e["ts"] == pytest.approx(span.start_cycle * us_per_cycle)
        assert e["dur"] == pytest.approx((span.end_cycle - span.start_cycle) * us_per_cycle)
    assert max(e["ts"] + e["dur"] for e in events) == pytest.approx(drain["b"]["ts"])
    assert drain["e"]["ts"] == pytest.approx(timeline.total_cycles * us_per_cycle)


def test_trace_has_one_process_per_pe_and_one_track_per_engine(tmp_path: Any) -> None:
    run = _launch_softmax()
    data = run.chrome_trace()
    meta = [e for e in data["traceEvents"] if e["ph"] == "M"]
    processes = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert processes.pop(run.timeline.config.n_pes, None) == "LLC -> DRAM"  # the write-behind tail
    assert sorted(processes) == run.timeline.pes_used
    assert all(name.startswith(f"PE {pid} (") for pid, name in processes.items())
    tracks: dict[int, list[str]] = defaultdict(list)
    for e in meta:
        if e["name"] == "thread_name":
            tracks[e["pid"]].append(e["args"]["name"])
    engines_per_pe: dict[int, set[str]] = defaultdict(set)
    for span in run.timeline.spans:
        engines_per_pe[span.pe].add(span.engine.value)
    for pe, engines in engines_per_pe.items():
        main_tracks = [t for t in tracks[pe] if "#" not in t]
        assert sorted(main_tracks) == sorted(engines)  # exactly one main track per engine used
        assert all(t.split(" #")[0] in engines for t in tracks[pe])


def test_empty_grid_leaves_no_last_run() -> None:
    out = torch.zeros(64)
    vector_add.add_kernel[(0,)](torch.ones(64), torch.ones(64), out, 64, BLOCK_SIZE=64)
    assert mtia_xdsl.last_run() is None


def test_compile_api_keeps_its_last_run(tmp_path: Any) -> None:
    kernel = mtia_xdsl.compile(vector_add.add_kernel, constexprs={"BLOCK_SIZE": 128})
    x = torch.rand(300)
    out = torch.empty_like(x)
    result = kernel[(triton.cdiv(300, 128),)](x, x, out, 300)
    assert torch.equal(out, 2 * x)
    assert kernel.last_run is not None and kernel.last_run.report is result.report
    data = json.loads(kernel.last_run.write_trace(tmp_path / "add.json").read_text())
    assert sum(e["ph"] == "X" for e in data["traceEvents"]) == len(result.timeline.spans)
