"""Array ops: layout (slices, concat, pad, transposes, reshapes, broadcasts), reductions,
dot_general, convolutions, gathers and scatters on sliced operands, sorts."""

from __future__ import annotations

import numpy as np

from .ops import BOOL, COMPLEX, FLOAT, SINT, UINT, _lax, kind, op


def _one(g, o, rank=None, min_rank=0):
    a = g.pick(o, rank=rank)
    if a is None or len(g.value(a).shape) < min_rank:
        return None
    return a


# -- layout -----------------------------------------------------------------------------

LAYOUT = "layout inplace gather"


def _slice_params(g, shape):
    start, limit, strides = [], [], []
    for d in shape:
        s = int(g.rng.integers(0, d))
        e = int(g.rng.integers(s + 1, d + 1))
        start.append(s)
        limit.append(e)
        strides.append(int(g.rng.integers(1, 3)))
    return {"start": start, "limit": limit, "strides": strides}


def _slice_sample(g, o):
    a = _one(g, o, min_rank=1)
    return None if a is None else ([a], _slice_params(g, g.value(a).shape))


op("slice", lambda p, x: _lax()[1].slice(x, p["start"], p["limit"], p["strides"]), "FCIUB",
   LAYOUT, sample=_slice_sample)


def _transpose_sample(g, o):
    a = _one(g, o, min_rank=2)
    return None if a is None else ([a], {"perm": [int(i) for i in g.rng.permutation(len(g.value(a).shape))]})


op("transpose", lambda p, x: _lax()[1].transpose(x, p["perm"]), "FCIUB", LAYOUT,
   sample=_transpose_sample)


def _reshape_sample(g, o):
    a = _one(g, o)
    if a is None:
        return None
    n = int(np.prod(g.value(a).shape))
    dims = []
    rest = n
    for _ in range(int(g.rng.integers(0, 3))):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        d = g.choice(divs)
        dims.append(d)
        rest //= d
    dims.append(rest)
    return [a], {"shape": [int(d) for d in g.rng.permutation(dims)]}


op("reshape", lambda p, x: _lax()[1].reshape(x, tuple(p["shape"])), "FCIUB", LAYOUT,
   sample=_reshape_sample)


def _broadcast_sample(g, o):
    a = _one(g, o)
    if a is None:
        return None
    shape = list(g.value(a).shape)
    out_rank = len(shape) + int(g.rng.integers(0, 3))
    dims = sorted(int(i) for i in g.rng.choice(out_rank, len(shape), replace=False))
    out = [int(g.rng.integers(1, 4)) for _ in range(out_rank)]
    for d, s in zip(dims, shape):
        out[d] = s if s != 1 or g.rng.random() < 0.5 else out[d]
    return [a], {"shape": out, "dims": dims}


op("broadcast", lambda p, x: _lax()[1].broadcast_in_dim(x, p["shape"], p["dims"]), "FCIUB",
   LAYOUT, sample=_broadcast_sample)


def _concat_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    v = g.value(a)
    axis = int(g.rng.integers(0, len(v.shape)))
    args = [a]
    for _ in range(int(g.rng.integers(1, 3))):
        shape = list(v.shape)
        shape[axis] = int(g.rng.integers(1, 4))
        args.append(g.pick_or_fresh(shape, v.dtype, o))
    return args, {"axis": axis}


op("concat", lambda p, *xs: _lax()[1].concatenate(xs, p["axis"]), "FCIUB", LAYOUT,
   sample=_concat_sample)


def _pad_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    v = g.value(a)
    config = [[int(g.rng.integers(-1, 3)), int(g.rng.integers(-1, 3)), int(g.rng.integers(0, 2))]
              for _ in v.shape]
    return [a, g.pick_or_fresh([], v.dtype, o)], {"config": config}


op("pad", lambda p, x, c: _lax()[1].pad(x, c, [tuple(t) for t in p["config"]]), "FCIUB",
   LAYOUT, sample=_pad_sample)


def _rev_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    r = len(g.value(a).shape)
    dims = sorted(int(i) for i in g.rng.choice(r, int(g.rng.integers(1, r + 1)), replace=False))
    return [a], {"dims": dims}


op("rev", lambda p, x: _lax()[1].rev(x, p["dims"]), "FCIUB", LAYOUT, sample=_rev_sample)


