"""Dialect modules for the bindings to import when they wrap an op in its Python class.

Part of the binding boundary of `mlxc._mlir`, which puts this package first on the
bindings' dialect search path. Wrapping an op (`block.operations`, `op.opview`)
imports the module named like its dialect from the first package on that path that
has one; a dialect without a module here comes from the binding package as before.
"""
