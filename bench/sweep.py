"""The shape sweep: single op patterns over random ranks and shapes, mlxc against jax.jit.

    python bench/sweep.py                        # 48 cases from seed 0 (a few minutes)
    python bench/sweep.py --seed 3 --count 100   # other shapes, more of them
    python bench/sweep.py -k matmul -k gather    # patterns whose name contains one of these
    python bench/sweep.py --json out.json        # also write the rows as JSON

The patterns are those whole models are made of: products with elementwise epilogues,
batched products and products with transposed operands or several free dimensions,
rank-3 and rank-4 `x @ w`, reductions over each axis, transposes, gathers and scatters.
Case i takes pattern i modulo their number (so every pattern is drawn as often) and
random dims for it from the seed, keeping each array between 1e4 and 1e7 elements (and
a product's work below 4e8 flops) so that calls stay between about 10 us and 10 ms.
The first case is always the performance issue's worst op, relu(x @ w1) @ w2 with
x [2,128,256]. Each case is timed in this process as bench/timing.py says (interleaved
with jax.jit, best batch); the table is sorted by ratio mlxc / XLA, the worst last,
followed by the geomean ratio per pattern and the worst ratios.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from timing import compare, error_text, finish, fmt_time, geomean, warm_up  # noqa: E402

DIMS = [2, 3, 4, 6, 8, 12, 16, 24, 31, 32, 48, 64, 96, 100, 128, 192, 256, 384, 500, 512,
        768, 1000, 1024, 2048]
MIN_ELEMENTS, MAX_ELEMENTS, MAX_FLOPS = 1e4, 1e7, 4e8


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def _shape(d) -> str:
    return "[" + ",".join(map(str, d)) + "]"


def _dims(rng, rank: int, lo=MIN_ELEMENTS, hi=MAX_ELEMENTS) -> list[int]:
    while True:
        d = [int(rng.choice(DIMS)) for _ in range(rank)]
        if lo <= math.prod(d) <= hi:
            return d


def _einsum_dims(rng, spec: str) -> dict[str, int]:
    """Sizes for the letters of an einsum: every operand and the result within the element
    bounds (the smaller operand may go down to 1e3: a weight vector, a short sequence),
    the product's work below MAX_FLOPS."""
    ins, out = spec.split("->")
    operands = ins.split(",")
    letters = sorted(set(spec) - set(",->"))
    while True:
        size = {c: int(rng.choice(DIMS)) for c in letters}
        counts = [math.prod(size[c] for c in t) for t in operands + [out]]
        flops = 2 * math.prod(size.values())
        if (max(counts) <= MAX_ELEMENTS and min(counts) >= 1e3 and max(counts) >= MIN_ELEMENTS
                and flops <= MAX_FLOPS):
            return size


def _einsum_case(rng, spec: str, epilogue=None):
    size = _einsum_dims(rng, spec)
    ins = spec.split("->")[0].split(",")
    args = tuple(_f32(rng, [size[c] for c in t]) for t in ins)
    name = f"einsum {spec} " + " ".join(_shape([size[c] for c in t]) for t in ins)
    if epilogue is None:
        return name, lambda *xs: jnp.einsum(spec, *xs), args
    ep_name, ep = epilogue
    return f"{ep_name}({name})", lambda *xs: ep(jnp.einsum(spec, *xs)), args


# --- the patterns: each (rng) -> (description, fn, args) ---------------------------------

EPILOGUES = {
    "relu": jax.nn.relu,
    "gelu": jax.nn.gelu,
    "tanh": jnp.tanh,
    "silu": jax.nn.silu,
}


def matmul_epilogue(rng):
    """x @ w (+ b) with an activation, x of rank 2 to 4: a dense layer."""
    rank = int(rng.integers(2, 5))
    spec = {2: "mk,kn->mn", 3: "bmk,kn->bmn", 4: "abmk,kn->abmn"}[rank]
    size = _einsum_dims(rng, spec)
    ins = spec.split("->")[0].split(",")
    x, w = (_f32(rng, [size[c] for c in t]) for t in ins)
    b = _f32(rng, [size["n"]])
    act_name = str(rng.choice(sorted(EPILOGUES) + ["bias"]))
    if act_name == "bias":
        return f"x@w+b x{_shape(x.shape)} w{_shape(w.shape)}", lambda x, w, b: x @ w + b, (x, w, b)
    act = EPILOGUES[act_name]
    return (f"{act_name}(x@w+b) x{_shape(x.shape)} w{_shape(w.shape)}",
            lambda x, w, b: act(x @ w + b), (x, w, b))


