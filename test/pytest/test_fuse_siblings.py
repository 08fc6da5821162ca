"""mlxc-fuse-siblings against JAX: an optimizer's updates of m, v and the parameters run
in one loop per parameter (multi-output fusion) and give JAX's results."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import optax

import mlxc
from helpers import assert_matches, export_program


def _adamw_step():
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((64, 32)).astype(np.float32),
              "b": rng.standard_normal((32,)).astype(np.float32)}
    grads = jax.tree.map(lambda p: (rng.standard_normal(p.shape) * 1e-2).astype(np.float32), params)
    opt = optax.adamw(1e-3, weight_decay=0.01)
    state = opt.update(grads, opt.init(params), params)[1]
    leaves, tree = jax.tree.flatten((params, state, grads))

    def step(*flat):
        p, s, g = jax.tree.unflatten(tree, flat)
        updates, s = opt.update(g, s, p)
        return jax.tree.leaves((optax.apply_updates(p, updates), s))

    return step, [np.asarray(l) for l in leaves]


def test_adamw_updates_in_one_loop_per_parameter(monkeypatch):
    step, args = _adamw_step()
    text, _, want = export_program(step, *args)
    assert_matches(mlxc.compile(text)(*args), want, 2e-6)
    monkeypatch.setenv("MLXC_CPU_SCHEDULES", "0")
    fused = mlxc.lower(text, stop_after="fuse")
    # per parameter: m', v' and p' from one op with three results
    assert len(re.findall(r"= linalg\.generic", fused)) <= 3, fused
    assert len(re.findall(r"%\w+:3 = linalg\.generic .*iterator_types = \[\"parallel", fused)) == 2, fused


def test_siblings_with_broadcasts_and_reuse():
    """Siblings of several shapes, a broadcast operand, and a result read again later."""
    def f(x, y, b):
        s = jnp.sin(x) + b
        c = jnp.cos(x) * y
        return s, c, jnp.tanh(s) - c, (x * y).sum(axis=0)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((16, 40), (16, 40), (40,))]
    text, _, want = export_program(f, *args)
    assert_matches(mlxc.compile(text)(*args), want, 2e-6)
