"""mlxc.torch: PyTorch modules compiled by mlxc, through torch-mlir's FX importer.

    fast = mlxc.torch.compile(model, x)          # then fast(x) as model(x)
    fast = torch.compile(model, backend="mlxc")  # the same through TorchDynamo

`torch.export` traces the module, torch-mlir imports the program as StableHLO and
mlxc compiles it. Parameters and buffers are arguments of the program, not
constants in it: the compiled module reads the module's current weights on every
call (an optimizer step between calls is seen), and buffers the forward updates
(batch norm's running statistics in training mode) are written back, as eager
PyTorch does. Tensors cross in both directions without a copy where their layout
allows (numpy views; bf16 through an int16 view).

Programs are compiled per call's shapes and non-tensor arguments (a Python int is
part of the program), like `mlxc.jit`. A graph that needs gradients (grad mode on
and an input that requires grad) runs eagerly: mlxc compiles the forward only.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional

import numpy as np


def _torch():
    try:
        import torch
    except ImportError:
        raise ImportError("mlxc.torch needs PyTorch: pip install 'mlxc[torch]' "
                          "(the CPU build)") from None
    return torch


# -- tensors <-> numpy, without copies -----------------------------------------------

def _numpy_dtype(torch_dtype):
    torch = _torch()
    if torch_dtype == torch.bfloat16:
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return None


def to_numpy(t) -> np.ndarray:
    """A CPU tensor's data as a numpy array (a view where it can be)."""
    torch = _torch()
    t = t.detach()
    if t.device.type != "cpu":
        raise ValueError(f"mlxc.torch: a tensor on {t.device}; mlxc runs on the CPU "
                         f"(move it with .cpu())")
    special = _numpy_dtype(t.dtype)
    if special is not None:  # numpy has no bfloat16: the same bits through int16
        return t.contiguous().view(torch.int16).numpy().view(special)
    return t.numpy()


def to_tensor(a: np.ndarray):
    torch = _torch()
    a = np.asarray(a)
    if a.dtype.kind == "V" or a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    if not a.flags.writeable:
        a = a.copy()  # torch.from_numpy warns on read-only arrays
    return torch.from_numpy(a)


# -- decompositions torch-mlir lacks ---------------------------------------------------

def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """aten.embedding_bag as gathers and segment sums (torch-mlir has no StableHLO
    lowering for it): each index's bag from the offsets, its row weighted and masked,
    summed per bag (index_add, a scatter); mean divides by the bag's size, max takes
    the largest of each bag's rows (empty bags are zero, as eager's)."""
    torch = _torch()
    n = indices.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    starts = offsets[:bags]
    bag = (torch.arange(n)[:, None] >= starts[None, :]).sum(1) - 1
    rows = weight[indices]
    keep = torch.ones(n, dtype=weight.dtype)
    if padding_idx is not None and padding_idx >= 0:
        keep = (indices != padding_idx).to(weight.dtype)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    rows = rows * keep[:, None]
    zeros = torch.zeros(bags, weight.shape[1], dtype=weight.dtype)
    counts = torch.zeros(bags, dtype=weight.dtype).index_add(0, bag, keep)
    if mode == 2:  # max
        # [bags, n, dim]: each bag's rows, the others -inf (torch-mlir cannot lower a
        # scatter_reduce from a constant)
        member = (bag[None, :] == torch.arange(bags)[:, None]) & (keep[None, :] > 0)
        filled = torch.where(member[:, :, None], rows[None], float("-inf"))
        out = torch.where(counts[:, None] > 0, filled.amax(1), zeros)
    else:
        out = zeros.index_add(0, bag, rows)
        if mode == 1:
            out = out / counts.clamp(min=1)[:, None]
    return (out, bag, counts.to(torch.int64),
            torch.zeros(bags, weight.shape[1], dtype=torch.int64))


def _decompositions() -> dict:
    torch = _torch()
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    table = dict(get_decomposition_table())
    table[torch.ops.aten.embedding_bag.padding_idx] = _embedding_bag
    table[torch.ops.aten.embedding_bag.default] = _embedding_bag
    table[torch.ops.aten._embedding_bag.default] = _embedding_bag
    return table


# -- export ---------------------------------------------------------------------------

class _Program:
    """One compiled specialization: which leaves feed the executable, and what to do
    with its results (mutated inputs written back, the rest rebuilt as the module's
    own output structure)."""

    def __init__(self, exe, out_spec, mutated: list[int]):
        self.exe = exe
        self.out_spec = out_spec
        self.mutated = mutated  # input positions (state first, then tensors) written back

    def __call__(self, inputs: list):
        from torch.utils import _pytree

        outs = self.exe(*[to_numpy(t) for t in inputs])
        if not isinstance(outs, tuple):
            outs = (outs,)
        k = len(self.mutated)
        for position, value in zip(self.mutated, outs[:k]):
            inputs[position].data.copy_(to_tensor(value))
        return _pytree.tree_unflatten([to_tensor(o) for o in outs[k:]], self.out_spec)


