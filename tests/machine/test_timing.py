"""Timing model on synthetic command traces: bandwidth bounds, overlap, DPE rate, placement, errors."""

import pytest

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MTIA2I, SMALL_TEST
from mtia_xdsl.machine.timing import TimingError, place_programs, simulate

TILE = 16 * 1024
SRAM = MTIA2I.replace(global_placement="sram")
DRAM = MTIA2I.replace(global_placement="dram")


def load(seq, nbytes=TILE, cb=0, rows=1, ranges=()):
    return Command(
        Engine.DMA,
        "dma_load",
        "k.py:3:8",
        (),
        (SlotRef(cb, seq),),
        global_read_bytes=nbytes,
        descriptors=rows,
        global_ranges=ranges,
    )


def dpe(waits=(), fills=(), macs=32 * 32 * 32, dtype="bf16", passes=1):
    return Command(Engine.DPE, "dpe_matmul", "k.py:5:12", waits, fills, macs=macs, dtype=dtype, dpe_passes=passes)


def program(cmds, depths, pid=0, tiles=None):
    tiles = tiles or dict.fromkeys(depths, TILE)
    return ProgramTrace((pid, 0, 0), cmds, cb_depth=depths, cb_tile_bytes=tiles)


def load_only(n, pid=0, depth=4):
    return program([load(k) for k in range(n)], {0: depth}, pid) if depth else None


def load_compute(n, depth, compute_macs, pid=0):
    """Stream n tiles through a depth-`depth` CB into the DPE, loads issued `depth` ahead."""
    cmds = [load(k) for k in range(min(depth, n))]
    for k in range(n):
        cmds.append(dpe(waits=(SlotRef(0, k),), macs=compute_macs))
        if k + depth < n:
            cmds.append(load(k + depth))
    return program(cmds, {0: depth}, pid)


def test_single_pe_stream_approaches_port_bandwidth_and_never_beats_it():
    n = 64
    timeline = simulate([load_only(n)], SRAM)
    port_bound = n * TILE / SRAM.dma_read_bytes_per_cycle
    assert timeline.total_cycles >= port_bound
    assert timeline.total_cycles < 1.1 * port_bound


def test_sixty_four_pes_share_dram_bandwidth():
    n = 16
    timeline = simulate([load_only(n, pid=p) for p in range(64)], DRAM)
    dram_bound = 64 * n * TILE / DRAM.dram_bytes_per_cycle
    assert timeline.total_cycles >= dram_bound
    assert timeline.total_cycles < 1.05 * dram_bound
    # one PE alone is capped by its port, far below the chip bandwidth
    alone = simulate([load_only(n)], DRAM).total_cycles
    assert alone < timeline.total_cycles / 10
    assert timeline.traffic.dram_read_bytes == 64 * n * TILE


def test_sram_is_shared_too_but_wider():
    n = 16
    sram = simulate([load_only(n, pid=p) for p in range(64)], SRAM).total_cycles
    dram = simulate([load_only(n, pid=p) for p in range(64)], DRAM).total_cycles
    assert sram >= 64 * n * TILE / SRAM.sram_bytes_per_cycle
    assert sram < dram / 10


def test_double_buffering_overlaps_dma_with_compute():
    n, dpe_cycles = 32, 512  # one tile's load: 256 transfer + issue + latency ~ 390 cycles < 512
    macs = dpe_cycles * SRAM.dpe_bf16_macs_per_cycle
    single = simulate([load_compute(n, 1, macs)], SRAM).total_cycles
    double = simulate([load_compute(n, 2, macs)], SRAM).total_cycles
    load_cycles = TILE / SRAM.dma_read_bytes_per_cycle + SRAM.dma_issue_cycles + SRAM.sram_latency_cycles
    # depth 1 serialises load and compute; depth 2 hides the load behind the DPE
    assert single >= n * (dpe_cycles + load_cycles)
    assert n * dpe_cycles <= double < n * dpe_cycles + load_cycles + 100
    assert double < 0.6 * single


