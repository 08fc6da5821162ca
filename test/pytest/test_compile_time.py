"""Compile time: repeated layers compiled once (mlxc-outline-layers on StableHLO,
mlxc-dedup-kernels on loop nests) and the timing report (MLXC_TIMING,
exe.compile_stats())."""

import re

import jax
import jax.numpy as jnp
import numpy as np

import mlxc
import mlxc.compile_context
from mlxc import irutil, settings
from mlxc._mlir import ir
from mlxc.targets.cpu import parallel_jit

from helpers import as_tuple, assert_matches, export_program, normwise_error

LAYERS = 4


def _layers(x, ws, bs):
    for w, b in zip(ws, bs):
        h = jax.nn.gelu(x @ w + b)
        mean = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.mean((h - mean) ** 2, axis=-1, keepdims=True)
        x = x + (h - mean) * jax.lax.rsqrt(var + 1e-5)
    return x


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    ws = [(rng.standard_normal((32, 32)) / 6).astype(np.float32) for _ in range(LAYERS)]
    bs = [rng.standard_normal(32).astype(np.float32) for _ in range(LAYERS)]
    return x, ws, bs


def test_repeated_loop_nests_compile_once(tmp_path):
    x, ws, bs = _inputs()
    text, _, ref = export_program(_layers, x, ws, bs)
    # Layers kept inline (the StableHLO outlining below would leave no twin nests).
    with settings.override(cache=False, outline_layers=False):
        exe = mlxc.compile(text)
        llvm = mlxc.lower(text)
    args = [x, *ws, *bs]
    assert_matches(exe(*args), ref, 1e-5)
    # The layers' loop nests are functions, each called for several layers, and kept
    # out of line (no_inline), so that LLVM compiles each once.
    shared = re.findall(r"llvm\.func @(\w+)\(.*mlxc\.shared_kernel", llvm)
    assert shared, "no shared kernel"
    calls = [llvm.count(f"llvm.call @{name}(") for name in shared]
    assert min(calls) >= 2 and max(calls) >= LAYERS - 1, calls
    with mlxc.compile_context.compile_context() as ctx:
        module = ir.Module.parse(llvm, ctx)
        parallel_jit.internalize_kernels(module)
        for f in irutil.functions(module):
            if irutil.sym_name(f) in shared:
                assert "no_inline" in f.attributes and "internal" in str(f.attributes["linkage"])
    path = tmp_path / "layers.so"
    exe.save(path)
    assert_matches(mlxc.load(path)(*args), ref, 1e-5)
    # MLXC_DEDUP_KERNELS=0: each nest compiled where it is, the same results.
    with settings.override(cache=False, dedup_kernels=False, outline_layers=False):
        assert "mlxc.shared_kernel" not in mlxc.lower(text)
        assert_matches(mlxc.compile(text)(*args), ref, 1e-5)