def _dynamic_slice_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    shape = g.value(a).shape
    idx = [g.fresh([], "int32", f"index:{d}") for d in shape]
    sizes = [int(g.rng.integers(1, d + 1)) for d in shape]
    return [a] + idx, {"sizes": sizes}


op("dynamic_slice", lambda p, x, *i: _lax()[1].dynamic_slice(x, i, p["sizes"]), "FCIUB",
   LAYOUT, sample=_dynamic_slice_sample)


def _dus_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    v = g.value(a)
    upd = g.pick_or_fresh([int(g.rng.integers(1, d + 1)) for d in v.shape], v.dtype, o)
    idx = [g.fresh([], "int32", f"index:{d}") for d in v.shape]
    return [a, upd] + idx, {}


op("dynamic_update_slice", lambda p, x, u, *i: _lax()[1].dynamic_update_slice(x, u, i),
   "FCIUB", LAYOUT, sample=_dus_sample)


# -- reductions ---------------------------------------------------------------------------

RED = "reduce"
_REDUCERS = {"sum": "FCIU", "max": "FIUB", "min": "FIUB", "prod": "FCIU", "and": "B", "or": "B"}


def _axes(g, rank):
    if rank == 0:
        return []
    k = int(g.rng.integers(1, rank + 1))
    return sorted(int(i) for i in g.rng.choice(rank, k, replace=False))


def _reduce_sample(g, o):
    a = _one(g, o)
    if a is None:
        return None
    v = g.value(a)
    ops = [r for r, kinds in _REDUCERS.items() if kind(v.dtype) in kinds]
    return [a], {"op": g.choice(ops), "axes": _axes(g, len(v.shape))}


def _reduce_fn(p, x):
    jax, lax, jnp = _lax()
    axes = tuple(p["axes"])
    if p["op"] in ("sum", "prod"):
        return getattr(jnp, p["op"])(x, axis=axes, dtype=x.dtype)
    return getattr(lax, f"reduce_{p['op']}")(x, axes)


op("reduce", _reduce_fn, "FCIUB", RED, sample=_reduce_sample, tol="sum")


def _arg_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    return [a], {"axis": int(g.rng.integers(0, len(g.value(a).shape))), "max": bool(g.rng.random() < 0.5)}


def _arg_fn(p, x):
    jax, lax, jnp = _lax()
    f = lax.argmax if p["max"] else lax.argmin
    return f(x, p["axis"], np.int32)


op("argmax", _arg_fn, "FIU", RED, sample=_arg_sample, discontinuous=True)


def _scan_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    v = g.value(a)
    ops = ["cumsum", "cumprod", "cummax", "cummin"] if kind(v.dtype) != COMPLEX else ["cumsum"]
    return [a], {"op": g.choice(ops), "axis": int(g.rng.integers(0, len(v.shape))),
                 "reverse": bool(g.rng.random() < 0.3)}


def _scan_fn(p, x):
    jax, lax, jnp = _lax()
    return getattr(lax, p["op"])(x, p["axis"], p["reverse"])


op("cumulative", _scan_fn, "FCIU", RED, sample=_scan_sample, tol="sum")


def _window_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    shape = g.value(a).shape
    r = len(shape)
    win = [int(g.rng.integers(1, min(d, 3) + 1)) for d in shape]
    strides = [int(g.rng.integers(1, 3)) for _ in shape]
    pads = [[int(g.rng.integers(0, 2)), int(g.rng.integers(0, 2))] for _ in shape]
    base = [int(g.rng.integers(1, 3)) if g.rng.random() < 0.2 else 1 for _ in shape]
    wdil = [int(g.rng.integers(1, 3)) if g.rng.random() < 0.2 else 1 for _ in shape]
    ops = ["max", "sum"] if kind(g.value(a).dtype) in (FLOAT, SINT, UINT) else ["sum"]
    return [a], {"op": g.choice(ops), "win": win, "strides": strides, "pads": pads,
                 "base": base, "wdil": wdil}


def _window_fn(p, x):
    jax, lax, jnp = _lax()
    if p["op"] == "max":
        init = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
        fn = lax.max
    else:
        init, fn = 0, lax.add
    return lax.reduce_window(x, jnp.array(init, x.dtype), fn, p["win"], p["strides"],
                             [tuple(q) for q in p["pads"]], p["base"], p["wdil"])


op("reduce_window", _window_fn, "FCIU", RED, sample=_window_sample, tol="sum")


