"""mlxc-unpadded-convolutions: a zero-padded convolution reads its input in place.

`stablehlo-legalize-to-linalg` pads a convolution's input (SAME padding) with a
`tensor.pad`, a full copy of the input: 578 KiB for an 8x32x32x16 image, where XLA
needs no temporary. With stride and dilation 1, output row `o` reads input rows
`o + k - low` for filter rows `k`; only the first `low` and last `high` output rows
(and columns) read padding. We split the output into regions inside which every
output element reads the same filter rows and columns: the interior, edges and
corners (nine regions for a 3x3 SAME convolution). Each region is an unpadded
convolution of a slice of the input with a slice of the filter, written into its
slice of the result, so no padded copy exists (the padding's zeros contributed
nothing to the sum). Bufferization turns the slices into views of the caller's
buffers.

Applies to `linalg.conv_2d_nhwc_hwcf` with unit strides and dilations whose input is a
`tensor.pad` of zeros on the spatial dimensions only, used by the convolution alone;
at most MAX_REGIONS regions (wide paddings would make many tiny convolutions).
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

MAX_REGIONS = 25


def _ints(op, name: str) -> list[int]:
    attr = op.attributes[name]
    if isinstance(attr, ir.DenseIntElementsAttr):
        return [int(v) for v in ir.DenseIntElementsAttr(attr)]
    return list(ir.DenseI64ArrayAttr(attr))


def _zero_pad(value):
    """The tensor.pad of zeros on dims 1 and 2 that makes `value`, used once, or None."""
    pad = irutil.defining_op(value)
    if pad is None or pad.name != "tensor.pad" or len(list(value.uses)) != 1:
        return None
    if len(pad.operands) != 1:        # dynamic low/high
        return None
    low, high = _ints(pad, "static_low"), _ints(pad, "static_high")
    if low[0] or low[3] or high[0] or high[3] or min(low + high) < 0:
        return None
    body = pad.regions[0].blocks[0]
    yields = [o for o in body.operations][-1]
    if not irutil.is_zero_constant(irutil.as_operation(yields).operands[0]):
        return None
    return pad, low, high


def _segments(size: int, kernel: int, low: int, out: int) -> list[tuple[int, int, int, int]]:
    """Runs of output positions [o0, o1) that read the same filter taps [k0, k1)."""
    runs = []
    for o in range(out):
        k0, k1 = max(0, low - o), min(kernel, size + low - o)
        if runs and runs[-1][2:] == (k0, k1):
            runs[-1] = (runs[-1][0], o + 1, k0, k1)
        else:
            runs.append((o, o + 1, k0, k1))
    return runs


def _slice(source, offsets, sizes):
    t = ir.RankedTensorType(source.type)
    return ir.Operation.create(
        "tensor.extract_slice",
        results=[ir.RankedTensorType.get(sizes, t.element_type)], operands=[source],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
                    "static_offsets": ir.DenseI64ArrayAttr.get(offsets),
                    "static_sizes": ir.DenseI64ArrayAttr.get(sizes),
                    "static_strides": ir.DenseI64ArrayAttr.get([1] * len(sizes))}).result


def _insert(source, dest, offsets):
    # The sizes are SSA constants and the source is cast to that dynamic shape: the CPU
    # vectorizer turns a static insert_slice into one whole-region vector copy (a 115 KiB
    # vector unrolled into thousands of ops), but leaves a dynamic one alone; the
    # canonicalization after it makes the sizes static again, and bufferization then
    # writes each region's convolution straight into its view of the result.
    t = ir.RankedTensorType(source.type)
    sizes = list(t.shape)
    dynamic = ir.ShapedType.get_dynamic_size()
    static_sizes = [s if s == 1 else dynamic for s in sizes]
    cast = ir.Operation.create(
        "tensor.cast", results=[ir.RankedTensorType.get(static_sizes, t.element_type)],
        operands=[source]).result
    index = ir.IndexType.get()
    values = [ir.Operation.create("arith.constant", results=[index],
                                  attributes={"value": ir.IntegerAttr.get(index, s)}).result
              for s in sizes if s != 1]
    return ir.Operation.create(
        "tensor.insert_slice", results=[dest.type], operands=[cast, dest, *values],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, len(values), 0]),
                    "static_offsets": ir.DenseI64ArrayAttr.get(offsets),
                    "static_sizes": ir.DenseI64ArrayAttr.get(static_sizes),
                    "static_strides": ir.DenseI64ArrayAttr.get([1] * len(sizes))}).result


def _refill(fill, dest):
    """`fill`'s scalar written over `dest`."""
    new = ir.Operation.create(fill.name, results=[dest.type], operands=[fill.operands[0], dest],
                              attributes={n: fill.attributes[n] for n in fill.attributes},
                              regions=1)
    old = fill.regions[0].blocks[0]
    body = new.regions[0].blocks.append(*[a.type for a in old.arguments])
    with ir.InsertionPoint(body):
        irutil.clone_ops(list(old.operations), dict(zip(old.arguments, body.arguments)))
    return new.result


