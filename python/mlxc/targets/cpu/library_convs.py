"""Which convolutions the CPU target hands to the runtime's precompiled kernel.

An f32 NHWC/HWIO convolution (`mlxc-conv-nhwc-layout` puts every convolution in that
layout) whose output starts from zeros calls `mlxc_sconv` (runtime/mlxc_conv.c): an
implicit matrix product that reads the unpadded input, counting taps in the padding as
zeros. A depthwise one (a feature group per channel) calls `mlxc_sconv_depthwise`.
So the program makes no padded copy of its input (XLA, through Eigen, makes
none either), and spends no time tiling, vectorizing and compiling the convolution
through LLVM, which was most of a convolution program's compile time.

`mlxc-apply-cpu-schedules` sets these convolutions aside like the matrix products
(library_calls.set_aside), and `mlxc-library-convs` makes them calls at the start of the
bufferize stage, before the zero padding would become a buffer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ... import irutil, settings
from ..._mlir import ir

# The linalg ops the kernels compute, with their number of spatial dimensions.
DENSE = {"linalg.conv_2d_nhwc_hwcf": 2, "linalg.conv_1d_nwc_wcf": 1}
# One filter per channel (feature_group_count = C): `mlxc_sconv_depthwise`.
DEPTHWISE = {"linalg.depthwise_conv_2d_nhwc_hwc": 2, "linalg.depthwise_conv_1d_nwc_wc": 1}
CONVS = {**DENSE, **DEPTHWISE}


@dataclass(frozen=True)
class Conv:
    """A convolution in the kernel's terms (a 1-D one with h = kh = oh = 1; a depthwise
    one with f = c)."""
    depthwise: bool
    source: ir.Value     # the unpadded input
    padding: tuple       # the ops between it and the convolution (a pad, maybe in reshapes)
    n: int
    h: int
    w: int
    c: int
    kh: int
    kw: int
    f: int
    oh: int
    ow: int
    strides: tuple       # (h, w)
    dilations: tuple     # (h, w)
    low: tuple           # padding before the first row and column
    filter: ir.Value     # the filter as stored (HWIO, or what a transpose made HWIO of)
    filter_strides: tuple  # its element strides along H, W, I and O
    transpose: Optional[ir.Operation]  # the transpose between it and the convolution

    @property
    def work(self) -> int:
        return self.n * self.oh * self.ow * self.f * self.kh * self.kw * self.c


def _dense_strides(shape) -> list[int]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return strides[::-1]


def filter_transpose(op):
    """The transpose (a linalg.generic that only permutes, or linalg.transpose) that
    makes the filter of the dense convolution `op`, used by it alone, and for each of
    the filter's dims the dim of the transpose's input it is; else None. mlxc-conv-
    nhwc-layout puts an OIHW filter in HWIO order so; the kernel reads it in place."""
    if op.name not in DENSE:
        return None
    t = irutil.defining_op(op.operands[1])
    if t is None or len(t.results) != 1 or len(list(t.results[0].uses)) != 1 or \
            len(t.operands) != 2:
        return None
    if t.name == "linalg.transpose":
        return t, list(ir.DenseI64ArrayAttr(t.attributes["permutation"]))
    if t.name != "linalg.generic":
        return None
    body = list(t.regions[0].blocks[0].operations)
    block = t.regions[0].blocks[0]
    if len(body) != 1 or body[0].name != "linalg.yield" or \
            body[0].operands[0] != block.arguments[0]:
        return None
    maps = irutil.indexing_maps(t)
    if len(maps) != 2 or not maps[1].is_permutation or \
            [ir.AffineDimExpr(e).position for e in maps[1].results] != \
            list(range(maps[1].n_dims)) or not maps[0].is_permutation:
        return None
    into = [ir.AffineDimExpr(e).position for e in maps[0].results]  # input dim -> loop
    return t, [into.index(k) for k in range(len(into))]


def _ints(op, name: str, rank: int) -> list[int]:
    if name not in op.attributes:
        return [1] * rank
    attr = op.attributes[name]
    if isinstance(attr, ir.DenseIntElementsAttr):
        return [int(v) for v in ir.DenseIntElementsAttr(attr)]
    return list(ir.DenseI64ArrayAttr(attr))


def _static_f32(value) -> Optional[list[int]]:
    t = value.type
    if not isinstance(t, ir.RankedTensorType) or t.element_type != ir.F32Type.get():
        return None
    t = ir.RankedTensorType(t)
    return list(t.shape) if t.has_static_shape else None


def _reassociation(op) -> list:
    return [[int(ir.IntegerAttr(d).value) for d in ir.ArrayAttr(group)]
            for group in ir.ArrayAttr(op.attributes["reassociation"])]


def _zero_pad(pad):
    """(source, low, high) of a static tensor.pad of zeros, else None."""
    if pad is None or pad.name != "tensor.pad" or len(pad.operands) != 1:
        return None
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    body = list(pad.regions[0].blocks[0].operations)
    if min(low + high) < 0 or len(body) != 1 or \
            not irutil.is_zero_constant(body[0].operands[0]):
        return None
    return pad.operands[0], low, high


def _unit_dims_refolded(expand):
    """When `expand` restores the unit dims that a collapse_shape folded away around a
    zero pad (mlxc-fold-unit-extent-dims does this to a batch of one): (ops, source,
    low, high), the padding in the uncollapsed dims."""
    pad = irutil.defining_op(expand.operands[0])
    padded = _zero_pad(pad)
    if padded is None:
        return None
    collapse = irutil.defining_op(padded[0])
    if collapse is None or collapse.name != "tensor.collapse_shape" or \
            _reassociation(collapse) != _reassociation(expand):
        return None
    source = collapse.operands[0]
    before = _static_f32(source)
    after = _static_f32(expand.results[0])
    if before is None or after is None:
        return None
    low, high = [0] * len(before), [0] * len(before)
    for group, lo, hi in zip(_reassociation(expand), padded[1], padded[2]):
        grown = [d for d in group if after[d] != before[d]]
        if len(grown) > 1 or (not grown and lo + hi) or \
                (grown and after[grown[0]] - before[grown[0]] != lo + hi):
            return None
        if grown:
            low[grown[0]], high[grown[0]] = lo, hi
    return (expand, pad, collapse), source, low, high


def _zero_padding(value, rank: int):
    """(ops, unpadded value, low padding of the spatial dims) when `value` is a static
    zero padding of only its spatial dims, else None."""
    op = irutil.defining_op(value)
    if op is None:
        return None
    if op.name == "tensor.expand_shape":
        found = _unit_dims_refolded(op)
    else:
        padded = _zero_pad(op)
        found = None if padded is None else ((op,), *padded)
    if found is None:
        return None
    ops, source, low, high = found
    if low[0] or high[0] or low[-1] or high[-1] or len(low) != rank + 2:
        return None
    return ops, source, low[1:-1]


def zero_fill(value):
    """The linalg.fill of zero into a tensor.empty that makes `value`, or None. (A fill
    of a slice of some other tensor, as mlxc-unpadded-convolutions makes, is a
    convolution whose result has a place already: the call would need a copy there.)"""
    fill = irutil.defining_op(value)
    if fill is None or fill.name != "linalg.fill" or len(fill.operands) != 2:
        return None
    dest = irutil.defining_op(fill.operands[1])
    if dest is None or dest.name != "tensor.empty":
        return None
    return fill if irutil.is_zero_constant(fill.operands[0]) else None


def conv(op) -> Optional[Conv]:
    """The convolution `op` (on tensors) computes, when the runtime's kernel should."""
    if not settings.get("library_calls") or op.name not in CONVS:
        return None
    rank = CONVS[op.name]
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    shapes = [_static_f32(v) for v in op.operands]
    if any(s is None for s in shapes) or zero_fill(op.operands[2]) is None:
        return None
    source, padding, low = op.operands[0], (), [0] * rank
    found = _zero_padding(source, rank)
    if found is not None:
        padding, source, low = found
        shapes[0] = _static_f32(source)
        if shapes[0] is None:
            return None
    strides, dilations = _ints(op, "strides", rank), _ints(op, "dilations", rank)
    if rank == 1:
        shapes = [[s[0], 1, *s[1:]] if i != 1 else [1, *s] for i, s in enumerate(shapes)]
        strides, dilations, low = [1] + strides, [1] + dilations, [0] + low
    depthwise = op.name in DEPTHWISE
    if depthwise:
        shapes[1] = shapes[1][:2] + [1] + shapes[1][2:]  # HWC as HWIO with I = 1
    (n, h, w, c), (kh, kw, _, f), (_, oh, ow, _) = shapes
    if min(n, h, w, c, kh, kw, f, oh, ow) <= 0:
        return None
    filter_, transpose = op.operands[1], None
    filter_strides = _dense_strides(shapes[1])
    found = filter_transpose(op)
    if found is not None and _static_f32(found[0].operands[0]) is not None:
        transpose, dims = found
        filter_ = transpose.operands[0]
        stored = _dense_strides(_static_f32(filter_))
        filter_strides = [stored[d] for d in dims]
        if rank == 1:
            filter_strides = [0] + filter_strides
    return Conv(depthwise, source, padding, n, h, w, c, kh, kw, f, oh, ow, tuple(strides),
                tuple(dilations), tuple(low), filter_, tuple(filter_strides), transpose)
