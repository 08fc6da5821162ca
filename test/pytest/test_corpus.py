"""Every corpus program, from jax.export text and from its portable artifact, matches JAX."""

import numpy as np
import pytest

import mlxc
from corpus import PROGRAMS
from helpers import assert_matches, export_program


@pytest.fixture(scope="module", params=PROGRAMS, ids=lambda p: p.name)
def program(request):
    p = request.param
    args = p.make_inputs(np.random.default_rng(0))
    text, artifact, expected = export_program(p.fn, *args, x64=p.x64)
    return p, args, text, artifact, expected


def test_corpus_size():
    assert len(PROGRAMS) >= 30


@pytest.mark.parametrize("form", ["text", "artifact"])
def test_matches_jax(program, form):
    p, args, text, artifact, expected = program
    exe = mlxc.compile(text if form == "text" else artifact)
    snapshot = [np.array(a, copy=True) for a in args]
    outputs = exe(*args)
    assert_matches(outputs, expected, p.rtol)
    for before, after in zip(snapshot, args):  # the caller's arrays are never written
        np.testing.assert_array_equal(before, after)
