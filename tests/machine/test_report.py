"""Report and trace: roofline invariant, busy fractions, traffic, text and dict output, calibration."""

import importlib.util
import itertools
import json
import random
from pathlib import Path

import pytest

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MTIA2I, SMALL_TEST
from mtia_xdsl.machine.report import Report, RooflineViolation, build_report
from mtia_xdsl.machine.timing import simulate
from mtia_xdsl.machine.trace import chrome_trace, write_chrome_trace

ROOT = Path(__file__).resolve().parents[2]


def stream_program(pid, n, tile=8192, depth=2, elems=2048, lut=False):
    """load -> SE -> store per tile, loads issued `depth` ahead."""

    def load(k):
        return Command(
            Engine.DMA,
            "dma_load",
            "k.py:3:8",
            (),
            (SlotRef(0, k),),
            global_read_bytes=tile,
            global_ranges=((pid * n * tile + k * tile, tile),),
        )

    cmds = [load(k) for k in range(min(depth, n))]
    for k in range(n):
        cmds.append(
            Command(Engine.SE, "se_compute", "k.py:4:12", (SlotRef(0, k),), (SlotRef(1, k),), elems=elems, lut=lut)
        )
        cmds.append(Command(Engine.DMA, "dma_store", "k.py:5:4", (SlotRef(1, k),), (), global_write_bytes=tile))
        if k + depth < n:
            cmds.append(load(k + depth))
    return ProgramTrace((pid, 0, 0), cmds, {0: depth, 1: depth}, {0: tile, 1: tile})


def random_program(rng, pid):
    """A random but well-formed mix of DMA, DPE, SE, VEC, RE, MLU and scalar commands."""
    cmds, seq = [], 0
    for _ in range(rng.randint(1, 25)):
        nbytes = rng.choice([32, 100, 4096, 65536])
        cmds.append(
            Command(
                Engine.DMA,
                "dma_load",
                "r.py:1:1",
                (),
                (SlotRef(0, seq),),
                global_read_bytes=nbytes,
                descriptors=rng.randint(1, 64),
                scalar_instrs=rng.randint(0, 50),
                global_ranges=((rng.randrange(0, 1 << 20, 32), nbytes),),
            )
        )
        engine = rng.choice([Engine.DPE, Engine.SE, Engine.VEC, Engine.RE, Engine.MLU, Engine.SCALAR])
        cmds.append(
            Command(
                engine,
                "op",
                "r.py:2:1",
                (SlotRef(0, seq),),
                (SlotRef(1, seq),),
                elems=rng.randint(0, 100_000),
                macs=rng.randint(0, 10**7),
                dtype=rng.choice(["bf16", "i8", "f32"]),
                dpe_passes=rng.choice([1, 3]),
                global_read_bytes=4 if engine is Engine.SCALAR else 0,
                scalar_blocking=rng.random() < 0.1,
            )
        )
        cmds.append(Command(Engine.DMA, "dma_store", "r.py:3:1", (SlotRef(1, seq),), (), global_write_bytes=nbytes))
        seq += 1
    return ProgramTrace((pid, 0, 0), cmds, {0: rng.randint(1, 3), 1: rng.randint(1, 3)}, {0: 4096, 1: 4096})


@pytest.mark.parametrize("placement", ["dram", "sram", "llc"])
def test_random_kernels_never_beat_their_roofline(placement):
    rng = random.Random(placement)
    cfg = SMALL_TEST.replace(global_placement=placement)
    for _ in range(8):
        programs = [random_program(rng, p) for p in range(rng.randint(1, 9))]
        report = Report.from_timeline(simulate(programs, cfg))
        assert 0.0 < report.achieved_fraction <= 1.0
        assert report.roofline_bound_cycles <= report.total_cycles


