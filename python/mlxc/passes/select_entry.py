"""mlxc-select-entry: pick the entry function; every other becomes private.

Inlining and symbol-dce then leave one function. The entry's name is recorded as
`mlxc.entry`; `mlxc-record-signature` (record_signature.py) records its signature
once shapes are refined.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from ..errors import CompileError, Diagnostic, describe_location
from . import PythonPass

ENTRY_ATTR = "mlxc.entry"


def _own_name(arg):
    loc = arg.location
    for candidate in ([loc] + list(loc.locations) if isinstance(loc, ir.FusedLoc) else [loc]):
        if isinstance(candidate, ir.NameLoc):
            return candidate.name_str
    return None


def _is_refinement_wrapper(op) -> bool:
    return op.name == "stablehlo.custom_call" and ir.StringAttr(
        op.attributes["call_target_name"]).value == "stablehlo.shape_refinement_operand_wrapper"


def _forwarded_name(arg):
    """The name of the callee argument `arg` is passed to: jax.export's @main, with
    symbolic shapes, only checks them and calls @_wrapped_jax_export_main, whose
    arguments carry the names."""
    func = arg.owner.owner
    module = func.parent if func is not None else None
    uses = list(arg.uses)
    for use in uses:
        call = irutil.as_operation(use.owner)
        if _is_refinement_wrapper(call):
            uses.extend(call.results[0].uses)  # stablehlo-refine-arguments' wrapper
            continue
        if call.name != "func.call" or module is None:
            continue
        callee = irutil.find_function(module, ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
        if callee is not None and len(callee.regions[0].blocks):
            args = callee.regions[0].blocks[0].arguments
            if use.operand_number < len(args):
                name = _own_name(args[use.operand_number])
                if name is not None:
                    return name
    return None


NAME_ATTR = "mlxc.name"  # a forwarded name, kept for after the callee is inlined


def _recorded_name(arg):
    func = arg.owner.owner
    if func is None or "arg_attrs" not in func.attributes:
        return None
    name = irutil.arg_attrs(func, arg.arg_number).get(NAME_ATTR)
    return ir.StringAttr(name).value if name is not None else None


def arg_name(arg, index: int) -> str:
    return _own_name(arg) or _recorded_name(arg) or _forwarded_name(arg) or f"arg{index}"


def _record_forwarded_names(func) -> None:
    args = list(func.regions[0].blocks[0].arguments)
    forwarded = [None if _own_name(a) else _forwarded_name(a) for a in args]
    if not any(forwarded):
        return
    dicts = []
    for i, name in enumerate(forwarded):
        attrs = irutil.arg_attrs(func, i)
        if name is not None:
            attrs[NAME_ATTR] = ir.StringAttr.get(name)
        dicts.append(ir.DictAttr.get(attrs))
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(dicts)


def result_name(func, index: int) -> str:
    attrs = irutil.result_attrs(func, index)
    info = attrs.get("jax.result_info")
    if isinstance(info, ir.StringAttr):  # (any attribute may stand there)
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
    if not func.regions[0].blocks:
        raise CompileError.at(func, f"entry @{entry} is only declared: it has no body to compile")
    for f in irutil.functions(module):
        if f is not func and irutil.sym_name(f) != entry:
            f.attributes["sym_visibility"] = ir.StringAttr.get("private")
    _record_forwarded_names(func)
    ftype = irutil.function_type(func)
    names = [arg_name(a, i) for i, a in enumerate(func.regions[0].blocks[0].arguments)]
    for i, t in enumerate(ftype.inputs):
        _check_tensor(t, f"argument {i} ('{names[i]}')", func)
    for i, t in enumerate(ftype.results):
        _check_tensor(t, f"result {i}", func)
    module.attributes[ENTRY_ATTR] = ir.StringAttr.get(entry)


PASS = PythonPass(
    argument="mlxc-select-entry",
    summary="Make @entry the only public function and record its name as mlxc.entry",
    run=run,
    options={"entry": "name of the entry function (default main)"},
)