def _conv(like, x, w, init):
    """A convolution with `like`'s attributes and body on other operands."""
    attrs = {name: like.attributes[name] for name in like.attributes}
    conv = ir.Operation.create(like.name, results=[init.type], operands=[x, w, init],
                               attributes=attrs, regions=1)
    old = like.regions[0].blocks[0]
    body = conv.regions[0].blocks.append(*[a.type for a in old.arguments])
    with ir.InsertionPoint(body):
        irutil.clone_ops(list(old.operations), dict(zip(old.arguments, body.arguments)))
    return conv.result


def _rewrite(conv) -> bool:
    if _ints(conv, "strides") != [1, 1] or _ints(conv, "dilations") != [1, 1]:
        return False
    found = _zero_pad(conv.operands[0])
    if found is None:
        return False
    pad, low, high = found
    x, w, init = pad.operands[0], conv.operands[1], conv.operands[2]
    xs = ir.RankedTensorType(x.type).shape
    ws = ir.RankedTensorType(w.type).shape
    os_ = ir.RankedTensorType(init.type).shape
    rows = _segments(xs[1], ws[0], low[1], os_[1])
    cols = _segments(xs[2], ws[1], low[2], os_[2])
    if len(rows) * len(cols) > MAX_REGIONS or len(rows) * len(cols) == 1 and not any(low + high):
        return False
    # A filled init is filled region by region: one fill of the whole result read by
    # the first slice and the first insert would count as shared (mlxc-unshare-fills
    # then fills a second, temporary buffer).
    fill = irutil.defining_op(init)
    if fill is not None and fill.name != "linalg.fill":
        fill = None
    with ir.InsertionPoint(conv), conv.location:
        acc = init
        if fill is not None:
            # A fill or empty shared with other ops (cse merges equal ones) would make
            # bufferization copy our first region out of place; an alloc_tensor (an
            # allocation) is never merged.
            acc = ir.Operation.create(
                "bufferization.alloc_tensor", results=[acc.type],
                attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0, 0])}).result
        for o0, o1, kh0, kh1 in rows:
            for p0, p1, kw0, kw1 in cols:
                out_at = [0, o0, p0, 0]
                out_sizes = [os_[0], o1 - o0, p1 - p0, os_[3]]
                part = _slice(acc, out_at, out_sizes)
                if fill is not None:
                    part = _refill(fill, part)
                if kh1 <= kh0 or kw1 <= kw0:
                    # Reads padding only: the output keeps its initial value.
                    if fill is not None:
                        acc = _insert(part, acc, out_at)
                    continue
                xi = _slice(x, [0, o0 + kh0 - low[1], p0 + kw0 - low[2], 0],
                            [xs[0], o1 - o0 + kh1 - kh0 - 1, p1 - p0 + kw1 - kw0 - 1, xs[3]])
                wi = _slice(w, [kh0, kw0, 0, 0], [kh1 - kh0, kw1 - kw0, ws[2], ws[3]])
                part = _conv(conv, xi, wi, part)
                acc = _insert(part, acc, out_at)
    conv.results[0].replace_all_uses_with(acc)
    conv.erase()
    pad.erase()
    if fill is not None and not list(fill.results[0].uses):
        fill.erase()
    return True


def run(module) -> None:
    convs = [op for op in irutil.walk(module) if op.name == "linalg.conv_2d_nhwc_hwcf"]
    for conv in convs:
        _rewrite(irutil.as_operation(conv))


PASS = PythonPass(
    argument="mlxc-unpadded-convolutions",
    summary="Split a zero-padded convolution into unpadded ones over output regions",
    run=run,
)
