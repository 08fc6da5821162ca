"""The StableHLO reference interpreter as a test oracle for programs without checks."""

from __future__ import annotations

import numpy as np

from .. import irutil
from .._mlir import ir, new_context, stablehlo
from ..passes.specialize_arguments import specialize_values
from ..pipelines import runner
from ..pipelines.model import mlir_pass
from ..runtime import dtypes


class OracleError(Exception):
    pass


def inputs_for(signature, size: int, seed: int) -> list[np.ndarray]:
    """Random inputs for `signature` with every `?` set to `size`; rank-0 integer
    arguments (JAX's dimension sizes) are `size` too."""
    rng = np.random.default_rng(seed)
    dynamic = any(not t.is_static for t in signature.inputs)
    out = []
    for spec in signature.inputs:
        shape = tuple(size if d < 0 else d for d in spec.shape)
        dt = spec.dtype
        if dynamic and not shape and dt.kind in "iu":
            out.append(np.array(size, dtype=dt))
        elif dt == np.bool_:
            out.append(rng.random(shape) < 0.5)
        elif dt.kind in "iu":
            out.append(rng.integers(0 if dt.kind == "u" else -5, 6, size=shape).astype(dt))
        else:
            out.append(rng.standard_normal(shape).astype(np.float32).astype(dt))
    return out


def _to_attr(a: np.ndarray):
    shape = list(a.shape)
    a = np.ascontiguousarray(a).reshape(-1)  # (ascontiguousarray makes rank 0 rank 1)
    # The buffer protocol knows neither ml_dtypes floats nor complex numbers: pass their
    # bits as integers (complex as float pairs) with the element type given explicitly.
    # The data goes flat, the shape explicitly.
    try:
        if a.dtype.kind == "V":
            bits = a.view(np.dtype(f"u{a.dtype.itemsize}"))
            return ir.DenseElementsAttr.get(bits, type=_element_type(a), shape=shape)
        if a.dtype.kind == "c":
            pairs = a.view(a.real.dtype).reshape(-1, 2)
            return ir.DenseElementsAttr.get(pairs, type=_element_type(a), shape=shape)
        return ir.DenseElementsAttr.get(a, shape=shape)
    except Exception as e:
        raise OracleError(f"cannot pass a {a.dtype} array to the interpreter ({e})") from None


def interpret(text: str, inputs: list[np.ndarray], entry: str = "main") -> list[np.ndarray]:
    """The interpreter's results for `inputs`, after refining the program to their shapes."""
    ctx = new_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
        types = [str(ir.RankedTensorType.get(a.shape, _element_type(a))) for a in inputs]
        values = {i: int(a) for i, a in enumerate(inputs) if a.ndim == 0 and a.dtype.kind in "iu"}
        runner.run_passes(module, [mlir_pass("stablehlo-refine-arguments", "", types=",".join(types))])
        specialize_values(module, entry, values)
        runner.run_passes(module, [mlir_pass("inline", ""), mlir_pass("stablehlo-refine-shapes", ""),
                                   mlir_pass("stablehlo-canonicalize-dynamism", "", anchor="func.func")])
        for op in irutil.walk(module):
            for r in op.results:
                if isinstance(r.type, ir.RankedTensorType) and not r.type.has_static_shape:
                    # The interpreter aborts the process on dynamic result types.
                    raise OracleError(f"{op.name} keeps a dynamic type {r.type}")
        _return_bits(module, entry)
        try:
            results = stablehlo.eval_module(module, [_to_attr(a) for a in inputs])
        except Exception as e:
            raise OracleError(str(e).splitlines()[0][:200]) from None
        bits_of = _return_bits.last
        out = []
        for r in results:
            attr = ir.DenseElementsAttr(r)
            try:
                arr = np.array(attr)
                want = dtypes.to_numpy(str(ir.RankedTensorType(attr.type).element_type))
                want = bits_of.get(len(out), want)
            except Exception as e:
                raise OracleError(f"cannot read the interpreter's result ({e})") from None
            if arr.dtype != want and arr.dtype.itemsize == want.itemsize:
                arr = arr.view(want)  # signless integers, or bits of f16/bf16
            out.append(arr)
        return out


def _return_bits(module, entry: str) -> None:
    """Make the entry return f16/bf16 results as i16 bits: the bindings cannot read
    those attributes back into numpy. Records {result index: numpy dtype}."""
    func = irutil.find_function(module, entry)
    ret = func.regions[0].blocks[0].operations[-1]
    ftype = irutil.function_type(func)
    results = list(ftype.results)
    bits_of = {}
    for i, value in enumerate(list(ret.operands)):
        t = ir.RankedTensorType(value.type)
        name = str(t.element_type)
        if name in ("bf16", "f16"):
            bits = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(16))
            with ir.InsertionPoint(ret), ret.location:
                cast = ir.Operation.create("stablehlo.bitcast_convert", results=[bits],
                                           operands=[value])
            ret.operands[i] = cast.result
            results[i] = bits
            bits_of[i] = dtypes.to_numpy(name)
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(ftype.inputs), results))
    _return_bits.last = bits_of


def _element_type(a: np.ndarray) -> ir.Type:
    for name in ("i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "f16", "bf16",
                 "f32", "f64", "complex<f32>", "complex<f64>"):
        if dtypes.to_numpy(name) == a.dtype:
            return ir.Type.parse(name)
    raise OracleError(f"no MLIR type for {a.dtype}")
