"""triton.testing.do_bench on the machine model (found by the breaker): it times with the device interface's
events, which the model cannot give (a simulated time of ~1 us would make do_bench run the model 10^5 times);
the error says what to use instead, rather than torch's "Event() takes no arguments"."""

import pytest
import torch
import triton

import mtia_xdsl
from examples.vector_add import add_kernel


def _launch(x: torch.Tensor, out: torch.Tensor) -> None:
    add_kernel[(4,)](x, x, out, 4096, BLOCK_SIZE=1024)


def test_do_bench_says_to_use_the_simulated_time_benchmarker() -> None:
    x, out = torch.rand(4096), torch.zeros(4096)
    with pytest.raises(RuntimeError, match=r"do_bench .*get_benchmarker\(\)"):
        triton.testing.do_bench(lambda: _launch(x, out))
    assert torch.equal(out, 2 * x)  # its first call ran


def test_the_benchmarker_the_error_names_returns_the_simulated_time_in_ms() -> None:
    x, out = torch.rand(4096), torch.zeros(4096)
    ms = triton.runtime.driver.active.get_benchmarker()(lambda: _launch(x, out))
    report = mtia_xdsl.last_report()
    assert report is not None and ms == pytest.approx(report.time_us / 1000.0)


def test_the_device_interface_keeps_torch_cpus_other_members() -> None:
    di = triton.runtime.driver.active.get_device_interface()
    di.synchronize()
    event = di.Event()  # without timing, as torch.cpu.Event
    event.record()
    assert event.query()
