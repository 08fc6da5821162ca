"""mlxc-shape-assertions: JAX's `@shape_assertion` custom calls, checked at compile time.

`jax.export` with symbolic shapes (`symbolic_shape("b, 4")`) guards the program with
`stablehlo.custom_call @shape_assertion(%ok, %values...)`: `%ok` says whether the
arguments' dimensions satisfy the specification (`b >= 1`, two arguments sharing `b`,
`b >= 2` from `constraints=`), and `error_message` says what failed, with `{0}`,
`{1}`, ... standing for `%values`. mlxc compiles such a program once per call shapes
(`SpecializingExecutable`): by the end of the import stage the shapes are static and
each `%ok` a constant. A true one is dropped; a false one raises ValueError with JAX's
message, so the call fails as it would under JAX, before any code runs.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from ..errors import CompileError
from . import PythonPass

TARGET = "shape_assertion"


def _constant(value):
    """The integer or boolean a rank-0 stablehlo.constant holds, else None."""
    op = irutil.defining_op(value)
    if op is None or op.name != "stablehlo.constant":
        return None
    attr = ir.DenseElementsAttr(op.attributes["value"])
    if not attr.is_splat:
        return None
    element = attr.get_splat_value()
    if isinstance(element, ir.BoolAttr):
        return int(element.value)
    return ir.IntegerAttr(element).value


def _message(op, values: list) -> str:
    text = ir.StringAttr(op.attributes["error_message"]).value \
        if "error_message" in op.attributes else "shape assertion failed"
    try:
        return text.format(*values)
    except (IndexError, KeyError, ValueError):
        return text


def run(module) -> None:
    for op in irutil.ops_named(module, "stablehlo.custom_call"):
        if ir.StringAttr(op.attributes["call_target_name"]).value != TARGET:
            continue
        if len(op.operands) == 0:
            raise CompileError.at(op, "custom_call @shape_assertion has no predicate operand")
        ok = _constant(op.operands[0])
        values = [_constant(v) for v in list(op.operands)[1:]]
        if ok is None:
            raise CompileError.at(op, "custom_call @shape_assertion: its predicate does not "
                                      "depend on the argument shapes alone (not a constant "
                                      "once they are known)")
        if not ok:
            raise ValueError(_message(op, ["?" if v is None else v for v in values]))
        op.erase()


PASS = PythonPass(
    argument="mlxc-shape-assertions",
    summary="Drop JAX's @shape_assertion custom calls that hold for the compiled shapes; "
            "raise ValueError with JAX's message for one that does not",
    run=run,
)
