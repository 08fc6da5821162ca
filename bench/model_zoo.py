"""Whole models for bench/models.py, written as users write them: flax.linen modules,
optax losses and optimizers, plain JAX where that is how people write the thing.

Each `Model` has named sizes, smallest first; `build(rng, **size)` returns the
function to compile and its arguments (pytrees: parameter dicts, optimizer states).
The decoder sizes include those of the performance issue (4 layers d=256 seq 128
batch 2; 12 layers d=384 seq 64).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax


@dataclass
class Model:
    name: str
    kind: str
    build: Callable[..., tuple[Callable, tuple]]
    sizes: dict[str, dict] = field(default_factory=dict)


def _key(rng: np.random.Generator):
    return jax.random.key(int(rng.integers(0, 2 ** 31)))


def _f32(rng, *shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def _tokens(rng, batch, seq, vocab):
    return rng.integers(0, vocab, size=(batch, seq)).astype(np.int32)


def _on_images(model, rng, image, batch):
    """An image model's apply and its arguments: parameters and a batch of RGB images."""
    img = _f32(rng, batch, image, image, 3)
    return model.apply, (model.init(_key(rng), img), img)


def _train_step(loss_fn, opt):
    """The usual step: value and gradient of the loss over the parameter pytree, one update."""

    def step(params, opt_state, *batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, *batch)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step


# --- transformers ----------------------------------------------------------------------


class Mlp(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x):
        d = x.shape[-1]
        return nn.Dense(d)(nn.gelu(nn.Dense(self.hidden)(x)))


class DecoderBlock(nn.Module):
    heads: int

    @nn.compact
    def __call__(self, x, mask):
        h = nn.LayerNorm()(x)
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads)(h, mask=mask)
        return x + Mlp(4 * x.shape[-1])(nn.LayerNorm()(x))


class Gpt(nn.Module):
    vocab: int
    layers: int
    d: int
    heads: int
    max_len: int

    @nn.compact
    def __call__(self, tok):
        embed = nn.Embed(self.vocab, self.d)
        pos = self.param("pos", nn.initializers.normal(0.02), (self.max_len, self.d))
        x = embed(tok) + pos[: tok.shape[1]]
        mask = nn.make_causal_mask(tok)
        for _ in range(self.layers):
            x = DecoderBlock(self.heads)(x, mask)
        return embed.attend(nn.LayerNorm()(x))


