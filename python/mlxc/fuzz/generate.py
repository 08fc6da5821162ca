"""Random programs per family: a random DAG over the family's ops.

A program is grown one step at a time: pick an op of the family, let its sampler
choose operands (values already made, often ones other steps consumed, or fresh
inputs) and parameters, and ask `jax.eval_shape` for the result's type; a choice JAX
rejects is dropped and another drawn. Results of any step, not only the last, are
returned, and sometimes an input or the same value twice, so values that later steps
consume in place are also results.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ops as ops_mod
from .program import Program, Step, Value, dtype, prune

ALL_FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
COMPLEX = ["complex64", "complex128"]
FP8 = ["float8_e4m3fn", "float8_e5m2"]
LOW = ["float16", "bfloat16"] + FP8


@dataclass(frozen=True)
class Family:
    name: str
    dtypes: tuple
    steps: tuple = (2, 8)  # how many steps, inclusive
    max_rank: int = 3
    max_dim: int = 4
    mode: str = "jax"
    weight: int = 1  # share of the cases of a mixed run


FAMILIES = {f.name: f for f in [
    Family("elementwise", tuple(ALL_FLOATS + INTS + COMPLEX + ["bool"]), weight=3),
    Family("lowp", tuple(LOW + ["float32", "bool", "int8", "uint8"]), weight=2),
    Family("inplace", tuple(["float32", "int32", "uint32", "bfloat16", "float64", "bool"]),
           steps=(3, 10), weight=2),
    Family("control", tuple(["float32", "float64", "int32", "uint32", "int8", "bfloat16",
                             "bool", "complex64"]), steps=(2, 6), weight=2),
    Family("layout", tuple(["float32", "int32", "uint8", "bool", "bfloat16", "complex64",
                            "float64", "int64"]), steps=(2, 7), weight=2),
    Family("reduce", tuple(["float32", "float64", "int32", "uint32", "int8", "bool",
                            "bfloat16", "float16", "complex64"]), steps=(1, 5), weight=2),
    Family("dot", tuple(["float32", "float64", "bfloat16", "float16", "int32", "int8",
                         "uint8", "complex64"]), steps=(1, 4), weight=2),
    Family("conv", tuple(["float32", "float64", "bfloat16", "float16"]), steps=(1, 3), weight=2),
    Family("gather", tuple(["float32", "int32", "bfloat16", "uint8", "float64", "bool"]),
           steps=(1, 5), weight=2),
    Family("sort", tuple(["float32", "float64", "int32", "uint16", "int8", "bfloat16",
                          "float16", "bool"]), steps=(1, 4)),
    Family("linalg", ("float32", "float64"), steps=(1, 3), max_rank=3, max_dim=5),
    Family("hlo", tuple(["float32", "float64", "float16", "bfloat16", "bool"] + INTS + COMPLEX),
           mode="hlo", weight=3),
    # Seconds per case (a flax model's init and training step): run on their own.
    Family("models", ("float32", "int32"), steps=(1, 1), weight=0),
]}


class Gen:
    """The state of one program being grown; what op samplers see."""

    def __init__(self, family: Family, seed: int):
        self.family = family
        self.rng = np.random.default_rng(seed)
        self.dtypes = list(family.dtypes)
        self.vals: list[Value] = []
        self.origin: list[tuple] = []  # ("input", k) or ("step", k)
        self.exacts: list[bool] = []
        self.inputs: list[int] = []
        self.steps: list[tuple] = []  # (op name, [internal ids], params, internal id)

    # -- what samplers use ------------------------------------------------------------
    def choice(self, seq):
        return seq[int(self.rng.integers(0, len(seq)))]

    def value(self, i: int) -> Value:
        return self.vals[i]

    def exact(self, i: int) -> bool:
        return self.exacts[i]

    def is_input(self, i: int) -> bool:
        return self.origin[i][0] == "input"

    def shape(self, rank=None, max_dim=None) -> list:
        rank = int(self.rng.integers(0, self.family.max_rank + 1)) if rank is None else rank
        top = max_dim or self.family.max_dim
        return [int(self.rng.integers(1, top + 1)) for _ in range(rank)]

    def fresh(self, shape, dt: str, data: str = "mixed") -> int:
        if self.family.name == "linalg" and data == "mixed":
            data = "plain"
        self.vals.append(Value(list(shape), dt, data))
        self.origin.append(("input", len(self.inputs)))
        self.exacts.append(True)
        self.inputs.append(len(self.vals) - 1)
        return len(self.vals) - 1

    def allowed(self, o, dt: str, exact: bool = True) -> bool:
        if o is None:
            return True
        k = ops_mod.kind(dt)
        if k not in o.kinds or (o.only and dt not in o.only):
            return False
        if o.extra.get("no_lowp") and dt in LOW:
            return False
        if o.discontinuous and k in (ops_mod.FLOAT, ops_mod.COMPLEX) and not exact:
            return False
        return True

    def pick(self, o, rank=None, fresh_ok=True):
        """An operand for `o`: mostly a value already made (recent ones first), else a
        fresh input of a random shape and allowed dtype."""
        cands = [i for i, v in enumerate(self.vals)
                 if self.allowed(o, v.dtype, self.exacts[i]) and (rank is None or len(v.shape) == rank)]
        if cands and self.rng.random() < 0.8:
            recent = cands[-4:]
            return self.choice(recent if self.rng.random() < 0.6 else cands)
        if not fresh_ok:
            return None
        dts = [d for d in self.dtypes if self.allowed(o, d)]
        if not dts:
            return None
        return self.fresh(self.shape(rank), self.choice(dts))

    def pick_or_fresh(self, shape, dt: str, o, data: str = "mixed") -> int:
        cands = [i for i, v in enumerate(self.vals)
                 if list(v.shape) == list(shape) and v.dtype == dt
                 and (o is None or not o.discontinuous or self.exacts[i])]
        if cands and self.rng.random() < 0.6:
            return self.choice(cands)
        return self.fresh(shape, dt, data)

    # -- growing ------------------------------------------------------------------------
    def add(self, o, args, params) -> bool:
        import jax

        structs = [jax.ShapeDtypeStruct(tuple(self.vals[a].shape), dtype(self.vals[a].dtype))
                   for a in args]
        try:
            out = jax.eval_shape(lambda *xs: o.fn(params, *xs), *structs)
        except Exception:
            return False
        if not hasattr(out, "shape") or int(np.prod(out.shape)) > 4096:
            return False
        name = np.dtype(out.dtype).name
        if name not in _KNOWN_DTYPES:
            return False
        floats = [a for a in args if ops_mod.kind(self.vals[a].dtype) in (ops_mod.FLOAT, ops_mod.COMPLEX)]
        exact = o.tol == "exact" and all(self.exacts[a] for a in floats)
        self.vals.append(Value(list(out.shape), name))
        self.origin.append(("step", len(self.steps)))
        self.exacts.append(exact or ops_mod.kind(name) in (ops_mod.SINT, ops_mod.UINT, ops_mod.BOOL))
        self.steps.append((o.name, list(args), params, len(self.vals) - 1))
        return True

    def program(self, data_seed: int) -> Program:
        order = list(self.inputs) + [s[3] for s in self.steps]
        number = {internal: k for k, internal in enumerate(order)}
        steps = [Step(name, [number[a] for a in args], params, self.vals[out])
                 for name, args, params, out in self.steps]
        made = [s[3] for s in self.steps]
        outputs = [made[-1]] if made else [self.inputs[0]]
        for _ in range(int(self.rng.integers(0, 3))):
            r = self.rng.random()
            if r < 0.7 and made:
                outputs.append(self.choice(made))  # often one another step consumed
            elif r < 0.85:
                outputs.append(self.choice(self.inputs))
            else:
                outputs.append(outputs[0])  # the same value twice
        return Program(self.family.name, self.family.mode, [self.vals[i] for i in self.inputs],
                       steps, [number[o] for o in outputs], data_seed)


_KNOWN_DTYPES = set(ALL_FLOATS + INTS + COMPLEX + FP8 + ["bool"])


def family_ops(family: Family) -> list:
    table = ops_mod.load_all()
    return [o for o in table.values() if family.name in o.families and o.sample is not None
            and (family.mode != "hlo" or o.hlo is not None)]


def generate(family_name: str, seed: int) -> Program:
    """The program of case (`family_name`, `seed`): the same on every machine and run."""
    family = FAMILIES[family_name]
    g = Gen(family, seed)
    ops = family_ops(family)
    want = int(g.rng.integers(family.steps[0], family.steps[1] + 1))
    tries = 0
    while len(g.steps) < want and tries < 20 * want:
        tries += 1
        o = g.choice(ops)
        try:
            got = o.sample(g, o)
        except ValueError:  # e.g. no valid parameters for a zero-size operand
            got = None
        if got is None:
            continue
        args, params = got
        g.add(o, args, params)
    if not g.inputs:
        g.fresh(g.shape(), g.choice(g.dtypes))
    return prune(g.program(data_seed=seed))


def mixed_families() -> list[str]:
    """Each family repeated by its weight: case i of a mixed run is of family i mod len."""
    return [f.name for f in FAMILIES.values() for _ in range(f.weight)]
