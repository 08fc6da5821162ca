"""irutil's erase-safe iteration, and the handle behaviour of the bindings it guards against."""

from mlxc import irutil
from mlxc._mlir import ir, new_context

_TEXT = """
func.func @f(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %0 = stablehlo.add %a, %b : tensor<4xi1>
  %1 = "stablehlo.reduce"(%0, %a) ({
  ^bb0(%x: tensor<4xi1>, %y: tensor<4xi1>):
    %s = stablehlo.add %x, %y : tensor<4xi1>
    stablehlo.return %s : tensor<4xi1>
  }) {dimensions = array<i64>} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %2 = stablehlo.and %1, %0 : tensor<4xi1>
  return %2 : tensor<4xi1>
}
"""


def _module(ctx):
    return ir.Module.parse(_TEXT, context=ctx)


def test_ops_named_lists_matches_only_in_pre_order_nested_ones_included():
    with new_context() as ctx, ir.Location.unknown():
        module = _module(ctx)
        adds = irutil.ops_named(module, "stablehlo.add")
        assert [str(op.location) for op in adds] == [str(op.location) for op in irutil.walk(module)
                                                    if op.name == "stablehlo.add"]
        assert len(adds) == 2 and adds[1].parent.name == "stablehlo.reduce"
        both = irutil.ops_named(module, "stablehlo.and", "stablehlo.reduce")
        assert [op.name for op in both] == ["stablehlo.reduce", "stablehlo.and"]
        assert [op.name for op in irutil.ops_named(module, "builtin.module")] == ["builtin.module"]
        assert irutil.ops_named(module, "stablehlo.or") == []


def test_an_ops_hash_follows_its_operands():
    # Why irutil says an op used as a dict key must not be rewritten meanwhile: the
    # bindings hash an op's contents, so the same op hashes differently once changed
    # (and hashing an erased one reads freed memory).
    with new_context() as ctx, ir.Location.unknown():
        module = _module(ctx)
        add = irutil.ops_named(module, "stablehlo.add")[0]
        before = hash(add)
        add.operands[1] = add.operands[0]
        assert add == irutil.ops_named(module, "stablehlo.add")[0]   # the same op
        assert hash(add) != before                                    # another key
