"""mlxc-mark-inputs-readonly: tell one-shot-bufferize it must not write the inputs.

With function-boundary bufferization, an argument is writable unless marked, and
bufferization then updates it in place (a caller's numpy array overwritten). We mark
every tensor argument of every public function `bufferization.writable = false`.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func" or not irutil.is_public(func):
            continue
        ftype = irutil.function_type(func)
        dicts = []
        for i, t in enumerate(ftype.inputs):
            attrs = irutil.arg_attrs(func, i)
            if irutil.is_tensor(t):
                attrs["bufferization.writable"] = ir.BoolAttr.get(False)
            dicts.append(ir.DictAttr.get(attrs))
        if dicts:
            func.attributes["arg_attrs"] = ir.ArrayAttr.get(dicts)


PASS = PythonPass(
    argument="mlxc-mark-inputs-readonly",
    summary="Mark tensor arguments of public functions bufferization.writable = false",
    run=run,
)
