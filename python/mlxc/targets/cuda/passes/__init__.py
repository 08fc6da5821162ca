"""The CUDA target's Python passes (registered in mlxc.passes.REGISTRY)."""
