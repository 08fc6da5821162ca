"""The LLVM dialect without Python op classes.

Its package's generated classes take 0.15 to 0.2 s to import, paid by the first compile
as soon as a pass looks at an LLVM op or the type of an LLVM value through a wrapper
(`value.owner`, `value.type`, `op.clone()`). mlxc reads LLVM ops by name and
attributes only, so with this module found first they are wrapped in the generic
`OpView`; code that imports `torch_mlir.dialects.llvm` itself still gets its classes.
"""
