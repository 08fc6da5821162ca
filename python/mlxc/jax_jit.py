"""`mlxc.jit`: `jax.jit`'s interface, with mlxc compiling what JAX traces.

JAX is imported on the first call, never by `import mlxc`: it traces and exports the
function (unused arguments kept), mlxc compiles the StableHLO through the compile
cache, and the executable runs on numpy buffers. One executable per abstract
signature: the pytree structure of the dynamic arguments, each leaf's shape, dtype
and weak type, and the static arguments' values, as `jax.jit` keys its own cache.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Iterable, Optional

import numpy as np

from .runtime.host_arrays import SCALARS as _SCALARS, to_numpy as _host_array


def _as_tuple(x, what: str) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    try:
        return tuple(x)
    except TypeError:
        raise TypeError(f"mlxc.jit: {what} must be an int/str or a sequence of them, "
                        f"not {type(x).__name__}") from None


def _leaf_key(x) -> tuple:
    """What of one argument leaf the compiled program depends on."""
    t = type(x)
    if t is np.ndarray:
        return (x.shape, x.dtype)
    if t in _SCALARS:
        return (t,)  # weakly typed, as in JAX: the value does not matter
    if hasattr(x, "unsafe_buffer_pointer"):  # a jax.Array: keyed like numpy unless weak
        if x.weak_type:
            return (x.shape, np.dtype(x.dtype), True)
        return (x.shape, np.dtype(x.dtype))
    a = np.asarray(_host_array(x))
    return (a.shape, a.dtype)


class _Compiled:
    """One executable and how to feed it: which leaves need a cast to the type JAX
    gave them (numpy float64 with x64 off, say) and the results' tree."""

    def __init__(self, exe, exported, leaves):
        from jax import tree_util

        self.exe = exe
        self._unflatten = functools.partial(tree_util.tree_unflatten, exported.out_tree)
        want = [np.dtype(a.dtype) for a in exported.in_avals]
        self.casts = tuple(
            (i, d) for i, (x, d) in enumerate(zip(leaves, want))
            if type(x) not in _SCALARS and np.dtype(_leaf_key(x)[1]) != d)
        self.n_out = exported.out_tree.num_leaves
        # What a call of flat ndarray arguments can run directly: the executable when
        # it returns what `fun` does (one array, or a tuple of arrays), else None.
        out = exported.out_tree
        bare = (out.num_nodes == 1 and self.n_out == 1) or (
            out == tree_util.tree_structure(tuple(range(self.n_out))) and self.n_out != 1)
        self.direct = exe if bare and not self.casts else None

    def __call__(self, leaves: list):
        args = [_host_array(x) for x in leaves]
        for i, d in self.casts:
            args[i] = np.asarray(args[i]).astype(d)
        out = self.exe(*args)
        if self.n_out == 1:
            out = (out,)
        return self._unflatten(out)


