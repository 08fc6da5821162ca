"""Batch normalization (stablehlo.batch_norm_inference, _training, _grad), which
PyTorch/XLA and TensorFlow emit, as the elementwise ops and reductions of its
definition in the StableHLO spec. bf16/f16 are computed in f32, as XLA's expander
keeps its sums in f32 for them."""

from __future__ import annotations

import math

from .._mlir import ir
from . import lowering
from .from_text import replace_with_text
from .text import Emitter, i64_array, tensor_type


class _Norm:
    """The shapes of one batch-norm op and helpers to write its arithmetic."""

    def __init__(self, op, names):
        x_type = ir.RankedTensorType(op.operands[0].type)
        self.shape = list(x_type.shape)
        self.elem = str(x_type.element_type)
        self.work = "f32" if self.elem in ("bf16", "f16") else self.elem
        self.feature = ir.IntegerAttr(op.attributes["feature_index"]).value
        self.epsilon = ir.FloatAttr(op.attributes["epsilon"]).value
        self.others = [d for d in range(len(self.shape)) if d != self.feature]
        self.count = math.prod(self.shape[d] for d in self.others)
        self.e = Emitter(**{n: str(v.type) for n, v in zip(names, op.operands)})
        self.full = tensor_type(self.shape, self.work)
        self.vec = tensor_type([self.shape[self.feature]], self.work)

    def arg(self, name: str) -> str:
        # An operand in the working type.
        value = f"%{name}"
        t = self.e.types[value]
        if self.work == self.elem:
            return value
        return self.e.op("stablehlo.convert", [value], t.replace(self.elem + ">", self.work + ">"))

    def out(self, value: str) -> str:
        if self.work == self.elem:
            return value
        t = self.e.types[value]
        return self.e.op("stablehlo.convert", [value], t.replace(self.work + ">", self.elem + ">"))

    def spread(self, vec: str) -> str:
        return self.e.op("stablehlo.broadcast_in_dim", [vec], self.full,
                         f"broadcast_dimensions = {i64_array([self.feature])}")

    def per_feature_sum(self, x: str) -> str:
        if not self.others:
            return x  # rank 1: one element per feature (and upstream has no empty reduce)
        if self.count == 0:
            return self.splat(0.0, self.vec)  # upstream cannot reduce a folded empty tensor
        return self.e.reduce_sum(x, self.others, self.vec, self.work)

    def splat(self, value: float, t: str) -> str:
        return self.e.constant(repr(float(value)), t)

    def binary(self, name: str, a: str, b: str) -> str:
        return self.e.op(f"stablehlo.{name}", [a, b], self.e.types[a])

    def finish(self, op, results, names) -> None:
        outs = [self.out(r) for r in results]
        types = ", ".join(str(r.type) for r in op.results)
        self.e.line(f"return {', '.join(outs)} : {types}")
        replace_with_text(op, self.e.text(), names)


@lowering("stablehlo.batch_norm_inference")
def batch_norm_inference(op) -> None:
    names = ["x", "scale", "offset", "mean", "variance"]
    n = _Norm(op, names)
    x, scale, offset, mean, variance = (n.arg(name) for name in names)
    y = _normalize(n, x, scale, offset, n.spread(mean), n.spread(variance))
    n.finish(op, [y], names)


@lowering("stablehlo.batch_norm_training")
def batch_norm_training(op) -> None:
    names = ["x", "scale", "offset"]
    n = _Norm(op, names)
    x, scale, offset = (n.arg(name) for name in names)
    inv_count = n.splat(1.0 / max(n.count, 1), n.vec)
    mean = n.binary("multiply", n.per_feature_sum(x), inv_count)
    centered = n.binary("subtract", x, n.spread(mean))
    # The biased variance: the mean of the squared deviations.
    variance = n.binary("multiply", n.per_feature_sum(n.binary("multiply", centered, centered)),
                        inv_count)
    y = _normalize(n, x, scale, offset, n.spread(mean), n.spread(variance))
    n.finish(op, [y, mean, variance], names)


def _normalize(n: _Norm, x, scale, offset, mean_full, variance_full) -> str:
    stddev = n.e.op("stablehlo.sqrt", [n.binary("add", variance_full, n.splat(n.epsilon, n.full))],
                    n.full)
    normalized = n.binary("divide", n.binary("subtract", x, mean_full), stddev)
    return n.binary("add", n.binary("multiply", normalized, n.spread(scale)), n.spread(offset))


@lowering("stablehlo.batch_norm_grad")
def batch_norm_grad(op) -> None:
    names = ["x", "scale", "mean", "variance", "grad"]
    n = _Norm(op, names)
    x, scale, mean, variance, grad = (n.arg(name) for name in names)
    var_eps = n.binary("add", n.spread(variance), n.splat(n.epsilon, n.full))
    stddev = n.e.op("stablehlo.sqrt", [var_eps], n.full)
    centered = n.binary("subtract", x, n.spread(mean))
    normalized = n.binary("divide", centered, stddev)
    # The spec's formula: scale / stddev / N * (N * dy - sum(dy) - (x - mean) *
    # sum(dy * (x - mean)) / (variance + epsilon)).
    grad_offset = n.per_feature_sum(grad)
    grad_scale = n.per_feature_sum(n.binary("multiply", grad, normalized))
    scaled_dy = n.binary("multiply", grad, n.splat(n.count, n.full))
    sum_dy_centered = n.spread(n.per_feature_sum(n.binary("multiply", grad, centered)))
    correction = n.binary("divide", n.binary("multiply", sum_dy_centered, centered), var_eps)
    inner = n.binary("subtract", n.binary("subtract", scaled_dy, n.spread(grad_offset)), correction)
    factor = n.binary("divide", n.binary("divide", n.spread(scale), stddev),
                      n.splat(max(n.count, 1), n.full))
    grad_x = n.binary("multiply", factor, inner)
    n.finish(op, [grad_x, grad_scale, grad_offset], names)