def test_dpe_tile_commands_run_at_one_per_32_cycles():
    n = 200
    independent = simulate([program([dpe() for _ in range(n)], {})], MTIA2I).total_cycles
    assert n * 32 <= independent <= n * 32 + 100
    # a chain through an accumulator CB keeps the DPE pipeline full as well
    chain = [dpe(fills=(SlotRef(0, 0),))] + [
        dpe(waits=(SlotRef(0, k),), fills=(SlotRef(0, k + 1),)) for k in range(n - 1)
    ]
    chained = simulate([program(chain, {0: 2})], MTIA2I).total_cycles
    assert n * 32 <= chained <= n * 32 + 100


def test_fp32_ieee_dot_costs_three_passes_and_int8_runs_twice_as_fast():
    n = 100
    bf16 = simulate([program([dpe() for _ in range(n)], {})], MTIA2I).total_cycles
    ieee = simulate([program([dpe(dtype="f32", passes=3) for _ in range(n)], {})], MTIA2I).total_cycles
    int8 = simulate([program([dpe(dtype="i8") for _ in range(n)], {})], MTIA2I).total_cycles
    assert 2.9 * bf16 < ieee < 3.1 * bf16
    assert 0.45 * bf16 < int8 < 0.6 * bf16


def test_se_time_follows_elements_and_lut_latency():
    def se(k, lut=False):
        return Command(Engine.SE, "se_compute", "k.py:7:4", (), (), elems=32 * 1000, lut=lut)

    one = simulate([program([se(0)], {})], MTIA2I)
    assert one.total_cycles == MTIA2I.scalar_issue_cycles + 1000 + MTIA2I.se_alu_latency_cycles
    lut = simulate([program([se(0, lut=True)], {})], MTIA2I)
    assert lut.total_cycles - one.total_cycles == MTIA2I.se_lut_latency_cycles - MTIA2I.se_alu_latency_cycles


def test_same_inputs_same_cycles():
    progs = [load_compute(20, 2, 100_000, pid=p) for p in range(80)]
    a = simulate(progs, MTIA2I.replace(global_placement="dram"))
    b = simulate(progs, MTIA2I.replace(global_placement="dram"))
    assert a.total_cycles == b.total_cycles
    assert [(s.pe, s.start_cycle, s.end_cycle) for s in a.spans] == [
        (s.pe, s.start_cycle, s.end_cycle) for s in b.spans
    ]


def test_more_programs_than_pes_run_in_waves():
    strict = SMALL_TEST.replace(pe_programs_in_flight=1)  # one program after another: waves do not overlap
    one_wave = simulate([load_compute(8, 2, 200_000, pid=p) for p in range(4)], strict).total_cycles
    three_waves = simulate([load_compute(8, 2, 200_000, pid=p) for p in range(12)], strict).total_cycles
    assert 2.8 * one_wave < three_waves < 3.2 * one_wave
    overlapped = simulate([load_compute(8, 2, 200_000, pid=p) for p in range(12)], SMALL_TEST).total_cycles
    assert overlapped < three_waves  # the next wave's loads overlap the previous wave's compute


def test_mappings_place_programs_differently():
    progs = [program([], {}, pid=p) for p in range(128)]  # two programs per PE (tests/transforms/test_pe_mapping.py)
    grid = (128, 1, 1)
    assert place_programs(progs, MTIA2I, "linear", grid)[:4] == [0, 0, 1, 1]
    assert place_programs(progs, MTIA2I, "round_robin", grid)[62:66] == [62, 63, 0, 1]
    assert place_programs(progs, MTIA2I, "zigzag", grid)[62:66] == [62, 63, 63, 62]
    with pytest.raises(ValueError, match="unknown program mapping 'random'"):
        simulate(progs, MTIA2I, mapping="random")


def test_scalar_blocking_command_stalls_issue():
    blocking = Command(
        Engine.DMA, "dma_load", "k.py:2:1", (), (SlotRef(0, 0),), global_read_bytes=TILE, scalar_blocking=True
    )
    follow = dpe()
    t_block = simulate([program([blocking, follow], {0: 1})], SRAM)
    spans = {s.index: s for s in t_block.spans}
    assert spans[1].issue_cycle >= spans[0].end_cycle
    blocking.scalar_blocking = False
    t_free = simulate([program([blocking, follow], {0: 1})], SRAM)
    spans = {s.index: s for s in t_free.spans}
    assert spans[1].issue_cycle < spans[0].end_cycle


