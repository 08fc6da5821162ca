"""LLVM code generation on two threads: a program's kernels split into several modules.

MLIR's ExecutionEngine compiles one module on one thread, and its Python binding holds
the GIL while it does. The MLIR C API, which the bindings' library exports, does the
same work through ctypes, which releases the GIL; so two engines can build at once,
each from a module in its own MLIR context (contexts are not thread-safe).

`mlxc-outline-kernels` made each loop nest of a large entry a function marked
`mlxc.kernel`. Here the kernels are parted into CHUNKS groups of about equal size
(counting ops), each a module of its own. Module A keeps the entry, `mlxc_entry` and
what is not a kernel; this thread compiles it while a worker thread, from the module's
bytecode, compiles the chunks one after another, and once done with A this thread
takes chunks too, the next one not yet begun: which thread compiles what is settled
as they go, not by the sizes counted beforehand, which predict LLVM's time poorly
(one op of a transposing kernel costs six of a long unrolled one). A calls the chunks'
kernels through a table of pointers (`mlxc_kernel_table`, a global of A), filled once
all are compiled: with direct calls, A could not be linked before their addresses
were known. An artifact links every object and a C file whose constructor fills the
table (link.kernel_table_c).
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
# The least share of the ops the kernels must have for the split to pay.
MIN_KERNEL_SHARE = 0.25
# Modules the kernels are parted into: more balance the two threads better, each costs
# an engine's start-up (about 6 ms).
CHUNKS = 3


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


def chunks(weights: dict[str, int], count: int = CHUNKS) -> list[list[str]]:
    """The kernels in at most `count` groups of about equal weight (heaviest first,
    each to the lightest group so far), heaviest group first, each sorted by name."""
    groups: list = [[0, i, []] for i in range(count)]
    for name, w in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0])):
        group = min(groups, key=lambda g: (g[0], g[1]))
        group[0] += w
        group[2].append(name)
    return [sorted(g[2]) for g in sorted(groups, key=lambda g: (-g[0], g[1])) if g[2]]


class _Chunks:
    """The chunks not yet taken, shared by the two threads."""

    def __init__(self, count: int):
        self._next, self._count = 0, count
        self._lock = threading.Lock()

    def take(self) -> Optional[int]:
        with self._lock:
            if self._next >= self._count:
                return None
            self._next += 1
            return self._next - 1

    def drain(self) -> None:
        with self._lock:
            self._next = self._count


def _chunk_modules(module, groups: list[list[str]]) -> list:
    """A module of each group's kernels, moved out of `module` (its declarations
    copied): exported, so module A (and the artifact's table) can reach them; never
    inlined, or LLVM would compile each twice, once more inside the packed wrapper
    the engine adds for each exported function (`_mlir_NAME`)."""
    wanted = {name for names in groups for name in names}
    ctx = module.context
    declarations, kernels = [], {}
    for f in irutil.functions(module):
        if not f.regions[0].blocks:
            declarations.append(f)
        elif irutil.sym_name(f) in wanted:
            kernels[irutil.sym_name(f)] = f
    attributes = {n: module.operation.attributes[n] for n in module.operation.attributes}
    external = ir.Attribute.parse("#llvm.linkage<external>", ctx)
    out = []
    for names in groups:
        with ctx, ir.Location.unknown():
            # Moved before a placeholder (a detached op's handle would free it).
            chunk = ir.Module.parse("llvm.func @mlxc_chunk_placeholder()")
            anchor = next(irutil.top_level_ops(chunk))
            for n, a in attributes.items():
                chunk.operation.attributes[n] = a
            for d in declarations:
                d.clone(ip=ir.InsertionPoint(anchor))
            for name in names:
                f = kernels[name]
                f.move_before(anchor)
                if "sym_visibility" in f.attributes:
                    del f.attributes["sym_visibility"]
                f.attributes["linkage"] = external  # (a property: never deleted)
                f.attributes["no_inline"] = ir.UnitAttr.get(ctx)
            anchor.erase()
        out.append(chunk)
    return out


def _compile_chunks(modules: list, groups: list[list[str]], queue: _Chunks, results: list,
                    opt_level: int, shared_libs: list[str]) -> None:
    """Compile the chunks this thread takes from `queue`: results[i] becomes chunk i's
    engine and its kernels' addresses, in `groups[i]` order."""
    while True:
        i = queue.take()
        if i is None:
            return
        engine = Engine(modules[i], opt_level, shared_libs)
        addresses = [engine.lookup(n) for n in groups[i]]
        missing = [n for n, a in zip(groups[i], addresses) if not a]
        if missing:
            raise _codegen_error(f"no symbol {missing[0]} after JIT of a kernel module")
        results[i] = (engine, addresses)


def _worker_chunks(bytecode: bytes, groups: list[list[str]], queue: _Chunks, results: list,
                   opt_level: int, shared_libs: list[str]) -> None:
    """On the worker: the chunks from the whole module's bytecode, as many as it takes."""
    try:
        ctx = _worker_context()
        with ctx:
            module = ir.Module.parse(bytecode)
        modules = _chunk_modules(module, groups)
        del module
        _compile_chunks(modules, groups, queue, results, opt_level, shared_libs)
    except BaseException as e:
        queue.drain()
        _worker_state.context = None  # a failed compile may leave the context dirty
        if isinstance(e, Exception) and not isinstance(e, CompileError):
            raise _codegen_error(f"a kernel module: {e}") from None
        raise


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
    """The engines of a split program (module A's first), kept alive together."""

    def __init__(self, engines: list, kernels: list[str], table):
        self.engines = engines
        self.kernels = kernels
        self.table = table

    def objects(self) -> list[bytes]:
        return [e.object_file() for e in self.engines]


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


def _runnable_now(samples: int = 5) -> Optional[int]:
    """Threads runnable on the machine at this moment, the caller's included (the
    fourth field of /proc/loadavg), the least of a few readings: one reading in
    fifteen on an idle machine catches a passing kernel thread; None where that is
    not known."""
    least = None
    try:
        for _ in range(samples):
            with open("/proc/loadavg") as f:
                n = int(f.read().split()[3].split("/")[0])
            least = n if least is None else min(least, n)
    except (OSError, ValueError, IndexError):
        return None
    return least


def second_core_free() -> bool:
    """Whether another core is likely idle: no more threads runnable now than cores
    besides the caller's. On a busy machine the second module only adds its overhead
    (a sixth to a third more CPU time). Read now, not averaged: the last minute's load
    average counts this process's own work before the compile (a benchmark's, a test
    suite's), and read 1.5 on two cores that were idle when the compile began, which
    then ran on one."""
    running = _runnable_now()
    if running is not None:
        return running <= _cores() - 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return True
    return load <= _cores() - 0.5


def build_split(module, opt_level: int, shared_libs: list[str]) -> Optional[tuple[int, SplitProgram]]:
    """Compile `module` as module A and chunks of kernels on two threads: the address of
    the packed `mlxc_entry` and the engines; None when the module is not worth
    splitting (the module is then unchanged). The module itself becomes module A."""
    if sum(KERNEL_ATTR in f.attributes for f in irutil.functions(module)) < 2:
        return None  # not outlined (small, or no core was free): no walk over its ops
    try:
        _library()
    except (OSError, AttributeError):
        return None  # bindings without the C API's engine: the binding's path, one thread
    weights, rest = kernel_weights(module)
    total = sum(weights.values()) + rest
    if len(weights) < 2 or total < MIN_SPLIT_OPS or not second_core_free():
        return None
    if sum(weights.values()) < MIN_KERNEL_SHARE * total:
        return None  # mostly not kernels: the second thread would save less than it costs
    groups = chunks(weights, CHUNKS)
    names = sorted(weights)
    _ensure_llvm_ready(module.context, opt_level, shared_libs)
    data = io.BytesIO()
    module.operation.write_bytecode(data)
    # From every function that stays in A (the entry, and the layer functions of
    # mlxc-outline-layers, whose loop nests are kernels too); not through the kernels.
    index = {n: i for i, n in enumerate(names)}
    calls = [c for f in irutil.functions(module) if irutil.sym_name(f) not in index
             for c in irutil.ops_named(f, "llvm.call")
             if "callee" in c.attributes
             and ir.FlatSymbolRefAttr(c.attributes["callee"]).value in index]
    modules = _chunk_modules(module, groups)
    _table_global(module, len(names))
    for call in calls:
        _call_through_table(call, index[ir.FlatSymbolRefAttr(call.attributes["callee"]).value],
                            len(names))
    internalize_kernels(module)
    # Module A is made before the worker starts: the worker holds the GIL while it
    # parses, and this thread's rewriting would wait for it; A's engine does not.
    queue, results = _Chunks(len(groups)), [None] * len(groups)
    future = _submit(_worker_chunks, data.getvalue(), groups, queue, results, opt_level,
                     shared_libs)
    try:
        with compile_timing.section("codegen", "module A, then kernel modules"):
            engine_a = Engine(module, opt_level, shared_libs)
            address = engine_a.lookup_packed("mlxc_entry")
            table = engine_a.lookup(TABLE)
            _compile_chunks(modules, groups, queue, results, opt_level, shared_libs)
    except BaseException:
        queue.drain()
        raise
    finally:
        # Wait for the worker even when this thread failed: its engines must not
        # outlive this call unowned.
        with compile_timing.section("codegen", "waiting for the second thread"):
            worker_error = future.exception()
    if worker_error is not None:
        raise worker_error
    if not address:
        raise _codegen_error("no mlxc_entry symbol after JIT")
    if not table:
        raise _codegen_error(f"no {TABLE} symbol after JIT")
    slots = (ctypes.c_void_p * len(names))()
    for group, (_, addresses) in zip(groups, results):
        for name, a in zip(group, addresses):
            slots[index[name]] = a
    ctypes.memmove(table, slots, ctypes.sizeof(ctypes.c_void_p) * len(names))
    engines = [engine_a] + [engine for engine, _ in results]
    return address, SplitProgram(engines, names, table)
