"""The fusion report (mlxc.fusion_report / fusion_groups): every group of the test
corpus, the benchmark programs and a decoder layer gets a vectorized schedule or a
runtime kernel, none is left as scalar loops; and the report says what was fused."""

from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlxc
from corpus import PROGRAMS
from helpers import export_program
from mlxc.targets.cpu import fusion_report

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from programs import BENCHES  # noqa: E402
from unseen import UNSEEN  # noqa: E402


def _scalar_groups(text) -> list:
    return [(g.op, g.loops, g.schedule, g.location)
            for g in fusion_report.unvectorized(mlxc.fusion_groups(text))]


def test_corpus_has_no_scalar_fallback():
    found = {}
    for p in PROGRAMS:
        text, _, _ = export_program(p.fn, *p.make_inputs(np.random.default_rng(0)), x64=p.x64)
        scalar = _scalar_groups(text)
        if scalar:
            found[p.name] = scalar
    assert not found, f"groups left as scalar loops: {found}"


@pytest.mark.parametrize("bench", BENCHES + UNSEEN, ids=lambda b: b.name)
def test_benchmarks_have_no_scalar_fallback(bench):
    args = bench.make_inputs(np.random.default_rng(0))
    text = jax.export.export(jax.jit(bench.fn))(*args).mlir_module()
    assert _scalar_groups(text) == []


def _decoder_layer(x, wqkv, wo, w1, w2):
    b, t, d = x.shape
    q, k, v = jnp.split(x @ wqkv, 3, axis=-1)
    heads = lambda a: a.reshape(b, t, 4, d // 4)
    s = jnp.einsum("bqhd,bkhd->bhqk", heads(q), heads(k)) / np.sqrt(d // 4)
    s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e9)
    o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), heads(v)).reshape(b, t, d)
    x = x + o @ wo
    return x + jax.nn.gelu(x @ w1) @ w2


def test_decoder_layer_report():
    rng = np.random.default_rng(0)
    d = 64
    args = [rng.standard_normal(s).astype(np.float32) * 0.1
            for s in ((2, 32, d), (d, 3 * d), (d, d), (d, 4 * d), (4 * d, d))]
    text, _, _ = export_program(_decoder_layer, *args)
    groups = mlxc.fusion_groups(text)
    assert fusion_report.unvectorized(groups, at_least=1) == []
    # Six products, each a kernel call or a contraction schedule over at most one batch,
    # row, column and contraction loop: none a rank-n generic with operands fused in.
    products = [g for g in groups if g.op != "linalg.fill" and
                g.schedule.startswith(("kernel", "contraction"))]
    assert len(products) == 6, [(g.op, g.schedule) for g in groups]
    assert all(len(g.loops) <= 4 and g.body.count("arith.mulf") == 1 for g in products)
    report = mlxc.fusion_report(text)
    assert f"{len(groups)} fusion groups" in report.splitlines()[0]
    assert "fused: " in report and "tanh" in report  # gelu's epilogue
    assert "a reduction's result is stored" in report  # softmax's max and sum


def _strided_conv_step(x, w, scale):
    """A stride-2 convolution with a batch norm and relu, and its gradient: the
    gradient's input side is an interior-padded insert (a strided tensor.insert_slice),
    which the vectorizer must be kept away from."""
    def loss(x, w, scale):
        y = jax.lax.conv_general_dilated(x, w, (2, 2), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        mean = y.mean((0, 1, 2))
        var = ((y - mean) ** 2).mean((0, 1, 2))
        return jnp.sum(jax.nn.relu((y - mean) * jax.lax.rsqrt(var + 1e-5) * scale) ** 2)
    return jax.grad(loss, argnums=(0, 1, 2))(x, w, scale)


def test_a_strided_insert_leaves_the_rest_of_its_function_vectorized():
    # One strided insert (the gradient of a stride-2 convolution) used to leave every
    # op of its function tiled but scalar: a ResNet training step ran as scalar loops.
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((4, 16, 16, 8)).astype(np.float32),
            rng.standard_normal((3, 3, 8, 16)).astype(np.float32) * 0.2,
            rng.standard_normal(16).astype(np.float32)]
    text, _, _ = export_program(_strided_conv_step, *args)
    linalg = str(mlxc.lower(text, stop_after="linalg"))
    assert any("tensor.insert_slice" in line and "[1, 2, 2, 1]" in line
               for line in linalg.splitlines())  # the case this test is about
    assert _scalar_groups(text) == []
    got = mlxc.compile(text)(*args)
    want = jax.jit(_strided_conv_step)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=2e-4, atol=2e-4)
