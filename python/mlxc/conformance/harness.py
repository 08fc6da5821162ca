"""Turn a conformance test into a program mlxc compiles: checks become results.

A test is a function whose `check.*` ops (interpreter suite) or
`stablehlo.custom_call @check.*` ops (JAX-generated suite) assert on values. The
harness removes each check and makes the function return, for every check, the
checked value and its expected value; the runner then compiles the result with
`mlxc.compile`, runs it and compares each pair as the check says (`checks.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import irutil
from .._mlir import ir, new_context
from .checks import DEFAULT_MAX_ULP, DEFAULT_TOLERANCE, Check


class OutOfScope(Exception):
    """The test exercises something mlxc does not aim to support (see out_of_scope.py)."""


class HarnessError(Exception):
    """The test could not be turned into a program (a harness limitation)."""


@dataclass
class Prepared:
    text: str  # the program: @entry returns (actual, expected) for every check
    entry: str
    checks: list[Check]


# The check dialect's custom syntax (not registered in these bindings), rewritten to
# the generic form of an unregistered op that the parser accepts.
_CONST = re.compile(r"^(\s*)check\.(expect_eq_const|expect_almost_eq_const)\s+(%[\w.$#-]+)\s*,\s*(.*)$")
_PAIR = re.compile(r"^(\s*)check\.(expect_eq|expect_almost_eq|expect_close)\s+(%[\w.$#-]+)\s*,\s*"
                   r"(%[\w.$#-]+)\s*(?:,\s*(.*?))?\s*:\s*(.*)$")


def _split_trailing_dict(text: str) -> tuple[str, str]:
    """`dense<1> : tensor<f64> {tolerance = 0.1 : f64}` -> (attribute, `{...}` or '')."""
    text = text.rstrip()
    if not text.endswith("}"):
        return text, ""
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == "}":
            depth += 1
        elif text[i] == "{":
            depth -= 1
            if depth == 0:
                head = text[:i].rstrip()
                if head.endswith(">") or head.endswith("]") or re.search(r":\s*[\w<>x?]+$", head):
                    return head, text[i:]
                return text, ""
    return text, ""


def _attr_type(attr: str) -> str:
    """The type of an elements attribute written `dense<...> : tensor<...>`."""
    i = attr.rfind(" : ")
    if i < 0:
        raise HarnessError(f"cannot find the type of attribute {attr[:60]}")
    return attr[i + 3:].strip()


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        if c in "<[(":
            depth += 1
        elif c in ">])":
            depth -= 1
    return depth <= 0


def _statements(text: str):
    """Lines, with a `check.*` op spanning several lines joined into one (then blanks)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("check."):
            j = i
            # Open brackets, or a trailing comma before the attribute, continue the op.
            while (not _balanced(line) or line.rstrip().endswith(",")) and j + 1 < len(lines):
                j += 1
                line += " " + lines[j].strip()
            yield line
            for _ in range(j - i):
                yield ""
            i = j + 1
        else:
            yield line
            i += 1


def rewrite_check_syntax(text: str) -> str:
    """Rewrite `check.*` ops in custom syntax to generic form, one line each.

    `check.expect_eq_const %v, dense<..> : T` becomes a `stablehlo.constant` and a
    two-operand check on the same line, so line numbers stay true and no attribute
    needs reading from Python (the bindings cannot read complex dense attributes).
    """
    out = []
    count = 0
    for line in _statements(text):
        stripped = line.lstrip()
        if not stripped.startswith("check."):
            out.append(line)
            continue
        m = _CONST.match(line)
        if m:
            indent, name, value, rest = m.groups()
            attr, extra = _split_trailing_dict(rest)
            t = _attr_type(attr)
            expected = f"%__mlxc_expected_{count}"
            count += 1
            attrs = f" {{{extra.strip()[1:-1]}}}" if extra else ""
            check = name[: -len("_const")]
            out.append(f'{indent}{expected} = stablehlo.constant {attr} '
                       f'"check.{check}"({value}, {expected}){attrs} : ({t}, {t}) -> ()')
            continue
        m = _PAIR.match(line)
        if m:
            indent, name, a, b, options, types = m.groups()
            tys = [t.strip() for t in _split_types(types)]
            if len(tys) == 1:
                tys = tys * 2
            attrs = ""
            if options:
                attrs = " {" + ", ".join(_option(o) for o in options.split(",") if o.strip()) + "}"
            out.append(f'{indent}"check.{name}"({a}, {b}){attrs} : ({tys[0]}, {tys[1]}) -> ()')
            continue
        if stripped.startswith("check.expect_serialized_eq"):
            raise OutOfScope("check.expect_serialized_eq compares against interpreter probe files")
        raise HarnessError(f"unrecognised check syntax: {stripped[:80]}")
    return "\n".join(out)


