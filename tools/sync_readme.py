"""Rewrite the generated parts of README.md: the pipeline string (`mlxc.pipeline()`) and
the settings table (`mlxc.settings`), between their markers.

    python tools/sync_readme.py      (test/pytest/test_docs.py fails when either is stale)
"""

import os
import re

import mlxc
from mlxc import settings

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def settings_table() -> str:
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for s in settings.SETTINGS.values():
        default = "—" if s.default is None or callable(s.default) else f"`{s.default}`"
        if isinstance(s.default, bool):
            default = f"`{int(s.default)}`"
        rows.append(f"| `{s.env}` | {default} | {s.doc} |")
    return "\n".join(rows)


def main() -> None:
    with open(README) as f:
        text = f.read()
    text = re.sub(r"```\nbuiltin\.module\(.*?\)\n```", lambda m: f"```\n{mlxc.pipeline()}\n```",
                  text, flags=re.S)
    text = re.sub(r"(<!-- settings -->\n).*?(\n<!-- /settings -->)",
                  lambda m: m.group(1) + settings_table() + m.group(2), text, flags=re.S)
    with open(README, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
