"""Find the test cases of StableHLO's conformance suites.

- `interpret/**.mlir`: split on `// -----`; every function holding `check.*` ops is
  a case (entry: that function).
- `testdata/*.mlir`: one JAX-generated program per file; entry `@main`, which calls
  `@inputs()` and `@expected()` and checks with `stablehlo.custom_call @check.*`.
- `testdata/dynamic/*.mlir`: programs with `?` dimensions and no checks; the case
  compiles them for concrete shapes and compares with the StableHLO interpreter.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional

from ..frontend.split import split_input
from .out_of_scope import reason_for

_FUNC = re.compile(r"func\.func\s+(?:public\s+|private\s+)?@([\w.$-]+)")
_DTYPE = re.compile(r"_(?:float|bfloat|int|uint|bool|complex|dtypes|shape|in_|lhs|operand|nan|inf)")


@dataclass(frozen=True)
class Case:
    id: str  # e.g. "interpret/while.mlir#0@while", "testdata/abs_float32_20_20.mlir"
    suite: str  # "interpret", "testdata", "dynamic"
    family: str  # op family, for per-family pass rates
    path: str  # absolute path of the file
    chunk: int  # index of the `// -----` part (0 when the file is not split)
    entry: str
    out_of_scope: Optional[str] = None


def _functions_with_checks(text: str) -> list[str]:
    starts = list(_FUNC.finditer(text))
    names = []
    for i, m in enumerate(starts):
        body = text[m.end(): starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        if "check." in body:
            names.append(m.group(1))
    return names


def testdata_family(filename: str) -> str:
    stem = os.path.basename(filename)[:-len(".mlir")]
    m = _DTYPE.search(stem)
    return stem[:m.start()] if m else stem


def discover(root: str) -> list[Case]:
    """Every case under `root` (the folder holding `interpret/` and `testdata/`)."""
    cases: list[Case] = []
    interpret = os.path.join(root, "interpret")
    for dirpath, _, files in sorted(os.walk(interpret)):
        for f in sorted(files):
            if not f.endswith(".mlir"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            family = os.path.relpath(path, interpret)[:-len(".mlir")]
            reason = reason_for(rel)
            with open(path) as fh:
                parts = split_input(fh.read())
            found = False
            for i, part in enumerate(parts):
                for name in _functions_with_checks(part):
                    found = True
                    cases.append(Case(f"{rel}#{i}@{name}", "interpret", family, path, i, name, reason))
            if not found:
                cases.append(Case(rel, "interpret", family, path, 0, "main",
                                  reason or "no checks in this file"))
    testdata = os.path.join(root, "testdata")
    if os.path.isdir(testdata):
        for f in sorted(os.listdir(testdata)):
            if f.endswith(".mlir"):
                rel = os.path.join("testdata", f)
                cases.append(Case(rel, "testdata", testdata_family(f), os.path.join(testdata, f),
                                  0, "main", reason_for(rel)))
        for sub, suite in (("dynamic", "dynamic"), ("quantized", "quantized")):
            folder = os.path.join(testdata, sub)
            if not os.path.isdir(folder):
                continue
            for f in sorted(os.listdir(folder)):
                if f.endswith(".mlir"):
                    rel = os.path.join("testdata", sub, f)
                    family = f[:-len(".mlir")].replace("_dynamic", "")
                    family = re.sub(r"_\d+$", "", family)
                    path = os.path.join(folder, f)
                    cases.append(Case(rel, suite, family, path, _main_chunk(path), "main",
                                      reason_for(rel)))
    return cases


def _main_chunk(path: str) -> int:
    """The `// -----` part defining @main: a few quantized files put it among
    interpreter-style tests of other types (which the interpret suite already covers)."""
    with open(path) as fh:
        parts = split_input(fh.read())
    for i, part in enumerate(parts):
        if "main" in (m.group(1) for m in _FUNC.finditer(part)):
            return i
    return 0


def case_text(case: Case) -> str:
    with open(case.path) as f:
        text = f.read()
    return split_input(text)[case.chunk]


def sample(cases: list[Case], n: int) -> list[Case]:
    """`n` cases spread evenly over `cases` (sorted by id): the same sample every run."""
    ordered = sorted(cases, key=lambda c: c.id)
    if n >= len(ordered):
        return ordered
    step = len(ordered) / n
    return [ordered[int(i * step)] for i in range(n)]
