"""mlxc-dot-general-layout: dot_general operands in the [batch, m, k] x [batch, k, n] layout.

The CPU contraction schedule keeps an 8x32 tile of the result in registers and, for
each k, loads 32 contiguous elements of the right-hand side's row. Any other layout
(x @ w.T, attention's q.k^T, the x.T @ g of a backward pass) makes those loads
strided gathers: einsum('bqd,bkd->bqk') ran 7x slower than 'bqd,bdk->bqk'. We
transpose an operand into place when the copy (O(n^2)) is small next to the product
(O(n^3)): at most 1/64 of its multiply-adds.

JAX writes the gradient (x.T @ g).T as a dot_general followed by a transpose of the
result; computing g.T @ x instead (the operands swapped) needs no transpose of the
result, so we also swap when that copies less.

With `kernel-products=1` (the CPU pipeline, when products call the runtime's kernel),
a dot the kernel will compute keeps its operands where they are: the kernel reads any
strides (a transposed right-hand side at 187 against 202 GFLOP/s), where the copy is a
pass over memory and an op to compile. The kernel takes f32 products of one batch,
row, column and contraction dimension (library_calls.MIN_*). An operand that an
elementwise op computes for this dot alone is still put in place: the transpose costs
nothing there, as it becomes that op's output map (the fuse stage fuses it into the
producer, never into the product), and the kernel reads its canonical layout fastest
(a GPT training step's backward products ran 1.2x slower read in place).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import irutil
from .._mlir import ir, stablehlo
from . import PythonPass

# Below this many multiply-adds a dot is left as it is: transposes cost more than they save.
MIN_WORK = 1 << 15
# An operand is copied into place when its size is at most this fraction of the work.
COPY_RATIO = 64


@dataclass
class Dims:
    batch: tuple[list[int], list[int]]        # lhs, rhs
    contracting: tuple[list[int], list[int]]  # lhs, rhs

    def free(self, side: int, rank: int) -> list[int]:
        used = set(self.batch[side]) | set(self.contracting[side])
        return [d for d in range(rank) if d not in used]

    def swapped(self) -> "Dims":
        return Dims(self.batch[::-1], self.contracting[::-1])


def _dims(op) -> Dims:
    dn = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    return Dims((list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions)),
                (list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)))


def _canonical_perm(dims: Dims, side: int, rank: int) -> list[int]:
    """lhs: [batch..., free..., contracting...]; rhs: [batch..., contracting..., free...]."""
    b, c, f = dims.batch[side], dims.contracting[side], dims.free(side, rank)
    return b + f + c if side == 0 else b + c + f


def _size(shape, ds) -> int:
    n = 1
    for d in ds:
        n *= shape[d]
    return n


@dataclass
class Plan:
    operands: list              # lhs, rhs values, in the order the new dot takes them
    dims: Dims
    copy: list[bool]            # transpose each operand into place
    cost: int                   # elements copied, or the slowdown of a layout left alone


def _plan(lhs, rhs, dims: Dims, work: int, result_copy: int) -> Plan:
    copy, cost = [], result_copy
    for side, value in enumerate((lhs, rhs)):
        shape = ir.RankedTensorType(value.type).shape
        if _canonical_perm(dims, side, len(shape)) == list(range(len(shape))):
            copy.append(False)
            continue
        size = _size(shape, range(len(shape)))
        copy.append(size * COPY_RATIO <= work)
        cost += size if copy[-1] else work // COPY_RATIO
    return Plan([lhs, rhs], dims, copy, cost)


def _result_transpose(op):
    """The transpose that is the dot's only use, when it puts the rhs's free dimensions
    before the lhs's (what swapping the operands computes directly)."""
    uses = list(op.result.uses)
    if len(uses) != 1 or uses[0].owner.name != "stablehlo.transpose":
        return None
    user = uses[0].owner
    dims = _dims(op)
    nb = len(dims.batch[0])
    nl = len(dims.free(0, ir.RankedTensorType(op.operands[0].type).rank))
    nr = len(dims.free(1, ir.RankedTensorType(op.operands[1].type).rank))
    swapped = list(range(nb)) + list(range(nb + nl, nb + nl + nr)) + list(range(nb, nb + nl))
    perm = list(ir.DenseI64ArrayAttr(user.attributes["permutation"]))
    return user if perm == swapped else None


def _work(op) -> int:
    """Multiply-adds: every lhs element meets every free rhs element of its batch."""
    dims = _dims(op)
    lhs, rhs = (ir.RankedTensorType(v.type) for v in op.operands)
    return _size(lhs.shape, range(lhs.rank)) * _size(rhs.shape, dims.free(1, rhs.rank))


def static_dot(op) -> bool:
    """A two-operand stablehlo.dot_general whose operands and result have static shapes."""
    if op.name != "stablehlo.dot_general" or len(op.operands) != 2:
        return False
    types = [v.type for v in op.operands] + [op.result.type]
    return all(isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape
               for t in types)


