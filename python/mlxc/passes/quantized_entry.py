"""mlxc-quantized-entry: prepare a program for the legalization of quantized types.

`stablehlo-legalize-quant-to-math`, which follows, replaces every
`!quant.uniform<...>` by its storage integer type, the entry's arguments and
results included, so the entry's quantized types are kept first, as the
`mlxc.quantized_entry` module attribute (the entry's function type): then
mlxc-record-signature can show `x: !quant.uniform<i8:f32, 0.5:-3>[4]` while the caller
passes int8 storage.

Unsigned storage (`u8`), which the legalization would read as signed, is rewritten
into signed storage next, by mlxc-signed-quantized-storage; the signature keeps it.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass
from .select_entry import ENTRY_ATTR

QUANTIZED_ENTRY_ATTR = "mlxc.quantized_entry"


def run(module) -> None:
    func = irutil.find_function(module, irutil.string_attr(module, ENTRY_ATTR) or "main")
    if func is None:
        return
    ftype = irutil.function_type(func)
    if any("!quant." in str(t) for t in list(ftype.inputs) + list(ftype.results)):
        module.attributes[QUANTIZED_ENTRY_ATTR] = ir.TypeAttr.get(ftype)


PASS = PythonPass(
    argument="mlxc-quantized-entry",
    summary="Keep the entry's quantized types for the signature",
    run=run,
)
