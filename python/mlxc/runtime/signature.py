"""What an executable takes and returns. Part of the runtime: no compiler imports."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import dtypes


@dataclass(frozen=True)
class TensorSpec:
    """One argument or result: a name, a static shape and an MLIR element type."""

    name: str
    shape: tuple[int, ...]
    element_type: str

    @property
    def dtype(self) -> np.dtype:
        return dtypes.to_numpy(self.element_type)

    @property
    def nbytes(self) -> int:
        return math.prod(max(d, 0) for d in self.shape) * self.dtype.itemsize

    @property
    def is_static(self) -> bool:
        return all(d >= 0 for d in self.shape)

    def accepts_shape(self, shape: tuple) -> bool:
        """Whether an array of `shape` fits (a -1 dimension takes any size)."""
        return len(shape) == len(self.shape) and all(
            want < 0 or want == got for want, got in zip(self.shape, shape))

    def type_str(self) -> str:
        dims = ",".join("?" if d < 0 else str(d) for d in self.shape)
        return f"{dtypes.short_name(self.element_type)}[{dims}]"

    def __str__(self) -> str:
        return f"{self.name}: {self.type_str()}"

    def to_json(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "element_type": self.element_type}

    @classmethod
    def from_json(cls, d: dict) -> "TensorSpec":
        return cls(d["name"], tuple(d["shape"]), d["element_type"])


LONG = 10  # arguments and results printed on one line at most


@dataclass(frozen=True)
class Signature:
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    entry: str = "main"

    def __str__(self) -> str:
        # A training step takes a hundred leaves: past ten, one per line.
        if len(self.inputs) + len(self.outputs) > LONG:
            ins = "".join(f"\n  {t}," for t in self.inputs)
            outs = "".join(f"\n  {t}," for t in self.outputs)
            return f"{self.entry}({ins}\n) -> ({outs}\n)"
        ins = ", ".join(map(str, self.inputs))
        outs = ", ".join(map(str, self.outputs))
        return f"{self.entry}({ins}) -> ({outs})"

    __repr__ = __str__

    def to_json(self) -> str:
        return json.dumps({"entry": self.entry,
                           "inputs": [t.to_json() for t in self.inputs],
                           "outputs": [t.to_json() for t in self.outputs]})

    @classmethod
    def from_json(cls, text: str) -> "Signature":
        d = json.loads(text)
        return cls(tuple(TensorSpec.from_json(t) for t in d["inputs"]),
                   tuple(TensorSpec.from_json(t) for t in d["outputs"]), d.get("entry", "main"))


def describe_array(value) -> str:
    """`f64[4,8]` for an array, in the words a signature uses."""
    shape: Optional[tuple] = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None or dtype is None:
        return type(value).__name__
    return f"{dtypes.describe_dtype(np.dtype(dtype))}[{','.join(map(str, shape))}]"
