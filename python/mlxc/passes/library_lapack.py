"""mlxc-library-lapack: JAX's f32/f64 LAPACK custom calls call the runtime's kernels
(runtime/mlxc_lapack.c), as XLA calls LAPACK on the CPU.

`jax.export` of jnp.linalg on the CPU emits `stablehlo.custom_call @lapack_?xxx_ffi`.
lowerings/lapack.py turns them into loops over tensors, which every target can run but
which are tens of times slower than LAPACK (a Jacobi eigensolver, rank-1 updates of
whole tensors per step). On the CPU this pass calls blocked C kernels instead, with the
operands, results, option characters and info outputs the lowering implements, for
?potrf, ?trsm, ?getrf, ?geqrf, ?orgqr, ?syevd and ?gesdd of f32 and f64 with static
shapes (leading dimensions are the batch). Complex types, other routines and calls
whose types are not the routine's stay for mlxc-lower-extra-ops, which lowers them or
reports them.

Runs in the linalg stage before mlxc-lower-extra-ops, on the CPU only. The operands go
to the call as read-only buffers and the results are fresh ones
(targets/cpu/kernel_calls.py).
"""

from __future__ import annotations

import math
import re
from typing import Optional

from .. import irutil
from .._mlir import ir
from ..lowerings.lapack import _config, _option
from ..targets.cpu import kernel_calls
from . import PythonPass

_TARGET = re.compile(r"lapack_([sd])(potrf|trsm|getrf|geqrf|orgqr|syevd|gesdd)_ffi")
_SUFFIX = {"s": "f32", "d": "f64"}
_ELEMENT = {"s": ir.F32Type, "d": ir.F64Type}


def _shapes(values) -> Optional[list]:
    out = []
    for v in values:
        t = v.type
        if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
            return None
        out.append(list(ir.RankedTensorType(t).shape))
    return out


def _elements_ok(op, letter: str, floats: list, ints: list) -> bool:
    """The operands/results at `floats` of the routine's type, those at `ints` i32."""
    values = list(op.operands) + list(op.results)
    want = _ELEMENT[letter].get()
    i32 = ir.IntegerType.get_signless(32)
    return (all(ir.RankedTensorType(values[i].type).element_type == want for i in floats) and
            all(ir.RankedTensorType(values[i].type).element_type == i32 for i in ints))


