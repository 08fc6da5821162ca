"""mlxc-specialize-arguments{values=I:V,...}: make rank-0 integer arguments constants.

JAX passes the sizes of `?` dimensions as leading rank-0 integer arguments and
computes shapes from them. When mlxc compiles such a program for a call, it first
refines the argument types (`stablehlo-refine-arguments`), and, if shapes still
depend on those sizes, replaces the size arguments by their values with this pass,
so that `stablehlo-refine-shapes` can make every shape static.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from ..errors import CompileError
from . import PythonPass


def specialize_values(module, entry: str, values: dict[int, int]) -> None:
    """Replace argument `i` of @entry by the constant `values[i]` (rank-0 integers)."""
    func = irutil.find_function(module, entry)
    if func is None:
        raise CompileError.at(module, f"mlxc-specialize-arguments: no function @{entry}")
    block = func.regions[0].blocks[0]
    args = list(block.arguments)
    first = list(block.operations)[0].operation
    for index, value in sorted(values.items()):
        if index >= len(args):
            raise CompileError.at(func, f"@{entry} has no argument {index}")
        rt = ir.RankedTensorType(args[index].type)
        if rt.rank != 0 or not isinstance(rt.element_type, ir.IntegerType):
            raise CompileError.at(func, f"argument {index} of @{entry} is {rt}; only rank-0 "
                                        "integers can be specialised by value")
        with ir.InsertionPoint(first), func.location:
            const = ir.Operation.create(
                "stablehlo.constant", results=[rt],
                attributes={"value": ir.DenseElementsAttr.get_splat(
                    rt, ir.IntegerAttr.get(rt.element_type, value))}).result
        args[index].replace_all_uses_with(const)


def run(module, values: str, entry: str = "main") -> None:
    parsed = {}
    for item in filter(None, (v.strip() for v in values.split(","))):
        index, _, value = item.partition(":")
        parsed[int(index)] = int(value)
    specialize_values(module, entry, parsed)


PASS = PythonPass(
    argument="mlxc-specialize-arguments",
    summary="Replace listed rank-0 integer arguments of the entry by constants",
    run=run,
    options={"values": "index:value pairs, comma separated",
             "entry": "the entry function (default main)"},
)
