"""LLVM code generation on two threads: a program's kernels split into two modules.

MLIR's ExecutionEngine compiles one module on one thread, and its Python binding holds
the GIL while it does. The MLIR C API, which the bindings' library exports, does the
same work through ctypes, which releases the GIL; so two engines can build at once,
each from a module in its own MLIR context (contexts are not thread-safe).

`mlxc-outline-kernels` made each loop nest of a large entry a function marked
`mlxc.kernel`. Here the kernels are parted into two groups of about equal size
(counting ops). Module A keeps the entry, `mlxc_entry` and group A; module B, built
on a worker thread from the module's bytecode, keeps group B. A calls B's kernels
through a table of pointers (`mlxc_kernel_table`, a global of A), filled once both
are compiled: with direct calls, A could not be linked before B's addresses were
known, and its code generation would wait for B. An artifact links both objects
and a C file whose constructor fills the table (link.kernel_table_c).
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import io
import os
import tempfile
import threading
from typing import Optional

from ... import compile_timing, irutil
from ..._mlir import capi_library_path, ir, new_context
from ...errors import CompileError, Diagnostic

KERNEL_ATTR = "mlxc.kernel"
SHARED_ATTR = "mlxc.shared_kernel"  # passes/dedup_kernels.py
TABLE = "mlxc_kernel_table"
# Kernel ops below which a second engine's start-up (a few ms) outweighs the halving.
MIN_SPLIT_OPS = 2000
# The least share of the ops module B must get for the split to pay.
MIN_SHARE_B = 0.25


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


def _ref(text: bytes) -> _StringRef:
    return _StringRef(text, len(text))


_capi = None
_capi_lock = threading.Lock()


def _library():
    """The MLIR C API of the bindings' shared library, with the engine's signatures."""
    global _capi
    with _capi_lock:
        if _capi is None:
            lib = ctypes.CDLL(capi_library_path())
            lib.mlirExecutionEngineCreate.restype = ctypes.c_void_p
            lib.mlirExecutionEngineCreate.argtypes = [
                ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_StringRef),
                ctypes.c_bool, ctypes.c_bool]
            for name in ("mlirExecutionEngineLookup", "mlirExecutionEngineLookupPacked"):
                getattr(lib, name).restype = ctypes.c_void_p
                getattr(lib, name).argtypes = [ctypes.c_void_p, _StringRef]
            lib.mlirExecutionEngineDumpToObjectFile.restype = None
            lib.mlirExecutionEngineDumpToObjectFile.argtypes = [ctypes.c_void_p, _StringRef]
            lib.mlirExecutionEngineDestroy.restype = None
            lib.mlirExecutionEngineDestroy.argtypes = [ctypes.c_void_p]
            api = ctypes.pythonapi
            api.PyCapsule_GetPointer.restype = ctypes.c_void_p
            api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
            api.PyCapsule_GetName.restype = ctypes.c_char_p
            api.PyCapsule_GetName.argtypes = [ctypes.py_object]
            _capi = lib
    return _capi


def _module_handle(module) -> int:
    capsule = module._CAPIPtr
    api = ctypes.pythonapi
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))


def _codegen_error(detail: str) -> CompileError:
    return CompileError("LLVM code generation failed", [Diagnostic("error", "<llvm>", detail)])


class Engine:
    """An ExecutionEngine made through the C API: PIC, its object file kept."""

    def __init__(self, module, opt_level: int, shared_libs: list[str]):
        self._lib = _library()
        paths = [p.encode() for p in shared_libs]
        refs = (_StringRef * max(1, len(paths)))(*[_ref(p) for p in paths])
        # The GIL is released for the whole of translation, optimisation set-up and
        # (at the first lookup) code generation: ctypes calls release it.
        self.handle = self._lib.mlirExecutionEngineCreate(
            _module_handle(module), opt_level, len(paths), refs, True, True)
        if not self.handle:
            raise _codegen_error("the LLVM dialect module could not be translated to LLVM IR "
                                 "or the JIT could not be created")

    def lookup(self, name: str) -> int:
        """The address of symbol `name`; generates the module's code on first use."""
        return self._lib.mlirExecutionEngineLookup(self.handle, _ref(name.encode())) or 0

    def lookup_packed(self, name: str) -> int:
        return self._lib.mlirExecutionEngineLookupPacked(self.handle, _ref(name.encode())) or 0

    def object_file(self) -> bytes:
        fd, path = tempfile.mkstemp(suffix=".o", prefix="mlxc-")
        os.close(fd)
        try:
            self._lib.mlirExecutionEngineDumpToObjectFile(self.handle, _ref(path.encode()))
            with open(path, "rb") as f:
                data = f.read()
        finally:
            os.unlink(path)
        if not data:
            raise _codegen_error("the JIT wrote an empty object file")
        return data

    def __del__(self):
        if getattr(self, "handle", None):
            self._lib.mlirExecutionEngineDestroy(self.handle)
            self.handle = None


# LLVM's global state (command-line options, the target registry) is set up by the
# first engine under function-local statics; the first one is made on the calling
# thread alone so that two first engines never race there.
_llvm_ready = False
_ready_lock = threading.Lock()


