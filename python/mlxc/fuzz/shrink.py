"""Reduce a failing program while it still fails the same way.

Candidates, smallest first: keep one output; replace a step's result by a fresh input
of its type (the step and what only it needed disappear); replace a step by one of
its operands of the same type; turn "mixed" input data into plain data; halve the
dimensions of a program whose values all share one shape. Each round tries
candidates in the worker pool (a candidate may crash or hang too) and keeps the
first smaller one that fails with the same signature; rounds go on until none does
or the attempt budget is spent.
"""

from __future__ import annotations

import copy
import re
from typing import Callable, Iterator

from .execute import CRASH, FuzzCase, HANG, PASS, SKIP
from .program import Program, Value, prune


def signature(status: str, detail: str) -> str:
    """What "failing the same way" means: the outcome and, for crashes and errors,
    the message without numbers, names and types (which shrinking changes)."""
    if status in (PASS, SKIP, HANG) or status == "wrong":
        return status
    text = detail
    if status == CRASH:
        m = re.search(r"(LLVM ERROR[^|]*|Assertion[^|]*)", detail) or re.search(r"signal \d+", detail)
        text = m.group(0) if m else detail
    if "error:" in text:  # not the location, which shrinking moves
        text = text.split("error:", 1)[1]
    text = re.sub(r"tensor<[^>]*>+|memref<[^>]*>+|%\w+|\d+", "", text)
    return f"{status}: {text.strip()[:120]}"


def candidates(p: Program) -> Iterator[Program]:
    if len(set(p.outputs)) > 1 or len(p.outputs) > 1:
        for o in dict.fromkeys(p.outputs):
            yield prune(_with(p, outputs=[o]))
    n = len(p.inputs)
    for k in range(len(p.steps) - 1, -1, -1):
        yield prune(_replace_by_input(p, k))
        s = p.steps[k]
        for a in dict.fromkeys(s.args):
            if p.value(a).shape == s.out.shape and p.value(a).dtype == s.out.dtype:
                yield prune(_forward(p, n + k, a))
    for i, v in enumerate(p.inputs):
        if v.data == "mixed":
            inputs = list(p.inputs)
            inputs[i] = Value(v.shape, v.dtype, "plain")
            yield _with(p, inputs=inputs)
    smaller = _halved(p)
    if smaller is not None:
        yield smaller


def _with(p: Program, **changes) -> Program:
    q = copy.deepcopy(p)
    for k, v in changes.items():
        setattr(q, k, v)
    return q


def _replace_by_input(p: Program, k: int) -> Program:
    """Step k's result becomes a new last input; the step is gone."""
    n = len(p.inputs)
    q = copy.deepcopy(p)
    out = q.steps[k].out

    def renumber(v):
        if v < n:
            return v
        if v == n + k:
            return n
        j = v - n
        return n + 1 + j if j < k else n + j

    steps = [s for j, s in enumerate(q.steps) if j != k]
    for s in steps:
        s.args = [renumber(a) for a in s.args]
    q.inputs = q.inputs + [Value(out.shape, out.dtype, "mixed")]
    q.steps = steps
    q.outputs = [renumber(o) for o in q.outputs]
    return q


def _forward(p: Program, value: int, to: int) -> Program:
    """Uses of `value` (a step's result) read `to` instead."""
    q = copy.deepcopy(p)
    for s in q.steps:
        s.args = [to if a == value else a for a in s.args]
    q.outputs = [to if o == value else o for o in q.outputs]
    return q


def _halved(p: Program):
    shapes = {tuple(v.shape) for v in p.inputs} | {tuple(s.out.shape) for s in p.steps}
    if len(shapes) != 1:
        return None
    shape = list(next(iter(shapes)))
    if not shape or max(shape) <= 1:
        return None
    small = [max(1, d // 2) for d in shape]
    q = copy.deepcopy(p)
    for v in q.inputs + [s.out for s in q.steps]:
        v.shape = small
    if any(s.params for s in q.steps if s.op not in ("compare", "convert", "bitcast", "const_op",
                                                      "reduce_precision", "integer_pow")):
        return None  # parameters may depend on the shape
    return q


def shrink(p: Program, sig: str, run: Callable[[list[Program]], list[tuple[str, str]]],
           attempts: int = 80, batch: int = 4) -> tuple[Program, int]:
    """The smallest program found that fails with signature `sig`, and the attempts made.
    `run` judges a list of programs, returning (status, detail) for each."""
    tried = 0
    improved = True
    while improved and tried < attempts:
        improved = False
        seen = set()
        unique = []
        for c in candidates(p):
            key = c.dumps()
            if key not in seen and key != p.dumps():
                seen.add(key)
                unique.append(c)
        for start in range(0, len(unique), batch):
            chunk = unique[start:start + batch][: max(0, attempts - tried)]
            if not chunk:
                break
            tried += len(chunk)
            for c, (status, detail) in zip(chunk, run(chunk)):
                if signature(status, detail) == sig:
                    p = c
                    improved = True
                    break
            if improved:
                break
    return p, tried


def _size(p: Program) -> tuple:
    elements = sum(max(1, _count(v.shape)) for v in p.inputs)
    return (len(p.steps), len(p.outputs), elements)


def _count(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
