"""The StableHLO reference interpreter as a test oracle for programs without checks."""

from __future__ import annotations

import numpy as np

from .. import irutil
from .._mlir import ir, new_context, stablehlo
from ..passes.specialize_arguments import specialize_values
from ..pipelines import runner
from ..pipelines.model import Pass, mlir_pass
from ..runtime import dtypes


class OracleError(Exception):
    pass


def inputs_for(signature, size: int, seed: int) -> list[np.ndarray]:
    """Random inputs for `signature` with every `?` set to `size`. JAX passes the
    dimension sizes first, as rank-0 integers: those are `size` too; a rank-0 integer
    after them is data (an index, say) and gets 0, valid for any size."""
    rng = np.random.default_rng(seed)
    dynamic = any(not t.is_static for t in signature.inputs)
    out = []
    leading = True
    for spec in signature.inputs:
        shape = tuple(size if d < 0 else d for d in spec.shape)
        dt = spec.dtype
        scalar_int = not shape and dt.kind in "iu"
        leading = leading and scalar_int
        if dynamic and scalar_int:
            out.append(np.array(size if leading else 0, dtype=dt))
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
        # Unsigned arrays must come out as ui32 etc., not as signless integers.
        return ir.DenseElementsAttr.get(a, signless=a.dtype.kind != "u", shape=shape)
    except Exception as e:
        raise OracleError(f"cannot pass a {a.dtype} array to the interpreter ({e})") from None


def interpret(text: str, inputs: list[np.ndarray], entry: str = "main",
              numpy_solve: bool = True) -> list[np.ndarray]:
    """The interpreter's results for `inputs`, after refining the program to their shapes
    (numpy's for a lone triangular_solve unless numpy_solve is False: see _solve_triangular)."""
    ctx = new_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
        types = [str(ir.RankedTensorType.get(a.shape, _element_type(a))) for a in inputs]
        values = {i: int(a) for i, a in enumerate(inputs) if a.ndim == 0 and a.dtype.kind in "iu"}
        runner.run_passes(module, [mlir_pass("stablehlo-refine-arguments", "", types=",".join(types))])
        specialize_values(module, entry, values)
        # Folding can turn computed slice bounds into constants that make the next
        # round of refinement static, so refine twice around a simplification.
        refine = [mlir_pass("stablehlo-refine-shapes", ""),
                  mlir_pass("stablehlo-canonicalize-dynamism", "", anchor="func.func")]
        runner.run_passes(module, [mlir_pass("inline", "")] + refine + [
            mlir_pass("stablehlo-aggressive-simplification", "", anchor="func.func")] + refine +
            [Pass("mlxc-static-real-dynamic-slice", (), (), "")])
        for op in irutil.walk(module):
            for r in op.results:
                if isinstance(r.type, ir.RankedTensorType) and not r.type.has_static_shape:
                    # The interpreter aborts the process on dynamic result types.
                    raise OracleError(f"{op.name} keeps a dynamic type {r.type}")
        solved = _solve_triangular(module, entry, inputs) if numpy_solve else None
        if solved is not None:
            return solved
        readers = _readable_results(module, entry)
        try:
            results = stablehlo.eval_module(module, [_to_attr(a) for a in inputs])
        except Exception as e:
            raise OracleError(str(e).splitlines()[0][:200]) from None
        try:
            arrays = [np.array(ir.DenseElementsAttr(r)) for r in results]
        except Exception as e:
            raise OracleError(f"cannot read the interpreter's result ({e})") from None
        return [read(arrays) for read in readers]


def _solve_triangular(module, entry: str, inputs: list[np.ndarray]):
    """numpy's answer for a program that is one stablehlo.triangular_solve, or None.

    The interpreter aborts the process ("Incompatible index and shape found while
    flattening index") on batched complex solves without a unit diagonal, so such
    programs get a float64/complex128 solve of the same triangle instead."""
    func = irutil.find_function(module, entry)
    ops = list(func.regions[0].blocks[0].operations)
    if len(ops) != 2 or ops[0].name != "stablehlo.triangular_solve":
        return None
    solve = ops[0]
    if [r for r in ops[1].operands] != [solve.result]:
        return None
    args = list(func.regions[0].blocks[0].arguments)
    try:
        a, b = (inputs[args.index(v)] for v in solve.operands)
    except ValueError:
        return None  # an operand computed in the program, not an argument

    def flag(name):
        return ir.BoolAttr(solve.attributes[name]).value

    transpose = str(solve.attributes["transpose_a"]).split()[-1].rstrip(">")
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    a, b = a.astype(wide), b.astype(wide)
    a = np.tril(a) if flag("lower") else np.triu(a)
    if flag("unit_diagonal"):
        n = a.shape[-1]
        a[..., np.arange(n), np.arange(n)] = 1
    if transpose in ("TRANSPOSE", "ADJOINT"):
        a = np.swapaxes(a, -1, -2)
        if transpose == "ADJOINT":
            a = a.conj()
    if flag("left_side"):  # op(a) x = b
        x = np.linalg.solve(a, b)
    else:                  # x op(a) = b, i.e. op(a)^T x^T = b^T
        x = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    return [x.astype(inputs[args.index(solve.operands[1])].dtype)]


def _readable_results(module, entry: str) -> list:
    """Rewrite the entry's results into types the bindings can turn into numpy arrays
    (they cannot read f16, bf16 or complex attributes, and read integers as signless):
    f16/bf16 are returned as i16 bits, complex values as their real part in place and
    their imaginary part appended. Returns one reader per original result, each
    taking the list of arrays read and giving back that result as numpy."""
    func = irutil.find_function(module, entry)
    ret = func.regions[0].blocks[0].operations[-1]
    ftype = irutil.function_type(func)
    values = list(ret.operands)
    readers = []

    def create(name, t, value):
        with ir.InsertionPoint(ret), ret.location:
            return ir.Operation.create(name, results=[t], operands=[value]).result

    for i, value in enumerate(list(values)):
        t = ir.RankedTensorType(value.type)
        name = str(t.element_type)
        want = dtypes.to_numpy(name)
        if name in ("bf16", "f16"):
            values[i] = create("stablehlo.bitcast_convert",
                               ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(16)), value)
            readers.append(lambda arrays, i=i, want=want: arrays[i].view(want))
        elif isinstance(t.element_type, ir.ComplexType):
            part = ir.RankedTensorType.get(t.shape, ir.ComplexType(t.element_type).element_type)
            values[i] = create("stablehlo.real", part, value)
            values.append(create("stablehlo.imag", part, value))
            j = len(values) - 1
            readers.append(lambda arrays, i=i, j=j, want=want:
                           (arrays[i] + 1j * arrays[j]).astype(want))
        else:
            # Signless integers come back signed: view them as the declared type.
            readers.append(lambda arrays, i=i, want=want: arrays[i].view(want)
                           if arrays[i].dtype != want and arrays[i].dtype.itemsize == want.itemsize
                           else arrays[i])
    with ir.InsertionPoint(ret), ret.location:
        ir.Operation.create("func.return", operands=values)
    ret.erase()
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(ftype.inputs), [v.type for v in values]))
    return readers


def _element_type(a: np.ndarray) -> ir.Type:
    for name in ("i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "f16", "bf16",
                 "f32", "f64", "complex<f32>", "complex<f64>"):
        if dtypes.to_numpy(name) == a.dtype:
            return ir.Type.parse(name)
    raise OracleError(f"no MLIR type for {a.dtype}")