def _ensure_llvm_ready(context, opt_level: int, shared_libs: list[str]) -> None:
    global _llvm_ready
    with _ready_lock:
        if not _llvm_ready:
            with context:
                empty = ir.Module.parse("llvm.func @mlxc_warm_up() {\n  llvm.return\n}")
            Engine(empty, opt_level, shared_libs).lookup("mlxc_warm_up")
            _llvm_ready = True


def mark_llvm_ready() -> None:
    """Called after an engine was made the ordinary way (the binding) on this thread."""
    global _llvm_ready
    _llvm_ready = True


# The worker: one thread, with an MLIR context reused for up to 64 modules (a context
# costs 10-20 ms to make and keeps every constant it has seen alive).
_worker: Optional[concurrent.futures.ThreadPoolExecutor] = None
_worker_pid = None
_worker_state = threading.local()


_worker_lock = threading.Lock()


def _submit(fn, *args) -> concurrent.futures.Future:
    global _worker, _worker_pid
    with _worker_lock:
        # A forked child inherits the executor but not its thread: a new one there,
        # or the job would wait forever.
        if _worker is None or _worker_pid != os.getpid():
            _worker = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                            thread_name_prefix="mlxc-jit")
            _worker_pid = os.getpid()
        return _worker.submit(fn, *args)


_CONTEXT_USES = 64


def _worker_context() -> ir.Context:
    st = _worker_state
    if getattr(st, "context", None) is None or st.uses >= _CONTEXT_USES:
        st.context, st.uses = new_context(), 0
    st.uses += 1
    return st.context


def partition(weights: dict[str, int], fixed_a: int, share_b: float = 0.5) -> list[str]:
    """The kernels of module B: heaviest first, each to B while B stays within
    `share_b` of the total, A holding `fixed_a` (its entry functions) besides.
    Sorted by name, the order of the table of kernels."""
    target = share_b * (fixed_a + sum(weights.values()))
    b, group_b = 0, []
    for name, w in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0])):
        if b + w <= target:
            group_b.append(name)
            b += w
    return sorted(group_b)


def _build_b(bytecode: bytes, names: list[str], opt_level: int, shared_libs: list[str]):
    """On the worker: module B from the whole module's bytecode, compiled; the engine
    and the kernels' addresses, in `names` order."""
    try:
        ctx = _worker_context()
        with ctx:
            module = ir.Module.parse(bytecode)
        keep = set(names)
        for f in irutil.functions(module):
            if not f.regions[0].blocks:
                continue  # declarations (the runtime's functions) stay
            name = irutil.sym_name(f)
            if name in keep:
                # Exported, so module A (and the artifact's table) can reach it; never
                # inlined, or LLVM would compile it twice, once more inside the packed
                # wrapper the engine adds for each exported function (`_mlir_NAME`).
                if "sym_visibility" in f.attributes:
                    del f.attributes["sym_visibility"]
                f.attributes["no_inline"] = ir.UnitAttr.get(ctx)
            else:
                f.erase()
        engine = Engine(module, opt_level, shared_libs)
        addresses = [engine.lookup(n) for n in names]
        del module
    except BaseException as e:
        _worker_state.context = None  # a failed compile may leave the context dirty
        if isinstance(e, Exception) and not isinstance(e, CompileError):
            raise _codegen_error(f"the second module: {e}") from None
        raise
    missing = [n for n, a in zip(names, addresses) if not a]
    if missing:
        raise _codegen_error(f"no symbol {missing[0]} after JIT of the second module")
    return engine, addresses


def _table_global(module, size: int) -> None:
    text = (f"llvm.mlir.global external @{TABLE}() {{addr_space = 0 : i32}} : "
            f"!llvm.array<{size} x ptr> {{\n"
            f"  %0 = llvm.mlir.zero : !llvm.array<{size} x ptr>\n"
            f"  llvm.return %0 : !llvm.array<{size} x ptr>\n}}")
    with module.context, ir.Location.unknown():
        helper = ir.Module.parse(text)
        glob = next(irutil.top_level_ops(helper))
        glob.move_before(next(irutil.top_level_ops(module)))


def _call_through_table(call, index: int, size: int) -> None:
    """Replace the direct `llvm.call @k(args)` by a call of table[index](args)."""
    ptr = ir.Type.parse("!llvm.ptr", call.context)
    attrs = {name: call.attributes[name] for name in call.attributes}
    with call.context, ir.InsertionPoint(call), call.location:
        base = ir.Operation.create("llvm.mlir.addressof", results=[ptr], attributes={
            "global_name": ir.FlatSymbolRefAttr.get(TABLE)}).result
        slot = ir.Operation.create("llvm.getelementptr", results=[ptr], operands=[base], attributes={
            "elem_type": ir.TypeAttr.get(ir.Type.parse(f"!llvm.array<{size} x ptr>")),
            "noWrapFlags": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0),
            "rawConstantIndices": ir.DenseI32ArrayAttr.get([0, index])}).result
        fn = ir.Operation.create("llvm.load", results=[ptr], operands=[slot], attributes={
            "ordering": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)}).result
        del attrs["callee"]
        args = list(call.operands)
        attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(args) + 1, 0])
        ir.Operation.create("llvm.call", results=[], operands=[fn] + args, attributes=attrs)
    call.erase()


