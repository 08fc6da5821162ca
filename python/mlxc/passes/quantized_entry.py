"""mlxc-quantized-entry: prepare a program for the legalization of quantized types.

`stablehlo-legalize-quant-to-math`, which follows, replaces every
`!quant.uniform<...>` by its storage integer type, the entry's arguments and
results included. Two things must happen before:

- The entry's quantized types are kept as the `mlxc.quantized_entry` module
  attribute (the entry's function type), so that mlxc-record-signature can show
  `x: !quant.uniform<i8:f32, 0.5:-3>[4]` while the caller passes int8 storage.
- Unsigned storage is refused: the legalization turns `u8` into the signless `i8`
  and then converts it as signed, so a stored 255 would dequantize as -1.
"""

from __future__ import annotations

import re

from .. import irutil
from .._mlir import ir
from ..errors import CompileError
from . import PythonPass
from .select_entry import ENTRY_ATTR

QUANTIZED_ENTRY_ATTR = "mlxc.quantized_entry"
_UNSIGNED = re.compile(r"!quant\.uniform<u\d+")


def _types(op) -> list:
    types = [r.type for r in op.results]
    for region in op.regions:
        for block in region.blocks:
            types += [a.type for a in block.arguments]
    return types


def run(module) -> None:
    seen: set = set()  # types are uniqued: print each once
    for op in irutil.walk(module):
        for t in _types(op):
            if t in seen:
                continue
            seen.add(t)
            if _UNSIGNED.search(str(t)):
                raise CompileError.at(
                    op, f"quantized type {t} has unsigned storage, which mlxc does not support "
                        "yet (the upstream legalization reads it as signed); use signed storage "
                        "such as i8 with the zero point shifted by 128")
    func = irutil.find_function(module, irutil.string_attr(module, ENTRY_ATTR) or "main")
    if func is None:
        return
    ftype = irutil.function_type(func)
    if any("!quant." in str(t) for t in list(ftype.inputs) + list(ftype.results)):
        module.attributes[QUANTIZED_ENTRY_ATTR] = ir.TypeAttr.get(ftype)


PASS = PythonPass(
    argument="mlxc-quantized-entry",
    summary="Keep the entry's quantized types for the signature; refuse unsigned storage",
    run=run,
)
