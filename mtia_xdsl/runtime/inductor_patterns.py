"""What mtia_xdsl's joint-graph pattern passes (`inductor_causal_attention`, `inductor_rms_norm_pattern`) share:
which of their patterns a pass built now can hold.

Each pass is built once per process for each tuple of trace kinds it holds (a `functools.cache` keyed on it), its
patterns traced by Inductor's `register_replacement`. Under `torch.inference_mode()` no joint (forward and
backward) pattern can be built: `register_replacement` skips one traced by `joint_fwd_bwd`, and a joint trace
wrapped in another function fails (autograd records no backward). A pass built there, and cached, would serve
every later training graph without its joint patterns, so the passes ask `traces_now` for the kinds to build and
inference mode gets a pass of its own.

Imports torch when loaded: import it only once Inductor has loaded.
"""

from __future__ import annotations

import torch

JOINT = "joint"
"""The trace kind of a pattern traced forward and backward together (Inductor's `joint_fwd_bwd`), matching a
training graph."""


def traces_now(traces: tuple[str, ...]) -> tuple[str, ...]:
    """The trace kinds of `traces` (in their order) that a pattern pass built now can hold: all of them, or under
    `torch.inference_mode()` all but `JOINT` (whose patterns cannot be traced there)."""
    if torch.is_inference_mode_enabled():
        return tuple(trace for trace in traces if trace != JOINT)
    return traces