def internalize_kernels(module) -> None:
    """Give the kernels left in `module` internal linkage: LLVM then inlines each into
    its one caller and drops it (an external kernel was inlined *and* compiled on its
    own: a third more LLVM time for transformer_block). A kernel shared by several
    calls (mlxc-dedup-kernels) stays out of line, so it is compiled once."""
    internal = None
    for f in irutil.functions(module):
        if (KERNEL_ATTR in f.attributes or SHARED_ATTR in f.attributes) \
                and f.name == "llvm.func":
            if internal is None:
                internal = ir.Attribute.parse("#llvm.linkage<internal>", module.context)
            f.attributes["linkage"] = internal
            if SHARED_ATTR in f.attributes:
                f.attributes["no_inline"] = ir.UnitAttr.get(module.context)


class SplitProgram:
    """The two engines of a split program, kept alive together."""

    def __init__(self, engine_a: Engine, engine_b: Engine, kernels: list[str], table):
        self.engine_a, self.engine_b = engine_a, engine_b
        self.kernels = kernels
        self.table = table

    def objects(self) -> list[bytes]:
        return [self.engine_a.object_file(), self.engine_b.object_file()]


def kernel_weights(module) -> tuple[dict[str, int], int]:
    """Ops per kernel function, and ops of the other defined functions."""
    weights, rest = {}, 0
    for f in irutil.functions(module):
        if f.name != "llvm.func" or not f.regions[0].blocks:
            continue
        n = irutil.count_ops(f)
        if KERNEL_ATTR in f.attributes:
            weights[irutil.sym_name(f)] = n
        else:
            rest += n
    return weights, rest


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def second_core_free() -> bool:
    """Whether another core is likely idle: the last minute's load average (this
    process counting for one) leaves at least half a core. On a busy machine the
    second module only adds its overhead (a sixth to a third more CPU time)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return True
    return load <= _cores() - 0.5


def build_split(module, opt_level: int, shared_libs: list[str]) -> Optional[tuple[int, SplitProgram]]:
    """Compile `module` as two modules on two threads: the address of the packed
    `mlxc_entry` and the engines; None when the module is not worth splitting (the
    module is then unchanged). The module itself becomes module A."""
    if sum(KERNEL_ATTR in f.attributes for f in irutil.functions(module)) < 2:
        return None  # not outlined (small, or no core was free): no walk over its ops
    try:
        _library()
    except (OSError, AttributeError):
        return None  # bindings without the C API's engine: the binding's path, one thread
    weights, rest = kernel_weights(module)
    if len(weights) < 2 or sum(weights.values()) + rest < MIN_SPLIT_OPS or not second_core_free():
        return None
    names = partition(weights, rest)
    total = sum(weights.values()) + rest
    if sum(weights[n] for n in names) < MIN_SHARE_B * total:
        return None  # one kernel outweighs the rest: B would save less than it costs
    _ensure_llvm_ready(module.context, opt_level, shared_libs)
    data = io.BytesIO()
    module.operation.write_bytecode(data)
    # Module A is made before B's job starts: the worker holds the GIL while it parses
    # B, and this thread's rewriting would wait for it; A's engine does not.
    index = {n: i for i, n in enumerate(names)}
    # From every function that stays in A (the entry, and the layer functions of
    # mlxc-outline-layers, whose loop nests are kernels too); not through the kernels.
    calls = [c for f in irutil.functions(module) if irutil.sym_name(f) not in index
             for c in irutil.ops_named(f, "llvm.call")
             if "callee" in c.attributes
             and ir.FlatSymbolRefAttr(c.attributes["callee"]).value in index]
    _table_global(module, len(names))
    for call in calls:
        _call_through_table(call, index[ir.FlatSymbolRefAttr(call.attributes["callee"]).value],
                            len(names))
    for f in irutil.functions(module):
        if irutil.sym_name(f) in index:
            f.erase()
    internalize_kernels(module)
    future = _submit(_build_b, data.getvalue(), names, opt_level, shared_libs)
    try:
        with compile_timing.section("codegen", "module A (B on the second thread)"):
            engine_a = Engine(module, opt_level, shared_libs)
            address = engine_a.lookup_packed("mlxc_entry")
            table = engine_a.lookup(TABLE)
    finally:
        # Wait for B even when A failed: its engine must not outlive this call unowned.
        with compile_timing.section("codegen", "waiting for module B"):
            engine_b, addresses = future.result()
    if not address:
        raise _codegen_error("no mlxc_entry symbol after JIT")
    if not table:
        raise _codegen_error(f"no {TABLE} symbol after JIT")
    ctypes.memmove(table, (ctypes.c_void_p * len(addresses))(*addresses),
                   ctypes.sizeof(ctypes.c_void_p) * len(addresses))
    return address, SplitProgram(engine_a, engine_b, names, table)
