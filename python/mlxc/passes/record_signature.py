"""mlxc-record-signature: record the entry's signature on the module as mlxc.signature.

The types as StableHLO spells them (unsigned integers included) and the argument
names JAX writes as `loc("x")`. Later stages rewrite the types (signless integers,
memrefs, pointers), and a compile restarted from a dumped file still needs them, so
the signature travels as a module attribute. It runs after shape refinement.
A quantized argument or result keeps its `!quant.uniform<...>` type here (from
mlxc-quantized-entry); the runtime passes it as its storage integers.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from ..errors import CompileError, Diagnostic, describe_location
from . import PythonPass
from .select_entry import ENTRY_ATTR, arg_name, result_name  # noqa: F401
from .quantized_entry import QUANTIZED_ENTRY_ATTR

SIGNATURE_ATTR = "mlxc.signature"


def run(module) -> None:
    entry = irutil.string_attr(module, ENTRY_ATTR) or "main"
    func = irutil.find_function(module, entry)
    if func is None:
        raise CompileError.at(module, f"mlxc-record-signature: no entry @{entry}; run "
                                      "mlxc-select-entry first")
    ftype = irutil.function_type(func)
    inputs, results = list(ftype.inputs), list(ftype.results)
    quantized = irutil.module_attr(module, QUANTIZED_ENTRY_ATTR)
    if quantized is not None:
        before = ir.FunctionType(ir.TypeAttr(quantized).value)
        inputs = [_quantized(t, q) for t, q in zip(inputs, before.inputs)]
        results = [_quantized(t, q) for t, q in zip(results, before.results)]
    names = [arg_name(a, i) for i, a in enumerate(func.regions[0].blocks[0].arguments)]
    module.attributes[SIGNATURE_ATTR] = ir.DictAttr.get({
        "inputs": ir.ArrayAttr.get([ir.TypeAttr.get(t) for t in inputs]),
        "input_names": ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names]),
        "outputs": ir.ArrayAttr.get([ir.TypeAttr.get(t) for t in results]),
        "output_names": ir.ArrayAttr.get(
            [ir.StringAttr.get(result_name(func, i)) for i in range(len(ftype.results))]),
    })


def _quantized(now: ir.Type, before: ir.Type) -> ir.Type:
    """`now` (shape refined, storage type) with the quantized element type it had."""
    if not (isinstance(before, ir.ShapedType) and "!quant." in str(before)):
        return now
    shaped = ir.RankedTensorType(now)
    return ir.RankedTensorType.get(shaped.shape, ir.ShapedType(before).element_type)


def read_signature(module) -> "Signature":
    """The `Signature` recorded by this pass on `module` (any later stage too)."""
    from ..runtime.signature import Signature, TensorSpec

    attr = irutil.module_attr(module, SIGNATURE_ATTR)
    if attr is None:
        raise CompileError("the module has no mlxc.signature", [Diagnostic(
            "error", describe_location(module.operation.location),
            "no mlxc.signature attribute: run mlxc-select-entry (the import stage) first")])
    d = ir.DictAttr(attr)

    def specs(types_key: str, names_key: str) -> tuple:
        types = [ir.TypeAttr(a).value for a in ir.ArrayAttr(d[types_key])]
        names = [ir.StringAttr(a).value for a in ir.ArrayAttr(d[names_key])]
        out = []
        for name, t in zip(names, types):
            rt = ir.RankedTensorType(t)
            shape = tuple(-1 if rt.is_dynamic_dim(i) else rt.shape[i] for i in range(rt.rank))
            out.append(TensorSpec(name, shape, str(rt.element_type)))
        return tuple(out)

    entry = irutil.string_attr(module, ENTRY_ATTR) or "main"
    return Signature(specs("inputs", "input_names"), specs("outputs", "output_names"), entry)


PASS = PythonPass(
    argument="mlxc-record-signature",
    summary="Record the entry's argument and result types and names as mlxc.signature",
    run=run,
)