def _eligible(op) -> bool:
    if not static_dot(op):
        return False
    types = [v.type for v in op.operands] + [op.result.type]
    if not all(isinstance(ir.RankedTensorType(t).element_type, ir.FloatType) for t in types):
        return False  # integer and complex dots are not vectorized in any layout
    return _work(op) >= MIN_WORK


# Ops whose result linalg-fuse-elementwise-ops never fuses into a consumer, so that a
# transpose of it would be a copy.
_NOT_FUSED = {"stablehlo.dot_general", "stablehlo.convolution", "stablehlo.reduce",
              "stablehlo.reduce_window", "stablehlo.sort", "stablehlo.gather",
              "stablehlo.scatter", "stablehlo.while", "stablehlo.case", "stablehlo.if",
              "stablehlo.custom_call", "stablehlo.fft", "stablehlo.constant"}


def _for_the_kernel(op, dims: Dims) -> bool:
    """Whether the runtime's product kernel will compute `op` and should read its
    operands where they are: f32, one dimension of each kind, sizes it takes, and no
    operand an elementwise op computes for it alone (one whose transpose is free)."""
    from ..targets.cpu import library_calls
    f32 = ir.F32Type.get()
    types = [ir.RankedTensorType(t) for t in (op.operands[0].type, op.operands[1].type,
                                              op.result.type)]
    if any(t.element_type != f32 for t in types):
        return False
    lhs, rhs = types[0], types[1]
    if len(dims.batch[0]) > 1 or len(dims.contracting[0]) != 1 or \
            len(dims.free(0, lhs.rank)) != 1 or len(dims.free(1, rhs.rank)) != 1:
        return False
    m = lhs.shape[dims.free(0, lhs.rank)[0]]
    n = rhs.shape[dims.free(1, rhs.rank)[0]]
    k = lhs.shape[dims.contracting[0][0]]
    batch = lhs.shape[dims.batch[0][0]] if dims.batch[0] else 1
    if not library_calls.takes(batch, m, n, k):
        return False
    for value in op.operands:
        producer = irutil.defining_op(value)
        if producer is not None and producer.name not in _NOT_FUSED and \
                len(list(value.uses)) == 1:
            return False
    return True


def _rewrite(op, kernel_products: bool) -> None:
    dims, work = _dims(op), _work(op)
    lhs, rhs = op.operands[0], op.operands[1]
    if kernel_products and _for_the_kernel(op, dims):
        return
    transpose = _result_transpose(op)
    result_size = _size(ir.RankedTensorType(op.result.type).shape,
                        range(ir.RankedTensorType(op.result.type).rank))
    keep = _plan(lhs, rhs, dims, work, result_size if transpose is not None else 0)
    plan = keep
    if transpose is not None and "algorithm" not in op.attributes:
        swap = _plan(rhs, lhs, dims.swapped(), work, 0)
        if swap.cost < keep.cost:
            plan = swap
    if plan is keep and not any(keep.copy):
        return
    replaced = transpose if plan is not keep else op
    result_type = ir.RankedTensorType(replaced.result.type)
    attrs = {name: op.attributes[name] for name in op.attributes}
    if plan is not keep and "precision_config" in attrs:
        # one precision per operand: they follow the operands
        attrs["precision_config"] = ir.ArrayAttr.get(
            list(ir.ArrayAttr(attrs["precision_config"]))[::-1])

    def build():
        operands, new_dims = [], ([], [], [], [])
        for side, (value, copy) in enumerate(zip(plan.operands, plan.copy)):
            rank = ir.RankedTensorType(value.type).rank
            perm = _canonical_perm(plan.dims, side, rank) if copy else list(range(rank))
            where = {d: i for i, d in enumerate(perm)}  # old dim -> new position
            operands.append(irutil.transpose(value, perm))
            new_dims[side].extend(where[d] for d in plan.dims.batch[side])
            new_dims[2 + side].extend(where[d] for d in plan.dims.contracting[side])
        attrs["dot_dimension_numbers"] = stablehlo.DotDimensionNumbers.get(*new_dims)
        return ir.Operation.create("stablehlo.dot_general", results=[result_type],
                                   operands=operands, attributes=attrs).result

    irutil.replace_op(replaced, build)
    if replaced is not op:
        op.erase()


def run(module, kernel_products: str = "0") -> None:
    kernel = kernel_products not in ("0", "false", "")
    for op in [op for op in irutil.walk(module) if _eligible(op)]:
        _rewrite(op, kernel)


PASS = PythonPass(
    argument="mlxc-dot-general-layout",
    summary="dot_general operands transposed into [batch, m, k] x [batch, k, n] when the "
            "copy is small next to the product; a transposed result computed by swapping "
            "the operands",
    run=run,
    options={"kernel-products": "1: leave the operands of dots that the runtime's product "
                                "kernel will compute (CPU) where they are"},
)
