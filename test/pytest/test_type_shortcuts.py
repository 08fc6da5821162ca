"""Passes that read fewer types than every value's, on what the ops' definitions
guarantee, must see what a full read sees: the contracts' element types and tensors
(`contracts._TYPES_OF_OPERANDS`) and parallelize-tile-loops' widest vectors
(`_RESULT_IS_WIDEST`, `_OPERAND_IS_WIDEST`), checked on the corpus programs' IR after
the stages where those passes run."""

import numpy as np
import pytest
from corpus import PROGRAMS
from helpers import export_program

import mlxc
from mlxc import irutil
from mlxc._mlir import ir, new_context
from mlxc.passes import parallelize_tile_loops
from mlxc.pipelines import contracts

NAMES = ("softmax", "layernorm", "attention", "mlp", "residual_block", "transformer_block")


def _every_type(ops) -> set:
    found = set()
    for op in ops:
        found.update(op.results.types)
        for region in op.regions:
            for block in region.blocks:
                found.update(block.arguments.types)
    return found


def _widest(op) -> int:
    widest = 1
    for t in list(op.results.types) + [v.type for v in op.operands]:
        if isinstance(t, ir.VectorType):
            widest = max(widest, int(np.prod(ir.VectorType(t).shape)))
    return widest


@pytest.fixture(scope="module", params=[p for p in PROGRAMS if p.name in NAMES],
                ids=lambda p: p.name)
def stages(request):
    program = request.param
    text, _, _ = export_program(program.fn, *program.make_inputs(np.random.default_rng(0)))
    with mlxc.settings.override(cache=False):
        return {stage: mlxc.lower(text, stop_after=stage) for stage in ("bufferize", "lower")}


def test_programs_cover_the_shortcuts():
    assert {p.name for p in PROGRAMS} >= set(NAMES)


@pytest.mark.parametrize("stage", ["bufferize", "lower"])
def test_contract_sees_every_element_type(stages, stage):
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(stages[stage])
        scan = contracts._Scan(module)
        skipped = {n for n in scan.kinds if n in contracts._TYPES_OF_OPERANDS}
        assert skipped, "the program exercises the shortcut"
        full = contracts._element_type_names(_every_type(scan.ops))
        assert contracts._element_type_names(
            contracts._value_types(scan, contracts._TYPES_OF_OPERANDS)) == full


def test_widest_vector_read_from_one_value(stages):
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(stages["bufferize"])
        sizes: dict = {}
        shortcut = 0
        for op in irutil.walk(module):
            if len(op.regions):
                continue
            name = op.name
            shortcut += name in parallelize_tile_loops._OPERAND_IS_WIDEST or \
                name in parallelize_tile_loops._RESULT_IS_WIDEST_OPS or \
                name.startswith(parallelize_tile_loops._RESULT_IS_WIDEST)
            assert parallelize_tile_loops._elements(op, sizes) == _widest(op), str(op)
        assert shortcut
