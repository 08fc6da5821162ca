"""mlxc-gpu-tile-matmul: linalg.matmul / batch_matmul as a kernel tiled through shared memory.

Each block computes a TILE x TILE tile of C (one output per thread; `threadIdx.x`
along the columns, so loads of A, B and stores of C are coalesced). The K dimension
is walked in steps of TILE: every thread loads one element of the A tile and one of
the B tile into workgroup (shared) memory, the block synchronises, each thread
accumulates TILE products from shared memory, and the block synchronises again
before the next step. Out-of-range elements load as zero, so any M, N, K work. The
sum is added to C, as linalg.matmul accumulates into its output.

Only matmuls with the default indexing maps are tiled (C[m, n] += A[m, k] * B[k, n]).
The kernel is written here as a gpu.launch (a text template, parsed and spliced in),
because shared memory and barriers have no scf.parallel form. Only float matmuls on
whole buffers (function arguments, allocations, constants) are tiled; others take
the generic path of one thread per output element.
"""

from __future__ import annotations

from .. import loops
from .... import irutil
from ...._mlir import ir
from ....passes import PythonPass

TILE = 16

_TEMPLATE = """
func.func @tile(%A: {a_type}, %B: {b_type}, %C: {c_type}) {{
  %one = arith.constant 1 : index
  %grid_x = arith.constant {grid_x} : index
  %grid_y = arith.constant {grid_y} : index
  %grid_z = arith.constant {batch} : index
  %tile = arith.constant {tile} : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %grid_x, %gy = %grid_y, %gz = %grid_z)
             threads(%tx, %ty, %tz) in (%sx = %tile, %sy = %tile, %sz = %one)
             workgroup(%As : memref<{tile}x{tile}x{elem}, #gpu.address_space<workgroup>>,
                       %Bs : memref<{tile}x{tile}x{elem}, #gpu.address_space<workgroup>>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cT = arith.constant {tile} : index
    %cM = arith.constant {m} : index
    %cN = arith.constant {n} : index
    %cK = arith.constant {k} : index
    %steps = arith.constant {k_steps} : index
    %zero = arith.constant 0.0 : {elem}
    %row0 = arith.muli %by, %cT : index
    %row = arith.addi %row0, %ty : index
    %col0 = arith.muli %bx, %cT : index
    %col = arith.addi %col0, %tx : index
    %row_ok = arith.cmpi ult, %row, %cM : index
    %col_ok = arith.cmpi ult, %col, %cN : index
    %sum = scf.for %step = %c0 to %steps step %c1 iter_args(%acc = %zero) -> ({elem}) {{
      %k0 = arith.muli %step, %cT : index
      %ka = arith.addi %k0, %tx : index
      %ka_ok = arith.cmpi ult, %ka, %cK : index
      %a_ok = arith.andi %row_ok, %ka_ok : i1
      %a = scf.if %a_ok -> ({elem}) {{
        %v = memref.load %A[{batch_index}%row, %ka] : {a_type}
        scf.yield %v : {elem}
      }} else {{
        scf.yield %zero : {elem}
      }}
      memref.store %a, %As[%ty, %tx] : memref<{tile}x{tile}x{elem}, #gpu.address_space<workgroup>>
      %kb = arith.addi %k0, %ty : index
      %kb_ok = arith.cmpi ult, %kb, %cK : index
      %b_ok = arith.andi %kb_ok, %col_ok : i1
      %b = scf.if %b_ok -> ({elem}) {{
        %v = memref.load %B[{batch_index}%kb, %col] : {b_type}
        scf.yield %v : {elem}
      }} else {{
        scf.yield %zero : {elem}
      }}
      memref.store %b, %Bs[%ty, %tx] : memref<{tile}x{tile}x{elem}, #gpu.address_space<workgroup>>
      gpu.barrier
      %next = scf.for %kk = %c0 to %cT step %c1 iter_args(%s = %acc) -> ({elem}) {{
        %x = memref.load %As[%ty, %kk] : memref<{tile}x{tile}x{elem}, #gpu.address_space<workgroup>>
        %y = memref.load %Bs[%kk, %tx] : memref<{tile}x{tile}x{elem}, #gpu.address_space<workgroup>>
        %p = arith.mulf %x, %y : {elem}
        %s2 = arith.addf %s, %p : {elem}
        scf.yield %s2 : {elem}
      }}
      gpu.barrier
      scf.yield %next : {elem}
    }}
    %ok = arith.andi %row_ok, %col_ok : i1
    scf.if %ok {{
      %c = memref.load %C[{batch_index}%row, %col] : {c_type}
      %r = arith.addf %c, %sum : {elem}
      memref.store %r, %C[{batch_index}%row, %col] : {c_type}
    }}
    gpu.terminator
  }}
  return
}}
"""