def ffn(rng):
    """act(x @ w1) @ w2, the transformer's MLP (the issue's worst op, at random sizes)."""
    rank = int(rng.integers(2, 4))
    spec = "bmk,kh->bmh" if rank == 3 else "mk,kh->mh"
    size = _einsum_dims(rng, spec)
    while min(size["k"], size["h"]) < 32:  # a layer's widths, not a projection to 3 dims
        size = _einsum_dims(rng, spec)
    lead = [size[c] for c in spec.split(",")[0][:-1]]
    x = _f32(rng, lead + [size["k"]])
    w1, w2 = _f32(rng, (size["k"], size["h"])), _f32(rng, (size["h"], size["k"]))
    return (f"relu(x@w1)@w2 x{_shape(x.shape)} w1{_shape(w1.shape)}",
            lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2, (x, w1, w2))


def batched_matmul(rng):
    spec = str(rng.choice(["bmk,bkn->bmn", "abmk,abkn->abmn"]))
    return _einsum_case(rng, spec)


def transposed_matmul(rng):
    """Operands transposed, batch dims not leading, several free dims on one side."""
    spec = str(rng.choice(["km,kn->mn", "mk,nk->mn", "bqd,bkd->bqk", "bhqd,bhkd->bhqk",
                           "abk,kcd->abcd", "mbk,bkn->bmn", "bkm,bkn->bmn", "bij,jk->bik"]))
    epilogue = None if rng.random() < 0.5 else ("relu", jax.nn.relu)
    return _einsum_case(rng, spec, epilogue)


def reduction(rng):
    rank = int(rng.integers(2, 5))
    shape = _dims(rng, rank)
    axis = int(rng.integers(0, rank))
    op = str(rng.choice(["sum", "max", "mean", "var"]))
    fn = {"sum": jnp.sum, "max": jnp.max, "mean": jnp.mean, "var": jnp.var}[op]
    return f"{op}(x, axis={axis}) x{_shape(shape)}", lambda x: fn(x, axis=axis), (_f32(rng, shape),)


def transpose(rng):
    rank = int(rng.integers(2, 5))
    shape = _dims(rng, rank)
    perm = tuple(int(p) for p in rng.permutation(rank))
    while perm == tuple(range(rank)):
        perm = tuple(int(p) for p in rng.permutation(rank))
    return (f"transpose(x, {perm}) x{_shape(shape)}", lambda x: jnp.transpose(x, perm),
            (_f32(rng, shape),))


def gather(rng):
    kind = str(rng.choice(["embedding", "take", "take_along_axis", "shifted"]))
    if kind == "embedding":
        vocab, d = _dims(rng, 2)
        ids = rng.integers(0, vocab, size=_dims(rng, 2, lo=64, hi=MAX_ELEMENTS / d))
        return (f"table[ids] table{_shape([vocab, d])} ids{_shape(ids.shape)}",
                lambda t, i: t[i], (_f32(rng, (vocab, d)), ids.astype(np.int32)))
    if kind == "shifted":
        # A language model's loss: the logit of each next token, logits[:, :-1] by tok[:, 1:].
        batch, seq, vocab = _dims(rng, 3)
        tok = rng.integers(0, vocab, size=(batch, seq)).astype(np.int32)
        return (f"take_along_axis(x[:, :-1], ids[:, 1:, None], -1) x{_shape([batch, seq, vocab])}",
                lambda x, t: jnp.take_along_axis(x[:, :-1], t[:, 1:, None], axis=-1),
                (_f32(rng, (batch, seq, vocab)), tok))
    rank = int(rng.integers(2, 4))
    shape = _dims(rng, rank)
    axis = int(rng.integers(0, rank))
    x = _f32(rng, shape)
    if kind == "take":
        n = int(rng.choice([16, 100, 256, 1000]))
        ids = rng.integers(0, shape[axis], size=n).astype(np.int32)
        return (f"take(x, ids[{ids.size}], axis={axis}) x{_shape(shape)}",
                lambda x, i: jnp.take(x, i, axis=axis), (x, ids))
    ids = rng.integers(0, shape[axis], size=shape).astype(np.int32)
    return (f"take_along_axis(x, ids, axis={axis}) x{_shape(shape)}",
            lambda x, i: jnp.take_along_axis(x, i, axis=axis), (x, ids))