def _block(x, p):
    """A pre-layernorm transformer block in plain JAX (causal attention, gelu MLP)."""
    def norm(v):
        mean = jnp.mean(v, axis=-1, keepdims=True)
        return (v - mean) * jax.lax.rsqrt(jnp.var(v, axis=-1, keepdims=True) + 1e-5)

    s, d = x.shape
    h = norm(x)
    q, k, v = (h @ p["wq"]).reshape(s, 2, d // 2), (h @ p["wk"]).reshape(s, 2, d // 2), \
        (h @ p["wv"]).reshape(s, 2, d // 2)
    scores = jnp.einsum("qhd,khd->hqk", q, k) / np.sqrt(d // 2).astype(np.float32)
    scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, -1e9)
    a = jnp.einsum("hqk,khd->qhd", jax.nn.softmax(scores, axis=-1), v).reshape(s, d)
    x = x + a @ p["wo"]
    return x + jax.nn.gelu(norm(x) @ p["w1"] + p["b1"]) @ p["w2"]


def _decoder(x, blocks):
    for p in blocks:
        x = _block(x, p)
    return jnp.tanh(x)


def _decoder_inputs(layers: int, s: int = 8, d: int = 16):
    rng = np.random.default_rng(1)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    blocks = [dict(wq=w(d, d), wk=w(d, d), wv=w(d, d), wo=w(d, d), w1=w(d, 2 * d),
                   b1=w(2 * d) / 4, w2=w(2 * d, d)) for _ in range(layers)]
    return w(s, d), blocks


def _layer_calls(text: str) -> dict[str, int]:
    """Calls of each outlined layer function in the program after the simplify stage."""
    simplified = mlxc.lower(text, stop_after="simplify")
    names = re.findall(r"func\.func private @(\w+)\(.*attributes \{mlxc\.layer", simplified)
    return {n: simplified.count(f"call @{n}(") for n in names}


def test_repeated_layers_are_one_function():
    x, blocks = _decoder_inputs(4)
    text, _, ref = export_program(_decoder, x, blocks)
    args = [x, *jax.tree_util.tree_leaves(blocks)]
    with settings.override(cache=False):
        assert list(_layer_calls(text).values()) == [4]
        assert_matches(mlxc.compile(text)(*args), ref, 1e-5)
        # After bufferization the layer is still one function, called four times.
        lowered = mlxc.lower(text)
        assert len(re.findall(r"llvm\.call @main_layer0\(", lowered)) == 4
    # MLXC_OUTLINE_LAYERS=0: the same results, and much more code for LLVM (the four
    # layers' loop nests, fewer of which mlxc-dedup-kernels finds alike).
    with settings.override(cache=False, outline_layers=False):
        assert _layer_calls(text) == {}
        assert_matches(mlxc.compile(text)(*args), ref, 1e-5)
        assert mlxc.lower(text).count("\n") > 1.5 * lowered.count("\n")


def test_training_step_outlines_forward_and_backward_layers():
    x, blocks = _decoder_inputs(3)

    def step(x, blocks):
        loss, g = jax.value_and_grad(lambda b: jnp.mean(_decoder(x, b) ** 2))(blocks)
        return loss, jax.tree_util.tree_map(lambda p, d: p - 0.1 * d, blocks, g)

    text, _, _ = export_program(step, x, blocks)
    ref = tuple(np.asarray(r) for r in jax.tree_util.tree_leaves(jax.jit(step)(x, blocks)))
    with settings.override(cache=False):
        calls = _layer_calls(text)
        # The forward layers and the backward layers: two functions, each called for
        # the layers whose code is alike (at least two of the three).
        assert len(calls) >= 2 and min(calls.values()) >= 2, calls
        exe = mlxc.compile(text)
    assert_matches(exe(x, *jax.tree_util.tree_leaves(blocks)), ref, 1e-4)


def test_layers_that_differ_are_not_merged():
    # The same code with another width in the middle layer: only alike layers share.
    x, blocks = _decoder_inputs(4)
    rng = np.random.default_rng(2)
    blocks[2] = dict(blocks[2], w1=rng.standard_normal((16, 48)).astype(np.float32) / 4,
                     b1=np.zeros(48, np.float32),
                     w2=rng.standard_normal((48, 16)).astype(np.float32) / 7)
    text, _, ref = export_program(_decoder, x, blocks)
    with settings.override(cache=False):
        calls = _layer_calls(text)
        assert sum(calls.values()) <= 2, calls  # layers 0 and 1 (alike), at most
        assert_matches(mlxc.compile(text)(x, *jax.tree_util.tree_leaves(blocks)), ref, 1e-5)


def test_compile_stats_and_timing_table(capsys):
    x, ws, bs = _inputs()
    text, _, ref = export_program(_layers, x, ws, bs)
    stages = [s.name for s in mlxc.pipeline().stages]
    with settings.override(cache=False):
        exe = mlxc.compile(text)
    stats = exe.compile_stats()
    assert list(stats["groups"]) == ["frontend", *stages, "codegen", "cache"]
    assert 0 < sum(stats["groups"].values()) <= stats["total_s"]
    assert capsys.readouterr().err == ""  # the table only with MLXC_TIMING=1
    with settings.override(cache=False, timing=True):
        exe = mlxc.compile(text)
    assert_matches(exe(x, *ws, *bs), ref, 1e-5)
    err = capsys.readouterr().err
    assert err.startswith("mlxc compile time:")
    rows = exe.compile_stats()["rows"]
    # One row per pass that ran, under its stage, and the LLVM steps.
    ran = {(r["group"], r["name"]) for r in rows}
    assert ("bufferize", "one-shot-bufferize") in ran
    assert ("lower", "mlxc-dedup-kernels") in ran
    assert ("codegen", "optimize, generate code, link") in ran
    assert "one-shot-bufferize" in err and "optimize, generate code, link" in err


def test_flax_llama_style_decoder_and_adam_step():
    # A decoder unlike the ones above, written with flax and optax: RMSNorm, rotary
    # embeddings, grouped-query attention (jnp.repeat of k and v), a -inf causal mask
    # and a SwiGLU MLP; its forward and an Adam training step on the next-token loss.
    import flax.linen as nn
    import optax

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            b, s, d = x.shape
            h = nn.RMSNorm()(x)
            q = nn.Dense(d)(h).reshape(b, s, 4, 8)
            k, v = (nn.Dense(16)(h).reshape(b, s, 2, 8) for _ in range(2))
            pos = jnp.arange(s)[:, None] / (10000 ** (jnp.arange(4) / 4))
            cos, sin = jnp.cos(pos)[None, :, None], jnp.sin(pos)[None, :, None]

            def rope(t):
                a, c = t[..., :4], t[..., 4:]
                return jnp.concatenate([a * cos - c * sin, a * sin + c * cos], -1)

            q, k = rope(q), jnp.repeat(rope(k), 2, axis=2)
            att = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.float32(np.sqrt(8))
            att = jnp.where(jnp.tril(jnp.ones((s, s), bool)), att, -jnp.inf)
            o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(att, -1),
                           jnp.repeat(v, 2, axis=2)).reshape(b, s, d)
            x = x + nn.Dense(d)(o)
            h = nn.RMSNorm()(x)
            return x + nn.Dense(d)(nn.silu(nn.Dense(64)(h)) * nn.Dense(64)(h))

    class Decoder(nn.Module):
        @nn.compact
        def __call__(self, tok):
            x = nn.Embed(64, 32)(tok)
            for _ in range(3):
                x = Block()(x)
            return nn.Dense(64)(nn.RMSNorm()(x))

    model, opt = Decoder(), optax.adam(1e-2)
    tok = np.random.default_rng(3).integers(0, 64, (2, 16)).astype(np.int32)
    params = model.init(jax.random.PRNGKey(0), tok)
    state = opt.init(params)

    def step(p, s, t):
        def loss(p):
            logits = model.apply(p, t)
            return optax.softmax_cross_entropy_with_integer_labels(logits[:, :-1], t[:, 1:]).mean()
        value, g = jax.value_and_grad(loss)(p)
        updates, s = opt.update(g, s, p)
        return value, optax.apply_updates(p, updates), s

    leaves = jax.tree_util.tree_leaves
    for fn, args in [(lambda p, t: model.apply(p, t), (params, tok)), (step, (params, state, tok))]:
        text = jax.export.export(jax.jit(fn, keep_unused=True))(*args).mlir_module()
        xla = [np.asarray(r) for r in leaves(jax.jit(fn)(*args))]
        # Adam divides by the root of tiny second moments: where the gradient is mostly
        # rounding, f32 results differ at 1e-4. Judged against f64, next to XLA's error.
        with jax.enable_x64(True):
            wide = jax.tree_util.tree_map(
                lambda a: np.asarray(a, np.float64) if np.asarray(a).dtype == np.float32 else a, args)
            exact = [np.asarray(r) for r in leaves(jax.jit(fn)(*wide))]
        with settings.override(cache=False):
            calls = _layer_calls(text)
            assert calls and max(calls.values()) >= 2, calls
            got = as_tuple(mlxc.compile(text)(*leaves(args)))
        assert len(got) == len(exact)
        for i, (g, x, e) in enumerate(zip(got, xla, exact)):
            assert g.dtype == x.dtype and g.shape == x.shape, i
            assert normwise_error(g, e) <= max(1e-5, 10 * normwise_error(x, e)), i
