"""JAX's CPU linear algebra (LAPACK custom calls) and its gradients, on well-conditioned
matrices made from the inputs: cholesky, solve, qr, eigh, and their VJPs.

Results that LAPACK defines only up to signs or order are compared through what they
determine: eigh's eigenvectors as V diag(w) V^T."""

from __future__ import annotations

from .ops import _lax, op

LA = "linalg"


def _spd(x):
    jax, lax, jnp = _lax()
    n = x.shape[-1]
    return x @ jnp.swapaxes(x, -1, -2).conj() + n * jnp.eye(n, dtype=x.dtype)


def _square_sample(g, o):
    n = int(g.rng.integers(1, 6))
    batch = [int(g.rng.integers(1, 3))] if g.rng.random() < 0.4 else []
    dt = g.choice(g.dtypes)
    return batch + [n, n], dt


def _one_matrix(g, o):
    shape, dt = _square_sample(g, o)
    return [g.pick_or_fresh(shape, dt, o, "plain")], {"grad": bool(g.rng.random() < 0.4),
                                                       "which": int(g.rng.integers(0, 2))}


def _with_grad(p, f, *xs):
    """f(*xs), or the gradient of a weighted sum of it with respect to the first input."""
    jax, lax, jnp = _lax()
    if not p.get("grad"):
        return f(*xs)

    def loss(x0, *rest):
        y = f(x0, *rest)
        w = jnp.cos(jnp.arange(y.size, dtype=y.real.dtype)).reshape(y.shape)
        return jnp.sum(y.real * w)

    return jax.grad(loss)(*xs)


def _cholesky_fn(p, x):
    jax, lax, jnp = _lax()
    return _with_grad(p, lambda a: jnp.linalg.cholesky(_spd(a)), x)


def _solve_sample(g, o):
    shape, dt = _square_sample(g, o)
    a = g.pick_or_fresh(shape, dt, o, "plain")
    b = g.pick_or_fresh(shape[:-1] + [int(g.rng.integers(1, 4))], dt, o, "plain")
    return [a, b], {"grad": bool(g.rng.random() < 0.4)}


def _solve_fn(p, a, b):
    jax, lax, jnp = _lax()
    return _with_grad(p, lambda m, r: jnp.linalg.solve(_spd(m), r), a, b)


def _qr_sample(g, o):
    m, n = int(g.rng.integers(1, 6)), int(g.rng.integers(1, 6))
    dt = g.choice(g.dtypes)
    # Gradients of QR need full column rank and m >= n.
    grad = bool(g.rng.random() < 0.3)
    if grad and m < n:
        m, n = n, m
    return [g.pick_or_fresh([m, n], dt, o, "plain")], {"grad": grad, "which": int(g.rng.integers(0, 2)),
                                                        "mode": g.choice(["reduced", "complete"]) if not grad else "reduced"}


def _qr_fn(p, x):
    jax, lax, jnp = _lax()
    return _with_grad(p, lambda a: jnp.linalg.qr(a, mode=p["mode"])[p["which"]], x)


def _eigh_fn(p, x):
    jax, lax, jnp = _lax()

    def f(a):
        s = (a + jnp.swapaxes(a, -1, -2)) / 2
        w, v = jnp.linalg.eigh(s)
        if p["which"] == 0:
            return w
        return (v * w[..., None, :]) @ jnp.swapaxes(v, -1, -2)

    return _with_grad(p, f, x)


op("cholesky", _cholesky_fn, "F", LA, tol="linalg", sample=_one_matrix)
op("solve", _solve_fn, "F", LA, tol="linalg", sample=_solve_sample)
op("qr", _qr_fn, "F", LA, tol="linalg", sample=_qr_sample)
op("eigh", _eigh_fn, "F", LA, tol="linalg", sample=_one_matrix)
