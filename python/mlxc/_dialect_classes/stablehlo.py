"""The StableHLO dialect, whose ops the bindings wrap in the generic `OpView`.

The binding package has no Python module for it, and the bindings do not remember a
dialect they failed to find: without this module every wrapped StableHLO op
(`op.clone()`, `ir.Operation.create`, `block.operations`) searched the import path
twice, some 20 us each, a few hundred times over the 31 benchmark programs.
"""
