"""Cold compile time of GPT-style decoders: mlxc against jax.jit (XLA CPU).

    python bench/compile_time.py                  # 4 layers d=256 seq 128, 12 layers d=384 seq 64
    python bench/compile_time.py --layers 12      # only the 12-layer decoder
    python bench/compile_time.py --repeat 3       # best of 3 compiles each (interleaved)
    python bench/compile_time.py --timing         # also mlxc's per-pass table (MLXC_TIMING)
    MLXC_DEDUP_KERNELS=0 python bench/compile_time.py   # repeated layers compiled each time

The decoder is plain JAX: token embedding, L x [layernorm, causal multi-head attention,
layernorm, MLP with gelu] with residuals, a final layernorm and the logits. Both
compilers first compile a tiny unrelated program (as bench/run.py does), so neither is
charged with its one-time start-up; then each decoder is compiled `--repeat` times by
each, alternating, and the best is kept (the mlxc compile cache is off; XLA compiles a
fresh `jax.jit` each time). The results of the two are compared once, and mlxc's
seconds per stage (exe.compile_stats()) are printed below the ratios.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mlxc  # noqa: E402
from timing import flat as _flat, geomean, max_rel_err as _max_rel_err, warm_up  # noqa: E402

# (layers, model width, sequence length): the two decoders of issue 14.
CONFIGS = {4: (4, 256, 128), 12: (12, 384, 64)}
HEADS = 4
VOCAB = 512


def _layernorm(x, g, b):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b


def _attention(x, wq, wk, wv, wo):
    s, d = x.shape
    hd = d // HEADS
    q = (x @ wq).reshape(s, HEADS, hd).transpose(1, 0, 2)
    k = (x @ wk).reshape(s, HEADS, hd).transpose(1, 0, 2)
    v = (x @ wv).reshape(s, HEADS, hd).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(hd).astype(np.float32)
    mask = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(mask, scores, -1e9)
    out = jax.nn.softmax(scores, axis=-1) @ v
    return out.transpose(1, 0, 2).reshape(s, d) @ wo


def decoder(tokens, embed, layers, final):
    x = embed[tokens]
    for p in layers:
        x = x + _attention(_layernorm(x, p["g1"], p["b1"]), p["wq"], p["wk"], p["wv"], p["wo"])
        h = _layernorm(x, p["g2"], p["b2"])
        x = x + jax.nn.gelu(h @ p["w1"] + p["c1"]) @ p["w2"] + p["c2"]
    x = _layernorm(x, final["g"], final["b"])
    return x @ embed.T


def make_inputs(layers: int, d: int, seq: int, seed: int = 0):
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    ps = [dict(g1=np.ones(d, np.float32), b1=np.zeros(d, np.float32),
               wq=w(d, d), wk=w(d, d), wv=w(d, d), wo=w(d, d),
               g2=np.ones(d, np.float32), b2=np.zeros(d, np.float32),
               w1=w(d, 4 * d), c1=np.zeros(4 * d, np.float32),
               w2=w(4 * d, d), c2=np.zeros(d, np.float32)) for _ in range(layers)]
    tokens = rng.integers(0, VOCAB, seq).astype(np.int32)
    final = dict(g=np.ones(d, np.float32), b=np.zeros(d, np.float32))
    return tokens, w(VOCAB, d), ps, final


def export_text(args) -> str:
    return jax.export.export(jax.jit(decoder, keep_unused=True))(*args).mlir_module()


def measure(layers: int, repeat: int, timing: bool) -> dict:
    args = make_inputs(*CONFIGS[layers])
    flat, tree = jax.tree_util.tree_flatten(args)
    text = export_text(args)
    best_m = best_x = float("inf")
    exe = compiled = None
    stages: dict = {}
    for i in range(repeat):
        # A function of another name each time: jax would reuse the executable it
        # compiled for the same module.
        fresh = functools.wraps(decoder)(lambda *a: decoder(*a))
        fresh.__name__ = f"decoder_{i}"
        lowered = jax.jit(fresh).lower(*args)
        t = time.perf_counter()
        compiled = lowered.compile()
        best_x = min(best_x, time.perf_counter() - t)
        with mlxc.settings.override(cache=False, **({"timing": True} if timing else {})):
            t = time.perf_counter()
            exe = mlxc.compile(text)
            best_m = min(best_m, time.perf_counter() - t)
        # getattr: an mlxc from before compile_stats() (a before/after run) has no stages
        for group, seconds in getattr(exe, "compile_stats", dict)().get("groups", {}).items():
            stages[group] = min(stages.get(group, seconds), seconds)
    err = _max_rel_err(exe(*flat), _flat(compiled(*args)))
    return dict(layers=layers, config=CONFIGS[layers], mlxc_s=best_m, xla_s=best_x, err=err,
                stages=stages)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, action="append", choices=sorted(CONFIGS))
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--timing", action="store_true", help="print mlxc's compile-time table")
    a = p.parse_args(argv)
    warm_up()
    rows = [measure(n, a.repeat, a.timing) for n in (a.layers or sorted(CONFIGS))]
    print(f"cold compile, mlxc vs jax.jit {jax.__version__} (best of {a.repeat})")
    print(f"{'decoder':<26} {'mlxc':>8} {'XLA':>8} {'ratio':>6}  {'err':>7}")
    for r in rows:
        L, d, s = r["config"]
        print(f"{f'{L} layers d={d} seq {s}':<26} {r['mlxc_s']:7.2f}s {r['xla_s']:7.2f}s "
              f"{r['mlxc_s'] / r['xla_s']:6.2f}  {r['err']:7.1e}")
    print(f"geomean ratio: {geomean([r['mlxc_s'] / r['xla_s'] for r in rows]):.2f}")
    groups = [g for g in rows[0]["stages"] if g != "cache"]
    if groups:
        print("\nmlxc seconds per stage (best of the compiles; codegen: LLVM)")
        print(f"{'decoder':<10}" + "".join(f"{g:>10}" for g in groups))
        for r in rows:
            print(f"{r['layers']:>2} layers " + "".join(f"{r['stages'].get(g, 0):10.2f}"
                                                       for g in groups))
    return 0


if __name__ == "__main__":
    sys.exit(main())
