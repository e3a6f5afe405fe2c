"""MachineConfig: presets, validation, derived numbers and the source discipline of config.py."""

import dataclasses
import inspect
import math
import re

import pytest

from mtia_xdsl.machine import config as config_module
from mtia_xdsl.machine.config import MTIA2I, SMALL_TEST, MachineConfig


def test_default_preset_is_mtia2i_with_paper_numbers():
    cfg = MachineConfig.preset("mtia2i")
    assert cfg is MTIA2I
    assert cfg == MachineConfig()
    assert (cfg.pe_rows, cfg.pe_cols, cfg.n_pes) == (8, 8, 64)
    assert cfg.clock_hz == 1.35e9
    assert cfg.ls_bytes == 384 * 1024
    # the per-PE DPE rate reproduces the chip peak of S1 within 0.1 %
    peak = cfg.peak_dpe_bf16_flops_per_cycle * cfg.clock_hz
    assert math.isclose(peak, cfg.gemm_bf16_peak_flops_per_s, rel_tol=1e-3)
    assert math.isclose(2 * cfg.dpe_int8_macs_per_cycle * 64 * cfg.clock_hz, 354e12, rel_tol=1e-3)


def test_small_test_preset():
    cfg = MachineConfig.preset("small_test")
    assert cfg is SMALL_TEST
    assert cfg.n_pes == 4
    assert cfg.ls_bytes < MTIA2I.ls_bytes
    assert cfg.dpe_bf16_macs_per_cycle == MTIA2I.dpe_bf16_macs_per_cycle


def test_unknown_preset_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown machine preset 'mtia3'.*mtia2i.*small_test"):
        MachineConfig.preset("mtia3")


def test_replace_returns_a_validated_copy():
    cfg = MTIA2I.replace(global_placement="sram", pe_rows=4)
    assert cfg.global_placement == "sram" and cfg.n_pes == 32
    assert MTIA2I.global_placement == "llc" and MTIA2I.n_pes == 64
    with pytest.raises(dataclasses.FrozenInstanceError):
        MTIA2I.pe_rows = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"ls_kbytes": 3}, "ls_kbytes"),
        ({"pe_rows": 0}, "pe_rows"),
        ({"pe_cols": -2}, "pe_cols"),
        ({"ls_bytes": 1.5}, "ls_bytes"),
        ({"dma_issue_cycles": True}, "dma_issue_cycles"),
        ({"clock_hz": float("nan")}, "clock_hz"),
        ({"sram_bytes_per_cycle": "fast"}, "sram_bytes_per_cycle"),
        ({"dram_ecc_efficiency": 1.5}, "dram_ecc_efficiency"),
        ({"global_placement": "hbm"}, "global_placement"),
        ({"name": ""}, "name"),
        ({"llc_bytes": 2 * MTIA2I.sram_bytes}, "llc_bytes"),
        ({"dma_granule_bytes": 24}, "dma_granule_bytes"),
        ({"dram_latency_cycles": -1}, "dram_latency_cycles"),
        ({"dma_read_bytes_per_cycle": 0}, "dma_read_bytes_per_cycle"),
    ],
)
def test_replace_rejects_nonsense_naming_the_field(overrides, field):
    with pytest.raises(ValueError, match=re.escape(repr(field))):
        MTIA2I.replace(**overrides)


def test_latencies_and_overheads_may_be_zero_for_what_if_runs():
    free = MTIA2I.replace(kernel_launch_cycles=0, dram_latency_cycles=0, dma_issue_cycles=0, noc_hop_cycles=0)
    assert (free.kernel_launch_cycles, free.dram_latency_cycles, free.dma_issue_cycles) == (0, 0, 0)


def test_constructor_validates_too():
    with pytest.raises(ValueError, match="'se_elems_per_cycle'"):
        MachineConfig(se_elems_per_cycle=0)


def test_every_field_has_a_source_or_assumption_comment():
    source = inspect.getsource(MachineConfig)
    lines = source.splitlines()
    names = {f.name for f in dataclasses.fields(MachineConfig)} - {"name"}
    for field in names:
        (index,) = [i for i, line in enumerate(lines) if re.match(rf"\s+{field}: ", line)]
        comment = lines[index]
        assert "# source:" in comment or "# ASSUMPTION" in comment, f"field {field} has no source comment"


def test_glossary_names_every_hardware_term():
    doc = config_module.__doc__
    assert doc is not None
    for term in ("PE", "DPE", "SE", "RE", "MLU", "CP", "CB", "LS", "DMA", "FI", "NoC", "LLC"):
        assert re.search(rf"^- {term} \(|^- {term}:", doc, re.MULTILINE), f"glossary lacks {term}"
        entry = re.search(rf"^- {term}\b.*?Source: S\d", doc, re.MULTILINE | re.DOTALL)
        assert entry, f"glossary entry {term} has no source"


