"""The documentation shows what the code does."""

import os
import re

import mlxc
from mlxc import settings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _readme() -> str:
    with open(os.path.join(ROOT, "README.md")) as f:
        return f.read()


def test_readme_pipeline_is_the_real_one():
    shown = re.search(r"```\n(builtin\.module\(.*\))\n```", _readme()).group(1)
    assert shown == str(mlxc.pipeline()), "README's pipeline string is stale"


def test_readme_lists_every_setting():
    import sys

    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from sync_readme import settings_table

    readme = _readme()
    for s in settings.SETTINGS.values():
        assert f"`{s.env}`" in readme, f"{s.env} missing from README"
    assert settings_table() in readme, "README's settings table is stale: python tools/sync_readme.py"


def test_every_stage_is_documented():
    with open(os.path.join(ROOT, "docs", "architecture.md")) as f:
        arch = f.read()
    for stage in mlxc.pipeline().stage_names:
        assert f"`{stage}`" in arch, f"stage {stage} missing from docs/architecture.md"


def test_every_python_pass_has_a_lit_test():
    from mlxc import passes

    # The cuda target's passes are tested with the target, in test/cuda/.
    for name in passes.REGISTRY:
        folders = ("passes", "cuda") if name.startswith("mlxc-gpu-") else ("passes",)
        assert any(os.path.exists(os.path.join(ROOT, "test", f, f"{name}.mlir")) for f in folders), name


def test_readme_python_examples_run():
    # The Python API section's examples (JAX, PyTorch, ONNX, mlxc.compile), each in a
    # fresh namespace; the PyTorch and ONNX ones need the test extras' torch and onnx.
    import pytest

    blocks = re.findall(r"```python\n(.*?)```", _readme(), re.S)
    assert len(blocks) >= 4
    for code in blocks:
        needs = [m for m in ("torch", "onnx") if re.search(rf"\b{m}\b", code)]
        for module in needs:
            pytest.importorskip(module)
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