def scatter(rng):
    op = str(rng.choice(["add", "set"]))
    rank = int(rng.integers(2, 4))
    shape = _dims(rng, rank)
    axis = int(rng.integers(0, rank))
    row = math.prod(shape) // shape[axis]
    n = int(rng.choice([k for k in (16, 100, 256, 1000) if k * row <= MAX_ELEMENTS] or [1]))
    ids = rng.integers(0, shape[axis], size=n).astype(np.int32)
    upd = _f32(rng, shape[:axis] + [n] + shape[axis + 1:])
    index = (slice(None),) * axis

    def fn(x, i, u):
        ref = x.at[index + (i,)]
        return ref.add(u) if op == "add" else ref.set(u)

    return (f"x.at[{':, ' * axis}ids[{n}]].{op}(u) x{_shape(shape)}", fn,
            (_f32(rng, shape), ids, upd))


PATTERNS = [matmul_epilogue, ffn, batched_matmul, transposed_matmul, reduction, transpose,
            gather, scatter]


def issue_ffn(rng):
    x, w1, w2 = _f32(rng, (2, 128, 256)), _f32(rng, (256, 1024)), _f32(rng, (1024, 256))
    return ("relu(x@w1)@w2 x[2,128,256] w1[256,1024] (issue)",
            lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2, (x, w1, w2))


def make_cases(seed: int, count: int, keys: list[str]):
    """(pattern name, description, fn, args) for `count` cases, reproducibly from `seed`."""
    rng = np.random.default_rng(seed)
    patterns = [p for p in PATTERNS if not keys or any(k in p.__name__ for k in keys)]
    out = []
    if not keys or any(k in "ffn" for k in keys):
        out.append(("ffn", *issue_ffn(rng)))
    for i in range(count - len(out)):
        p = patterns[i % len(patterns)]
        out.append((p.__name__, *p(rng)))
    return out


def print_table(rows: list[dict], worst: int) -> None:
    ok = sorted((r for r in rows if "error" not in r), key=lambda r: r["ratio"])
    width = max([len(r["case"]) for r in rows] + [20])
    head = (f"{'case':<{width}} {'mlxc':>9} {'XLA':>9} {'ratio':>6}  {'compile m/x':>17}  "
            f"{'err':>7} check")
    print(head)
    print("-" * len(head))
    for r in ok:
        print(f"{r['case']:<{width}} {fmt_time(r['mlxc_s']):>9} {fmt_time(r['xla_s']):>9} "
              f"{r['ratio']:6.2f}  {fmt_time(r['mlxc_compile_s']):>8}/"
              f"{fmt_time(r['xla_compile_s']):>8}"
              f"  {r['rel_err']:7.1e} {r['check']}")
    for r in rows:
        if "error" in r:
            print(f"{r['case']:<{width}} FAILED: {r['error']}")
    print("-" * len(head))
    if not ok:
        return
    print(f"geomean ratio mlxc/XLA: {geomean([r['ratio'] for r in ok]):.2f} over {len(ok)} cases; "
          "per pattern:")
    for p in dict.fromkeys(r["pattern"] for r in ok):
        these = [r["ratio"] for r in ok if r["pattern"] == p]
        print(f"  {p:<18} {geomean(these):6.2f}  (worst {max(these):.2f}, {len(these)} cases)")
    print(f"worst {min(worst, len(ok))}:")
    for r in ok[::-1][:worst]:
        print(f"  {r['ratio']:6.2f}  {r['case']}")
    bad = [r["case"] for r in ok if r["check"].startswith("WRONG")]
    print(f"wrong answers: {', '.join(bad) if bad else 'none'}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int, default=48, help="number of cases")
    p.add_argument("-k", action="append", default=[], help="patterns whose name contains this")
    p.add_argument("--repeat", type=int, default=5, help="interleaved timed batches per compiler")
    p.add_argument("--batch-ms", type=float, default=20.0, help="wall time of one batch")
    p.add_argument("--worst", type=int, default=10, help="how many worst ratios to list")
    p.add_argument("--json", help="also write the rows to this file")
    a = p.parse_args(argv)
    todo = make_cases(a.seed, a.count, a.k)
    if not todo:
        p.error(f"no pattern matches {a.k}; known: {', '.join(f.__name__ for f in PATTERNS)}")
    print(f"shape sweep, seed {a.seed}, {len(todo)} cases: mlxc vs jax.jit {jax.__version__} "
          f"on {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n", flush=True)
    warm_up()
    rows = []
    for pattern, case, fn, args in todo:
        row = dict(pattern=pattern, case=case)
        try:
            row.update(compare(fn, args, a.repeat, a.batch_ms / 1e3))
            state = f"{row['ratio']:.2f}"
        except Exception as e:  # a failing case is a row of the table, not the end of the run
            row["error"] = state = error_text(e)
        rows.append(row)
        print(f"  {state:>6}  {case}", file=sys.stderr, flush=True)
    print_table(rows, a.worst)
    return finish(rows, a.json)


if __name__ == "__main__":
    sys.exit(main())
