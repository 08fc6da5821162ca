"""The op table: what a fuzzed program can do, as JAX functions with sampling rules.

Each op has a JAX function `fn(params, *arrays)`, the dtype kinds its first operand
may have, a tolerance class (how far two correct implementations may drift apart on
it), whether it is discontinuous (floor, compare, argmax, float-to-int: a last-bit
difference in its operand changes its result wholesale, so it only takes operands
both sides compute bit for bit), and a sampler that picks its operands and
parameters from the values a generator holds (`generate.Gen`). Ops that StableHLO
text can express directly also have an `hlo` writer (see `hlo_text`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

# Dtype kinds: F real float, C complex, I signed, U unsigned, B bool.
FLOAT, COMPLEX, SINT, UINT, BOOL = "F", "C", "I", "U", "B"

# Tolerance classes, in units in the last place of the result's dtype per op; a
# program's budget is the sum over its float steps (see judge.tolerance).
ULPS = {"exact": 0, "round": 2, "transcendental": 8, "special": 64, "sum": 16, "linalg": 4096}


def elem(tensor_type: str) -> str:
    """The element type of a tensor type's spelling: `tensor<3x4xcomplex<f32>>` -> `complex<f32>`."""
    return re.match(r"tensor<(?:[0-9]+x)*(.*)>$", tensor_type).group(1)


def kind(dtype_name: str) -> str:
    if dtype_name == "bool":
        return BOOL
    if dtype_name.startswith("complex"):
        return COMPLEX
    if dtype_name.startswith("uint"):
        return UINT
    if dtype_name.startswith("int"):
        return SINT
    return FLOAT


@dataclass
class Op:
    name: str
    fn: Callable
    kinds: str  # dtype kinds of the first operand
    tol: str = "exact"
    discontinuous: bool = False
    sample: Optional[Callable] = None  # (gen, op) -> (args, params) or None
    hlo: Optional[Callable] = None  # (params, names, in_types, out_type) -> text lines
    families: tuple = ()
    only: tuple = ()  # dtype names allowed (empty: any of `kinds`)
    extra: dict = field(default_factory=dict)


OPS: dict[str, Op] = {}


def op(name, fn, kinds, families, **kw):
    OPS[name] = Op(name, fn, kinds, families=tuple(families.split()), **kw)


def _lax():
    import jax
    from jax import lax
    import jax.numpy as jnp
    return jax, lax, jnp


# -- samplers -----------------------------------------------------------------------

def same_type_operands(n):
    """`n` operands of one shape and dtype: the first from the pool, the rest from the
    pool or fresh inputs."""
    def sample(g, o):
        a = g.pick(o)
        if a is None:
            return None
        v = g.value(a)
        return [a] + [g.pick_or_fresh(v.shape, v.dtype, o) for _ in range(n - 1)], {}
    return sample


def with_params(base, make):
    def sample(g, o):
        got = base(g, o)
        if got is None:
            return None
        args, params = got
        extra = make(g, [g.value(a) for a in args])
        if extra is None:
            return None
        return args, {**params, **extra}
    return sample




def load_all() -> dict[str, Op]:
    """The whole table (each family's module registers its ops when imported)."""
    from . import models, ops_arrays, ops_control, ops_elementwise, ops_linalg  # noqa: F401
    return OPS