def _plan(op) -> Optional[tuple]:
    """(callee, sizes, flags) for a call the kernels take, else None. Operands then
    results are indexed together below (operand 0 is 0, the first result follows the
    last operand)."""
    name = ir.StringAttr(op.attributes["call_target_name"]).value
    match = _TARGET.fullmatch(name)
    if match is None:
        return None
    letter, routine = match.groups()
    shapes = _shapes(list(op.operands) + list(op.results))
    if shapes is None:
        return None
    config = _config(op)
    callee = f"mlxc_{routine}_{_SUFFIX[letter]}"
    n_in, n_out = len(op.operands), len(op.results)

    def layout(ins: int, outs: int, floats: list, ints: list = ()) -> bool:
        return n_in == ins and n_out == outs and _elements_ok(op, letter, floats, list(ints))

    if routine == "potrf":
        if not layout(1, 2, [0, 1], [2]):
            return None
        a, out, info = shapes
        batch, n = a[:-2], a[-1]
        if len(a) < 2 or a[-2] != n or out != a or info != batch:
            return None
        lower = _option(op, config, "uplo", "LU", "L") == "L"
        return callee, [math.prod(batch), n], [int(lower)]
    if routine == "trsm":
        if not layout(2, 1, [0, 1, 2]):
            return None
        a, b, x = shapes
        if len(a) < 2 or len(b) != len(a) or a[:-2] != b[:-2] or x != b or a[-1] != a[-2]:
            return None
        left = _option(op, config, "side", "LR", "L") == "L"
        lower = _option(op, config, "uplo", "LU", "L") == "L"
        trans = _option(op, config, "trans_x", "NTC", "N") != "N"
        unit = _option(op, config, "diag", "UN", "N") == "U"
        m, n = b[-2], b[-1]
        if a[-1] != (m if left else n):
            return None
        return callee, [math.prod(b[:-2]), m, n], [int(left), int(lower), int(trans), int(unit)]
    if routine == "getrf":
        if not layout(1, 3, [0, 1], [2, 3]):
            return None
        a, out, ipiv, info = shapes
        if len(a) < 2 or out != a or ipiv != a[:-2] + [min(a[-2:])] or info != a[:-2]:
            return None
        return callee, [math.prod(a[:-2]), a[-2], a[-1]], []
    if routine == "geqrf":
        if not layout(1, 2, [0, 1, 2]):
            return None
        a, out, tau = shapes
        if len(a) < 2 or out != a or tau != a[:-2] + [min(a[-2:])]:
            return None
        return callee, [math.prod(a[:-2]), a[-2], a[-1]], []
    if routine == "orgqr":
        if not layout(2, 1, [0, 1, 2]):
            return None
        a, tau, q = shapes
        if len(a) < 2 or q != a or tau[:-1] != a[:-2] or len(tau) != len(a) - 1 or \
                not tau[-1] <= min(a[-2:]):
            return None
        return callee, [math.prod(a[:-2]), a[-2], a[-1], tau[-1]], []
    if routine == "syevd":
        if not layout(1, 3, [0, 1, 2], [3]):
            return None
        a, v, w, info = shapes
        if len(a) < 2 or a[-1] != a[-2] or v != a or w != a[:-1] or info != a[:-2]:
            return None
        lower = _option(op, config, "uplo", "LU", "L") == "L"
        vectors = _option(op, config, "mode", "VN", "V") == "V"
        return callee, [math.prod(a[:-2]), a[-1]], [int(lower), int(vectors)]
    if routine == "gesdd":
        if not layout(1, 5, [0, 1, 2, 3, 4], [5]):
            return None
        a, out, s, u, vt, info = shapes
        if len(a) < 2 or out != a:
            return None
        batch, (m, n) = a[:-2], a[-2:]
        k = min(m, n)
        if s != batch + [k] or info != batch or u[:-2] != batch or vt[:-2] != batch or \
                u[-2] != m or vt[-1] != n or u[-1] not in (m, k) or vt[-2] not in (n, k):
            return None
        mode = config.get("mode", "N")
        if mode not in "ASN":  # 'O' (overwrite A) stays for the lowering to refuse
            return None
        return callee, [math.prod(batch), m, n, u[-1], vt[-2]], [int(mode != "N")]
    return None


def _rewrite(op, callee: str, sizes: list, flags: list) -> None:
    with ir.InsertionPoint(op), op.location:
        results = kernel_calls.call_results(callee, list(op.operands),
                                            [r.type for r in op.results], sizes, flags)
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()


def run(module) -> None:
    calls = irutil.ops_named(module, "stablehlo.custom_call")
    if not calls:
        return
    with irutil.as_operation(module).context:
        found = []
        for op in calls:
            plan = _plan(op)
            if plan is not None:
                found.append((op, plan))
        for op, (callee, sizes, flags) in found:
            kernel_calls.declare(module, callee, len(op.operands) + len(op.results), len(sizes),
                                 len(flags), [ir.RankedTensorType(v.type).element_type
                                              for v in list(op.operands) + list(op.results)])
        for op, (callee, sizes, flags) in found:
            _rewrite(op, callee, sizes, flags)


PASS = PythonPass(
    argument="mlxc-library-lapack",
    summary="JAX's f32/f64 LAPACK custom calls (potrf, trsm, getrf, geqrf, orgqr, syevd, "
            "gesdd) call the runtime's blocked kernels (runtime/mlxc_lapack.c), as XLA "
            "calls LAPACK",
    run=run,
)
