"""mlxc-opt: mlir-opt with mlxc's passes and pipelines.

    mlxc-opt model.mlir --mlxc-pipeline=cpu --mlxc-stop-after=bufferize
    mlxc-opt in.mlir --pass-pipeline='builtin.module(mlxc-select-entry,inline)'
    mlxc-opt tests.mlir --split-input-file --verify-diagnostics

User errors print `file:line:col: error: ...` and exit 1, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional



def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mlxc-opt", description="Run MLIR and mlxc passes or mlxc pipelines on an .mlir file.")
    p.add_argument("input", nargs="?", default="-", help="input file ('-' for stdin)")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    p.add_argument("--pass-pipeline", help="a textual pass pipeline (MLIR and mlxc-* passes)")
    p.add_argument("--mlxc-pipeline", help="run a named mlxc pipeline (a target: cpu, cuda)")
    p.add_argument("--mlxc-entry", default="main", help="entry function for --mlxc-pipeline")
    p.add_argument("--mlxc-start-after", help="skip the pipeline's stages up to this one")
    p.add_argument("--mlxc-stop-after", help="stop the pipeline after this stage")
    p.add_argument("--mlxc-print-pipeline", action="store_true",
                   help="print the named pipeline's stages, passes and reasons, then exit")
    p.add_argument("--mlxc-list-passes", action="store_true", help="list mlxc's Python passes")
    p.add_argument("--split-input-file", action="store_true",
                   help="split the input on '// -----' lines and process each part alone")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check diagnostics against expected-error/warning/note comments")
    p.add_argument("--mlir-print-ir-after-all", action="store_true")
    p.add_argument("--mlir-timing", action="store_true")
    p.add_argument("--mlir-print-debuginfo", action="store_true")
    p.add_argument("--mlir-print-op-generic", action="store_true")
    return p


class _Collector:
    """Collects every diagnostic the context emits (warnings and remarks included)."""

    def __init__(self, ctx):
        from ..errors import diagnostic_from_mlir

        self.diags = []
        self._convert = diagnostic_from_mlir
        self._handle = ctx.attach_diagnostic_handler(self._on)

    def _on(self, diag) -> bool:
        self.diags.append(self._convert(diag))
        return True

    def close(self):
        self._handle.detach()


def _process(chunk, name: str, args, out: list[str], diags: list) -> bool:
    """Run one input chunk (text, or the bytes of MLIR bytecode or a portable artifact);
    append its output text. Returns False on error."""
    from .. import targets
    from .._mlir import ir, new_context
    from ..errors import CompileError
    from ..frontend.source import load, parse_text
    from ..pipelines import contracts, runner
    from ..pipelines.textual import parse_pipeline

    ctx = new_context()
    collector = _Collector(ctx) if args.verify_diagnostics else None
    options = runner.RunOptions(print_ir_after_all=args.mlir_print_ir_after_all,
                                timing=args.mlir_timing, repro=False)
    try:
        with ctx, ir.Location.unknown():
            try:
                module = parse_text(chunk, name) if isinstance(chunk, str) else \
                    load(chunk, name=name).module
                if args.mlxc_pipeline:
                    pipe = targets.get(args.mlxc_pipeline).pipeline(args.mlxc_entry)
                    start = args.mlxc_start_after
                    if start is None and contracts.STAGE_ATTR in module.operation.attributes:
                        start = ir.StringAttr(module.operation.attributes[contracts.STAGE_ATTR]).value
                    todo = pipe.slice(start, args.mlxc_stop_after)
                    first = pipe.stage_names.index(todo.stages[0].name) + 1 if todo.stages else 0
                    runner.run_stages(module, todo.stages, first_index=first, options=options)
                if args.pass_pipeline:
                    runner.run_passes(module, parse_pipeline(args.pass_pipeline), options)
            except CompileError as e:
                if collector is None:
                    for d in e.diagnostics:
                        print(d.format(), file=sys.stderr)
                diags.extend(e.diagnostics)
                return False
            out.append(module.operation.get_asm(enable_debug_info=args.mlir_print_debuginfo,
                                                print_generic_op_form=args.mlir_print_op_generic))
            return True
    finally:
        if collector is not None:
            seen = {(d.severity, d.location, d.message) for d in diags}
            diags.extend(d for d in collector.diags
                         if (d.severity, d.location, d.message) not in seen)
            collector.close()


def main(argv: Optional[list[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _main(args)
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130


def _fail(message: str) -> int:
    print(f"mlxc-opt: error: {message}", file=sys.stderr)
    return 1


def _main(args) -> int:
    from ..pipelines.runner import PipelineError
    from ..pipelines.textual import PipelineSyntaxError

    if args.mlxc_list_passes:
        from .. import passes

        for p in passes.all_passes():
            print(f"  --{p.argument}: {p.summary}")
            for opt, doc in p.options.items():
                print(f"      {opt}: {doc}")
        return 0
    if args.mlxc_print_pipeline:
        from .. import targets

        try:
            pipe = targets.get(args.mlxc_pipeline or "cpu").pipeline(args.mlxc_entry)
            print(pipe.slice(args.mlxc_start_after, args.mlxc_stop_after).describe())
        except (ValueError, KeyError) as e:
            return _fail(str(e).strip("'\""))
        return 0
    if args.pass_pipeline and args.mlxc_pipeline:
        return _fail("give --pass-pipeline or --mlxc-pipeline, not both")
    if (args.mlxc_stop_after or args.mlxc_start_after) and not args.mlxc_pipeline:
        return _fail("--mlxc-start-after/--mlxc-stop-after need --mlxc-pipeline")
    name = "<stdin>" if args.input == "-" else args.input
    from ..frontend.source import BYTECODE_MAGIC
    from ..runtime import files

    try:
        data = sys.stdin.buffer.read() if args.input == "-" else files.read_regular_file(args.input)
    except OSError as e:
        return _fail(f"cannot read {name}: {e.strerror or e}")
    if data.startswith(BYTECODE_MAGIC):
        text = data  # MLIR bytecode or a portable artifact: one program, nothing to split
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
            print(f"{name}:{line}:{col}: error: byte 0x{data[e.start]:02X} is not UTF-8 (the input "
                  "is neither MLIR text nor MLIR bytecode)", file=sys.stderr)
            return 1

    from ..tools.verify_diagnostics import parse_expectations, verify

    outputs: list[str] = []
    ok = True
    problems: list[str] = []
    from ..frontend.split import split_input

    for chunk in (split_input(text) if args.split_input_file and isinstance(text, str) else [text]):
        diags: list = []
        try:
            ok &= _process(chunk, name, args, outputs, diags)
        except (PipelineError, PipelineSyntaxError) as e:
            return _fail(str(e))
        except KeyError as e:  # an unknown stage name
            return _fail(str(e).strip("'\""))
        except ValueError as e:
            return _fail(str(e))
        if args.verify_diagnostics:
            # Chunks are padded to their true first line, so line numbers are absolute.
            problems += verify(diags, parse_expectations(chunk if isinstance(chunk, str) else ""),
                               name)
    if args.verify_diagnostics:
        for p in problems:
            print(p, file=sys.stderr)
        status = 1 if problems else 0
    else:
        status = 0 if ok else 1
    text_out = "// -----\n".join(o if o.endswith("\n") else o + "\n" for o in outputs)
    if args.output == "-":
        sys.stdout.write(text_out)
    else:
        try:
            with open(args.output, "w") as f:
                f.write(text_out)
        except OSError as e:
            return _fail(f"cannot write {args.output}: {e.strerror or e}")
    return status


if __name__ == "__main__":
    sys.exit(main())
