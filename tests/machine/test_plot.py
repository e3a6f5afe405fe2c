"""Roofline plot: a PNG with one point per kernel, roofs and ceilings from MachineConfig."""

import pytest

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MTIA2I
from mtia_xdsl.machine.plot import plot_roofline, roofs
from mtia_xdsl.machine.report import Report
from mtia_xdsl.machine.timing import simulate

pytest.importorskip("matplotlib")  # the plot extra; mtia_xdsl.machine.plot imports it only when drawing


def _program(pid: int, elems: int, macs: int) -> ProgramTrace:
    load = Command(
        Engine.DMA,
        "dma_load",
        "k.py:1:1",
        (),
        (SlotRef(0, 0),),
        global_read_bytes=8192,
        global_ranges=((pid * 8192, 8192),),
    )
    engine = Engine.DPE if macs else Engine.SE
    work = Command(engine, "op", "k.py:2:1", (SlotRef(0, 0),), (SlotRef(1, 0),), elems=elems, macs=macs, dtype="bf16")
    store = Command(Engine.DMA, "dma_store", "k.py:3:1", (SlotRef(1, 0),), (), global_write_bytes=8192)
    return ProgramTrace((pid, 0, 0), [load, work, store], {0: 1, 1: 1}, {0: 8192, 1: 8192})


def _report(name: str, elems: int, macs: int) -> Report:
    return Report.from_timeline(simulate([_program(p, elems, macs) for p in range(16)], MTIA2I), name)


def test_plot_roofline_writes_a_png_with_one_point_per_kernel_and_panel(tmp_path):
    reports = [_report("stream", 2048, 0), _report("gemm", 0, 1 << 22), _report("copy", 0, 0)]
    out = plot_roofline(reports, MTIA2I, tmp_path / "roofline.png")
    data = out.path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    # "copy" does no ops: nothing to plot; FLOPs and elements get their own panels (units differ)
    assert [(p.label, p.panel) for p in out.points] == [("gemm", "dpe"), ("stream", "elements")]
    gemm, stream = out.points
    assert gemm.intensity_ops_per_byte > stream.intensity_ops_per_byte
    assert stream.achieved_ops_per_s == pytest.approx(reports[0].achieved_ops_per_s)
    ceiling = {"dpe": out.ceilings_ops_per_s["DPE bf16"], "elements": out.ceilings_ops_per_s["SE"]}
    for point in out.points:  # every kernel lies under the roofs and its panel's ceiling
        roof = min(point.intensity_ops_per_byte * out.roofs_bytes_per_s["DRAM"], ceiling[point.panel])
        assert point.achieved_ops_per_s <= roof * (1 + 1e-6)
    assert len(out.figure.axes) == 2
    for ax, panel in zip(out.figure.axes, ("dpe", "elements"), strict=True):
        labels = ax.get_legend_handles_labels()[1]  # kernels are named in a legend, not drawn over each other
        assert [label.split(" (")[0] for label in labels if "% of roofline" in label] == [
            p.label for p in out.points if p.panel == panel
        ]
        assert not ax.texts


def test_the_roofline_benchmark_writes_outside_the_working_tree():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "benchmarks" / "roofline.py").read_text()
    assert 'default="roofline.png"' not in text and "tempfile.gettempdir()" in text


@pytest.mark.parametrize("config", [MTIA2I, MTIA2I.replace(pe_rows=2, clock_hz=1.0e9, se_elems_per_cycle=64)])
def test_roofs_come_from_the_config(config):
    memory, engines = roofs(config)
    hz, pes = config.clock_hz, config.n_pes
    assert engines["DPE bf16"] == pytest.approx(2 * config.dpe_bf16_macs_per_cycle * pes * hz)  # 2 flops per MAC
    assert engines["SE"] == pytest.approx(config.se_elems_per_cycle * pes * hz)
    assert memory["DRAM"] == pytest.approx(config.dram_bytes_per_cycle * hz)
    assert memory["SRAM"] == pytest.approx(config.sram_bytes_per_cycle * hz)
    assert memory["LS"] == pytest.approx(config.ls_bytes_per_cycle * pes * hz)