def _gpt(rng, layers, d, seq, batch, vocab=1024):
    model = Gpt(vocab, layers, d, heads=d // 64, max_len=seq)
    tok = _tokens(rng, batch, seq, vocab)
    return model, model.init(_key(rng), tok), tok


def gpt_forward(rng, **size):
    model, params, tok = _gpt(rng, **size)
    return model.apply, (params, tok)


def _next_token_loss(model):
    def loss(params, tok):
        logits = model.apply(params, tok)
        return optax.softmax_cross_entropy_with_integer_labels(logits[:, :-1], tok[:, 1:]).mean()

    return loss


def gpt_train(rng, **size):
    model, params, tok = _gpt(rng, **size)
    opt = optax.adamw(1e-3, weight_decay=0.01)
    return _train_step(_next_token_loss(model), opt), (params, opt.init(params), tok)


class EncoderBlock(nn.Module):
    heads: int

    @nn.compact
    def __call__(self, x, mask):
        # Post-LN, as BERT.
        attention = nn.MultiHeadDotProductAttention(num_heads=self.heads)
        x = nn.LayerNorm()(x + attention(x, mask=mask))
        return nn.LayerNorm()(x + Mlp(4 * x.shape[-1])(x))


class Bert(nn.Module):
    vocab: int
    layers: int
    d: int
    max_len: int

    @nn.compact
    def __call__(self, tok, segment, attn_mask):
        x = (nn.Embed(self.vocab, self.d)(tok) + nn.Embed(2, self.d)(segment)
             + nn.Embed(self.max_len, self.d)(jnp.arange(tok.shape[1])))
        x = nn.LayerNorm()(x)
        mask = nn.make_attention_mask(attn_mask, attn_mask)
        for _ in range(self.layers):
            x = EncoderBlock(self.d // 64)(x, mask)
        pooled = jnp.tanh(nn.Dense(self.d)(x[:, 0]))
        return x, pooled


def bert_encoder(rng, layers, d, seq, batch, vocab=1024):
    model = Bert(vocab, layers, d, seq)
    tok = _tokens(rng, batch, seq, vocab)
    segment = (np.arange(seq)[None, :] >= seq // 2).repeat(batch, 0).astype(np.int32)
    lengths = rng.integers(seq // 2, seq + 1, size=(batch, 1))
    attn_mask = (np.arange(seq)[None, :] < lengths).astype(np.int32)
    params = model.init(_key(rng), tok, segment, attn_mask)
    return model.apply, (params, tok, segment, attn_mask)


class Patches(nn.Module):
    """Non-overlapping patches, each embedded in d dims: [batch, patches, d]."""
    d: int
    patch: int

    @nn.compact
    def __call__(self, img):
        x = nn.Conv(self.d, (self.patch, self.patch), strides=self.patch)(img)
        return x.reshape(x.shape[0], -1, self.d)


class Vit(nn.Module):
    patch: int
    layers: int
    d: int
    classes: int = 10

    @nn.compact
    def __call__(self, img):
        x = Patches(self.d, self.patch)(img)
        cls = self.param("cls", nn.initializers.zeros, (1, 1, self.d))
        x = jnp.concatenate([jnp.broadcast_to(cls, (x.shape[0], 1, self.d)), x], axis=1)
        x = x + self.param("pos", nn.initializers.normal(0.02), x.shape[1:])
        for _ in range(self.layers):
            h = nn.LayerNorm()(x)
            x = x + nn.MultiHeadDotProductAttention(num_heads=self.d // 64)(h, h)
            x = x + Mlp(4 * self.d)(nn.LayerNorm()(x))
        return nn.Dense(self.classes)(nn.LayerNorm()(x[:, 0]))


def vit(rng, image, patch, layers, d, batch):
    return _on_images(Vit(patch, layers, d), rng, image, batch)


class MixerBlock(nn.Module):
    tokens_hidden: int
    channels_hidden: int

    @nn.compact
    def __call__(self, x):
        y = jnp.swapaxes(nn.LayerNorm()(x), 1, 2)
        x = x + jnp.swapaxes(Mlp(self.tokens_hidden)(y), 1, 2)
        return x + Mlp(self.channels_hidden)(nn.LayerNorm()(x))


class Mixer(nn.Module):
    patch: int
    layers: int
    d: int
    classes: int = 10

    @nn.compact
    def __call__(self, img):
        x = Patches(self.d, self.patch)(img)
        for _ in range(self.layers):
            x = MixerBlock(self.d // 2, 4 * self.d)(x)
        return nn.Dense(self.classes)(nn.LayerNorm()(x).mean(axis=1))


def mlp_mixer(rng, image, patch, layers, d, batch):
    return _on_images(Mixer(patch, layers, d), rng, image, batch)


# --- convolutional networks ------------------------------------------------------------


class ResBlock(nn.Module):
    features: int
    stride: int = 1

    @nn.compact
    def __call__(self, x, train: bool):
        norm = lambda: nn.BatchNorm(use_running_average=not train, momentum=0.9)  # noqa: E731
        y = nn.relu(norm()(nn.Conv(self.features, (3, 3), self.stride, use_bias=False)(x)))
        y = norm()(nn.Conv(self.features, (3, 3), use_bias=False)(y))
        if x.shape != y.shape:
            x = norm()(nn.Conv(self.features, (1, 1), self.stride, use_bias=False)(x))
        return nn.relu(x + y)


class ResNet(nn.Module):
    widths: tuple[int, ...]
    classes: int = 10

    @nn.compact
    def __call__(self, x, train: bool = False):
        x = nn.Conv(self.widths[0], (3, 3), use_bias=False)(x)
        x = nn.relu(nn.BatchNorm(use_running_average=not train, momentum=0.9)(x))
        x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
        for i, w in enumerate(self.widths):
            x = ResBlock(w, stride=1 if i == 0 else 2)(x, train)
            x = ResBlock(w)(x, train)
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        return nn.Dense(self.classes)(x.mean(axis=(1, 2)))


def _resnet(rng, image, widths, batch):
    model = ResNet(tuple(widths))
    img = _f32(rng, batch, image, image, 3)
    labels = rng.integers(0, 10, size=batch).astype(np.int32)
    return model, model.init(_key(rng), img), img, labels


def resnet_forward(rng, **size):
    model, variables, img, _ = _resnet(rng, **size)
    return model.apply, (variables, img)


def resnet_train(rng, **size):
    model, variables, img, labels = _resnet(rng, **size)
    params, stats = variables["params"], variables["batch_stats"]
    opt = optax.sgd(0.1, momentum=0.9)

    def step(params, stats, opt_state, img, labels):
        def loss_fn(p):
            logits, new = model.apply({"params": p, "batch_stats": stats}, img, train=True,
                                      mutable=["batch_stats"])
            loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
            return loss, new["batch_stats"]

        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), stats, opt_state, loss

    return step, (params, stats, opt.init(params), img, labels)


class ConvPair(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.GroupNorm(num_groups=4)(nn.Conv(self.features, (3, 3))(x)))
        return nn.relu(nn.GroupNorm(num_groups=4)(nn.Conv(self.features, (3, 3))(x)))


class UNetBlock(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        skip = ConvPair(self.features)(x)
        y = nn.max_pool(skip, (2, 2), strides=(2, 2))
        y = ConvPair(2 * self.features)(y)
        y = nn.ConvTranspose(self.features, (2, 2), strides=(2, 2))(y)
        y = ConvPair(self.features)(jnp.concatenate([y, skip], axis=-1))
        return nn.Conv(1, (1, 1))(y)


def unet_block(rng, image, features, batch):
    return _on_images(UNetBlock(features), rng, image, batch)


# --- recurrent networks ----------------------------------------------------------------


class LstmClassifier(nn.Module):
    hidden: int
    classes: int = 10

    @nn.compact
    def __call__(self, xs):
        hs = nn.RNN(nn.LSTMCell(self.hidden))(xs)
        return nn.Dense(self.classes)(hs[:, -1])


def lstm(rng, steps, batch, features, hidden):
    model = LstmClassifier(hidden)
    xs = _f32(rng, batch, steps, features)
    return model.apply, (model.init(_key(rng), xs), xs)


def _gru_scan(params, xs, h0):
    """A GRU over time-major xs with lax.scan, written out in plain JAX."""

    def cell(h, x):
        gx = x @ params["wx"] + params["bx"]
        gh = h @ params["wh"] + params["bh"]
        xr, xz, xn = jnp.split(gx, 3, axis=-1)
        hr, hz, hn = jnp.split(gh, 3, axis=-1)
        r, z = jax.nn.sigmoid(xr + hr), jax.nn.sigmoid(xz + hz)
        n = jnp.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        return h, h

    h, hs = lax.scan(cell, h0, xs)
    return h, hs.mean(axis=0) @ params["wo"]


def gru(rng, steps, batch, features, hidden):
    params = {"wx": _f32(rng, features, 3 * hidden, scale=features ** -0.5),
              "wh": _f32(rng, hidden, 3 * hidden, scale=hidden ** -0.5),
              "bx": np.zeros(3 * hidden, np.float32), "bh": np.zeros(3 * hidden, np.float32),
              "wo": _f32(rng, hidden, 10, scale=hidden ** -0.5)}
    xs = _f32(rng, steps, batch, features)
    return _gru_scan, (params, xs, np.zeros((batch, hidden), np.float32))


# --- optimizer -------------------------------------------------------------------------


def adamw(rng, **size):
    """optax.adamw's update over a GPT's parameter pytree, gradients given."""
    _, params, _ = _gpt(rng, **size)
    grads = jax.tree.map(lambda p: _f32(rng, *p.shape, scale=1e-2), params)
    opt = optax.adamw(1e-3, weight_decay=0.01)
    state = opt.update(grads, opt.init(params), params)[1]  # past the first step: m, v nonzero

    def update(params, state, grads):
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    return update, (params, state, grads)


_GPT_SIZES = {
    "2l_d128_s64_b2": dict(layers=2, d=128, seq=64, batch=2),
    "4l_d256_s128_b2": dict(layers=4, d=256, seq=128, batch=2),  # the issue's
    "12l_d384_s64_b2": dict(layers=12, d=384, seq=64, batch=2),  # the issue's
}

MODELS: list[Model] = [
    Model("gpt_fwd", "decoder forward", gpt_forward, _GPT_SIZES),
    Model("gpt_train", "decoder AdamW step", gpt_train,
          {k: _GPT_SIZES[k] for k in ("2l_d128_s64_b2", "4l_d256_s128_b2")}),
    Model("bert", "encoder forward", bert_encoder, {
        "2l_d128_s64_b4": dict(layers=2, d=128, seq=64, batch=4),
        "4l_d256_s128_b8": dict(layers=4, d=256, seq=128, batch=8)}),
    Model("vit", "vision transformer", vit, {
        "i32_p4_2l_d128_b4": dict(image=32, patch=4, layers=2, d=128, batch=4),
        "i64_p8_6l_d192_b8": dict(image=64, patch=8, layers=6, d=192, batch=8)}),
    Model("mixer", "MLP-mixer", mlp_mixer, {
        "i32_p4_2l_d128_b4": dict(image=32, patch=4, layers=2, d=128, batch=4),
        "i64_p8_8l_d256_b8": dict(image=64, patch=8, layers=8, d=256, batch=8)}),
    Model("resnet_fwd", "CNN forward", resnet_forward, {
        "i32_w8-16_b8": dict(image=32, widths=(8, 16), batch=8),
        "i32_w16-32_b8": dict(image=32, widths=(16, 32), batch=8),
        "i64_w32-64-128_b16": dict(image=64, widths=(32, 64, 128), batch=16)}),
    Model("resnet_train", "CNN SGD step", resnet_train, {
        "i32_w8-16_b8": dict(image=32, widths=(8, 16), batch=8),
        "i32_w16-32_b8": dict(image=32, widths=(16, 32), batch=8),
        "i64_w32-64-128_b16": dict(image=64, widths=(32, 64, 128), batch=16)}),
    Model("unet", "U-Net block", unet_block, {
        "i32_c16_b2": dict(image=32, features=16, batch=2),
        "i128_c32_b4": dict(image=128, features=32, batch=4)}),
    Model("lstm", "flax nn.RNN LSTM", lstm, {
        "t20_b8_h64": dict(steps=20, batch=8, features=32, hidden=64),
        "t100_b16_h256": dict(steps=100, batch=16, features=64, hidden=256)}),
    Model("gru", "lax.scan GRU", gru, {
        "t20_b8_h64": dict(steps=20, batch=8, features=32, hidden=64),
        "t100_b16_h256": dict(steps=100, batch=16, features=64, hidden=256)}),
    Model("adamw", "optax AdamW update", adamw, {
        "gpt_2l_d128": dict(layers=2, d=128, seq=64, batch=2),
        "gpt_4l_d256": dict(layers=4, d=256, seq=128, batch=2),
        "gpt_12l_d384": dict(layers=12, d=384, seq=64, batch=2)}),
]

BY_NAME = {m.name: m for m in MODELS}