class Jitted:
    """`mlxc.jit(fun)`: call it as you would call `fun`."""

    def __init__(self, fun: Callable, static_argnums=(), static_argnames=(),
                 donate_argnums=(), target: str = "cpu", **compile_options):
        if not callable(fun):
            raise TypeError(f"mlxc.jit: expected a function, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._target = target
        self._options = compile_options
        self._static_argnums, self._static_argnames = self._statics(
            fun, _as_tuple(static_argnums, "static_argnums"),
            _as_tuple(static_argnames, "static_argnames"))
        # Donation lets XLA reuse an argument's buffer for a result. mlxc never writes
        # the caller's arrays, so a donated argument is simply read; the argument is
        # accepted so that code written for jax.jit runs unchanged.
        self._donate_argnums = _as_tuple(donate_argnums, "donate_argnums")
        self._cache: dict = {}
        self._flat: dict = {}  # shapes and dtypes of positional ndarrays -> executable

    @staticmethod
    def _statics(fun, nums: tuple, names: tuple) -> tuple:
        """Static positions and names, each completed from the other through `fun`'s
        signature where it has one (as jax.jit does)."""
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            return tuple(sorted(set(nums))), frozenset(names)
        positional = [p.name for p in params
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        nums = set(n if n >= 0 else n + len(positional) for n in nums)
        names = set(names)
        for n in list(nums):
            if 0 <= n < len(positional) and params[n].kind != params[n].POSITIONAL_ONLY:
                names.add(positional[n])
        for name in list(names):
            if name in positional:
                nums.add(positional.index(name))
        return tuple(sorted(nums)), frozenset(names)

    # -- the call ---------------------------------------------------------------------

    def _split(self, args: tuple, kwargs: dict):
        statics = []
        if self._static_argnums and args:
            dyn = []
            for i, a in enumerate(args):
                if i in self._static_argnums:
                    statics.append((i, _hashable(a, f"static argument {i}")))
                else:
                    dyn.append(a)
            args = tuple(dyn)
        if self._static_argnames and kwargs:
            dyn_kw = {}
            for k, v in kwargs.items():
                if k in self._static_argnames:
                    statics.append((k, _hashable(v, f"static argument '{k}'")))
                else:
                    dyn_kw[k] = v
            kwargs = dyn_kw
        return args, kwargs, tuple(statics)

    def _key(self, args: tuple, kwargs: dict):
        from jax import tree_util

        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, treedef = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        # JAX's 64-bit mode changes the program traced from the same arguments
        return (treedef, statics, tuple(map(_leaf_key, leaves)),
                _jax_config().jax_enable_x64), leaves

    def __call__(self, *args, **kwargs):
        if not kwargs and self._flat:
            # The common call, positional ndarrays only, keyed without flattening.
            key = [(a.shape, a.dtype) for a in args if type(a) is np.ndarray]
            if len(key) == len(args):
                key.append(_jax_config().jax_enable_x64)
                exe = self._flat.get(tuple(key))
                if exe is not None:
                    return exe(*args)
        compiled, leaves = self._compiled(args, kwargs)
        return compiled(leaves)

    def _compiled(self, args: tuple, kwargs: dict):
        """The compiled program for this call (compiled now if need be) and its leaves."""
        key, leaves = self._key(args, kwargs)
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._compile(key, leaves, args, kwargs)
        return compiled, leaves

    # -- tracing and compiling --------------------------------------------------------

    def _export(self, args, kwargs):
        import jax

        # keep_unused: the executable takes every leaf, used or not, so that the
        # leaves of a call map one to one onto its inputs.
        jitted = jax.jit(self._fun, static_argnums=self._static_argnums,
                         static_argnames=tuple(self._static_argnames), keep_unused=True)
        spec_args = tuple(a if i in self._static_argnums else jax.tree_util.tree_map(_spec, a)
                          for i, a in enumerate(args))
        spec_kwargs = {k: v if k in self._static_argnames else jax.tree_util.tree_map(_spec, v)
                       for k, v in kwargs.items()}
        return jax.export.export(jitted, platforms=["cpu"])(*spec_args, **spec_kwargs)

    def _compile(self, key, leaves, args, kwargs) -> _Compiled:
        from . import compile as mlxc_compile

        exported = self._export(args, kwargs)
        if exported.in_tree != key[0]:
            raise RuntimeError(f"mlxc.jit: JAX exported arguments {exported.in_tree} "
                               f"for the call's {key[0]}")
        exe = mlxc_compile(exported.mlir_module(), target=self._target,
                           name=f"<mlxc.jit {getattr(self._fun, '__name__', 'function')}>",
                           **self._options)
        if len(exe.signature.inputs) != len(leaves):
            raise RuntimeError(
                f"mlxc.jit: the exported program takes {len(exe.signature.inputs)} arguments "
                f"for {len(leaves)} argument leaves")
        compiled = _Compiled(exe, exported, leaves)
        self._cache[key] = compiled
        if (compiled.direct is not None and not kwargs and not self._static_argnums
                and all(type(a) is np.ndarray for a in args)):
            self._flat[tuple([(a.shape, a.dtype) for a in args] + [key[-1]])] = compiled.direct
        return compiled

    def lower(self, *args, **kwargs) -> str:
        """The StableHLO text that a call with these arguments compiles."""
        return self._export(args, kwargs).mlir_module()

    def executable(self, *args, **kwargs):
        """The `mlxc.Executable` a call with these arguments runs (compiled if need be):
        it takes the flattened leaves of the dynamic arguments."""
        return self._compiled(args, kwargs)[0].exe

    def clear_cache(self) -> None:
        self._cache.clear()
        self._flat.clear()

    def __repr__(self) -> str:
        return f"<mlxc.jit of {getattr(self._fun, '__qualname__', self._fun)!r}>"

    def __get__(self, obj, objtype=None):  # a jitted method binds like a function
        if obj is None:
            return self
        return functools.partial(self, obj)


@functools.lru_cache(maxsize=None)
def _jax_config():
    import jax

    return jax.config


def _spec(x):
    import jax

    t = type(x)
    if t in _SCALARS:
        return x  # traced weakly typed, as jax.jit does
    a = _host_array(x)
    return jax.ShapeDtypeStruct(np.shape(a), a.dtype, weak_type=bool(getattr(x, "weak_type", False)))


def _hashable(value, what: str):
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"mlxc.jit: {what} must be hashable (it selects the compiled "
                         f"program), got {type(value).__name__}") from None
    return value


def program_of(source):
    """What `mlxc.compile` compiles when handed JAX's objects: an `Exported`
    (jax.export) or a `Lowered` (jax.jit(f).lower(...)) as its StableHLO text. A plain
    function is refused with how to compile it; anything else passes through."""
    if isinstance(source, (str, bytes, bytearray, memoryview)) or hasattr(source, "__fspath__"):
        return source
    if hasattr(source, "mlir_module") and hasattr(source, "in_avals"):  # jax.export.Exported
        return source.mlir_module()
    if hasattr(source, "compiler_ir") and hasattr(source, "as_text"):  # jax.stages.Lowered
        return source.as_text()
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(source, torch.nn.Module):
        raise TypeError(f"mlxc.compile takes a program, not a {type(source).__name__}: use "
                        f"mlxc.torch.compile(module) for PyTorch modules")
    if callable(source) and not hasattr(source, "operation"):
        name = getattr(source, "__name__", type(source).__name__)
        raise TypeError(
            f"mlxc.compile takes a program, not the function {name!r}: use mlxc.jit({name}) "
            f"to compile and call it as jax.jit would, or compile its export, "
            f"mlxc.compile(jax.export.export(jax.jit({name}, keep_unused=True))(*args))")
    return source


def jit(fun: Optional[Callable] = None, *, static_argnums: Iterable = (),
        static_argnames: Iterable = (), donate_argnums: Iterable = (), target: str = "cpu",
        **compile_options):
    """Compile `fun`, a JAX-traceable function, with mlxc: `mlxc.jit(f)(*args)` gives
    what `jax.jit(f)(*args)` gives, as numpy arrays in `f`'s own result structure.

    Arguments are pytrees of numpy arrays, jax.Arrays, Python scalars or anything with
    `__dlpack__`; `static_argnums`/`static_argnames` are baked into the program (each
    value its own executable); `compile_options` go to `mlxc.compile`. Usable as
    `@mlxc.jit` or `@mlxc.jit(static_argnums=1)`.
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, target=target,
                                 **compile_options)
    return Jitted(fun, static_argnums, static_argnames, donate_argnums, target,
                  **compile_options)