def test_memory_bound_stream_report():
    cfg = MTIA2I.replace(global_placement="dram")
    timeline = simulate([stream_program(p, 16) for p in range(64)], cfg)
    report = Report.from_timeline(timeline, "stream")
    assert report.roofline_limiter == "dram"
    assert report.achieved_fraction > 0.9
    assert report.dram_read_bytes == report.dram_write_bytes == 64 * 16 * 8192
    assert report.sram_read_bytes == 0
    assert report.pes_used == 64 and report.programs == 64
    assert report.achieved_dram_gb_per_s < 204.8 * cfg.dram_ecc_efficiency
    assert report.engine_busy_used["dma"] > 0.9
    assert report.engine_busy_used["se"] < 0.1


def test_busy_fractions_over_used_pes_and_chip():
    report = Report.from_timeline(simulate([stream_program(0, 8)], MTIA2I))
    for engine, used in report.engine_busy_used.items():
        assert 0.0 <= used <= 1.0
        assert report.engine_busy_chip[engine] == pytest.approx(used / 64)
    assert report.engine_busy_used["dma"] > report.engine_busy_used["se"] > 0
    assert report.engine_busy_used["dpe"] == 0


def test_llc_report_splits_dram_and_sram():
    cfg = MTIA2I.replace(global_placement="llc")
    first = stream_program(0, 4)
    again = stream_program(0, 4)  # the same addresses: every read hits the LLC
    report = Report.from_timeline(simulate([first, again], cfg))
    assert report.dram_read_bytes == report.sram_read_bytes == 4 * 8192
    assert report.dram_write_bytes == 2 * 4 * 8192  # stores write through


def test_ls_high_water_against_capacity():
    """The report shows the largest LS footprint of any PE next to the capacity (timing refuses overflow)."""
    prog = stream_program(0, 2)
    prog.cb_tile_bytes = {0: 40 * 1024, 1: 1024}
    report = Report.from_timeline(simulate([prog], MTIA2I))
    assert report.ls_high_water_bytes == 2 * 40 * 1024 + 2 * 1024
    assert report.ls_high_water_per_pe == {0: report.ls_high_water_bytes}
    assert report.ls_capacity_bytes == MTIA2I.ls_bytes and not report.warnings
    assert "LS high-water 82.00 KiB of 384.00 KiB per PE (21.4 %, largest PE)" in report.format()


def test_format_and_to_dict():
    report = Report.from_timeline(simulate([stream_program(p, 4) for p in range(3)], SMALL_TEST), "stream")
    text = report.format()
    for needle in (
        "stream on small_test",
        "cycles",
        "roofline",
        "achieved",
        "dma",
        "DRAM",
        "SRAM",
        "LS high-water",
    ):
        assert needle in text
    data = json.loads(json.dumps(report.to_dict()))
    assert data["total_cycles"] == report.total_cycles
    assert data["engine_busy_used"]["se"] == report.engine_busy_used["se"]
    assert report.time_us == pytest.approx(report.total_cycles / 1.35e3, rel=1e-3)


def test_chrome_trace_has_one_track_per_engine_and_no_overlaps(tmp_path):
    timeline = simulate([stream_program(p, 6) for p in range(2)], MTIA2I)
    path = write_chrome_trace(timeline, tmp_path / "t.json")
    data = json.loads(path.read_text())
    events = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert len(events) == len(timeline.spans)
    assert {e["name"] for e in events} == {"dma_load", "dma_store", "se_compute"}
    assert all(e["args"]["loc"].startswith("k.py:") for e in events)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in data["traceEvents"] if e["name"] == "thread_name"}
    assert {"dma", "se"} <= set(names.values())
    by_track = {}
    for e in events:
        by_track.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_track.values():
        spans.sort()
        assert all(a[1] <= b[0] + 1e-9 for a, b in itertools.pairwise(spans))
    assert chrome_trace(timeline) == data


