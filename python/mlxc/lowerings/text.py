"""Writing the MLIR text of a lowering: value names, types and generic op syntax.

Generic syntax (`"stablehlo.add"(%a, %b) : (T, T) -> T`) is used throughout because
it is the one form every op accepts, so a rule never depends on an op's custom printer.
"""

from __future__ import annotations

from typing import Sequence


def tensor_type(shape: Sequence[int], elem: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def i64_array(values: Sequence[int]) -> str:
    return "array<i64" + "".join(f"{': ' if i == 0 else ', '}{v}" for i, v in enumerate(values)) + ">"


class Emitter:
    """Collects lines of MLIR text, naming each new value and remembering its type."""

    def __init__(self, **args: str):
        self.lines: list[str] = []
        self.types: dict[str, str] = {f"%{name}": t for name, t in args.items()}
        self._count = 0

    def fresh(self) -> str:
        self._count += 1
        return f"%v{self._count}"

    def op(self, name: str, operands: Sequence[str], result: str, attrs: str = "") -> str:
        """Emit one single-result op in generic form; returns the result's name."""
        value = self.fresh()
        types = ", ".join(self.types[o] for o in operands)
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.lines.append(f'{value} = "{name}"({", ".join(operands)}){attr_text} : '
                          f"({types}) -> {result}")
        self.types[value] = result
        return value

    def constant(self, dense: str, result: str) -> str:
        return self.op("stablehlo.constant", [], result, f"value = dense<{dense}> : {result}")

    def reduce_sum(self, x: str, dims: Sequence[int], result: str, elem: str) -> str:
        """Sum `x` over `dims` (a stablehlo.reduce with an add body)."""
        scalar = tensor_type([], elem)
        init = self.constant("0" if elem.startswith(("i", "ui")) else "0.0", scalar)
        value = self.fresh()
        self.lines.append(
            f'{value} = "stablehlo.reduce"({x}, {init}) ({{\n'
            f"^bb0(%lhs: {scalar}, %rhs: {scalar}):\n"
            f'  %sum = "stablehlo.add"(%lhs, %rhs) : ({scalar}, {scalar}) -> {scalar}\n'
            f'  "stablehlo.return"(%sum) : ({scalar}) -> ()\n'
            f"}}) {{dimensions = {i64_array(dims)}}} : ({self.types[x]}, {scalar}) -> {result}")
        self.types[value] = result
        return value

    def line(self, text: str, **defines: str) -> None:
        """Emit text as written; `defines` gives the types of the values it defines."""
        self.lines.append(text)
        self.types.update({f"%{name}": t for name, t in defines.items()})

    def text(self) -> str:
        return "\n".join(self.lines)
