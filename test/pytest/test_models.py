"""Whole models of bench/model_zoo.py at tiny sizes compile and give jax.jit's results
(values, not speed: bench/models.py times them), and the benchmarks' check flags a
wrong answer."""

from __future__ import annotations

import os
import sys

import jax
import numpy as np
import pytest

import mlxc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from model_zoo import BY_NAME  # noqa: E402
from timing import check, flat, rel_errs  # noqa: E402

# (model, tiny size, verdicts accepted). A training step may be "noisy": AdamW turns the
# gradient of attention's key bias, which is rounding noise in any compiler, into
# +-lr steps, so there XLA is as far from a float64 run as mlxc (timing.check).
CASES = [
    ("gpt_train", dict(layers=1, d=64, seq=16, batch=2, vocab=96), ("ok", "noisy")),
    ("bert", dict(layers=1, d=64, seq=16, batch=2, vocab=96), ("ok",)),
    ("unet", dict(image=8, features=8, batch=1), ("ok",)),
    ("lstm", dict(steps=5, batch=2, features=8, hidden=16), ("ok",)),
]


@pytest.mark.parametrize("name,size,verdicts", CASES,
                         ids=lambda v: v if isinstance(v, str) else None)
def test_model_matches_jax(name, size, verdicts):
    fn, args = BY_NAME[name].build(np.random.default_rng(0), **size)
    jitted = jax.jit(fn, keep_unused=True)
    exe = mlxc.compile(jax.export.export(jitted)(*args).mlir_module())
    leaves = flat(args)
    before = [a.copy() for a in leaves]
    got = exe(*leaves)
    want = flat(jitted(*args))
    assert check(fn, args, got, want) in verdicts, rel_errs(got, want)
    assert all(np.array_equal(a, b) for a, b in zip(leaves, before))


def test_check_flags_a_wrong_answer():
    def fn(x, w):
        return jax.nn.relu(x @ w), x.sum()

    rng = np.random.default_rng(0)
    args = (rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 4)).astype(np.float32))
    want = flat(jax.jit(fn)(*args))
    assert check(fn, args, tuple(want), want) == "ok"
    off = want[0].copy()
    off[0, 0] += 1.0
    assert check(fn, args, (off, want[1]), want) == "WRONG"
    assert check(fn, args, (want[0],), want) == "WRONG"  # a result missing
    nan = want[0].copy()
    nan[1, 1] = np.nan
    assert check(fn, args, (nan, want[1]), want) == "WRONG"