def _export(module, state: dict, args: tuple, kwargs: dict, dynamic_shapes, options) -> _Program:
    torch = _torch()
    from torch.utils import _pytree
    from torch_mlir import fx

    from . import compile as mlxc_compile

    leaves, spec = _pytree.tree_flatten((args, kwargs))
    is_tensor = [isinstance(l, torch.Tensor) for l in leaves]

    class Functional(torch.nn.Module):
        # The module is not a submodule here: its weights reach the program only as
        # the `state` argument, never as constants the importer would freeze. Non-tensor
        # arguments are constants of this program (the caller keys programs by them).
        def __init__(self):
            super().__init__()
            object.__setattr__(self, "_module", module)

        def forward(self, state, tensors):
            it = iter(tensors)
            full = [next(it) if t else l for l, t in zip(leaves, is_tensor)]
            a, k = _pytree.tree_unflatten(full, spec)
            return torch.func.functional_call(self._module, state, tuple(a), k)

    tensors = [l for l, t in zip(leaves, is_tensor) if t]
    shapes = None
    if dynamic_shapes is not None:
        if len(tensors) != len(args) or kwargs or len(dynamic_shapes) != len(args):
            raise ValueError("mlxc.torch: dynamic_shapes takes one entry per positional "
                             "argument, each a tensor (e.g. ({0: torch.export.Dim('b')},))")
        shapes = ({k: None for k in state}, list(dynamic_shapes))
    with warnings.catch_warnings():
        # torch.export's own deprecation notices (LeafSpec), not the user's business
        warnings.simplefilter("ignore", FutureWarning)
        prog = torch.export.export(Functional(), (state, tensors), dynamic_shapes=shapes)
        prog = prog.run_decompositions(_decompositions())
    sig = prog.graph_signature
    names = [s.arg.name for s in sig.input_specs if s.kind.name == "USER_INPUT"]
    outputs = {s.kind.name for s in sig.output_specs}
    if outputs - {"USER_OUTPUT", "USER_INPUT_MUTATION"}:
        raise NotImplementedError(f"mlxc.torch: the exported program has outputs of kinds "
                                  f"{sorted(outputs)}; only results and updated inputs are "
                                  f"supported")
    mutated = [names.index(s.target) for s in sig.output_specs
               if s.kind.name == "USER_INPUT_MUTATION"]
    mod = fx.export_and_import(prog, output_type="stablehlo", decomposition_table={})
    exe = mlxc_compile(mod, name=f"<mlxc.torch {type(module).__name__}>", **options)
    # The module's own result structure: what functional_call returned, traced.
    return _Program(exe, prog.call_spec.out_spec, mutated)


def _state(module) -> dict:
    return {**dict(module.named_parameters(remove_duplicate=False)),
            **dict(module.named_buffers(remove_duplicate=False))}


def _key_of(leaf, dynamic: bool) -> Any:
    torch = _torch()
    if isinstance(leaf, torch.Tensor):
        # A dynamic program serves every size (mlxc specializes it per call's shapes).
        return ("t", leaf.dim() if dynamic else tuple(leaf.shape), leaf.dtype)
    try:
        hash(leaf)
    except TypeError:
        raise TypeError(f"mlxc.torch: an argument of type {type(leaf).__name__} is neither a "
                        f"tensor nor hashable (non-tensor arguments are part of the program)") \
            from None
    return ("v", type(leaf), leaf)


class Compiled:
    """`mlxc.torch.compile(module, ...)`: call it as you would call the module."""

    def __init__(self, module, dynamic_shapes=None, **options):
        torch = _torch()
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"mlxc.torch.compile: expected a torch.nn.Module, got "
                            f"{type(module).__name__}")
        self.module = module
        self._dynamic_shapes = dynamic_shapes
        self._options = options
        self._programs: dict = {}

    def _program(self, state, args, kwargs):
        from torch.utils import _pytree

        leaves, spec = _pytree.tree_flatten((args, kwargs))
        dynamic = self._dynamic_shapes is not None
        # train() / eval() change the program (dropout, batch norm), as do the weights'
        # shapes and the arguments'.
        key = (spec, tuple(m.training for m in self.module.modules()),
               tuple((k, tuple(v.shape), v.dtype) for k, v in state.items()),
               tuple(_key_of(l, dynamic) for l in leaves))
        program = self._programs.get(key)
        if program is None:
            program = _export(self.module, state, args, kwargs, self._dynamic_shapes,
                              self._options)
            self._programs[key] = program
        return program, leaves

    def __call__(self, *args, **kwargs):
        torch = _torch()
        state = _state(self.module)
        program, leaves = self._program(state, args, kwargs)
        inputs = list(state.values()) + [l for l in leaves if isinstance(l, torch.Tensor)]
        # Results carry no autograd history (mlxc compiles the forward only).
        with torch.no_grad():
            return program(inputs)

    @property
    def num_programs(self) -> int:
        return len(self._programs)


def compile(module, *example_args, dynamic_shapes=None, **options) -> Compiled:
    """`module` compiled by mlxc; called like the module, it returns what the module
    returns (tensors in the same structure). `example_args`, if given, compile the
    program for them now rather than at the first call. `dynamic_shapes` is
    torch.export's for the positional tensor arguments (e.g.
    `({0: torch.export.Dim("batch")},)`): one program serves every size of those
    dimensions, specialised per size by mlxc. `options` go to `mlxc.compile`."""
    compiled = Compiled(module, dynamic_shapes, **options)
    if example_args:
        compiled._program(_state(module), tuple(example_args), {})
    return compiled


# -- torch.compile(model, backend="mlxc") ---------------------------------------------

_warned_grad = False


def backend(gm, example_inputs, **options) -> Callable:
    """TorchDynamo backend: `torch.compile(model, backend="mlxc")` (registered as an
    entry point) or `backend=mlxc.torch.backend`. Each graph Dynamo hands over is
    compiled per call's shapes; graphs run for gradients stay eager."""
    compiled = Compiled(gm, **options)

    def run(*args):
        global _warned_grad
        torch = _torch()
        if torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad
                                           for a in args):
            if not _warned_grad:
                warnings.warn("mlxc.torch: graphs that need gradients run eagerly (mlxc "
                              "compiles inference; use torch.no_grad() or .eval())",
                              stacklevel=2)
                _warned_grad = True
            return gm(*args)
        return compiled(*args)

    return run
