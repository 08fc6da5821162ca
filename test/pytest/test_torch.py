"""mlxc.torch and torch.compile(backend="mlxc") against eager PyTorch, on the modules
users write (MLP, CNN with batch norm, ResNet block, TransformerEncoderLayer, LSTM,
GRU, EmbeddingBag, LayerNorm, MultiheadAttention, a small ViT); weights read per
call, batch-norm statistics written back, a dynamic batch, bf16 tensors."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx")

import mlxc  # noqa: E402
import mlxc.torch  # noqa: E402

nn = torch.nn


def close(actual, expected, rtol=2e-4, atol=2e-5):
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            close(a, e, rtol, atol)
        return
    if isinstance(expected, dict):
        assert actual.keys() == expected.keys()
        for k in expected:
            close(actual[k], expected[k], rtol, atol)
        return
    assert isinstance(actual, torch.Tensor), type(actual)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual.float().numpy(), expected.detach().float().numpy(),
                               rtol=rtol, atol=atol)


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(h)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, stride=2), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.body(x).flatten(1))


class Recurrent(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(6, 12, batch_first=True, num_layers=2)

    def forward(self, x):
        out, state = self.rnn(x)
        return out, state


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(50, 8, mode="mean")

    def forward(self, ids, offsets):
        return self.bag(ids, offsets)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, q, kv):
        out, weights = self.mha(q, kv, kv)
        return out, weights


class ViT(nn.Module):
    def __init__(self, patch=4, dim=32):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, 17, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, 4, 64, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        h = self.patch(x).flatten(2).transpose(1, 2)
        h = torch.cat([self.cls.expand(h.shape[0], -1, -1), h], 1) + self.pos
        return self.head(self.norm(self.encoder(h))[:, 0])


def _cases():
    g = torch.Generator().manual_seed(0)

    def r(*shape):
        return torch.randn(*shape, generator=g)

    return {
        "mlp": (lambda: nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 5)),
                (r(7, 12),)),
        "cnn_batchnorm": (CNN, (r(2, 3, 16, 16),)),
        "resnet_block": (lambda: ResBlock(8), (r(2, 8, 8, 8),)),
        "transformer_encoder_layer": (
            lambda: nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True),
            (r(2, 9, 16),)),
        "lstm": (lambda: Recurrent(nn.LSTM), (r(3, 5, 6),)),
        "gru": (lambda: Recurrent(nn.GRU), (r(3, 5, 6),)),
        "embedding_bag": (Bag, (torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 49]),
                                torch.tensor([0, 4, 6]))),
        "layernorm": (lambda: nn.LayerNorm([6, 10]), (r(4, 6, 10),)),
        "multihead_attention": (Attention, (r(2, 5, 16), r(2, 7, 16))),
        "vit": (ViT, (r(2, 3, 16, 16),)),
    }


CASES = _cases()


@pytest.mark.parametrize("name", list(CASES))
def test_module_matches_eager(name):
    make, args = CASES[name]
    torch.manual_seed(1)
    model = make().eval()
    with torch.no_grad():
        expected = model(*args)
    compiled = mlxc.torch.compile(model, *args)
    close(compiled(*args), expected)


def test_training_mode_batch_norm_updates_its_statistics_as_eager():
    torch.manual_seed(2)
    ours, ref = CNN(), CNN()
    ref.load_state_dict(ours.state_dict())
    fast = mlxc.torch.compile(ours)
    for step in range(3):
        x = torch.randn(4, 3, 16, 16)
        with torch.no_grad():
            close(fast(x), ref(x))
        bn_ours, bn_ref = ours.body[1], ref.body[1]
        close(bn_ours.running_mean, bn_ref.running_mean)
        close(bn_ours.running_var, bn_ref.running_var)
        assert bn_ours.num_batches_tracked.item() == step + 1
    # eval() is another program: running statistics, no update
    ours.eval(), ref.eval()
    x = torch.randn(4, 3, 16, 16)
    with torch.no_grad():
        close(fast(x), ref(x))
    assert ours.body[1].num_batches_tracked.item() == 3
    assert fast.num_programs == 2


def test_weights_are_read_on_every_call():
    model = nn.Linear(4, 3).eval()
    fast = mlxc.torch.compile(model)
    x = torch.randn(2, 4)
    close(fast(x), model(x))
    with torch.no_grad():
        model.weight.mul_(2)
        model.bias.add_(1)
    close(fast(x), model(x))
    assert fast.num_programs == 1


def test_dynamic_batch_through_export_dims():
    model = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.ReLU(), nn.Linear(16, 4)).eval()
    fast = mlxc.torch.compile(model, dynamic_shapes=({0: torch.export.Dim("batch")},))
    for n in (3, 5, 17):
        x = torch.randn(n, 8)
        close(fast(x), model(x))
    assert fast.num_programs == 1  # one exported program, specialised per size by mlxc


def test_non_tensor_arguments_and_output_structure():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, x, scale: float = 1.0, *, extra=None):
            h = self.l(x) * scale
            return {"h": h, "both": [h + extra, x.sum()]}

    m = M().eval()
    fast = mlxc.torch.compile(m)
    x, e = torch.randn(3, 4), torch.randn(3, 4)
    close(fast(x, 2.0, extra=e), m(x, 2.0, extra=e))
    close(fast(x, 3.0, extra=e), m(x, 3.0, extra=e))
    assert fast.num_programs == 2


def test_bf16_tensors_cross_without_numpy_support():
    model = nn.Linear(8, 4).to(torch.bfloat16).eval()
    x = torch.randn(3, 8).to(torch.bfloat16)
    out = mlxc.torch.compile(model)(x)
    assert out.dtype == torch.bfloat16
    close(out, model(x), rtol=2e-2, atol=2e-2)


def test_torch_compile_backend_by_name_and_by_function():
    import torch._dynamo

    assert "mlxc" in torch._dynamo.list_backends()
    torch._dynamo.reset()
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4)).eval()
    for backend in ("mlxc", mlxc.torch.backend):
        fast = torch.compile(model, backend=backend)
        with torch.no_grad():
            for n in (3, 3, 6):
                x = torch.randn(n, 8)
                close(fast(x), model(x))
        torch._dynamo.reset()


def test_torch_compile_backend_leaves_gradients_to_eager():
    torch._dynamo.reset()
    model = nn.Linear(4, 2)
    fast = torch.compile(model, backend=mlxc.torch.backend)
    x = torch.randn(3, 4)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        fast(x).sum().backward()
    expected = torch.ones(3, 2).T @ x
    close(model.weight.grad, expected)
    torch._dynamo.reset()


def test_errors_name_what_is_wrong():
    with pytest.raises(TypeError, match="expected a torch.nn.Module"):
        mlxc.torch.compile(lambda x: x)
    with pytest.raises(TypeError, match=r"not a Linear: use mlxc.torch.compile\(module\)"):
        mlxc.compile(nn.Linear(2, 2))

    class Takes(nn.Module):
        def forward(self, x, options):
            return x * len(options)

    with pytest.raises(TypeError, match="argument of type set is neither a tensor nor hashable"):
        mlxc.torch.compile(Takes())(torch.ones(2), {1, 2})


@pytest.mark.parametrize("mode,weighted,padding", [("sum", True, None), ("max", False, 2),
                                                   ("mean", False, 4), ("sum", False, None)])
def test_embedding_bag_modes(mode, weighted, padding):
    # torch-mlir has no lowering of embedding_bag; mlxc.torch decomposes it (an empty
    # bag, a padded index, per-sample weights, the last offset included or not).
    torch.manual_seed(3)
    bag = nn.EmbeddingBag(10, 5, mode=mode, padding_idx=padding,
                          include_last_offset=mode == "sum" and not weighted).eval()
    ids = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 2])
    offsets = torch.tensor([0, 4, 4, 6, 9]) if bag.include_last_offset else \
        torch.tensor([0, 4, 4, 6])
    args = (ids, offsets, torch.rand(9)) if weighted else (ids, offsets)
    close(mlxc.torch.compile(bag)(*args), bag(*args))
