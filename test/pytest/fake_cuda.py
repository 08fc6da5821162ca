"""A stand-in for the CUDA driver API (cuda.bindings.driver) on host memory.

The runtime's tests use it to check buffers, uploads, launches and timing without a
GPU, and `bench/gpu_run.py --dry-run` to run the whole GPU script on any machine.
Kernels are Python callables taking the launch's pointers, by kernel name; a kernel
with none registered does nothing (its outputs keep what the buffers held).
"""

from __future__ import annotations

import ctypes
import time
from types import SimpleNamespace

import numpy as np


class FakeDriver:
    """The driver calls the runtime makes; every call succeeds, as `(0, values...)`."""

    CUstreamCaptureMode = SimpleNamespace(CU_STREAM_CAPTURE_MODE_RELAXED=2)
    CUdevice_attribute = SimpleNamespace(
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR=("cc", 0),
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR=("cc", 1),
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT=("sms", 0),
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE=("clock", 0),
        CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE=("memclock", 0),
        CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH=("bus", 0))
    _ATTRIBUTES = {("cc", 0): 9, ("cc", 1): 0, ("sms", 0): 132, ("clock", 0): 1980000,
                   ("memclock", 0): 3201000, ("bus", 0): 6144}

    def __init__(self, kernels=None):
        self.kernels = kernels or {}   # name -> (callable, plan arguments)
        self.live: dict[int, object] = {}
        self.launches: list = []
        self.loaded: list = []
        self.capturing: list | None = None

    @staticmethod
    def _ok(*values):
        return (0, *values)

    cuInit = cuCtxSetCurrent = cuCtxSynchronize = cuStreamSynchronize = cuStreamDestroy = \
        cuEventDestroy = cuEventSynchronize = cuGraphExecDestroy = cuGraphDestroy = \
        lambda self, *a: (0,)

    def cuDeviceGetCount(self):
        return self._ok(1)

    def cuDeviceGet(self, i):
        return self._ok(i)

    def cuDeviceGetName(self, n, dev):
        return self._ok(b"Fake GPU\0")

    def cuDeviceGetAttribute(self, attr, dev):
        return self._ok(self._ATTRIBUTES[attr])

    def cuDeviceTotalMem(self, dev):
        return self._ok(1 << 30)

    def cuDevicePrimaryCtxRetain(self, dev):
        return self._ok("ctx")

    def cuStreamCreate(self, flags):
        return self._ok("stream")

    def cuModuleLoadData(self, address):
        self.loaded.append(ctypes.string_at(address).decode())
        return self._ok("module")

    def cuModuleGetFunction(self, module, name):
        return self._ok(name.decode())

    def cuMemAlloc(self, nbytes):
        buf = ctypes.create_string_buffer(nbytes)
        self.live[ctypes.addressof(buf)] = buf
        return self._ok(ctypes.addressof(buf))

    def cuMemFree(self, ptr):
        del self.live[ptr]
        return (0,)

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        assert dst in self.live
        ctypes.memmove(dst, src, n)
        return (0,)

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        assert src in self.live
        ctypes.memmove(dst, src, n)
        return (0,)

    def cuMemsetD8Async(self, dst, value, n, stream):
        assert dst in self.live
        ctypes.memset(dst, value, n)
        return (0,)

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        kernel = self.kernels.get(function)
        pointers = []
        if kernel is not None:
            cells = np.frombuffer(ctypes.string_at(params, 8 * len(kernel[1])), np.uint64)
            pointers = [int(np.frombuffer(ctypes.string_at(int(c), 8), np.uint64)[0])
                        for c in cells]
        call = (function, (gx, gy, gz), (bx, by, bz), pointers)
        if self.capturing is not None:
            self.capturing.append(call)
        else:
            self._execute(call)
        return (0,)

    def _execute(self, call):
        function, grid, block, pointers = call
        self.launches.append((function, grid, block))
        if function in self.kernels:
            self.kernels[function][0](*pointers)

    def cuEventCreate(self, flags):
        return self._ok([0.0])

    def cuEventRecord(self, event, stream):
        event[0] = time.perf_counter()
        return (0,)

    def cuEventElapsedTime(self, start, end):
        return self._ok((end[0] - start[0]) * 1e3)

    def cuStreamBeginCapture(self, stream, mode):
        self.capturing = []
        return (0,)

    def cuStreamEndCapture(self, stream):
        graph, self.capturing = self.capturing, None
        return self._ok(graph)

    def cuGraphInstantiate(self, graph, flags):
        return self._ok(graph)

    def cuGraphLaunch(self, graph, stream):
        for call in graph:
            self._execute(call)
        return (0,)


def array_at(address: int, shape, dtype=np.float32):
    """The numpy view of a fake device buffer."""
    count = int(np.prod(shape))
    raw = (ctypes.c_char * (count * np.dtype(dtype).itemsize)).from_address(address)
    return np.frombuffer(raw, dtype).reshape(shape)


def install(monkeypatch=None, fake: FakeDriver | None = None) -> FakeDriver:
    """Make mlxc.runtime.cuda use `fake` (a new FakeDriver by default), through pytest's
    monkeypatch when given, so that the test undoes it."""
    from mlxc.runtime import cuda

    fake = fake if fake is not None else FakeDriver()
    for name, value in (("_driver", fake), ("_contexts", {}), ("_driver_error", None)):
        if monkeypatch is not None:
            monkeypatch.setattr(cuda, name, value)
        else:
            setattr(cuda, name, value)
    return fake
