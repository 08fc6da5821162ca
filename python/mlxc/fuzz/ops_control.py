"""Control flow: cond, switch, fori_loop, while_loop, scan, with elementwise bodies
drawn from the table; their results are values like any other, so later steps reuse
(and may update in place) what a branch or loop returned."""

from __future__ import annotations

from .ops import OPS, ULPS, _lax, kind, op

CF = "control inplace"
_BINARY = ["add", "sub", "mul", "max", "min", "and", "or", "xor", "div", "atan2", "shl"]


def _binops(g, dt: str) -> list[str]:
    return [n for n in _BINARY if n in OPS and g.allowed(OPS[n], dt, exact=False)]


def _worst(params) -> str:
    names = params.get("ops", [])
    worst = max((ULPS[OPS[n].tol] for n in names), default=0)
    loops = params.get("n", 1) or 1
    total = worst * max(1, loops)
    return next((k for k, u in sorted(ULPS.items(), key=lambda kv: kv[1]) if u >= total), "linalg")


def _two(g, o):
    a = g.pick(o)
    if a is None:
        return None
    v = g.value(a)
    names = _binops(g, v.dtype)
    if not names:
        return None
    return a, g.pick_or_fresh(v.shape, v.dtype, o), names


def _binop(name, x, y):
    return OPS[name].fn({}, x, y)


def _cond_sample(g, o):
    got = _two(g, o)
    if got is None:
        return None
    a, b, names = got
    return [g.pick_or_fresh([], "bool", None), a, b], {"ops": [g.choice(names), g.choice(names)]}


def _cond_fn(p, pred, a, b):
    jax, lax, jnp = _lax()
    t, f = p["ops"]
    return lax.cond(pred, lambda x, y: _binop(t, x, y), lambda x, y: _binop(f, x, y), a, b)


def _switch_sample(g, o):
    got = _two(g, o)
    if got is None:
        return None
    a, b, names = got
    n = int(g.rng.integers(2, 4))
    return [g.fresh([], "int32", f"index:{n}"), a, b], {"ops": [g.choice(names) for _ in range(n)]}


def _switch_fn(p, i, a, b):
    jax, lax, jnp = _lax()
    return lax.switch(i, [lambda x, y, n=n: _binop(n, x, y) for n in p["ops"]], a, b)


def _fori_sample(g, o):
    got = _two(g, o)
    if got is None:
        return None
    a, b, names = got
    return [a, b], {"ops": [g.choice(names), g.choice(names)], "n": int(g.rng.integers(0, 4)),
                    "which": int(g.rng.integers(0, 2))}


def _fori_fn(p, a, b):
    jax, lax, jnp = _lax()
    f, h = p["ops"]

    def body(i, c):
        x, y = c
        return _binop(f, x, y), _binop(h, y, x)

    return lax.fori_loop(0, p["n"], body, (a, b))[p["which"]]


def _while_sample(g, o):
    got = _two(g, o)
    if got is None:
        return None
    a, b, names = got
    return [g.fresh([], "int32", "index:3"), a, b], {"ops": [g.choice(names)], "n": 3}


def _while_fn(p, n, a, b):
    jax, lax, jnp = _lax()

    def body(c):
        i, x = c
        return i + 1, _binop(p["ops"][0], x, b)

    return lax.while_loop(lambda c: c[0] < n, body, (jnp.int32(0), a))[1]


def _scan_sample(g, o):
    a = g.pick(o)
    if a is None or not g.value(a).shape:
        return None
    v = g.value(a)
    names = _binops(g, v.dtype)
    if not names:
        return None
    init = g.pick_or_fresh(v.shape[1:], v.dtype, o)
    return [init, a], {"ops": [g.choice(names)], "n": v.shape[0], "reverse": bool(g.rng.random() < 0.3)}


def _scan_fn(p, init, xs):
    jax, lax, jnp = _lax()

    def body(c, x):
        c = _binop(p["ops"][0], c, x)
        return c, c

    return lax.scan(body, init, xs, reverse=p["reverse"])[1]


for _name, _fn, _sample in [("cond", _cond_fn, _cond_sample), ("switch", _switch_fn, _switch_sample),
                            ("fori_loop", _fori_fn, _fori_sample), ("while_loop", _while_fn, _while_sample),
                            ("scan", _scan_fn, _scan_sample)]:
    op(_name, _fn, "FCIUB", CF, tol="round", sample=_sample, extra={"tol_from_params": _worst})


def _case_hlo(p, a, t, r):
    """stablehlo.case on the index, each branch one binary op of the two operands (an
    index out of range runs the last branch: the interpreter judges it)."""
    branches = []
    for k, name in enumerate(p["ops"]):
        body = OPS[name].hlo({}, a[1:], t[1:], t[1])
        body = [line.replace("%TMP", f"%TMP{k}b") for line in body]
        branches.append("{\n" + "\n".join(f"    {line}" for line in body[:-1])
                        + f"\n    %TMP{k}r = {body[-1]}\n"
                        + f'    "stablehlo.return"(%TMP{k}r) : ({t[1]}) -> ()\n  }}')
    return [f'"stablehlo.case"({a[0]}) (' + ", ".join(branches) + f") : ({t[0]}) -> {r}"]


def _case_sample(g, o):
    got = _switch_sample(g, o)
    if got is None:
        return None
    args, params = got
    params["ops"] = [n for n in params["ops"] if OPS[n].hlo is not None] or ["add"]
    return args, params


op("case", _switch_fn, "FCIUB", "hlo", tol="round", sample=_case_sample, hlo=_case_hlo,
   extra={"tol_from_params": _worst})