def _logsumexp_sample(g, o):
    a = _one(g, o, min_rank=1)
    return None if a is None else ([a], {"axis": int(g.rng.integers(0, len(g.value(a).shape)))})


def _logsumexp_fn(p, x):
    jax, lax, jnp = _lax()
    return jax.nn.logsumexp(x, axis=p["axis"])


op("logsumexp", _logsumexp_fn, "F", RED, sample=_logsumexp_sample, tol="sum",
   only=("float32", "float64"))


# -- dot_general --------------------------------------------------------------------------

def _dot_sample(g, o):
    dt = g.choice([d for d in g.dtypes if kind(d) != BOOL])
    nb, nc = int(g.rng.integers(0, 3)), int(g.rng.integers(0, 3))
    nl, nr = int(g.rng.integers(0, 3)), int(g.rng.integers(0, 3))
    size = lambda: int(g.rng.integers(1, 6))
    batch = [size() for _ in range(nb)]
    contract = [size() for _ in range(nc)]
    lhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("l", i) for i in range(nl)]
    rhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("r", i) for i in range(nr)]
    lhs_dims = [lhs_dims[i] for i in g.rng.permutation(len(lhs_dims))]
    rhs_dims = [rhs_dims[i] for i in g.rng.permutation(len(rhs_dims))]
    free_l = [size() for _ in range(nl)]
    free_r = [size() for _ in range(nr)]

    def shape_of(dims):
        return [{"b": batch, "c": contract, "l": free_l, "r": free_r}[k][i] for k, i in dims]

    lhs = g.pick_or_fresh(shape_of(lhs_dims), dt, o, "plain")
    rhs = g.pick_or_fresh(shape_of(rhs_dims), dt, o, "plain")
    pos = lambda dims, key: [dims.index((key, i)) for i in range(nb if key == "b" else nc)]
    pref = None
    if dt in ("int8", "uint8") and g.rng.random() < 0.5:
        pref = "int32"
    if dt in ("bfloat16", "float16") and g.rng.random() < 0.5:
        pref = "float32"
    return [lhs, rhs], {"contract": [pos(lhs_dims, "c"), pos(rhs_dims, "c")],
                        "batch": [pos(lhs_dims, "b"), pos(rhs_dims, "b")], "pref": pref}


def _dot_fn(p, x, y):
    jax, lax, jnp = _lax()
    from .program import dtype
    dims = ((tuple(p["contract"][0]), tuple(p["contract"][1])),
            (tuple(p["batch"][0]), tuple(p["batch"][1])))
    return lax.dot_general(x, y, dims, preferred_element_type=dtype(p["pref"]) if p["pref"] else None)


op("dot_general", _dot_fn, "FCIU", "dot", sample=_dot_sample, tol="sum")


def _matmul_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None or kind(g.value(a).dtype) == BOOL:
        return None
    v = g.value(a)
    k = v.shape[-1]
    other = [k, int(g.rng.integers(1, 5))] if len(v.shape) < 2 or g.rng.random() < 0.5 else \
        list(v.shape[:-2]) + [k, int(g.rng.integers(1, 5))]
    if g.rng.random() < 0.3:
        other = other[-2:]
    return [a, g.pick_or_fresh(other, v.dtype, o, "plain")], {}


op("matmul", lambda p, x, y: _lax()[2].matmul(x, y), "FCIU", "dot", sample=_matmul_sample, tol="sum")


# -- convolutions -------------------------------------------------------------------------