def _calibrate_module():
    spec = importlib.util.spec_from_file_location("calibrate", ROOT / "benchmarks" / "calibrate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_calibration_sram_gemm_reaches_the_s1_efficiency():
    _, report = _calibrate_module().sram_gemm(MTIA2I)
    assert report.roofline_limiter == "dpe"
    assert report.achieved_tflops / 177 > 0.92
    assert report.achieved_fraction <= 1.0


def test_calibration_dram_gemm_is_dram_bound_small_n():
    _, report = _calibrate_module().dram_gemm(MTIA2I, n=4096)
    assert report.roofline_limiter == "dram"
    assert report.achieved_fraction > 0.85


def test_build_report_refuses_a_run_faster_than_its_roofline():
    """A synthetic timeline claiming fewer cycles than its DRAM traffic needs is an internal model error."""
    cfg = MTIA2I.replace(global_placement="dram")
    timeline = simulate([stream_program(p, 4) for p in range(64)], cfg)
    honest = build_report(timeline, "stream")
    assert honest.roofline_limiter == "dram" and honest.achieved_fraction <= 1.0
    timeline.total_cycles = honest.roofline_bound_cycles * 0.9
    with pytest.raises(RooflineViolation, match=r"kernel stream simulated in .* faster than its dram roofline"):
        build_report(timeline, "stream")
    timeline.total_cycles = honest.roofline_bound_cycles * (1 - 1e-9)  # float rounding is tolerated
    assert build_report(timeline, "stream").achieved_fraction == pytest.approx(1.0)


def test_report_names_the_config_and_its_overrides():
    cfg = MTIA2I.replace(dram_ecc_efficiency=0.85, global_placement="dram")
    report = Report.from_timeline(simulate([stream_program(0, 4)], cfg), "stream")
    assert report.chip == "mtia2i"
    assert report.config_overrides == {"dram_ecc_efficiency": 0.85, "global_placement": "dram"}
    text = report.format()
    assert "overridden fields: dram_ecc_efficiency=0.85, global_placement='dram'" in text
    plain = Report.from_timeline(simulate([stream_program(0, 4)], SMALL_TEST))
    assert plain.config_overrides == {} and "overridden fields: none" in plain.format()


def test_report_explains_itself():
    report = Report.from_timeline(simulate([stream_program(p, 4) for p in range(8)], MTIA2I), "stream")
    text = report.format()
    for needle in (
        f"{report.total_cycles:,} cycles = {report.time_us:.3f} us",
        "busy (8 PEs used)",
        "32 B granules",
        f"{report.dram_transferred_bytes / 32:,.0f} granules",
        "LS high-water 32.00 KiB of 384.00 KiB per PE",
        f"{report.roofline_limiter}-bound",
        f"achieved {100 * report.achieved_fraction:.1f} % of the roofline",
        "roofline = the largest lower bound",
    ):
        assert needle in text, needle
    assert report.ops == report.se_elems == 8 * 4 * 2048
    assert report.memory_level == "dram"
    assert report.intensity_ops_per_byte == pytest.approx(report.ops / report.dma_dram_bytes)
    assert report.achieved_ops_per_s == pytest.approx(report.ops / (report.total_cycles / 1.35e9))


def test_one_pe_streaming_is_bound_by_its_dma_ports_not_the_chip():
    """One program alone cannot use the chip's DRAM bandwidth: its PE's read port (64 B/cycle) bounds it."""
    cfg = MTIA2I.replace(global_placement="dram")
    report = build_report(simulate([stream_program(0, 32, depth=8)], cfg), "one_pe")
    terms = report.roofline_terms_cycles
    assert report.roofline_limiter == "dma"
    assert terms["dma"] >= 32 * 8192 / cfg.dma_read_bytes_per_cycle > terms["dram"]
    assert 0.8 < report.achieved_fraction <= 1.0
    assert "dma-bound (the busiest PE's DMA" in report.format()


def test_scalar_issue_is_a_named_bound():
    """A program whose scalar core runs long stretches of instructions between commands is scalar-bound."""
    prog = stream_program(0, 8)
    for c in prog.commands:
        c.scalar_instrs = 5000
    report = build_report(simulate([prog], MTIA2I), "scalar_heavy")
    assert report.roofline_limiter == "scalar"
    assert report.roofline_terms_cycles["scalar"] >= 5000 * len(prog.commands) * MTIA2I.scalar_cycles_per_instr
    assert 0.9 < report.achieved_fraction <= 1.0


def test_hot_lines_attribute_command_cycles_and_bytes_to_source_lines():
    timeline = simulate([stream_program(p, 4) for p in range(3)], MTIA2I)
    report = build_report(timeline, "stream")
    lines = {x.loc: x for x in report.hot_lines}
    assert set(lines) == {"k.py:3", "k.py:4", "k.py:5"}  # columns dropped: one row per source line
    assert lines["k.py:3"].global_bytes == 3 * 4 * 8192 and lines["k.py:3"].engines == ("dma",)
    assert lines["k.py:4"].global_bytes == 0 and lines["k.py:4"].engines == ("se",)
    assert [x.commands for x in report.hot_lines] == [12, 12, 12]
    for loc, x in lines.items():
        spans = [s for s in timeline.spans if s.loc.startswith(loc + ":")]
        assert x.cycles == pytest.approx(sum(s.end_cycle - s.start_cycle for s in spans))
    assert [x.cycles for x in report.hot_lines] == sorted((x.cycles for x in report.hot_lines), reverse=True)
    assert "hot lines" in report.format()
    events = [e for e in chrome_trace(timeline)["traceEvents"] if e["ph"] == "X"]
    assert {e["args"]["line"] for e in events} == set(lines)
    for loc, x in lines.items():  # each trace event carries its command's bytes: they add up to the line's
        mine = [e["args"] for e in events if e["args"]["line"] == loc]
        assert sum(a["global_bytes"] for a in mine) == x.global_bytes and sum(a["ls_bytes"] for a in mine) == x.ls_bytes


def test_deferred_fields_read_as_computed_at_build_and_pickle_as_values():
    import copy
    import pickle

    from mtia_xdsl.machine.report import _busy_fractions

    timeline = simulate([stream_program(p, 4) for p in range(3)], MTIA2I)
    report = build_report(timeline, "stream")
    deferred = ("engine_busy_used", "engine_busy_chip", "hot_lines")
    assert all(type(report.__dict__[name]).__name__ == "_Deferred" for name in deferred)  # not computed yet
    shallow = copy.copy(report)
    used, chip = _busy_fractions(timeline, timeline.pes_used)
    assert pickle.loads(pickle.dumps(report.__dict__["engine_busy_used"])) == used  # pickled as its value
    assert report.engine_busy_used == used and report.engine_busy_chip == chip
    assert report.hot_lines == timeline.line_costs() and report.hot_lines
    assert report.__dict__["hot_lines"] is report.hot_lines  # computed once, then kept
    assert shallow == report and report.to_dict()["engine_busy_chip"] == chip
    report.hot_lines = []
    assert report.hot_lines == [] and shallow.hot_lines


def test_full_timeline_busy_cycles_equal_the_totals_only_ones():
    programs = [stream_program(p, 4) for p in range(5)]
    full = simulate(programs, MTIA2I)
    totals = simulate(programs, MTIA2I, keep_commands=False)
    assert full.busy_totals is None and totals.busy_totals is not None
    assert full.engine_busy_cycles == totals.engine_busy_cycles and full.engine_busy_cycles


def test_a_report_with_hot_lines_deep_copies_and_pickles():
    """LineCost and CommandSpan are frozen dataclasses of the compiled timing model; copy and pickle rebuild
    them (they used to raise FrozenInstanceError in the compiled build)."""
    import copy
    import pickle

    timeline = simulate([stream_program(p, 4) for p in range(3)], MTIA2I)
    assert copy.deepcopy(timeline.spans[:2]) == timeline.spans[:2]  # CommandSpan: frozen as well
    report = build_report(timeline, "stream")
    assert report.hot_lines
    assert copy.deepcopy(report).hot_lines == report.hot_lines
    again = pickle.loads(pickle.dumps(report))
    assert again == report and again.hot_lines[0].engines == report.hot_lines[0].engines
