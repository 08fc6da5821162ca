"""The CUDA runtime: driver loading, devices, buffers, streams, module loads and launches.

Part of the runtime: imports nothing of the compiler, only numpy and NVIDIA's
`cuda-bindings` (the `mlxc[cuda]` extra). The driver JIT-compiles PTX when a module
loads, so one PTX serves every GPU at least as new as the chip it was compiled for.

Without the bindings, without a driver or without a GPU, every entry point that
needs one raises `CudaUnavailable`, whose message starts "no CUDA driver found".
`devices()` never raises: it lists the CPU and whatever GPUs the driver reports.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .executable import check_count, coerce
from .signature import Signature


class CudaError(RuntimeError):
    """A CUDA driver call failed."""


class CudaUnavailable(CudaError):
    """No usable CUDA driver or GPU on this machine."""


_lock = threading.Lock()
_driver = None
_driver_error: Optional[str] = None


def _import_bindings():
    try:
        from cuda.bindings import driver  # cuda-bindings >= 12.6
        return driver
    except ImportError:
        pass
    try:
        from cuda import cuda as driver  # older cuda-python
        return driver
    except ImportError:
        raise CudaUnavailable("no CUDA driver found: the CUDA bindings are not installed "
                              "(pip install 'mlxc[cuda]')") from None


def driver():
    """The initialised driver API module; raises CudaUnavailable."""
    global _driver, _driver_error
    with _lock:
        if _driver is not None:
            return _driver
        if _driver_error is not None:
            raise CudaUnavailable(_driver_error)
        try:
            drv = _import_bindings()
            # cuInit raises when libcuda.so cannot be loaded, returns an error without a GPU.
            err, = drv.cuInit(0)
            if int(err) != 0:
                raise CudaUnavailable(f"no CUDA driver found: cuInit failed ({_name(drv, err)})")
            err, count = drv.cuDeviceGetCount()
            if int(err) != 0 or count == 0:
                raise CudaUnavailable("no CUDA driver found: the driver reports no GPU")
        except CudaUnavailable as e:
            _driver_error = str(e)
            raise
        except Exception as e:  # the bindings raise their own types when libcuda is absent
            _driver_error = f"no CUDA driver found ({type(e).__name__}: {e})"
            raise CudaUnavailable(_driver_error) from None
        _driver = drv
        return drv


def is_available() -> bool:
    try:
        driver()
        return True
    except CudaUnavailable:
        return False


def _name(drv, err) -> str:
    try:
        _, name = drv.cuGetErrorName(err)
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        return str(err)


def check(result, what: str):
    """Unpack a driver call's (error, values...) tuple; raise CudaError on failure."""
    err, *values = result
    if int(err) != 0:
        raise CudaError(f"CUDA {what} failed: {_name(driver(), err)}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


# FP32 lanes per multiprocessor, by compute capability major version (for peak FLOP/s).
_FP32_LANES = {7: 64, 8: 64, 9: 128, 10: 128, 12: 128}


@dataclass(frozen=True)
class Device:
    """A device programs can run on: the CPU, or a CUDA GPU."""

    kind: str  # "cpu" or "cuda"
    index: int
    name: str
    compute_capability: tuple[int, int] = (0, 0)
    memory_bytes: int = 0
    multiprocessors: int = 0
    clock_khz: int = 0
    memory_clock_khz: int = 0
    memory_bus_bits: int = 0

    @property
    def chip(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    @property
    def peak_bandwidth(self) -> float:
        """Bytes per second: double data rate x bus width (0 when unknown)."""
        return 2.0 * self.memory_clock_khz * 1e3 * self.memory_bus_bits / 8

    @property
    def peak_fp32_flops(self) -> float:
        """FP32 FLOP/s without tensor cores: lanes x 2 (fused multiply-add) x clock."""
        lanes = _FP32_LANES.get(self.compute_capability[0], 64)
        return self.multiprocessors * lanes * 2.0 * self.clock_khz * 1e3

    def __str__(self) -> str:
        if self.kind == "cpu":
            return "cpu:0"
        return (f"cuda:{self.index} {self.name} ({self.chip}, {self.memory_bytes / 2**30:.0f} GiB, "
                f"{self.multiprocessors} SMs)")


def cuda_devices() -> list[Device]:
    """The GPUs the driver reports; raises CudaUnavailable."""
    drv = driver()
    attr = drv.CUdevice_attribute
    out = []
    for i in range(check(drv.cuDeviceGetCount(), "cuDeviceGetCount")):
        dev = check(drv.cuDeviceGet(i), "cuDeviceGet")
        name = check(drv.cuDeviceGetName(256, dev), "cuDeviceGetName")
        name = name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name)

        def get(a):
            return int(check(drv.cuDeviceGetAttribute(a, dev), "cuDeviceGetAttribute"))

        out.append(Device(
            "cuda", i, name,
            (get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
             get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)),
            int(check(drv.cuDeviceTotalMem(dev), "cuDeviceTotalMem")),
            get(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            get(attr.CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
            get(attr.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
            get(attr.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)))
    return out


def devices() -> list[Device]:
    """Every device mlxc can run on: the CPU first, then each CUDA GPU (if any)."""
    out = [Device("cpu", 0, "host CPU")]
    try:
        out += cuda_devices()
    except CudaUnavailable:
        pass
    return out


_contexts: dict[int, Any] = {}


def context(index: int = 0):
    """The primary context of GPU `index`, made current on the calling thread."""
    drv = driver()
    with _lock:
        if index not in _contexts:
            dev = check(drv.cuDeviceGet(index), "cuDeviceGet")
            _contexts[index] = check(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    check(drv.cuCtxSetCurrent(_contexts[index]), "cuCtxSetCurrent")
    return _contexts[index]


class Buffer:
    """`nbytes` of device memory (a null pointer when empty), freed with `free()`."""

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)
        self.ptr = int(check(driver().cuMemAlloc(self.nbytes), "cuMemAlloc")) if self.nbytes else 0

    def upload(self, array: np.ndarray, stream=None) -> None:
        if self.nbytes:
            check(driver().cuMemcpyHtoDAsync(self.ptr, array.ctypes.data, self.nbytes, stream or 0),
                  "cuMemcpyHtoDAsync")

    def download(self, array: np.ndarray, stream=None) -> None:
        if self.nbytes:
            check(driver().cuMemcpyDtoHAsync(array.ctypes.data, self.ptr, self.nbytes, stream or 0),
                  "cuMemcpyDtoHAsync")

    def free(self) -> None:
        if self.ptr:
            check(driver().cuMemFree(self.ptr), "cuMemFree")
            self.ptr = 0


class Stream:
    def __init__(self):
        self.handle = check(driver().cuStreamCreate(0), "cuStreamCreate")

    def synchronize(self) -> None:
        check(driver().cuStreamSynchronize(self.handle), "cuStreamSynchronize")

    def destroy(self) -> None:
        check(driver().cuStreamDestroy(self.handle), "cuStreamDestroy")


class _Graph:
    """The launches that `enqueue()` queues on `stream`, captured once as a CUDA graph."""

    def __init__(self, enqueue, stream: Stream):
        drv = driver()
        check(drv.cuStreamBeginCapture(stream.handle,
                                       drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED),
              "cuStreamBeginCapture")
        try:
            enqueue()
        finally:
            self.graph = check(drv.cuStreamEndCapture(stream.handle), "cuStreamEndCapture")
        self.exec = check(drv.cuGraphInstantiate(self.graph, 0), "cuGraphInstantiate")

    def launch(self, stream: Stream) -> None:
        check(driver().cuGraphLaunch(self.exec, stream.handle), "cuGraphLaunch")

    def destroy(self) -> None:
        check(driver().cuGraphExecDestroy(self.exec), "cuGraphExecDestroy")
        check(driver().cuGraphDestroy(self.graph), "cuGraphDestroy")


class Module:
    """PTX loaded into the current context (the driver compiles it for the GPU)."""

    def __init__(self, ptx: str):
        drv = driver()
        image = np.frombuffer(ptx.encode() + b"\0", dtype=np.uint8)
        self.handle = check(drv.cuModuleLoadData(image.ctypes.data), "cuModuleLoadData")
        self._functions: dict[str, Any] = {}

    def function(self, name: str):
        if name not in self._functions:
            self._functions[name] = check(driver().cuModuleGetFunction(self.handle, name.encode()),
                                          f"cuModuleGetFunction({name})")
        return self._functions[name]


_SCALARS = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
            "index": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64}


def launch(function, grid, block, pointers_and_scalars: list, stream=None) -> None:
    """Launch `function`; each argument is a device pointer (int) or a numpy scalar."""
    cells = [np.array([a], dtype=np.uint64) if isinstance(a, int) else np.array([a])
             for a in pointers_and_scalars]
    params = np.array([c.ctypes.data for c in cells], dtype=np.uint64)
    check(driver().cuLaunchKernel(function, *grid, *block, 0, stream or 0,
                                  params.ctypes.data if cells else 0, 0), "cuLaunchKernel")


class CudaExecutable:
    """A program compiled for the cuda target: call it like `mlxc.Executable`.

    `ptx` and `plan` (mlxc.targets.cuda.plan) are all it needs; the PTX loads on the
    first call (or `load()`), on GPU `device`. Each call uses its own stream and
    buffers, so several threads may call one executable at once.
    """

    def __init__(self, signature: Signature, ptx: str, plan: dict, *, chip: str, device: int = 0):
        self.signature = signature
        self.ptx = ptx
        self.plan = plan
        self.chip = chip
        self.device = device
        self._in_dtypes = [t.dtype for t in signature.inputs]
        self._module: Optional[Module] = None
        self._constants: list[Buffer] = []
        self._load_lock = threading.Lock()

    def load(self) -> "CudaExecutable":
        """Load the PTX and upload the constants now; raises CudaUnavailable."""
        with self._load_lock:
            context(self.device)
            if self._module is None:
                module = Module(self.ptx)
                constants = []
                for array in self.plan["constants"]:
                    buf = Buffer(array.nbytes)
                    buf.upload(np.ascontiguousarray(array))
                    constants.append(buf)
                check(driver().cuCtxSynchronize(), "cuCtxSynchronize")
                self._module, self._constants = module, constants
        return self

    def _run(self, buffers: dict, stream: Stream, scratch: Optional[dict] = None) -> None:
        """Run the plan's steps on `stream` and wait for them; temporaries come from
        `scratch` when given (kept for the next run), else are allocated and freed here."""
        owned: list[Buffer] = []
        try:
            self._enqueue(buffers, stream, scratch, owned)
            stream.synchronize()
        finally:
            for buf in owned:
                buf.free()

    def _enqueue(self, buffers: dict, stream: Stream, scratch: Optional[dict],
                 owned: list, after_launch=None) -> None:
        """Queue the plan's launches on `stream` without waiting; temporaries it allocates
        go to `owned`, for the caller to free once the stream has finished.
        `after_launch(step)`, if given, is called after each launch is queued."""
        for step in self.plan["steps"]:
            if step[0] == "alloc":
                if scratch is not None:
                    if step[1] not in scratch:
                        scratch[step[1]] = Buffer(step[2])
                    buffers[step[1]] = scratch[step[1]]
                else:
                    buffers[step[1]] = Buffer(step[2])
                    owned.append(buffers[step[1]])
            elif step[0] == "free":
                pass  # freed after the stream finishes: launches are asynchronous
            else:
                _, kernel, grid, block, args = step
                values = [buffers[a[1]].ptr if a[0] == "buffer" else
                          self._constants[a[1]].ptr if a[0] == "const" else
                          _SCALARS.get(a[0], np.int64)(a[1]) for a in args]
                launch(self._module.function(kernel), grid, block, values, stream.handle)
                if after_launch is not None:
                    after_launch(step)

    def __call__(self, *args):
        sig = self.signature
        check_count(sig, args)
        return self._call([coerce(a, spec, i, dt) for i, (a, spec, dt)
                           in enumerate(zip(args, sig.inputs, self._in_dtypes))])

    def _call(self, arrays: list, poison: Optional[int] = None):
        """Run on `arrays` (already checked and dense). With `poison`, every output
        buffer is first filled with that byte, so that an element no kernel writes
        shows (0xFF: NaN in floats)."""
        self.load()
        outputs = [np.empty(t.shape, t.dtype) for t in self.signature.outputs]
        stream = Stream()
        buffers = {i: Buffer(a.nbytes) for i, a in enumerate(arrays + outputs)}
        try:
            for i, a in enumerate(arrays):
                buffers[i].upload(a, stream.handle)
            for buf in list(buffers.values())[len(arrays):]:
                if poison is not None and buf.nbytes:
                    check(driver().cuMemsetD8Async(buf.ptr, poison, buf.nbytes, stream.handle),
                          "cuMemsetD8Async")
            self._run(buffers, stream)
            for i, o in enumerate(outputs):
                buffers[len(arrays) + i].download(o, stream.handle)
            stream.synchronize()
        finally:
            for buf in buffers.values():
                buf.free()
            stream.destroy()
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def time(self, *args, repeat: int = 20, graph: bool = False) -> float:
        """Median seconds per run with inputs already on the GPU, between CUDA events
        recorded before the first launch and after the last: the kernels and the gaps
        between them, not host transfers nor allocations (temporaries are reused).

        The launches are queued from Python, so a program of many small kernels also
        pays the host's time per launch. With `graph=True` they are captured once into
        a CUDA graph and each run replays it: the kernels alone, as XLA's command
        buffers run them."""
        self.load()
        arrays = [coerce(a, spec, i, dt) for i, (a, spec, dt)
                  in enumerate(zip(args, self.signature.inputs, self._in_dtypes))]
        sizes = [a.nbytes for a in arrays] + [t.nbytes for t in self.signature.outputs]
        drv = driver()
        stream = Stream()
        buffers = {i: Buffer(n) for i, n in enumerate(sizes)}
        scratch: dict = {}  # temporaries allocated once, as a caching allocator would
        events = [check(drv.cuEventCreate(0), "cuEventCreate") for _ in range(2)]
        replay = None
        try:
            for i, a in enumerate(arrays):
                buffers[i].upload(a, stream.handle)
            self._run(dict(buffers), stream, scratch)  # warm-up: allocations, caches
            if graph:
                replay = _Graph(lambda: self._enqueue(dict(buffers), stream, scratch, []), stream)
            times = []
            for _ in range(repeat):
                check(drv.cuEventRecord(events[0], stream.handle), "cuEventRecord")
                if replay is not None:
                    replay.launch(stream)
                else:
                    self._enqueue(dict(buffers), stream, scratch, [])
                check(drv.cuEventRecord(events[1], stream.handle), "cuEventRecord")
                check(drv.cuEventSynchronize(events[1]), "cuEventSynchronize")
                times.append(check(drv.cuEventElapsedTime(events[0], events[1]),
                                   "cuEventElapsedTime") / 1e3)
        finally:
            stream.synchronize()
            if replay is not None:
                replay.destroy()
            for event in events:
                check(drv.cuEventDestroy(event), "cuEventDestroy")
            for buf in list(buffers.values()) + list(scratch.values()):
                buf.free()
            stream.destroy()
        return float(np.median(times))

    def __repr__(self) -> str:
        return f"<mlxc.CudaExecutable {self.signature} for {self.chip}>"
