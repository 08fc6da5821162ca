"""mlxc-select-entry: pick the entry function and record its signature on the module.

Every other function becomes private, so inlining and symbol-dce leave one function.
The signature (types as StableHLO spells them, unsigned integers included, and the
argument names JAX wrote as `loc("x")`) is stored as `mlxc.signature`, because
later stages rewrite the types (signless integers, memrefs, pointers) and a compile
restarted from a dumped file still needs it.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from ..errors import CompileError, Diagnostic, describe_location
from . import PythonPass

SIGNATURE_ATTR = "mlxc.signature"
ENTRY_ATTR = "mlxc.entry"


def _arg_name(arg, index: int) -> str:
    loc = arg.location
    for candidate in ([loc] + list(loc.locations) if isinstance(loc, ir.FusedLoc) else [loc]):
        if isinstance(candidate, ir.NameLoc):
            return candidate.name_str
    return f"arg{index}"


def _result_name(func, index: int) -> str:
    attrs = irutil.result_attrs(func, index)
    info = attrs.get("jax.result_info")
    if info is not None:
        text = ir.StringAttr(info).value
        if text:
            return text
    return f"result{index}" if index else "result"


def _check_tensor(t, what: str, func) -> None:
    if not isinstance(t, ir.RankedTensorType):
        raise CompileError.at(func, f"{what} has type {t}; mlxc entry points take and return "
                                    "ranked tensors only")


def run(module, entry: str = "main") -> None:
    func = irutil.find_function(module, entry)
    if func is None:
        public = [irutil.sym_name(f) for f in irutil.functions(module) if irutil.is_public(f)]
        others = ", ".join(f"@{n}" for n in public) if public else "none"
        where = describe_location(module.operation.location)
        funcs = irutil.functions(module)
        if where.endswith(":0:0") and funcs:  # an implicit module has no position of its own
            where = describe_location(funcs[0].location)
        raise CompileError(f"no entry function @{entry}", [
            Diagnostic("error", where, f"no function named @{entry} in the module "
                                       f"(public functions: {others}); pass entry=NAME")])
    if func.name != "func.func":
        raise CompileError.at(func, f"entry @{entry} is a '{func.name}', not a func.func")
    for f in irutil.functions(module):
        if f is not func and irutil.sym_name(f) != entry:
            f.attributes["sym_visibility"] = ir.StringAttr.get("private")
    ftype = irutil.function_type(func)
    block = func.regions[0].blocks[0]
    names = [_arg_name(a, i) for i, a in enumerate(block.arguments)]
    for i, t in enumerate(ftype.inputs):
        _check_tensor(t, f"argument {i} ('{names[i]}')", func)
    for i, t in enumerate(ftype.results):
        _check_tensor(t, f"result {i}", func)
    signature = ir.DictAttr.get({
        "inputs": ir.ArrayAttr.get([ir.TypeAttr.get(t) for t in ftype.inputs]),
        "input_names": ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names]),
        "outputs": ir.ArrayAttr.get([ir.TypeAttr.get(t) for t in ftype.results]),
        "output_names": ir.ArrayAttr.get(
            [ir.StringAttr.get(_result_name(func, i)) for i in range(len(ftype.results))]),
    })
    module.attributes[SIGNATURE_ATTR] = signature
    module.attributes[ENTRY_ATTR] = ir.StringAttr.get(entry)


PASS = PythonPass(
    argument="mlxc-select-entry",
    summary="Make @entry the only public function and record its signature as mlxc.signature",
    run=run,
    options={"entry": "name of the entry function (default main)"},
)


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
