"""Which poolings the CPU target hands to the runtime's precompiled kernel.

stablehlo-legalize-to-linalg makes a reduce_window a linalg.generic over the output's
dims and the window's, reading a padded copy of its input when the window reaches past
the edges (SAME padding): for a max pool, a tensor.pad of -inf as large as the input.
An f32 one whose body is only a max (arith.maximumf) or a sum (arith.addf), whose init
is the reduction's identity and whose padding is that identity too, calls `mlxc_spool`
(runtime/mlxc_pool.c) instead: it reads the unpadded input and skips the taps in the
padding, which reducing the identity would not change, so the padded copy is never
made (XLA makes none either). A padding of another value, an init that is not the
identity, other element types, fused bodies and poolings of fewer than 16 channels
after the window's dims (MIN_CHANNELS) keep their generated code.

`mlxc-apply-cpu-schedules` sets these poolings aside with their init
(library_calls.set_aside), and `mlxc-library-pools` makes them calls at the start of
the bufferize stage, before the padding would become a buffer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ... import irutil, settings
from ..._mlir import ir
from ...passes.pads_as_fills import _fill
from .library_convs import _ints, _static_f32

MAX, SUM = 0, 1  # mlxc_pool.h's MLXC_POOL_MAX and MLXC_POOL_SUM
# The named poolings the legalization makes of an unpadded reduce_window, with their
# number of window dims; a padded one is a linalg.generic.
NAMED = {"linalg.pooling_nhwc_max": 2, "linalg.pooling_nhwc_sum": 2,
         "linalg.pooling_nwc_max": 1, "linalg.pooling_nwc_sum": 1}
POOLS = ("linalg.generic", *NAMED)
_BODIES = {"arith.maximumf": MAX, "arith.addf": SUM}
# Under 16 channels after the window's dims (NCHW, a few image channels, a 1-D scan)
# the kernel goes one channel at a time: 3x3 stride-2 max pools of 8x64x64x3 and of
# NCHW 8x32x64x64 ran 5.6x and 6x the generated code's time; from 16 it runs 0.4-0.85x.
MIN_CHANNELS = 16


@dataclass(frozen=True)
class Pool:
    """A pooling in the kernel's terms: the dims before the window's as n, those after
    as c (a 1-D one with h = kh = oh = 1)."""
    kind: int
    source: ir.Value     # the unpadded input
    pad: Optional[ir.Operation]
    n: int
    h: int
    w: int
    c: int
    kh: int
    kw: int
    oh: int
    ow: int
    strides: tuple       # (h, w)
    dilations: tuple     # (h, w)
    low: tuple           # padding before the first row and column


def _float_constant(value) -> Optional[float]:
    const = irutil.defining_op(value)
    if const is None or const.name != "arith.constant" or \
            not isinstance(const.attributes["value"], ir.FloatAttr):
        return None
    return ir.FloatAttr(const.attributes["value"]).value


def _is_identity(kind: int, value, exact: bool) -> bool:
    """Whether `value` is the constant identity of the reduction: -inf for a max, 0 for a
    sum (+0 when `exact`: a sum that starts from -0 stays -0 over taps of -0, which the
    kernel, starting from +0, would not give; a padding of -0 changes no sum from +0)."""
    v = _float_constant(value)
    if v is None:
        return False
    if kind == MAX:
        return v == -math.inf
    return v == 0.0 and (not exact or math.copysign(1.0, v) > 0)


def init_fill(op):
    """The op that fills the pooling's init with a constant (a linalg.fill, or the
    linalg.generic that yields it, as reduce_window's legalization makes) into a
    tensor.empty, or None."""
    fill = irutil.defining_op(op.operands[-1])
    if fill is None or len(fill.results) != 1:
        return None
    if fill.name == "linalg.fill" and len(fill.operands) == 2:
        value, dest = fill.operands[0], fill.operands[1]
    elif fill.name == "linalg.generic" and len(fill.operands) == 1:
        body = list(fill.regions[0].blocks[0].operations)
        if len(body) != 1 or body[0].name != "linalg.yield" or len(body[0].operands) != 1:
            return None
        value, dest = body[0].operands[0], fill.operands[0]
    else:
        return None
    empty = irutil.defining_op(dest)
    if empty is None or empty.name != "tensor.empty" or _float_constant(value) is None:
        return None
    return fill, value


def init_as_fill(op):
    """The pooling's init fill, made a linalg.fill for `op` if it is a generic: that one
    yields a constant from outside its region, which set_aside, moving the fill into a
    function of its own, would leave behind (a use of another function's value)."""
    fill, value = init_fill(op)
    if fill.name == "linalg.fill":
        return fill
    with ir.InsertionPoint(fill):
        made = irutil.defining_op(_fill(value, fill.results[0].type, fill.location))
    op.operands[len(op.operands) - 1] = made.results[0]
    if not list(fill.results[0].uses):
        fill.erase()
    return made


def _kind(op) -> Optional[int]:
    """MAX or SUM when the body is only max(out, in) or out + in (either order)."""
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    if len(body) != 2 or body[0].name not in _BODIES or body[1].name != "linalg.yield":
        return None
    args = list(block.arguments)
    if {body[0].operands[0], body[0].operands[1]} != {args[0], args[2]} or \
            body[1].operands[0] != body[0].results[0]:
        return None
    return _BODIES[body[0].name]


def _terms(expr) -> Optional[dict]:
    """A sum of dims times constants as {dim: factor}, else None."""
    if isinstance(expr, ir.AffineDimExpr):
        return {ir.AffineDimExpr(expr).position: 1}
    if isinstance(expr, ir.AffineMulExpr):
        mul = ir.AffineMulExpr(expr)
        if isinstance(mul.lhs, ir.AffineDimExpr) and isinstance(mul.rhs, ir.AffineConstantExpr):
            return {ir.AffineDimExpr(mul.lhs).position: ir.AffineConstantExpr(mul.rhs).value}
        return None
    if isinstance(expr, ir.AffineAddExpr):
        add = ir.AffineAddExpr(expr)
        lhs, rhs = _terms(add.lhs), _terms(add.rhs)
        if lhs is None or rhs is None or set(lhs) & set(rhs):
            return None
        return {**lhs, **rhs}
    return None


def _maps(op) -> list:
    """The indexing maps of a generic, or those a named pooling has implicitly."""
    if op.name == "linalg.generic":
        return irutil.indexing_maps(op)
    rank = NAMED[op.name]
    strides, dilations = _ints(op, "strides", rank), _ints(op, "dilations", rank)
    d = ir.AffineDimExpr.get
    loops = 2 * rank + 2
    spatial = [d(1 + k) * strides[k] + d(rank + 2 + k) * dilations[k] for k in range(rank)]
    return [ir.AffineMap.get(loops, 0, [d(0), *spatial, d(rank + 1)]),
            ir.AffineMap.get(loops, 0, [d(rank + 2 + k) for k in range(rank)]),
            ir.AffineMap.get(loops, 0, [d(k) for k in range(rank + 2)])]


def _identity_pad(value, kind: int):
    """(source, low, high) of a static tensor.pad of the identity, else None."""
    pad = irutil.defining_op(value)
    if pad is None or pad.name != "tensor.pad" or len(pad.operands) != 1:
        return None
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    body = list(pad.regions[0].blocks[0].operations)
    if min(low + high) < 0 or len(body) != 1 or \
            not _is_identity(kind, body[0].operands[0], exact=False):
        return None
    return pad, low, high


def pool(op) -> Optional[Pool]:
    """The pooling `op` (on tensors) computes, when the runtime's
    kernel should."""
    if not settings.get("library_calls") or op.name not in POOLS or \
            len(op.operands) != 3 or len(op.results) != 1 or irutil.dps_segments(op) != (2, 1):
        return None
    kind = _kind(op)
    shapes = [_static_f32(v) for v in (op.operands[0], op.operands[2])]
    found = init_fill(op)
    if kind is None or None in shapes or found is None or \
            not _is_identity(kind, found[1], exact=True):
        return None
    window = ir.RankedTensorType(op.operands[1].type)
    if not window.has_static_shape:
        return None
    maps = _maps(op)
    rank = len(shapes[1])
    reduced = list(range(rank, maps[0].n_dims))
    if any(m.n_symbols for m in maps) or \
            [ir.AffineDimExpr(e).position if isinstance(e, ir.AffineDimExpr) else None
             for e in maps[2].results] != list(range(rank)) or \
            [ir.AffineDimExpr(e).position if isinstance(e, ir.AffineDimExpr) else None
             for e in maps[1].results] != reduced or len(maps[0].results) != rank:
        return None
    # Each input dim is the output's, or a window's one: out * stride + tap * dilation.
    spatial, strides, dilations = [], [], []
    for k, expr in enumerate(maps[0].results):
        terms = _terms(expr)
        if terms == {k: 1}:
            continue
        if terms is None or len(terms) != 2 or k not in terms:
            return None
        (tap, dilation), = [(d, f) for d, f in terms.items() if d != k]
        if tap not in reduced or min(terms[k], dilation) < 1:
            return None
        spatial.append((k, tap))
        strides.append(terms[k])
        dilations.append(dilation)
    # Window dims in loop order, so a sum adds its taps in the generated code's order.
    if not spatial or len(spatial) > 2 or spatial[-1][0] - spatial[0][0] != len(spatial) - 1 \
            or [tap for _, tap in spatial] != reduced:
        return None
    dims = [k for k, _ in spatial]
    source, pad, low = op.operands[0], None, [0] * rank
    padded = _identity_pad(source, kind)
    if padded is not None:
        pad, low, high = padded
        if any(low[k] or high[k] for k in range(rank) if k not in dims):
            return None
        source = pad.operands[0]
    in_shape = _static_f32(source)
    if in_shape is None:
        return None
    window_shape = list(window.shape)
    if len(spatial) == 1:
        dims, window_shape = [None] + dims, [1] + window_shape
        strides, dilations = [1] + strides, [1] + dilations
    extent = [1 if k is None else in_shape[k] for k in dims]
    out = [1 if k is None else shapes[1][k] for k in dims]
    first, last = dims[-1] - (len(spatial) - 1), dims[-1]
    n, c = math.prod(in_shape[:first]), math.prod(in_shape[last + 1:])
    if min(n, *extent, *window_shape, *out) <= 0 or c < MIN_CHANNELS:
        return None
    return Pool(kind, source, pad, n, extent[0], extent[1], c, window_shape[0],
                window_shape[1], out[0], out[1], tuple(strides), tuple(dilations),
                tuple(0 if k is None else low[k] for k in dims))
