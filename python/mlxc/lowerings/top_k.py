"""`stablehlo.custom_call @mlxc.top_k` (from mlxc-small-top-k) as a one-pass selection.

Each row of the last dimension is read once, keeping the k best (key, index) pairs so
far in descending order. An element enters only when fewer than k are kept or it is
strictly greater than the k-th kept one, and it goes after every kept element that is
not less than it: equal values keep increasing indices, as the stable sort of
chlo.top_k's decomposition does. Floats compare in StableHLO's total order (that
decomposition's comparator is `compare GT, TOTALORDER`): -NaN < -inf < ... < -0.0 <
+0.0 < ... < +inf < +NaN. Their bits as a signed integer, with the magnitude bits
flipped when negative, compare the same way, so the loop compares integers only.
The values are then read back through the kept indices.
"""

from __future__ import annotations

import math

from .._mlir import ir
from ..errors import CompileError
from . import lowering
from .from_text import replace_with_text
from .text import tensor_type

_KEY_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def _key(elem: str) -> tuple[str, str]:
    """The integer type the loop compares and the text that computes %key from %x."""
    bits = _KEY_BITS.get(elem)
    if bits is None:
        return elem, "%key = arith.addi %x, %czero_key : " + elem
    kt = f"i{bits}"
    return kt, (f"%bits = arith.bitcast %x : {elem} to {kt}\n"
                f"%sign = arith.shrsi %bits, %cshift : {kt}\n"
                f"%flip = arith.andi %sign, %cmag : {kt}\n"
                f"%key = arith.xori %bits, %flip : {kt}")


_INDEX_TYPES = ("i32", "i64")
_INT_TYPES = ("i8", "i16", "i32", "i64")


def _check(op) -> None:
    """A call written by hand (not by mlxc-small-top-k) gets an error, not a crash."""
    types = [v.type for v in op.operands] + [v.type for v in op.results]
    if len(op.operands) == 1 and len(op.results) == 2 and all(
            isinstance(t, ir.RankedTensorType) and t.has_static_shape for t in types):
        x, values, indices = types
        elem = str(x.element_type)
        if (x.rank >= 1 and values.shape == indices.shape and values.shape[:-1] == x.shape[:-1]
                and 1 <= values.shape[-1] <= x.shape[-1] and values.element_type == x.element_type
                and (elem in _KEY_BITS or elem in _INT_TYPES)
                and str(indices.element_type) in _INDEX_TYPES):
            return
    raise CompileError.at(op, "custom_call @mlxc.top_k takes one static tensor x (float or signed "
                              "integer) and returns values and i32/i64 indices of x's shape with "
                              "the last dimension 1 <= k <= x's")