def _conv_sample(g, o):
    dt = g.choice([d for d in g.dtypes if kind(d) == FLOAT])
    nsp = int(g.rng.integers(1, 4))
    groups = int(g.rng.integers(1, 3))
    bgroups = 1 if groups > 1 or g.rng.random() < 0.8 else 2
    n = int(g.rng.integers(1, 3)) * bgroups
    cin = int(g.rng.integers(1, 3)) * groups
    cout = int(g.rng.integers(1, 3)) * groups * bgroups
    sp_in = [int(g.rng.integers(2, 6 if nsp < 3 else 4)) for _ in range(nsp)]
    sp_k = [int(g.rng.integers(1, min(3, s) + 1)) for s in sp_in]
    rank = nsp + 2
    lhs_perm = [int(i) for i in g.rng.permutation(rank)]  # lhs_spec: dims of (N, C, spatial...)
    rhs_perm = [int(i) for i in g.rng.permutation(rank)]  # (O, I, spatial...)
    out_perm = [int(i) for i in g.rng.permutation(rank)]
    lhs_shape = [0] * rank
    for logical, size in zip(range(rank), [n, cin] + sp_in):
        lhs_shape[lhs_perm[logical]] = size
    rhs_shape = [0] * rank
    for logical, size in zip(range(rank), [cout, cin // groups] + sp_k):
        rhs_shape[rhs_perm[logical]] = size
    padding = g.choice(["SAME", "VALID", "explicit"])
    pads = [[int(g.rng.integers(-1, 3)), int(g.rng.integers(0, 3))] for _ in range(nsp)]
    params = {
        "strides": [int(g.rng.integers(1, 3)) for _ in range(nsp)],
        "padding": padding if padding != "explicit" else pads,
        "lhs_dil": [int(g.rng.integers(1, 3)) if g.rng.random() < 0.25 else 1 for _ in range(nsp)],
        "rhs_dil": [int(g.rng.integers(1, 3)) if g.rng.random() < 0.25 else 1 for _ in range(nsp)],
        "dn": [lhs_perm, rhs_perm, out_perm], "groups": groups, "bgroups": bgroups,
        "pref": "float32" if dt in ("bfloat16", "float16") and g.rng.random() < 0.3 else None,
    }
    if padding != "explicit" and any(d > 1 for d in params["lhs_dil"]):
        params["lhs_dil"] = [1] * nsp
    return [g.fresh(lhs_shape, dt, "plain"), g.fresh(rhs_shape, dt, "plain")], params


def _conv_fn(p, x, w):
    jax, lax, jnp = _lax()
    from .program import dtype
    pad = p["padding"] if isinstance(p["padding"], str) else [tuple(q) for q in p["padding"]]
    dn = lax.ConvDimensionNumbers(*(tuple(d) for d in p["dn"]))
    return lax.conv_general_dilated(
        x, w, p["strides"], pad, p["lhs_dil"], p["rhs_dil"], dn,
        feature_group_count=p["groups"], batch_group_count=p["bgroups"],
        preferred_element_type=dtype(p["pref"]) if p["pref"] else None)


op("conv", _conv_fn, "F", "conv", sample=_conv_sample, tol="sum")


def _pool_sample(g, o):
    a = _one(g, o, rank=4)
    if a is None:
        return None
    win = [1, int(g.rng.integers(1, 4)), int(g.rng.integers(1, 4)), 1]
    return [a], {"op": g.choice(["max", "avg"]), "win": win,
                 "strides": [1, int(g.rng.integers(1, 3)), int(g.rng.integers(1, 3)), 1],
                 "padding": g.choice(["SAME", "VALID"])}


def _pool_fn(p, x):
    jax, lax, jnp = _lax()
    if p["op"] == "max":
        return lax.reduce_window(x, -jnp.inf, lax.max, p["win"], p["strides"], p["padding"])
    s = lax.reduce_window(x, 0.0 if x.dtype == jnp.float64 else jnp.array(0, x.dtype), lax.add,
                          p["win"], p["strides"], p["padding"])
    return s / np.prod(p["win"]).astype(np.float32).item()


op("pool", _pool_fn, "F", "conv", sample=_pool_sample, tol="sum", only=("float32", "float64"))


# -- gathers and scatters on sliced operands ----------------------------------------------

def _pre_slice(g, shape):
    """A slice that drops the first or last element along some axes (the operand a
    gather then reads with strides that are not its own shape's)."""
    start, limit = [], []
    for d in shape:
        s, e = 0, d
        if d > 1 and g.rng.random() < 0.5:
            if g.rng.random() < 0.5:
                s = 1
            else:
                e = d - 1
        start.append(s)
        limit.append(e)
    return {"start": start, "limit": limit}


def _sliced(p, x):
    return _lax()[1].slice(x, p["start"], p["limit"]) if "start" in p else x


def _sliced_operand(g, o):
    """(operand, its pre-slice parameters, the sliced shape), or None."""
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    sl = _pre_slice(g, g.value(a).shape)
    return a, sl, [e - s for s, e in zip(sl["start"], sl["limit"])]


def _take_along_sample(g, o):
    got = _sliced_operand(g, o)
    if got is None:
        return None
    a, sl, sliced = got
    axis = int(g.rng.integers(0, len(sliced)))
    ishape = list(sliced)
    ishape[axis] = int(g.rng.integers(1, 5))
    idx = g.fresh(ishape, "int32", f"index:{sliced[axis]}")
    return [a, idx], {**sl, "axis": axis, "mode": g.choice(["clip", "fill", None])}


def _take_along_fn(p, x, i):
    jax, lax, jnp = _lax()
    return jnp.take_along_axis(_sliced(p, x), i, axis=p["axis"], mode=p["mode"])


GA = "gather inplace"
op("take_along_axis", _take_along_fn, "FCIUB", GA, sample=_take_along_sample)


def _take_sample(g, o):
    got = _sliced_operand(g, o)
    if got is None:
        return None
    a, sl, sliced = got
    axis = int(g.rng.integers(0, len(sliced)))
    idx = g.fresh(g.shape(int(g.rng.integers(0, 3))), "int32", f"index:{sliced[axis]}")
    return [a, idx], {**sl, "axis": axis, "mode": g.choice(["clip", "fill", "wrap"])}


def _take_fn(p, x, i):
    jax, lax, jnp = _lax()
    return jnp.take(_sliced(p, x), i, axis=p["axis"], mode=p["mode"])


op("take", _take_fn, "FCIUB", GA, sample=_take_sample)


def _scatter_sample(g, o):
    got = _sliced_operand(g, o)
    if got is None:
        return None
    a, sl, sliced = got
    v = g.value(a)
    nidx = int(g.rng.integers(1, 4))
    idx = g.fresh([nidx], "int32", f"index:{sliced[0]}")
    upd = g.pick_or_fresh([nidx] + sliced[1:], v.dtype, o)
    k = kind(v.dtype)
    ops = ["set", "add", "max", "min", "mul"] if k in (FLOAT, SINT, UINT) else ["set"]
    return [a, idx, upd], {**sl, "op": g.choice(ops), "mode": g.choice(["drop", "clip", None])}


def _scatter_fn(p, x, i, u):
    jax, lax, jnp = _lax()
    ref = _sliced(p, x).at[i]
    return getattr(ref, p["op"])(u, mode=p["mode"])


op("scatter", _scatter_fn, "FCIUB", GA, sample=_scatter_sample, tol="round")


def _segment_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None or kind(g.value(a).dtype) == BOOL:
        return None
    v = g.value(a)
    n = int(g.rng.integers(1, 5))
    ids = g.fresh([v.shape[0]], "int32", f"index:{n}")
    return [a, ids], {"n": n}


op("segment_sum", lambda p, x, i: _lax()[0].ops.segment_sum(x, i, p["n"]), "FCIU", GA,
   sample=_segment_sample, tol="sum")


# -- sort ------------------------------------------------------------------------------

def _sort_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    v = g.value(a)
    return [a], {"axis": int(g.rng.integers(0, len(v.shape))), "how": g.choice(
        ["sort", "argsort", "desc", "topk"] if kind(v.dtype) != BOOL else ["sort", "argsort"])}


def _sort_fn(p, x):
    jax, lax, jnp = _lax()
    if p["how"] == "sort":
        return jnp.sort(x, axis=p["axis"])
    if p["how"] == "argsort":
        return jnp.argsort(x, axis=p["axis"], stable=True).astype(np.int32)
    if p["how"] == "desc":
        return jnp.sort(x, axis=p["axis"], descending=True)
    k = max(1, x.shape[-1] // 2)
    return lax.top_k(x, k)[1]


op("sort", _sort_fn, "FIUB", "sort", sample=_sort_sample, discontinuous=True)


def _multisort_sample(g, o):
    a = _one(g, o, min_rank=1)
    if a is None:
        return None
    v = g.value(a)
    other = g.pick_or_fresh(v.shape, g.choice(g.dtypes), None)
    return [a, other], {"axis": int(g.rng.integers(0, len(v.shape))),
                        "keys": int(g.rng.integers(1, 3)), "which": int(g.rng.integers(0, 2))}


def _multisort_fn(p, x, y):
    jax, lax, jnp = _lax()
    if p["keys"] == 2 and (y.dtype.kind == "c"):
        return lax.sort((x, y), dimension=p["axis"], num_keys=1)[p["which"]]
    return lax.sort((x, y), dimension=p["axis"], num_keys=p["keys"])[p["which"]]


op("multisort", _multisort_fn, "FIUB", "sort", sample=_multisort_sample, discontinuous=True)
