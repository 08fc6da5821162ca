"""mlxc-recompute-elementwise: a copy of each cheap elementwise producer per consumer.

`linalg-fuse-elementwise-ops` fuses a producer only into a single consumer (its control
function is C++ only), so `exp(x - max)` in a softmax, read by both the sum and the
divide, stays a full-size temporary. XLA instead recomputes cheap producers inside every
consumer. This pass gives each consumer its own copy of such a producer; the fusion pass
that follows then fuses every copy, and the temporary disappears (only the row vectors
of the reductions remain).

A producer is copied when all of these hold:
- it is a linalg.generic with parallel loops only, one result written through a
  permutation (what the upstream fusion accepts), no regions or gathers in its body;
- each use is an input (not an init) of a linalg.generic in the same block (never into a
  loop body, where it would be recomputed every iteration) that is not a contraction
  (fused into a matmul it would run once per multiply-add);
- the work it would repeat, its body and its reads plus what the fusion will pull into it
  from its own producers, costs at most `max-cost` (arith ops 1, divisions and square
  roots 4, other math functions 8, reading a whole tensor 4, a broadcast 1): a reduction
  or a contraction is never repeated (not elementwise).

A copy that the fusion then declines is identical to its original and `cse` merges them.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir, linalg
from . import PythonPass

_FREE = {"linalg.yield", "linalg.index", "arith.constant"}
_DEAR = {"arith.divf", "arith.divsi", "arith.divui", "arith.remf", "arith.remsi",
         "arith.remui", "arith.ceildivsi", "arith.floordivsi", "math.sqrt", "math.rsqrt"}
NOT_ELEMENTWISE = 1 << 30


def op_cost(name: str) -> int:
    if name in _FREE:
        return 0
    if name in _DEAR:
        return 4
    if name.startswith("math."):
        return 8
    if name.startswith(("arith.", "complex.")):
        return 1
    return NOT_ELEMENTWISE


def body_cost(op) -> int:
    cost = 0
    for inner in op.regions[0].blocks[0].operations:
        if len(inner.regions):
            return NOT_ELEMENTWISE
        cost += op_cost(inner.name)
    return cost


def _inputs(op) -> int:
    return ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]


def _elementwise(op) -> bool:
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    iterators = ir.ArrayAttr(op.attributes["iterator_types"])
    if any("parallel" not in str(it) for it in iterators):
        return False
    maps = ir.ArrayAttr(op.attributes["indexing_maps"])
    out_map = ir.AffineMapAttr(maps[len(maps) - 1]).value  # (a negative index crashes)
    return out_map.is_permutation


# A copy also repeats its producer's reads: a whole tensor read at the loop indices
# costs as much as a few arithmetic ops, a broadcast (a row's mean) little. Without it
# a transformer's residual stream x_i = x_{i-1} + f_i was recomputed in every consumer
# down the layers, each layer's layernorm reading every earlier layer's output (17 adds
# and inputs per element at layer 4).
FULL_READ, BROADCAST_READ = 4, 1


def _read_cost(op) -> int:
    maps = irutil.indexing_maps(op)
    n_in = _inputs(op)
    cost = 0
    for i in range(n_in):
        m = maps[i]
        cost += FULL_READ if len(m.results) == m.n_dims else BROADCAST_READ
    return cost


def _by_consumer(value) -> list:
    """(consumer, operand numbers) per op that uses `value`: one copy per consumer,
    even when it reads the value twice."""
    groups: list = []
    for use in value.uses:
        owner = irutil.as_operation(use.owner)
        for consumer, indices in groups:
            if consumer == owner:
                indices.append(use.operand_number)
                break
        else:
            groups.append((owner, [use.operand_number]))
    return groups


def _fusable_use(use, block) -> bool:
    consumer = irutil.as_operation(use.owner)
    return (consumer.name == "linalg.generic" and consumer.block == block
            and use.operand_number < _inputs(consumer)
            and not linalg.isa_contraction_op(consumer))


def _candidates(block, generics: list, max_cost: int) -> list:
    """The producers cheap enough to copy among `generics` (the linalg.generic ops of
    `block`, in program order). The cost of one includes what the fusion will pull into
    it: its producers that are copied or have one use."""
    inlined: dict = {}   # producer result -> cost it brings into its consumers when fused
    candidates: list = []
    for op in generics:
        if not _elementwise(op):
            continue
        uses = list(op.results[0].uses)
        if not uses or not all(_fusable_use(u, block) for u in uses):
            continue
        cost = body_cost(op) + _read_cost(op)
        for value in set(op.operands[:_inputs(op)]):
            cost += inlined.get(value, 0)
        if cost >= NOT_ELEMENTWISE:
            continue
        if cost <= max_cost:
            candidates.append(op)
            inlined[op.results[0]] = cost
        elif len(uses) == 1:
            inlined[op.results[0]] = cost   # fused by upstream whatever it costs
    return candidates


def run(module, max_cost: str = "16") -> None:
    limit = int(max_cost)
    # Only linalg.generic ops are candidates: one walk finds them, grouped by block (a
    # Block hashes by identity) in program order, instead of wrapping every op of every
    # block, the generics' scalar bodies included, in its OpView class. A block's copies
    # add uses only to values its own ops read, so blocks are independent.
    by_block: dict = {}
    for op in irutil.ops_named(module, "linalg.generic"):
        by_block.setdefault(op.block, []).append(op)
    for block, generics in by_block.items():
        # Consumers first: a copied consumer adds uses to its producers, which get a copy
        # for each of those too.
        for op in reversed(_candidates(block, generics, limit)):
            for consumer, indices in _by_consumer(op.results[0])[1:]:
                copy = op.clone(ip=ir.InsertionPoint(op))
                for index in indices:
                    consumer.operands[index] = copy.results[0]


PASS = PythonPass(
    argument="mlxc-recompute-elementwise",
    summary="Copy each cheap elementwise producer for every consumer, so that "
            "linalg-fuse-elementwise-ops fuses (recomputes) it into all of them",
    run=run,
    options={"max-cost": "most work one element of a copied producer may repeat "
                         "(arith op 1, division or sqrt 4, other math 8)"},
)