@lowering("stablehlo.custom_call @mlxc.top_k")
def top_k(op) -> None:
    _check(op)
    x_type = ir.RankedTensorType(op.operands[0].type)
    values_type, indices_type = (ir.RankedTensorType(r.type) for r in op.results)
    shape = list(x_type.shape)
    n, k = shape[-1], values_type.shape[-1]
    rows = math.prod(shape[:-1])
    elem, it = str(x_type.element_type), str(indices_type.element_type)
    kt, key_text = _key(elem)
    bits = int(kt[1:])
    x2, v2, i2 = tensor_type([rows, n], elem), tensor_type([rows, k], elem), tensor_type([rows, k], it)
    # The kept indices are `index`, not the result's i32: two tensor.empty of one type
    # are merged by CSE, and the keys and indices would then share one buffer.
    keys_t, idx_t = tensor_type([k], kt), tensor_type([k], "index")
    body = f"""
%x2 = stablehlo.reshape %input : ({x_type}) -> {x2}
%c0 = arith.constant 0 : index
%c1 = arith.constant 1 : index
%cn = arith.constant {n} : index
%ck = arith.constant {k} : index
%crows = arith.constant {rows} : index
%czero_key = arith.constant 0 : {kt}
%cshift = arith.constant {bits - 1} : {kt}
%cmag = arith.constant {(1 << (bits - 1)) - 1} : {kt}
%keys0 = tensor.empty() : {keys_t}
%idx0 = tensor.empty() : {idx_t}
%ov0 = tensor.empty() : {v2}
%oi0 = tensor.empty() : {i2}
%rows:4 = scf.for %row = %c0 to %crows step %c1
    iter_args(%keys_r = %keys0, %idx_r = %idx0, %ov = %ov0, %oi = %oi0)
    -> ({keys_t}, {idx_t}, {v2}, {i2}) {{
  %scan:4 = scf.for %j = %c0 to %cn step %c1
      iter_args(%keys = %keys_r, %idx = %idx_r, %cnt = %c0, %thr = %czero_key)
      -> ({keys_t}, {idx_t}, index, {kt}) {{
    %x = tensor.extract %x2[%row, %j] : {x2}
    {key_text}
    %room = arith.cmpi ult, %cnt, %ck : index
    %beats = arith.cmpi sgt, %key, %thr : {kt}
    %take = arith.ori %room, %beats : i1
    %next:4 = scf.if %take -> ({keys_t}, {idx_t}, index, {kt}) {{
      %grown = arith.addi %cnt, %c1 : index
      %cnt2 = arith.minui %grown, %ck : index
      %last = arith.subi %cnt2, %c1 : index
      // Move the kept elements less than the new one down a place, from the end.
      %moved:3 = scf.while (%pos = %last, %ks = %keys, %is = %idx)
          : (index, {keys_t}, {idx_t}) -> (index, {keys_t}, {idx_t}) {{
        %inside = arith.cmpi ugt, %pos, %c0 : index
        %above = arith.subi %pos, %c1 : index
        %safe = arith.select %inside, %above, %c0 : index
        %kabove = tensor.extract %ks[%safe] : {keys_t}
        %less = arith.cmpi slt, %kabove, %key : {kt}
        %go = arith.andi %inside, %less : i1
        scf.condition(%go) %pos, %ks, %is : index, {keys_t}, {idx_t}
      }} do {{
      ^bb0(%pos: index, %ks: {keys_t}, %is: {idx_t}):
        %above = arith.subi %pos, %c1 : index
        %kabove = tensor.extract %ks[%above] : {keys_t}
        %iabove = tensor.extract %is[%above] : {idx_t}
        %ks2 = tensor.insert %kabove into %ks[%pos] : {keys_t}
        %is2 = tensor.insert %iabove into %is[%pos] : {idx_t}
        scf.yield %above, %ks2, %is2 : index, {keys_t}, {idx_t}
      }}
      %ks3 = tensor.insert %key into %moved#1[%moved#0] : {keys_t}
      %is3 = tensor.insert %j into %moved#2[%moved#0] : {idx_t}
      %thr2 = tensor.extract %ks3[%last] : {keys_t}
      scf.yield %ks3, %is3, %cnt2, %thr2 : {keys_t}, {idx_t}, index, {kt}
    }} else {{
      scf.yield %keys, %idx, %cnt, %thr : {keys_t}, {idx_t}, index, {kt}
    }}
    scf.yield %next#0, %next#1, %next#2, %next#3 : {keys_t}, {idx_t}, index, {kt}
  }}
  %out:2 = scf.for %t = %c0 to %ck step %c1 iter_args(%ov_t = %ov, %oi_t = %oi) -> ({v2}, {i2}) {{
    %col = tensor.extract %scan#1[%t] : {idx_t}
    %i = arith.index_cast %col : index to {it}
    %v = tensor.extract %x2[%row, %col] : {x2}
    %ov2 = tensor.insert %v into %ov_t[%row, %t] : {v2}
    %oi2 = tensor.insert %i into %oi_t[%row, %t] : {i2}
    scf.yield %ov2, %oi2 : {v2}, {i2}
  }}
  scf.yield %scan#0, %scan#1, %out#0, %out#1 : {keys_t}, {idx_t}, {v2}, {i2}
}}
%values = stablehlo.reshape %rows#2 : ({v2}) -> {values_type}
%indices = stablehlo.reshape %rows#3 : ({i2}) -> {indices_type}
return %values, %indices : {values_type}, {indices_type}
"""
    replace_with_text(op, body, ["input"])
