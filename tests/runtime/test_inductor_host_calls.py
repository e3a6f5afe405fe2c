"""The host-call charge and its recorder (mtia_xdsl/runtime/inductor_host_calls.py): what a host library call
in the middle of a compiled model costs MTIA, from MachineConfig's host link, and the bytes it moves."""

import json

import pytest
import torch

from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.runtime.inductor_host_calls import HostCall, HostCalls, host_call_us, host_charge_us


@pytest.fixture
def link() -> MachineConfig:
    """A 1 GHz chip whose host link takes 500 cycles (0.5 us) per transfer and moves 2 GB/s (2000 bytes/us)."""
    return MachineConfig.preset("mtia2i").replace(clock_hz=1e9, host_link_latency_cycles=500, host_link_bytes_per_s=2e9)


def test_a_call_is_two_transfers_plus_its_bytes_at_the_link_rate(link):
    """Inputs to the host and outputs back: 2 x 0.5 us of latency, and 3000 + 1000 bytes at 2000 bytes/us."""
    assert host_call_us(link, 3000, 1000) == pytest.approx(2 * 0.5 + 4000 / 2000)


def test_the_charge_reads_latency_and_rate_from_the_machine(link):
    """Doubling the latency adds one latency per transfer; doubling the rate halves the bytes' time."""
    slower = link.replace(host_link_latency_cycles=1000)
    faster = link.replace(host_link_bytes_per_s=4e9)
    assert host_call_us(slower, 3000, 1000) - host_call_us(link, 3000, 1000) == pytest.approx(2 * 0.5)
    assert host_call_us(faster, 3000, 1000) == pytest.approx(2 * 0.5 + 4000 / 4000)


def test_a_call_with_no_tensors_still_pays_both_transfers(link):
    """A call with no tensor inputs or outputs records 0 bytes each way and costs the two latencies alone."""
    calls = HostCalls(set(), set())
    calls.record("torch.ops.aten.sym_size.int", (3, "x"), {"dim": 1}, None)
    assert calls.calls == [HostCall("torch.ops.aten.sym_size.int", 0, 0)]
    assert host_charge_us(link, calls.calls) == pytest.approx(2 * 0.5)


def test_charge_sums_calls_also_as_json_lists(link):
    """The charge of a model call is the sum over its calls; the lists JSON makes of them (--baseline-rev) too."""
    calls = [HostCall("a", 2000, 0), HostCall("b", 0, 6000)]
    expected = (2 * 0.5 + 1.0) + (2 * 0.5 + 3.0)
    assert host_charge_us(link, calls) == pytest.approx(expected)
    assert host_charge_us(link, json.loads(json.dumps(calls))) == pytest.approx(expected)
    assert host_charge_us(link, []) == 0


def test_records_an_aten_call_without_the_weights_and_restores_dispatch():
    """A recorded aten call counts its activations' bytes in (a weight has a host copy) and its outputs' bytes out;
    ops not named are not recorded, and `OpOverload.__call__` is torch's own again after the block."""
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    own_call = torch._ops.OpOverload.__call__
    with HostCalls({"torch.ops.aten.mm.default"}, {w.untyped_storage().data_ptr()}) as calls:
        y = torch.ops.aten.mm.default(x, w)
        torch.ops.aten.relu.default(y)
    assert torch._ops.OpOverload.__call__ is own_call
    assert calls.calls == [HostCall("aten.mm.default", 4 * 8 * 4, 4 * 3 * 4)]


def test_records_an_extern_kernel_with_an_out_tensor():
    """`extern_kernels.mm(a, b, out=c)`: the inputs a and b in, the `out=` tensor out (not an input)."""
    from torch._inductor.select_algorithm import extern_kernels

    own_mm = extern_kernels.mm
    a, b, c = torch.randn(2, 5), torch.randn(5, 6), torch.empty(2, 6)
    with HostCalls({"extern_kernels.mm"}, set()) as calls:
        extern_kernels.mm(a, b, out=c)
    assert extern_kernels.mm is own_mm
    assert calls.calls == [HostCall("extern_kernels.mm", (2 * 5 + 5 * 6) * 4, 2 * 6 * 4)]
    torch.testing.assert_close(c, a @ b)
