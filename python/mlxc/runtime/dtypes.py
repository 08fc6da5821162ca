"""MLIR element types <-> numpy dtypes. Part of the runtime: no compiler imports."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np

# MLIR spelling of an element type -> numpy dtype. Signed and signless integers
# share a numpy type; unsigned ones keep their `ui` spelling from StableHLO.
_TO_NUMPY: dict[str, np.dtype] = {
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8), "si8": np.dtype(np.int8), "ui8": np.dtype(np.uint8),
    "i16": np.dtype(np.int16), "si16": np.dtype(np.int16), "ui16": np.dtype(np.uint16),
    "i32": np.dtype(np.int32), "si32": np.dtype(np.int32), "ui32": np.dtype(np.uint32),
    "i64": np.dtype(np.int64), "si64": np.dtype(np.int64), "ui64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "complex<f32>": np.dtype(np.complex64),
    "complex<f64>": np.dtype(np.complex128),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "f8E4M3B11FNUZ": np.dtype(ml_dtypes.float8_e4m3b11fnuz),
    "f8E4M3": np.dtype(ml_dtypes.float8_e4m3),
    "f8E3M4": np.dtype(ml_dtypes.float8_e3m4),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "f6E2M3FN": np.dtype(ml_dtypes.float6_e2m3fn),
    "f6E3M2FN": np.dtype(ml_dtypes.float6_e3m2fn),
    "f4E2M1FN": np.dtype(ml_dtypes.float4_e2m1fn),
    # One element per byte, the low bits holding the value: how ml_dtypes stores
    # them and how LLVM lays out memref<...xi4> (an i4 occupies one byte).
    "i2": np.dtype(ml_dtypes.int2), "si2": np.dtype(ml_dtypes.int2), "ui2": np.dtype(ml_dtypes.uint2),
    "i4": np.dtype(ml_dtypes.int4), "si4": np.dtype(ml_dtypes.int4), "ui4": np.dtype(ml_dtypes.uint4),
}

_SHORT = {
    "i1": "bool", "complex<f32>": "c64", "complex<f64>": "c128",
}


# A quantized element type (`!quant.uniform<i8:f32, 0.5:-3>`, per-axis
# `!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>`, narrowed `i8<-127:127>`) is passed
# and returned as its storage integers, unchanged: the caller quantizes.
_QUANT_STORAGE = re.compile(r"^!quant\.uniform<(u?)i?(\d+)")


def storage_type(element_type: str) -> str:
    """The integer type holding a quantized type's values (`i8`), else `element_type`."""
    m = _QUANT_STORAGE.match(element_type)
    return f"{'ui' if m.group(1) else 'i'}{m.group(2)}" if m else element_type


def to_numpy(element_type: str) -> np.dtype:
    """The numpy dtype of an MLIR element type spelling such as `f32`, `ui8` or a
    quantized type (its storage type's)."""
    try:
        return _TO_NUMPY[storage_type(element_type)]
    except KeyError:
        raise TypeError(f"mlxc has no numpy type for MLIR element type '{element_type}'") from None


def is_supported(element_type: str) -> bool:
    return storage_type(element_type) in _TO_NUMPY


def short_name(element_type: str) -> str:
    """How signatures print an element type: `f32`, `bool`, `ui8`, `c64`."""
    return _SHORT.get(element_type, element_type)


def describe_dtype(dtype: np.dtype) -> str:
    """A numpy dtype in the same words as `short_name` (for error messages)."""
    for name, dt in _TO_NUMPY.items():
        if dt == dtype and not name.startswith("si"):
            return short_name(name)
    return str(dtype)