def _option(text: str) -> str:
    key, _, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if key == "tolerance":
        return f"{key} = {value} : f64" if ":" not in value else f"{key} = {value}"
    return f"{key} = {value} : i64" if ":" not in value else f"{key} = {value}"


def _split_types(text: str) -> list[str]:
    """Split `tensor<2xf32>, tensor<2xf32>` at top-level commas."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


_CUSTOM_CHECKS = {"check.expect_eq": "eq", "check.eq": "eq", "check.expect_close": "close",
                  "check.expect_almost_eq": "almost_eq"}
_DIALECT_CHECKS = {"check.expect_eq": "eq", "check.expect_almost_eq": "almost_eq",
                   "check.expect_close": "close"}


def _float_attr(op, name: str, default: float) -> float:
    if name not in op.attributes:
        return default
    return float(ir.FloatAttr(op.attributes[name]).value)


def _int_attr(op, name: str, default: int) -> int:
    if name not in op.attributes:
        return default
    return int(ir.IntegerAttr(op.attributes[name]).value)


def _check_of(op, kind: str, where: str) -> Check:
    return Check(kind, tolerance=_float_attr(op, "tolerance", DEFAULT_TOLERANCE),
                 max_ulp=_int_attr(op, "max_ulp_difference", DEFAULT_MAX_ULP),
                 min_ulp=_int_attr(op, "min_ulp_difference", 0), where=where)


def _custom_call_target(op) -> str:
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return ""
    return ir.StringAttr(op.attributes["call_target_name"]).value


def prepare(text: str, entry: str, name: str = "<test>") -> Prepared:
    """The program for the test function `entry` of `text` (one module or chunk)."""
    text = rewrite_check_syntax(text)
    ctx = new_context()
    ctx.allow_unregistered_dialects = True
    with ctx, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise HarnessError(f"cannot parse: {str(e).splitlines()[-1][:200]}") from None
        func = irutil.find_function(module, entry)
        if func is None:
            raise HarnessError(f"no function @{entry}")
        block = func.regions[0].blocks[0]
        pairs: list = []
        checks: list[Check] = []
        doomed = []
        for op in list(block.operations):
            op = op.operation
            target = _custom_call_target(op)
            if op.name in _DIALECT_CHECKS or target in _CUSTOM_CHECKS:
                kind = _DIALECT_CHECKS.get(op.name) or _CUSTOM_CHECKS[target]
                where = f"{name}:{_line(op)}"
                if len(op.operands) != 2:
                    raise HarnessError(f"{op.name} with {len(op.operands)} operands")
                pairs += [op.operands[0], op.operands[1]]
                checks.append(_check_of(op, kind, where))
                doomed.append((op, where))
            elif op.name.startswith("check."):
                raise HarnessError(f"unsupported check op {op.name}")
        for op in _nested_checks(func):
            raise HarnessError(f"{op.name} inside a region is not supported by the harness")
        if not checks:
            raise HarnessError(f"@{entry} has no checks")
        terminator = list(block.operations)[-1].operation
        with ir.InsertionPoint(terminator), terminator.location:
            ir.Operation.create("func.return", operands=pairs)
        terminator.erase()  # first: it may use the i1 a `check.eq` returns
        for op, where in doomed:
            # Erasing an op still in use leaves its users reading freed memory.
            if any(list(r.uses) for r in op.results):
                raise HarnessError(f"{where}: the result of {op.name} is read by another op; "
                                   "the harness takes checks whose results are only returned")
        for op, _ in doomed:
            op.erase()
        ftype = irutil.function_type(func)
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(ftype.inputs, [p.type for p in pairs]))
        if "res_attrs" in func.attributes:
            del func.attributes["res_attrs"]
        for f in irutil.functions(module):
            f.attributes["sym_visibility"] = ir.StringAttr.get(
                "public" if irutil.sym_name(f) == entry else "private")
        return Prepared(module.operation.get_asm(), entry, checks)


def _nested_checks(func) -> list:
    return [op for op in irutil.walk(func)[1:]
            if (op.name.startswith("check.") or _custom_call_target(op).startswith("check."))
            and op.parent != func]


def _line(op) -> str:
    loc = op.location
    return str(loc.start_line) if isinstance(loc, ir.FileLineColLoc) else "?"