def test_granules_round_up_each_contiguous_run():
    cmd = load(0, nbytes=10 * 33, rows=10)
    t = simulate([program([cmd], {0: 1})], SRAM)
    assert t.traffic.sram_transferred_bytes == 10 * 64
    assert t.traffic.sram_read_bytes == 10 * 33
    exact = load(0, nbytes=64, rows=1, ranges=((16, 64),))  # misaligned: spans three granules
    t = simulate([program([exact], {0: 1})], SRAM)
    assert t.traffic.sram_transferred_bytes == 96


def test_llc_first_touch_from_dram_then_sram_hits():
    rng = ((4096, TILE),)
    cmds = [load(0, ranges=rng), load(1, ranges=rng), load(2, ranges=((4096 + TILE // 2, TILE),))]
    t = simulate([program(cmds, {0: 4})], MTIA2I.replace(global_placement="llc"))
    assert t.traffic.dram_read_bytes == TILE + TILE // 2
    assert t.traffic.sram_read_bytes == TILE + TILE // 2
    assert t.llc_resident_bytes == TILE + TILE // 2


def test_ls_high_water_is_depth_times_tile_bytes():
    prog = program([load(0)], {0: 3, 1: 2}, tiles={0: 1000, 1: 24})
    t = simulate([prog], SMALL_TEST)
    assert t.ls_high_water_bytes == {0: 3 * 1000 + 2 * 24}


def test_reading_an_unfilled_slot_names_the_kernel_line():
    bad = Command(Engine.SE, "se_compute", "kern.py:9:5", (SlotRef(0, 0),), (), elems=32)
    with pytest.raises(TimingError, match=r"kern.py:9:5: se_compute reads slot 0 of cb 0, which nothing fills"):
        simulate([program([bad], {0: 1})], MTIA2I)


def test_filling_a_cb_without_depth_is_an_error():
    with pytest.raises(TimingError, match=r"k\.py:3:8: dma_load fills circular buffer 7"):
        simulate([program([load(0, cb=7)], {0: 1})], MTIA2I)


def test_deadlock_is_reported_at_the_blocked_command():
    # slot 1 of a depth-1 CB needs slot 0 released, but its reader sits behind it on the same engine
    cmds = [
        Command(Engine.SE, "se_fill", "k.py:1:1", (), (SlotRef(0, 0),), elems=32),
        Command(Engine.SE, "se_fill", "k.py:2:1", (), (SlotRef(0, 1),), elems=32),
        Command(Engine.SE, "se_read", "k.py:3:1", (SlotRef(0, 0),), (), elems=32),
    ]
    with pytest.raises(TimingError, match=r"k.py:2:1: deadlock: se_fill on se never started"):
        simulate([program(cmds, {0: 1})], MTIA2I)


def test_scalar_gathers_are_latency_bound_on_the_scalar_core():
    gather = Command(Engine.SCALAR, "gather", "k.py:4:9", (), (SlotRef(0, 0),), elems=64, global_read_bytes=256)
    t = simulate([program([gather, dpe(waits=(SlotRef(0, 0),))], {0: 1})], DRAM)
    spans = {s.index: s for s in t.spans}
    assert spans[0].end_cycle - spans[0].start_cycle >= 63 * DRAM.dram_latency_cycles / DRAM.scalar_outstanding_loads
    assert spans[1].issue_cycle >= spans[0].end_cycle  # the scalar core did the gather itself
    assert t.traffic.scalar_access_bytes == 256


def test_scalar_read_of_an_ls_slot_costs_ls_latency_not_memory_latency():
    fill = Command(Engine.SE, "se_compute", "k.py:1:1", (), (SlotRef(0, 0),), elems=32)
    read = Command(Engine.SCALAR, "cb_read", "k.py:2:1", (SlotRef(0, 0),), (), elems=1, scalar_blocking=True)
    t = simulate([program([fill, read], {0: 1})], DRAM)
    span = {s.index: s for s in t.spans}[1]
    assert span.end_cycle - span.start_cycle == DRAM.scalar_ls_latency_cycles
    assert t.traffic.dram_read_bytes == 0


@pytest.mark.parametrize("n_programs", [SMALL_TEST.n_pes + 1, 2 * SMALL_TEST.n_pes + 1])
def test_programs_ending_in_a_scalar_command_run_in_waves(n_programs: int) -> None:
    """Regression: a program whose last command is a blocking scalar load used to queue its
    program-done event twice, starting the PE's next program while the first still ran."""

    def scalar_program(pid: int) -> ProgramTrace:
        cmd = Command(Engine.SCALAR, "scalar_load", "k.py:3:8", (), (), elems=1, global_read_bytes=4,
                      scalar_blocking=True)  # fmt: skip
        return program([cmd], {}, pid=pid)

    timeline = simulate([scalar_program(p) for p in range(n_programs)], SMALL_TEST)
    waves = -(-n_programs // SMALL_TEST.n_pes)
    one = simulate([scalar_program(0)], SMALL_TEST).total_cycles
    assert timeline.total_cycles >= waves * one
    assert len(timeline.spans) == n_programs


def test_a_load_of_stored_bytes_waits_for_the_store() -> None:
    """Regression: commands of one program touching the same global bytes keep program order."""
    store = Command(Engine.DMA, "dma_store", "k.py:9:4", (), (), global_write_bytes=4096,
                    global_ranges=((0x1000, 4096),), dtype="f32")  # fmt: skip
    load = Command(Engine.DMA, "dma_load", "k.py:10:8", (), (SlotRef(0, 0),), global_read_bytes=4096,
                   global_ranges=((0x1000, 4096),), dtype="f32")  # fmt: skip
    elsewhere = Command(Engine.DMA, "dma_load", "k.py:11:8", (), (SlotRef(1, 0),), global_read_bytes=4096,
                        global_ranges=((0x9000, 4096),), dtype="f32")  # fmt: skip
    prog = program([store, load, elsewhere], {0: 1, 1: 1}, tiles={0: 4096, 1: 4096})
    spans = sorted(simulate([prog], MTIA2I).spans, key=lambda sp: sp.index)
    assert spans[1].start_cycle >= spans[0].end_cycle  # reads what the store wrote
    assert spans[2].start_cycle < spans[1].end_cycle  # other memory: in flight with the first load


def test_ls_overflow_is_an_error_listing_each_cb():
    prog = program([load(0)], {0: 3, 1: 2}, tiles={0: 20 * 1024, 1: 4096})
    prog.extra_ls_bytes = 100
    with pytest.raises(TimingError) as info:
        simulate([prog], SMALL_TEST)
    message = str(info.value)
    assert message.startswith("k.py:3:8: local storage overflow")
    assert f"holds {3 * 20 * 1024 + 2 * 4096 + 100} bytes of LS but a PE has {SMALL_TEST.ls_bytes}" in message
    assert "cb 0: 3 x 20480 B = 61440 B; cb 1: 2 x 4096 B = 8192 B; other LS: 100 B" in message
    # the same program fits the 384 KiB of MTIA-2i
    assert simulate([prog], MTIA2I).ls_high_water_bytes == {0: 3 * 20 * 1024 + 2 * 4096 + 100}


def re_link(elems, hops, dtype="f32"):
    return Command(Engine.RE, "re_link", "k.py:8:2", (), (), elems=elems, dtype=dtype, re_hops=hops)


def test_re_link_costs_hops_plus_bytes_over_the_link():
    cfg = MTIA2I
    issue = cfg.scalar_issue_cycles
    for elems, hops, dtype in ((1024, 1, "f32"), (1024, 3, "f32"), (64, 7, "bf16"), (1, 2, "f32")):
        nbytes = elems * (4 if dtype == "f32" else 2)
        expected = max(1, -(-nbytes // cfg.re_link_bytes_per_cycle)) + hops * cfg.re_hop_cycles
        assert simulate([program([re_link(elems, hops, dtype)], {})], cfg).total_cycles == issue + expected
    # the link is one resource: two transfers back to back serialise their bytes, not their hop latency
    two = simulate([program([re_link(4096, 2), re_link(4096, 2)], {})], cfg).total_cycles
    one_link = 4096 * 4 // cfg.re_link_bytes_per_cycle
    assert two == issue + 2 * one_link + 2 * cfg.re_hop_cycles
    slow = cfg.replace(re_link_bytes_per_cycle=32, re_hop_cycles=20)
    assert simulate([program([re_link(1024, 2)], {})], slow).total_cycles == issue + 128 + 40


def test_progress_reports_every_command_once():
    progs = [load_compute(30, 2, 100_000, pid=p) for p in range(300)]
    calls: list[int] = []
    timeline = simulate(progs, DRAM, progress=calls.append)
    assert sum(calls) == len(timeline.span_rows) == sum(len(p.commands) for p in progs)
    assert len(calls) > 1 and all(c > 0 for c in calls)


def _mixed_programs():
    """Programs on every engine, sharing addresses (LLC hits), more programs than PEs, ragged sizes."""
    progs = []
    for p in range(150):
        rng = (((p % 9) * TILE, TILE),)
        cmds = [load(0, ranges=rng), load(0, nbytes=TILE // 2 + 32 * (p % 5), cb=1, rows=3)]
        cmds.append(dpe(waits=(SlotRef(0, 0),), fills=(SlotRef(2, 0),), macs=32 * 32 * 32 * (1 + p % 4)))
        cmds.append(Command(Engine.SE, "se_compute", "k.py:6:1", (SlotRef(2, 0), SlotRef(1, 0)), (SlotRef(3, 0),),
                            elems=1024 + p, lut=p % 2 == 0))  # fmt: skip
        cmds.append(Command(Engine.DMA, "dma_store", "k.py:7:1", (SlotRef(3, 0),), (), global_write_bytes=TILE,
                            global_ranges=((10**8 + p * TILE, TILE),)))  # fmt: skip
        progs.append(program(cmds, {0: 1, 1: 1, 2: 1, 3: 1}, pid=p))
    return progs


def _fingerprint(timeline):
    return (
        timeline.total_cycles,
        timeline.program_cycles,
        sorted((s.pe, s.program, s.index, s.start_cycle, s.end_cycle) for s in timeline.spans),
        timeline.traffic,
    )


def test_same_run_twice_gives_the_same_cycles():
    progs = _mixed_programs()
    for placement in ("llc", "dram", "sram"):
        cfg = MTIA2I.replace(global_placement=placement)
        assert _fingerprint(simulate(progs, cfg)) == _fingerprint(simulate(progs, cfg))


def test_same_run_in_a_fresh_process_gives_the_same_cycles():
    """No ordering by id(), hash seeds or set iteration: another interpreter process agrees exactly."""
    import subprocess
    import sys

    script = (
        "import tests.machine.test_timing as t; from mtia_xdsl.machine.config import MTIA2I; "
        "tl = t.simulate(t._mixed_programs(), MTIA2I); print(repr((tl.total_cycles, tl.program_cycles)))"
    )
    here = simulate(_mixed_programs(), MTIA2I)
    outputs = set()
    for seed in ("1", "2"):
        env = {"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True,
                              cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))  # fmt: skip
        outputs.add(done.stdout.strip())
    assert outputs == {repr((here.total_cycles, here.program_cycles))}


def se(elems=32 * 1000, waits=(), fills=(), blocking=False):
    return Command(Engine.SE, "se_compute", "k.py:7:4", waits, fills, elems=elems, scalar_blocking=blocking)


def test_full_engine_queue_stalls_the_scalar_core_until_a_command_starts():
    depth = MTIA2I.cp_queue_depth_commands
    n = depth + 4
    spans = {s.index: s for s in simulate([program([se() for _ in range(n)], {})], MTIA2I).spans}
    for k in range(depth + 1):  # the queue holds `depth` commands besides the one running
        assert spans[k].issue_cycle == (k + 1) * MTIA2I.scalar_issue_cycles
    for k in range(depth + 1, n):
        assert spans[k].issue_cycle == spans[k - depth].start_cycle  # issued once a queued one started
    assert [spans[k].start_cycle for k in range(n)] == sorted(spans[k].start_cycle for k in range(n))


def test_blocking_compute_command_holds_the_scalar_core_until_it_ends():
    cmds = [se(blocking=True), se(elems=32)]
    spans = {s.index: s for s in simulate([program(cmds, {})], MTIA2I).spans}
    assert spans[1].issue_cycle == spans[0].end_cycle + MTIA2I.scalar_issue_cycles
    free = {s.index: s for s in simulate([program([se(), se(elems=32)], {})], MTIA2I).spans}
    assert free[1].issue_cycle == 2 * MTIA2I.scalar_issue_cycles


def test_busy_cycles_are_the_union_of_each_engines_spans():
    timeline = simulate(_mixed_programs(), MTIA2I)
    intervals: dict = {}
    for s in timeline.spans:
        intervals.setdefault((s.pe, s.engine), []).append((s.start_cycle, s.end_cycle))
    expected = {}
    for key, spans in intervals.items():
        total, (lo, hi) = 0.0, sorted(spans)[0]
        for start, end in sorted(spans):
            if start > hi:
                total, lo, hi = total + hi - lo, start, end
            hi = max(hi, end)
        expected[key] = total + hi - lo
    assert timeline.engine_busy_cycles.keys() == expected.keys()
    for key, cycles in expected.items():
        assert timeline.engine_busy_cycles[key] == pytest.approx(cycles, rel=1e-12)


def test_spans_name_each_command_once_in_the_order_commands_ended():
    progs = _mixed_programs()
    timeline = simulate(progs, MTIA2I)
    assert timeline.command_count == len(timeline.spans) == sum(len(p.commands) for p in progs)
    assert {(s.program, s.index) for s in timeline.spans} == {
        (k, i) for k, p in enumerate(progs) for i in range(len(p.commands))
    }
    for s in timeline.spans:
        c = progs[s.program].commands[s.index]
        assert (s.engine, s.kind, s.loc) == (c.engine, c.kind, c.loc)
        assert s.issue_cycle <= s.start_cycle <= s.end_cycle
        assert s.pe == timeline.pe_of_program[s.program]


def test_programs_alike_but_for_compute_sizes_keep_their_own_costs():
    """Programs share scheduling structure by object identity; equal slot tuples with other sizes must not."""
    fills = (SlotRef(0, 0),)
    small = program([Command(Engine.SE, "se_compute", "k.py:1:1", (), fills, elems=64)], {0: 1}, pid=0)
    large = program([Command(Engine.SE, "se_compute", "k.py:1:1", (), fills, elems=64_000)], {0: 1}, pid=1)
    both = simulate([small, large], MTIA2I).program_cycles
    assert both == [simulate([p], MTIA2I).program_cycles[0] for p in (small, large)]
    assert both[0] != both[1]


def test_llc_coverage_agrees_with_a_set_of_bytes():
    """read_and_add (direct, merged and remembered paths) against a plain set of byte addresses."""
    import random

    from mtia_xdsl.machine.memory import LlcCoverage

    rng = random.Random(7)
    for capacity in (10**9, 3000):
        cov, resident = LlcCoverage(), set()
        seen: list = []
        for _ in range(300):
            if seen and rng.random() < 0.3:
                ranges = rng.choice(seen)  # the same block again
            else:
                addr, ranges = rng.randrange(0, 600), []
                for _ in range(rng.randrange(1, 6)):
                    n = rng.randrange(0, 40)
                    ranges.append((addr, n))
                    addr += n + rng.randrange(0, 50)
                ranges = tuple(ranges)
                seen.append(ranges)
            want_cached, want_full = 0, False
            for lo, n in ranges:
                if n <= 0:
                    continue
                new = set(range(lo, lo + n))
                want_cached += len(new & resident)
                if not want_full and len(resident) + n > capacity:
                    want_full = True
                elif not want_full:
                    resident |= new
            assert cov.read_and_add(ranges, capacity) == (want_cached, want_full)
            assert cov.total == len(resident)
            assert all(cov.contains(lo, lo + 1) for lo in resident)


def _load_compute_store(pid):
    """load -> DPE -> store: one program whose store drains after its scalar core issued everything."""
    cmds = [
        load(0, ranges=((pid * 4 * TILE, TILE),)),
        dpe(waits=(SlotRef(0, 0),), fills=(SlotRef(1, 0),)),
        Command(Engine.DMA, "dma_store", "k.py:7:4", (SlotRef(1, 0),), (), global_write_bytes=TILE,
                global_ranges=(((1 << 30) + pid * TILE, TILE),)),
    ]  # fmt: skip
    return program(cmds, {0: 1, 1: 1}, pid)


ONE_PE = DRAM.replace(pe_rows=1, pe_cols=1, pe_programs_in_flight=2)


def _by_program(timeline):
    spans = {}
    for s in timeline.spans:
        spans.setdefault(s.program, []).append(s)
    return spans


def test_next_program_issues_while_the_previous_one_drains():
    programs = [_load_compute_store(p) for p in range(4)]
    strict = simulate(programs, ONE_PE.replace(pe_programs_in_flight=1), grid=(4, 1, 1))
    overlap = simulate(programs, ONE_PE, grid=(4, 1, 1))
    s, o = _by_program(strict), _by_program(overlap)
    store_end = lambda spans, p: max(x.end_cycle for x in spans[p] if x.kind == "dma_store")  # noqa: E731
    first_load = lambda spans, p: min(x.start_cycle for x in spans[p] if x.kind == "dma_load")  # noqa: E731
    assert first_load(s, 1) >= store_end(s, 0)  # one program after another
    assert first_load(o, 1) < store_end(o, 0)  # program 1 loads while program 0 stores
    assert overlap.total_cycles < strict.total_cycles
    footprint = programs[0].ls_footprint_bytes()
    assert strict.ls_high_water_bytes[0] == footprint and overlap.ls_high_water_bytes[0] == 2 * footprint
    # Each engine queue (the DPE's; the DMA's loads, its stores) still runs its commands in issue order,
    # across programs; programs retire in order.
    for kind in ("dma_load", "dma_store", "dpe_matmul"):
        starts = [x.start_cycle for p in range(4) for x in sorted(o[p], key=lambda x: x.index) if x.kind == kind]
        assert len(starts) == 4 and starts == sorted(starts)
    ends = [end for _, end in overlap.program_cycles]
    assert ends == sorted(ends)


def test_a_load_is_not_held_behind_an_earlier_store_with_two_dma_queues():
    programs = [_load_compute_store(p) for p in range(2)]
    one = _by_program(simulate(programs, ONE_PE.replace(dma_queues=1), grid=(2, 1, 1)))
    two = _by_program(simulate(programs, ONE_PE, grid=(2, 1, 1)))
    store_start = lambda spans, p: min(x.start_cycle for x in spans[p] if x.kind == "dma_store")  # noqa: E731
    first_load = lambda spans, p: min(x.start_cycle for x in spans[p] if x.kind == "dma_load")  # noqa: E731
    assert first_load(one, 1) >= store_start(one, 0)  # one queue: program 1's load waits behind 0's store
    assert first_load(two, 1) < store_start(two, 0)  # its own queue: it starts while the store waits for the DPE
    with pytest.raises(ValueError, match="dma_queues' must be 1 or 2, got 3"):
        MTIA2I.replace(dma_queues=3)


def test_programs_do_not_overlap_when_both_do_not_fit_local_storage():
    programs = [_load_compute_store(p) for p in range(2)]
    footprint = programs[0].ls_footprint_bytes()
    tight = ONE_PE.replace(ls_bytes=footprint + footprint // 2)
    timeline = simulate(programs, tight, grid=(2, 1, 1))
    assert timeline.program_cycles[1][0] >= timeline.program_cycles[0][1]
    assert timeline.ls_high_water_bytes[0] == footprint
    strict = simulate(programs, tight.replace(pe_programs_in_flight=1), grid=(2, 1, 1))
    assert timeline.total_cycles == strict.total_cycles


def test_programs_overlap_when_their_cb_ids_in_use_fit_though_their_cbs_do_not():
    """Two programs of 10 CBs each, mtia-cb-allocate having given them 5 CB IDs (CBs never alive together
    share one): 10 IDs in use fit the CP's 14, so the second issues while the first drains; with 8 IDs they
    do not, and it waits. Layer norm (14 CBs on 6 IDs) ran one program after another while 28 > 14 CBs
    were counted."""
    programs = []
    for p in range(2):
        prog = _load_compute_store(p)
        extra = range(2, 10)  # CBs no command uses: allocated, so they count
        prog.cb_depth = {**prog.cb_depth, **dict.fromkeys(extra, 1)}
        prog.cb_tile_bytes = {**prog.cb_tile_bytes, **dict.fromkeys(extra, 32)}
        prog.cb_ls_offset = dict.fromkeys(prog.cb_depth, 0) | {1: TILE}
        prog.cb_hw_id = {cb: cb % 5 for cb in prog.cb_depth}
        programs.append(prog)
    assert programs[0].cb_ids_in_use() == 5
    spans = _by_program(simulate(programs, ONE_PE, grid=(2, 1, 1)))
    store_end = max(x.end_cycle for x in spans[0] if x.kind == "dma_store")
    assert min(x.start_cycle for x in spans[1] if x.kind == "dma_load") < store_end
    spans = _by_program(simulate(programs, ONE_PE.replace(cb_ids=8), grid=(2, 1, 1)))
    store_end = max(x.end_cycle for x in spans[0] if x.kind == "dma_store")
    assert min(x.start_cycle for x in spans[1] if x.kind == "dma_load") >= store_end


def test_programs_in_flight_is_one_or_two():
    with pytest.raises(ValueError, match="pe_programs_in_flight' must be 1 or 2, got 3"):
        MTIA2I.replace(pe_programs_in_flight=3)


def test_block_runs_kept_as_shared_runs_time_as_their_tuples():
    """A block's runs kept compactly (`Runs` of one shared `RunBlock`) read as the tuple of its runs, and the
    timing model (LLC hits, granule rounding, global-memory order) gives the same cycles and traffic for both."""
    from mtia_xdsl.machine.commands import RunBlock, Runs

    rows = RunBlock([k * 4096 for k in range(64)], 96)  # 64 rows of 96 bytes: granule rounding counts
    irregular = RunBlock([k * 4096 + (k % 3) * 32 for k in range(8)], 64)
    assert rows.stride == 4096 and irregular.stride is None
    runs = Runs(rows, 1 << 20)
    assert runs == tuple(runs) and tuple(runs) == runs and runs[-1] == ((1 << 20) + 63 * 4096, 96)

    def programs(compact):
        progs = []
        for p in range(8):
            cmds = []
            for k, block in enumerate((rows, irregular, rows)):  # the third load hits the LLC
                shift = (1 << 20) + (p % 2) * (1 << 18)
                ranges = Runs(block, shift) if compact else tuple(Runs(block, shift))
                nbytes = len(block.starts) * block.nbytes
                cmds.append(load(k, nbytes=nbytes, rows=len(block.starts), ranges=ranges))
            store = Command(Engine.DMA, "dma_store", "k.py:9:4", (SlotRef(0, 0),), (), global_write_bytes=64 * 96,
                            descriptors=64, global_ranges=Runs(rows, 1 << 20) if compact else tuple(runs))  # fmt: skip
            progs.append(program([*cmds, store], {0: 4}, pid=p))
        return progs

    for cfg in (MTIA2I, DRAM):
        compact, plain = simulate(programs(True), cfg), simulate(programs(False), cfg)
        assert compact.total_cycles == plain.total_cycles
        assert compact.command_cycles == plain.command_cycles
        assert compact.traffic == plain.traffic
