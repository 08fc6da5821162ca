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


def arg_name(arg, index: int) -> str:
    loc = arg.location
    for candidate in ([loc] + list(loc.locations) if isinstance(loc, ir.FusedLoc) else [loc]):
        if isinstance(candidate, ir.NameLoc):
            return candidate.name_str
    return f"arg{index}"


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