def _whole_buffer(value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return True
    owner = owner.operation if hasattr(owner, "operation") else owner
    t = ir.MemRefType(value.type)
    return owner.name in ("memref.alloc", "memref.get_global") and "strided" not in str(t) \
        and "affine_map" not in str(t)


# The layouts the template computes; a matmul with other indexing maps (a transposed
# operand, a broadcast) keeps the generic path.
_DEFAULT_MAPS = {
    "linalg.matmul": "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
                     "affine_map<(d0, d1, d2) -> (d0, d1)>]",
    "linalg.batch_matmul": "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, "
                           "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
                           "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]",
}


def _tile(op) -> None:
    if "indexing_maps" in op.attributes and str(op.attributes["indexing_maps"]) != _DEFAULT_MAPS[op.name]:
        return
    view = op.opview
    a, b = list(view.inputs)
    c = list(view.outputs)[0]
    if not all(isinstance(v.type, ir.MemRefType) and _whole_buffer(v) for v in (a, b, c)):
        return
    ta, tb, tc = (ir.MemRefType(v.type) for v in (a, b, c))
    elem = tc.element_type
    if not (isinstance(elem, ir.F32Type) or isinstance(elem, ir.F64Type)) or \
            ta.element_type != elem or tb.element_type != elem:
        return
    batched = op.name == "linalg.batch_matmul"
    batch = tc.shape[0] if batched else 1
    m, n = tc.shape[-2:]
    k = ta.shape[-1]
    if 0 in (m, n, k, batch) or -(-m // TILE) > 65535 or batch > 65535:
        return  # grid y and z are limited to 65535 blocks
    text = _TEMPLATE.format(
        a_type=ta, b_type=tb, c_type=tc, elem=elem, tile=TILE, m=m, n=n, k=k, batch=batch,
        grid_x=-(-n // TILE), grid_y=-(-m // TILE), k_steps=-(-k // TILE),
        batch_index="%bz, " if batched else "")
    template = ir.Module.parse(text)
    func = list(template.body.operations)[0].operation
    body = func.regions[0].blocks[0]
    mapping = {}
    with ir.InsertionPoint(op):
        clones = irutil.clone_ops(list(body.operations)[:-1], mapping)  # all but func.return
    launch = next(c for c in clones if c.name == "gpu.launch")
    # The kernel body still names the template's arguments: point it at the real buffers.
    for arg, real in zip(body.arguments, (a, b, c)):
        for use in list(arg.uses):
            owner = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if loops.is_inside(owner, launch):
                owner.operands[use.operand_number] = real
    op.erase()


def run(module) -> None:
    for func in irutil.functions(module):
        if func.name != "func.func" or not func.regions[0].blocks:
            continue
        for op in list(loops.entry_body(func).operations):
            if op.operation.name in ("linalg.matmul", "linalg.batch_matmul"):
                _tile(op.operation)


PASS = PythonPass(
    argument="mlxc-gpu-tile-matmul",
    summary="Rewrite float linalg.matmul/batch_matmul as a gpu.launch tiled through shared memory",
    run=run,
)
