"""Regenerate examples/*.mlir from JAX (needs jax: pip install '.[test]').

    python tools/export_examples.py
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "examples")


def mlp(x, w1, b1, w2, b2):
    """A two-layer perceptron with a softmax head: 64x256 -> 512 -> 10."""
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.softmax(h @ w2 + b2, axis=-1)


EXAMPLES = {
    "mlp": (mlp, [(64, 256), (256, 512), (512,), (512, 10), (10,)]),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (fn, shapes) in EXAMPLES.items():
        args = [np.zeros(s, np.float32) for s in shapes]
        exported = export.export(jax.jit(fn))(*args)
        path = os.path.join(OUT, f"{name}.mlir")
        with open(path, "w") as f:
            f.write(f"// {fn.__doc__}\n// Exported by tools/export_examples.py with jax {jax.__version__}.\n")
            f.write(exported.mlir_module())
        print("wrote", path)


if __name__ == "__main__":
    main()
