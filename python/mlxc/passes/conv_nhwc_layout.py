"""mlxc-conv-nhwc-layout: convolutions in any layout become NHWC/HWIO/NHWC convolutions.

`stablehlo-legalize-to-linalg` makes `linalg.conv_2d_nhwc_hwcf` only from convolutions
whose dimension numbers are already [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]; any other
layout (PyTorch's and JAX's NCHW/OIHW among them) becomes a linalg.generic that the CPU
schedules leave as scalar loops. As XLA's layout assignment does, we transpose the
input and the kernel into that layout and the result back: three O(n) copies next to
an O(n * taps * channels) convolution, and transposes between two convolutions cancel
in the simplification that follows. Grouped convolutions (feature or batch groups)
are left alone: upstream lowers them to a linalg.generic whatever their layout.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir, stablehlo
from . import PythonPass


def _inverse(perm: list[int]) -> list[int]:
    inv = [0] * len(perm)
    for j, p in enumerate(perm):
        inv[p] = j
    return inv


def _layouts(dn) -> tuple[list[int], list[int], list[int]]:
    """The permutations that take input, kernel and result to NHWC, HWIO and NHWC."""
    return ([dn.input_batch_dimension, *dn.input_spatial_dimensions, dn.input_feature_dimension],
            [*dn.kernel_spatial_dimensions, dn.kernel_input_feature_dimension,
             dn.kernel_output_feature_dimension],
            [dn.output_batch_dimension, *dn.output_spatial_dimensions,
             dn.output_feature_dimension])


def _int_attr(op, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value if name in op.attributes else 1


def _rewrite(op) -> None:
    dn = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    to_input, to_kernel, to_output = _layouts(dn)
    spatial = list(range(1, len(to_input) - 1))
    nhwc = stablehlo.ConvDimensionNumbers.get(
        input_batch_dimension=0, input_feature_dimension=len(to_input) - 1,
        input_spatial_dimensions=spatial,
        kernel_input_feature_dimension=len(to_input) - 2,
        kernel_output_feature_dimension=len(to_input) - 1,
        kernel_spatial_dimensions=[s - 1 for s in spatial],
        output_batch_dimension=0, output_feature_dimension=len(to_input) - 1,
        output_spatial_dimensions=spatial)
    result = ir.RankedTensorType(op.result.type)
    nhwc_shape = [result.shape[d] for d in to_output]
    attrs = {name: op.attributes[name] for name in op.attributes}
    attrs["dimension_numbers"] = nhwc

    def build():
        x = irutil.transpose(op.operands[0], to_input)
        w = irutil.transpose(op.operands[1], to_kernel)
        conv = ir.Operation.create(
            "stablehlo.convolution",
            results=[ir.RankedTensorType.get(nhwc_shape, result.element_type)],
            operands=[x, w], attributes=attrs).result
        return irutil.transpose(conv, _inverse(to_output))

    irutil.replace_op(op, build)


def _wants_rewrite(op) -> bool:
    if op.name != "stablehlo.convolution" or len(op.operands) != 2:
        return False
    if _int_attr(op, "feature_group_count") != 1 or _int_attr(op, "batch_group_count") != 1:
        return False
    types = [op.operands[0].type, op.operands[1].type, op.result.type]
    if not all(isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape
               for t in types):
        return False
    dn = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    if len(dn.input_spatial_dimensions) != 2:
        return False  # the CPU schedules only handle 2-D convolutions
    return any(p != sorted(p) for p in _layouts(dn))


def run(module) -> None:
    for op in [op for op in irutil.walk(module) if _wants_rewrite(op)]:
        _rewrite(op)


PASS = PythonPass(
    argument="mlxc-conv-nhwc-layout",
    summary="2-D convolutions in other layouts become NHWC/HWIO/NHWC convolutions between "
            "transposes",
    run=run,
)
