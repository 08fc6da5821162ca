"""A fuzzed program as data: inputs, steps over numbered values, outputs.

Values are numbered: the inputs first, then one per step. A step names an op of the
op table (`ops.OPS`), its operands (value numbers) and JSON parameters, and records
its result's shape and dtype, so that the shrinker can put an input in its place. A
program is plain JSON, so it crosses process boundaries and lands in reproducers.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass, field

import ml_dtypes
import numpy as np


@dataclass
class Value:
    shape: list
    dtype: str  # a numpy/ml_dtypes name: "float32", "bfloat16", "uint8", "bool", ...
    # How an input's data is drawn: "mixed" (with infinities, NaN, integer extremes),
    # "plain" (finite, ordinary), "index:N" (integers in [-N-1, N+1], some out of range).
    data: str = "mixed"


@dataclass
class Step:
    op: str
    args: list
    params: dict
    out: Value


@dataclass
class Program:
    family: str
    mode: str  # "jax": judged against jax.jit; "hlo": StableHLO text, against the interpreter
    inputs: list  # [Value]
    steps: list = field(default_factory=list)  # [Step]
    outputs: list = field(default_factory=list)  # value numbers, repeats allowed
    data_seed: int = 0  # the seed of the input arrays

    def value(self, i: int) -> Value:
        return self.inputs[i] if i < len(self.inputs) else self.steps[i - len(self.inputs)].out

    @property
    def size(self) -> int:
        return len(self.steps)

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> "Program":
        d = copy.deepcopy(d)
        return Program(d["family"], d["mode"], [Value(**v) for v in d["inputs"]],
                       [Step(s["op"], s["args"], s["params"], Value(**s["out"])) for s in d["steps"]],
                       d["outputs"], d.get("data_seed", 0))

    def dumps(self) -> str:
        return json.dumps(self.to_json())

    def ops(self) -> list[str]:
        return [s.op for s in self.steps]


def dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


def prune(p: Program) -> Program:
    """`p` without the steps and inputs no output depends on (value numbers renumbered)."""
    n_in = len(p.inputs)
    live = set(p.outputs)
    for k in range(len(p.steps) - 1, -1, -1):
        if n_in + k in live:
            live.update(p.steps[k].args)
    kept_inputs = [i for i in range(n_in) if i in live]
    kept_steps = [k for k in range(len(p.steps)) if n_in + k in live]
    # Keep at least one input: a program without arguments is constant-folded by both sides.
    if not kept_inputs and n_in:
        kept_inputs = [0]
    new = {old: i for i, old in enumerate(kept_inputs)}
    for j, k in enumerate(kept_steps):
        new[n_in + k] = len(kept_inputs) + j
    steps = [Step(p.steps[k].op, [new[a] for a in p.steps[k].args], p.steps[k].params,
                  p.steps[k].out) for k in kept_steps]
    return Program(p.family, p.mode, [p.inputs[i] for i in kept_inputs], steps,
                   [new[o] for o in p.outputs], p.data_seed)


# -- input data ------------------------------------------------------------------------

_SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 3.0, -7.5, 1e-3]


def make_inputs(p: Program) -> list[np.ndarray]:
    """The program's input arrays, a function of its `data_seed` and input types only.

    Mostly ordinary values, with the values where implementations differ mixed in:
    signed zeros, infinities, NaN, integer extremes, -1, large shift amounts."""
    rng = np.random.default_rng(p.data_seed)
    return [_array(rng, v, i) for i, v in enumerate(p.inputs)]


def _array(rng, v: Value, i: int) -> np.ndarray:
    dt = dtype(v.dtype)
    shape = tuple(v.shape)
    n = int(np.prod(shape)) if shape else 1
    special = rng.random(n) < (0.15 if v.data == "mixed" else 0.0)
    if v.data.startswith("index:"):
        bound = int(v.data.split(":")[1])
        return rng.integers(-bound - 1, bound + 2, size=shape).astype(dt)
    if dt == np.bool_:
        return (rng.random(shape) < 0.5)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo = 0 if dt.kind == "u" else -9
        a = rng.integers(lo, 10, size=n).astype(np.int64)
        extremes = np.array([info.min, info.max, 0, -1 if dt.kind == "i" else 1,
                             info.bits - 1, info.bits, info.bits + 1], dtype=object)
        picks = rng.integers(0, len(extremes), size=n)
        out = np.array([int(extremes[k]) if s else int(x) for x, s, k in zip(a, special, picks)],
                       dtype=object)
        return np.array([int(x) % (1 << info.bits) for x in out], dtype=np.uint64) \
            .astype(np.dtype(f"u{dt.itemsize}")).view(dt).reshape(shape)
    if dt.kind == "c":
        re = _floats(rng, n, special, np.float64)
        im = _floats(rng, n, special & (rng.random(n) < 0.7), np.float64)
        return (re + 1j * im).astype(dt).reshape(shape)
    return _floats(rng, n, special, dt).reshape(shape)


def _floats(rng, n, special, dt) -> np.ndarray:
    a = rng.standard_normal(n) * np.where(rng.random(n) < 0.2, 8.0, 1.0)
    picks = rng.integers(0, len(_SPECIAL_FLOATS), size=n)
    a = np.where(special, np.array(_SPECIAL_FLOATS)[picks], a)
    with np.errstate(over="ignore", invalid="ignore"):
        return a.astype(np.float32).astype(dt)
