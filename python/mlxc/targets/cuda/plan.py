"""The host side as data: the entry function after `nvvm` read into a launch plan.

After the `gpu` stage the host function only allocates, launches and frees (its
contract), so instead of compiling it for the CPU mlxc reads it into a list of steps
that the runtime (mlxc.runtime.cuda) executes with the CUDA driver:

    ("alloc", id, nbytes)   ("free", id)
    ("launch", kernel, (gx, gy, gz), (bx, by, bz), [("buffer", id) | ("const", k) | (scalar type, value)])

Buffers 0..n-1 are the entry's arguments (inputs, then outputs); allocations take the
next ids; constants (memref.global data) are uploaded once when the program loads.
"""

from __future__ import annotations

import numpy as np

from ... import irutil
from ..._mlir import ir
from ...errors import CompileError
from ...runtime import dtypes


def _op(value):
    owner = value.owner
    return owner.operation if hasattr(owner, "operation") else owner


def _nbytes(memref_type) -> int:
    t = ir.MemRefType(memref_type)
    size = int(np.prod(t.shape)) if t.shape else 1
    return size * dtypes.to_numpy(str(t.element_type)).itemsize


def _constant(op):
    attr = op.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    raise CompileError.at(op, f"the cuda launch plan cannot pass constant {attr} to a kernel")


def _global_data(module, name: str, op) -> np.ndarray:
    for g in irutil.top_level_ops(module):
        if g.name == "memref.global" and irutil.sym_name(g) == name:
            t = ir.MemRefType(ir.TypeAttr(g.attributes["type"]).value)
            dtype = dtypes.to_numpy(str(t.element_type))
            attr = ir.DenseElementsAttr(g.attributes["initial_value"])
            if attr.is_splat:
                return np.full(t.shape, _splat(attr, dtype), dtype)
            return np.ascontiguousarray(np.array(attr).astype(dtype, copy=False).reshape(t.shape))
    raise CompileError.at(op, f"no memref.global @{name} for this get_global")


def _splat(attr, dtype):
    value = attr.get_splat_value()
    for kind in (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr):
        if isinstance(value, kind):
            return dtype.type(kind(value).value)
    raise CompileError(f"the cuda launch plan cannot read splat constant {attr}")


def read_plan(module, entry: str) -> dict:
    func = irutil.find_function(module, entry)
    body = func.regions[0].blocks[0]
    ids: dict = {}
    for i, arg in enumerate(body.arguments):
        ids[arg] = ("buffer", i)
    next_id = len(body.arguments)
    constants: list[np.ndarray] = []
    steps: list = []
    for op in body.operations:
        op = op.operation
        name = op.name
        if name in ("arith.constant", "func.return"):
            continue
        if name == "memref.alloc":
            ids[op.result] = ("buffer", next_id)
            steps.append(("alloc", next_id, _nbytes(op.result.type)))
            next_id += 1
        elif name == "memref.dealloc":
            kind, n = ids[op.operands[0]]
            if kind == "buffer":
                steps.append(("free", n))
        elif name == "memref.get_global":
            sym = ir.FlatSymbolRefAttr(op.attributes["name"]).value
            ids[op.result] = ("const", len(constants))
            constants.append(_global_data(module, sym, op))
        elif name == "gpu.launch_func":
            view = op.opview
            kernel = ir.SymbolRefAttr(view.kernel).value[0]
            grid = tuple(_dim(v, op) for v in (view.gridSizeX, view.gridSizeY, view.gridSizeZ))
            block = tuple(_dim(v, op) for v in (view.blockSizeX, view.blockSizeY, view.blockSizeZ))
            args = []
            for v in view.kernelOperands:
                if v in ids:
                    args.append(ids[v])
                elif isinstance(_op(v), ir.Operation) and _op(v).name == "arith.constant":
                    args.append((str(v.type), _constant(_op(v))))
                else:
                    raise CompileError.at(op, f"the cuda launch plan cannot pass {v} to a kernel")
            steps.append(("launch", kernel, grid, block, args))
        else:
            raise CompileError.at(op, f"the cuda launch plan cannot run host op '{name}'")
    return {"steps": steps, "constants": constants, "num_buffers": next_id}


def _dim(value, op) -> int:
    owner = _op(value)
    if isinstance(owner, ir.Operation) and owner.name == "arith.constant":
        return int(_constant(owner))
    raise CompileError.at(op, "the cuda launch plan needs launch sizes known at compile time")
