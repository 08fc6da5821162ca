"""mlxc.compile("model.onnx") through torch-mlir's ONNX importer, against onnxruntime,
on models this test exports with torch.onnx."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import mlxc  # noqa: E402

nn = torch.nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, stride=2), nn.Sigmoid(),
                                  nn.AvgPool2d(2))
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        return torch.softmax(self.head(self.body(x).flatten(1)), -1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        q, k, v = self.qkv(self.norm(x)).chunk(3, -1)
        w = torch.softmax(q @ k.transpose(-1, -2) / 4.0, -1)
        return x + torch.nn.functional.gelu(w @ v)


MODELS = {
    "mlp": (lambda: nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4)), (5, 8)),
    "cnn": (CNN, (2, 3, 16, 16)),
    "attention": (Attention, (2, 7, 16)),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_onnx_model_matches_onnxruntime(name, tmp_path):
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    x = torch.randn(*shape)
    path = str(tmp_path / f"{name}.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), path, dynamo=False, input_names=["x"],
                          output_names=["y"])
    exe = mlxc.compile(path)
    expected = ort.InferenceSession(path).run(None, {"x": x.numpy()})[0]
    np.testing.assert_allclose(exe(x.numpy()), expected, rtol=1e-4, atol=1e-5)


def test_a_damaged_onnx_file_is_a_compile_error(tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x08\x07\x12\x04junk" * 3)
    with pytest.raises(mlxc.CompileError, match="bad.onnx"):
        mlxc.compile(str(path))
