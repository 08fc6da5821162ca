"""Real code: flax/optax programs as the `models` family.

Each case is one training step of a small model whose sizes, optimizer and options
come from the seed: a language model's next-token loss
(`optax.softmax_cross_entropy_with_integer_labels` on shifted logits), a CNN with
several max and average poolings and batch norm, an MLP with dropout; optimizers
adam, adamw and sgd with momentum over the parameter pytree. Parameters are
initialised inside the program from a fixed key (so `rng_bit_generator` and
threefry run too); the step's loss, new parameters and new optimizer state are
returned as one flat vector.
"""

from __future__ import annotations

from .ops import ULPS, op

ULPS.setdefault("model", 512)
MODELS = ("lm", "cnn", "mlp")


def _optimizer(name: str, lr: float):
    import optax
    if name == "adam":
        return optax.adam(lr)
    if name == "adamw":
        return optax.adamw(lr, weight_decay=1e-2)
    return optax.sgd(lr, momentum=0.9)


def _lm(p):
    import flax.linen as nn
    import jax.numpy as jnp

    class LM(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            h = nn.Embed(p["vocab"], p["width"])(tokens)
            h = nn.LayerNorm()(h)
            h = nn.Dense(p["width"])(h)
            h = nn.gelu(h)
            return nn.Dense(p["vocab"])(h)

    def loss(model, params, extra, tokens, key):
        import optax
        logits = model.apply({"params": params}, tokens)
        l = optax.softmax_cross_entropy_with_integer_labels(logits[:, :-1], tokens[:, 1:])
        return jnp.mean(l), extra

    return LM(), loss


def _cnn(p):
    import flax.linen as nn
    import jax.numpy as jnp

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, train: bool = True):
            x = nn.Conv(p["width"], (3, 3), padding="SAME")(x)
            x = nn.BatchNorm(use_running_average=not train)(x)
            x = nn.relu(x)
            x = nn.max_pool(x, (2, 2), strides=(2, 2), padding="SAME")
            x = nn.Conv(p["width"], (3, 3), strides=(p["stride"], p["stride"]))(x)
            x = nn.avg_pool(x, (2, 2), strides=(1, 1), padding="SAME")
            x = nn.max_pool(x, (2, 2), strides=(1, 1), padding="VALID")
            x = jnp.mean(x, axis=(1, 2))
            return nn.Dense(p["classes"])(x)

    def loss(model, params, extra, data, key):
        import optax
        x, labels = data
        logits, updates = model.apply({"params": params, **extra}, x, mutable=["batch_stats"])
        l = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
        return jnp.mean(l), updates

    return CNN(), loss


def _mlp(p):
    import flax.linen as nn
    import jax.numpy as jnp

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x, train: bool = True):
            x = nn.Dense(p["width"])(x)
            x = nn.relu(x)
            x = nn.Dropout(0.3, deterministic=not train)(x)
            x = nn.Dense(p["classes"])(x)
            return x

    def loss(model, params, extra, data, key):
        import optax
        x, labels = data
        logits = model.apply({"params": params}, x, rngs={"dropout": key})
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels)), extra

    return MLP(), loss


def _model_fn(p, *inputs):
    import jax
    import jax.numpy as jnp
    from jax.flatten_util import ravel_pytree

    model, loss = {"lm": _lm, "cnn": _cnn, "mlp": _mlp}[p["model"]](p)
    key = jax.random.PRNGKey(p["seed"])
    data = inputs[0] if p["model"] == "lm" else (inputs[0], inputs[1])
    init_x = data if p["model"] == "lm" else data[0]
    variables = model.init(key, init_x)
    params = variables["params"]
    extra = {k: v for k, v in variables.items() if k != "params"}
    opt = _optimizer(p["opt"], 1e-2)
    state = opt.init(params)
    (value, extra), grads = jax.value_and_grad(
        lambda q: loss(model, q, extra, data, jax.random.fold_in(key, 1)), has_aux=True)(params)
    updates, state = opt.update(grads, state, params)
    import optax
    params = optax.apply_updates(params, updates)
    flat, _ = ravel_pytree((value, params, state, extra))
    return flat.astype(jnp.float32)


def _model_sample(g, o):
    name = MODELS[int(g.rng.integers(0, len(MODELS)))]
    p = {"model": name, "seed": int(g.rng.integers(0, 1000)), "opt": g.choice(["adam", "adamw", "sgd"]),
         "width": int(g.rng.integers(2, 9)), "classes": int(g.rng.integers(2, 6))}
    batch = int(g.rng.integers(1, 4))
    if name == "lm":
        p["vocab"] = int(g.rng.integers(3, 12))
        return [g.fresh([batch, int(g.rng.integers(2, 7))], "int32", f"index:{p['vocab'] - 2}")], \
            {**p, "clip": True}
    if name == "cnn":
        p["stride"] = int(g.rng.integers(1, 3))
        hw = int(g.rng.integers(4, 9))
        return [g.fresh([batch, hw, hw, int(g.rng.integers(1, 4))], "float32", "plain"),
                g.fresh([batch], "int32", f"index:{p['classes'] - 2}")], p
    return [g.fresh([batch, int(g.rng.integers(1, 9))], "float32", "plain"),
            g.fresh([batch], "int32", f"index:{p['classes'] - 2}")], p


def _clip_labels(fn):
    """Labels out of range make optax's loss NaN on both sides, which hides the rest:
    clip them into range first."""
    def wrapped(p, *inputs):
        import jax.numpy as jnp
        n = p.get("vocab", p.get("classes"))
        ints = [jnp.clip(x, 0, n - 1) if x.dtype == jnp.int32 else x for x in inputs]
        return fn(p, *ints)
    return wrapped


op("model", _clip_labels(_model_fn), "FI", "models", tol="model", sample=_model_sample)
