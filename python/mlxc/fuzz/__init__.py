"""Differential fuzzing: random programs run by mlxc and by a reference, compared.

- `program`: a program as data (inputs, steps, outputs), its JSON form, its inputs;
- `ops`: the op table every family draws from (a JAX function per op, its
  tolerance class, how its parameters and operands are chosen);
- `generate`: random programs per family (JAX compositions, StableHLO text);
- `hlo_text`: a program written directly as StableHLO, judged by the interpreter;
- `models`: real flax/optax programs (the `models` family);
- `judge`: comparison with per-dtype, per-op tolerances;
- `execute`/`worker`: one case in a worker process; `run` the pool, the tallies and
  the shrinker that reduces a failing program to a reproducer.

`mlxc fuzz --count N --seed S` runs it (see `python/mlxc/tools/cli.py`).
"""
