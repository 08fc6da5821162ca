"""Rewrite the pipeline string shown in README.md from `mlxc.pipeline()`.

    python tools/sync_readme.py      (test/pytest/test_docs.py fails when it is stale)
"""

import os
import re

import mlxc

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")

with open(README) as f:
    text = f.read()
text = re.sub(r"```\nbuiltin\.module\(.*?\)\n```", lambda m: f"```\n{mlxc.pipeline()}\n```", text,
              flags=re.S)
with open(README, "w") as f:
    f.write(text)
