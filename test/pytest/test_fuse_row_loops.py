"""mlxc-fuse-row-loops on whole programs: row-wise programs give JAX's numbers with their
row loops fused into one and their per-row temporaries gone (no temporary memory, as
in XLA), on one thread and on the thread pool."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlxc
from helpers import assert_matches, export_program


def _softmax(x):
    return jax.nn.softmax(x, axis=-1)


def _log_softmax(x):
    return jax.nn.log_softmax(x, axis=-1)


def _layernorm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def _cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, labels[:, None], axis=-1)[:, 0]


def _l2_normalize(x):
    return x / jnp.sqrt(jnp.sum(x * x, axis=-1, keepdims=True) + 1e-6)


def _args(name, rows, cols):
    rng = np.random.default_rng(rows * 1000 + cols)
    x = (4 * rng.standard_normal((rows, cols))).astype(np.float32)
    if name == "layernorm":
        return _layernorm, (x, rng.standard_normal(cols).astype(np.float32),
                            rng.standard_normal(cols).astype(np.float32))
    if name == "cross_entropy":
        return _cross_entropy, (x, rng.integers(0, cols, rows).astype(np.int32))
    return {"softmax": _softmax, "log_softmax": _log_softmax,
            "l2_normalize": _l2_normalize}[name], (x,)


def _row_loops(text: str, rows: int) -> int:
    """Top-level loops over `rows` iterations (the entry's body is indented by four
    spaces)."""
    return sum(1 for line in text.splitlines()
               if line.startswith("    scf.") and line.rstrip().endswith(f"in ({rows}) {{"))


CASES = [(name, rows, cols) for name in ("softmax", "log_softmax", "layernorm",
                                         "cross_entropy", "l2_normalize")
         for rows, cols in ((128, 1000), (7, 33))]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name,rows,cols", CASES)
def test_row_programs_fuse_and_match_jax(name, rows, cols, threads):
    fn, args = _args(name, rows, cols)
    kept = [a.copy() for a in args]
    text, _, expected = export_program(fn, *args)
    with mlxc.settings.override(threads=threads):
        exe = mlxc.compile(text)
        ir_text = mlxc.lower(text, stop_after="bufferize")
    for _ in range(2):
        assert_matches(exe(*args), expected, 2e-6 if name != "layernorm" else 1e-5)
    for a, b in zip(args, kept):
        np.testing.assert_array_equal(a, b)
    # max/sum (mean/var) of each row live in registers: no temporary for them, as in
    # XLA. Cross-entropy keeps the log-probabilities its gather reads; the labels'
    # wrap into range fuses into the gather (mlxc-extracts-as-inputs).
    temp = rows * cols * 4 if name == "cross_entropy" else 0
    assert exe.memory_stats()["temp_bytes"] == temp, ir_text
    # One loop over the rows reads the row, reduces it and writes the output row.
    assert _row_loops(ir_text, rows) == 1, ir_text


def test_softmax_fused_is_one_loop_on_either_thread_count():
    # 128x1000: the fused loop is big enough for the thread pool; the row values are
    # SSA values, so nothing stops it from running there.
    fn, args = _args("softmax", 128, 1000)
    text, _, expected = export_program(fn, *args)
    with mlxc.settings.override(threads=2):
        lowered = mlxc.lower(text, stop_after="lower")
    assert "omp.parallel" in lowered or "omp.wsloop" in lowered
    assert "memref.alloca" not in lowered


def test_batched_softmax_rows_of_rows():
    # softmax over the last axis of a 3-D array: the loops are over the leading batch
    # dimension, with row temporaries of 16 values (a one-row stack buffer).
    x = np.random.default_rng(1).standard_normal((4, 16, 40)).astype(np.float32)
    text, _, expected = export_program(_softmax, x)
    with mlxc.settings.override(threads=1):
        exe = mlxc.compile(text)
    assert_matches(exe(x), expected, 2e-6)
    assert exe.memory_stats()["temp_bytes"] == 0