def test_roofline_balance_matches_machine_md():
    cfg = MTIA2I
    # MACHINE.md: 864 FLOP/B at the nominal 204.8 GB/s; the model uses the sustained 0.9 x that
    assert math.isclose(cfg.roofline_balance_flops_per_byte("dram") * cfg.dram_ecc_efficiency, 864, rel_tol=0.01)
    assert math.isclose(cfg.roofline_balance_flops_per_byte("sram"), 65.5, rel_tol=0.01)
    assert math.isclose(cfg.roofline_balance_flops_per_byte("ls"), 2.76, rel_tol=0.01)
    assert math.isclose(cfg.dram_bytes_per_cycle * cfg.clock_hz, 0.9 * 204.8e9, rel_tol=1e-6)
    with pytest.raises(ValueError, match="unknown memory level"):
        cfg.level_bytes_per_cycle("hbm")


def test_dtype_rates():
    cfg = MTIA2I
    assert cfg.dpe_macs_per_cycle("bf16") == cfg.dpe_macs_per_cycle("f16") == 1024
    assert cfg.dpe_macs_per_cycle("i8") == 2048
    with pytest.raises(ValueError, match="DPE takes no 'f64'"):
        cfg.dpe_macs_per_cycle("f64")
    assert cfg.vec_elems_per_cycle("i8") == 64
    assert cfg.vec_elems_per_cycle("f16") == 32
    assert cfg.vec_elems_per_cycle("f32") == cfg.vec_elems_per_cycle("bf16") == 16


def test_noc_hops_grow_towards_the_middle_of_the_die():
    cfg = MTIA2I
    assert cfg.noc_hops(0) == 1 and cfg.noc_hops(7) == 1
    assert cfg.noc_hops(3) == 4 and cfg.noc_hops(8 + 4) == 4
    assert cfg.pe_coords(13) == (1, 5)


def test_with_overrides_parses_strings_to_each_fields_type():
    cfg = MTIA2I.with_overrides(
        {"global_placement": "sram", "dram_latency_cycles": "300", "clock_hz": "1e9", "ls_bytes": "393_216"}
    )
    assert cfg.global_placement == "sram"
    assert cfg.dram_latency_cycles == 300 and isinstance(cfg.dram_latency_cycles, int)
    assert cfg.clock_hz == 1e9 and isinstance(cfg.clock_hz, float)
    assert cfg.ls_bytes == 384 * 1024
    assert MTIA2I.with_overrides({"dma_issue_cycles": 7, "dram_ecc_efficiency": 0.85}).dma_issue_cycles == 7
    assert MTIA2I.with_overrides({"pe_rows": "2e0"}).pe_rows == 2
    assert MTIA2I.with_overrides({}) == MTIA2I


def test_with_overrides_unknown_field_lists_close_matches():
    with pytest.raises(ValueError, match=r"no field 'dram_latncy_cycles'; did you mean 'dram_latency_cycles'"):
        MTIA2I.with_overrides({"dram_latncy_cycles": "3"})
    with pytest.raises(ValueError, match=r"no field 'zzz'$"):
        MTIA2I.with_overrides({"zzz": "3"})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("ls_bytes", "lots", "'ls_bytes' expects an integer (unit: bytes), got 'lots'"),
        ("ls_bytes", "1.5", "'ls_bytes' expects an integer (unit: bytes)"),
        ("clock_hz", "fast", "'clock_hz' expects a number (unit: hz)"),
        ("sram_bytes_per_cycle", "", "'sram_bytes_per_cycle' expects a number (unit: bytes per cycle)"),
        ("pe_rows", "0", "'pe_rows' must be positive"),
        ("global_placement", "hbm", "'global_placement' must be one of"),
    ],
)
def test_with_overrides_bad_value_names_the_expected_type(field, value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        MTIA2I.with_overrides({field: value})


def test_module_or_default_config_reads_the_target_and_overrides_else_the_default_chip() -> None:
    from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp

    from mtia_xdsl.dialects import mtia

    bare = ModuleOp([])
    assert config_module.module_or_default_config(bare) == config_module.derive_config(config_module.DEFAULT_CHIP)
    targeted = ModuleOp([])
    targeted.attributes[mtia.TARGET_ATTR] = mtia.TargetAttr("small_test")
    targeted.attributes[mtia.MACHINE_OVERRIDES_ATTR] = DictionaryAttr({"cb_ids": IntegerAttr(8, 64)})
    got = config_module.module_or_default_config(targeted)
    assert got == config_module.module_config(targeted)
    assert got.cb_ids == 8 and got.name == SMALL_TEST.name
