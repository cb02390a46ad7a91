"""torchjax.utils.checkpoint: activation checkpointing (PyTorch's torch.utils.checkpoint).

checkpoint(function, *args) runs `function` once under no_grad while watching which tensors
requiring grad its ops read (see _capture). Nothing it computes is kept: the region becomes
ONE tape node whose edges go to those tensors. The node's backward re-runs `function` with
each of those tensors' values swapped for a JAX tracer, which makes it a pure function of
arrays, and takes its jax.vjp; so the region's activations exist only while its own backward
runs. That vjp is compiled once per jaxpr structure (see "the compiled backward" below).

DESIGN.md says jax.vjp of jax.checkpoint of that function. jax.checkpoint is left out: the
forward here already keeps nothing, and inside the backward the recomputed residuals are
needed at once, so jax.checkpoint only made JAX evaluate the function one more time (an
eager vjp of a 4-layer, width-1024 block took 0.117 s with it, 0.089 s without).

Both use_reentrant=True and False take this path; they differ only in what PyTorch lets them
accept (keyword arguments, context_fn) and in the grad_fn name of the outputs.
"""

from __future__ import annotations

import contextlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

from .. import _autocast, _random
from .._autograd.grad_mode import STATE, enable_grad, no_grad
from .._autograd.node import Node, accumulator_of
from .._tensor import Tensor
from .._x64 import scoped
from ._capture import Reads, Restorer, watching

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "noop_context_fn",
           "set_checkpoint_debug_enabled", "set_checkpoint_early_stop",
           "create_selective_checkpoint_contexts"]


class CheckpointError(RuntimeError):
    """The recomputation did not match the forward (PyTorch's class of the same name)."""


def noop_context_fn():
    """The default `context_fn` of `checkpoint`: two contexts that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


_debug_enabled = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Override every checkpoint's `debug` flag inside the block (None: no override)."""
    global _debug_enabled
    prev, _debug_enabled = _debug_enabled, enabled
    try:
        yield
    finally:
        _debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Accepted for compatibility: the recomputation here is one jax.vjp over the whole
    function, so there is no saved-tensor stream to stop early."""
    yield


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """Raises NotImplementedError: selective (per-op) activation checkpointing is not supported; checkpoint smaller functions instead."""
    raise NotImplementedError(
        "torchjax.utils.checkpoint: selective activation checkpointing (per-op save/recompute "
        "policies) is not supported; checkpoint smaller functions instead")


_REENTRANT_WARNING = (
    "the use_reentrant parameter should be passed explicitly. {when} use_reentrant=False is "
    "recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two "
    "variants.")


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """Run function(*args, **kwargs) without keeping its activations; they are recomputed
    when the backward reaches the region."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: " + _REENTRANT_WARNING.format(
            when="Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise "
                 "an exception."), stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            # PyTorch's reentrant checkpoint is an autograd.Function of the arguments only:
            # without one requiring grad its outputs do not require grad either
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
            with no_grad():
                return function(*args)
        forward_ctx, recompute_ctx = contextlib.nullcontext(), contextlib.nullcontext()
    else:
        if (_debug_enabled if _debug_enabled is not None else debug) and \
                context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        if determinism_check not in ("default", "none"):
            raise ValueError(f"determinism_check should be one of ['default', 'none'], but "
                             f"got {determinism_check}")
        forward_ctx, recompute_ctx = context_fn()
    if not STATE.grad_enabled or _traced(args, kwargs):
        # without grad nothing is kept anyway; inside a JAX transform (an enclosing
        # checkpoint's recomputation, torchjax.func) JAX differentiates the plain call
        with forward_ctx:
            return function(*args, **kwargs)
    return _Region(function, args, kwargs, preserve, recompute_ctx,
                   determinism_check == "default").run(
        forward_ctx, "CheckpointFunctionBackward" if use_reentrant else "CheckpointBackward")


def _traced(args, kwargs) -> bool:
    return any(isinstance(a, Tensor) and isinstance(a._data, Tracer)
               for a in (*args, *kwargs.values()))


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run `functions` (an nn.Sequential or a list of callables) in order, checkpointing
    each of the first `segments - 1` equal chunks; the last chunk runs normally."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: " +
                      _REENTRANT_WARNING.format(
                          when="In version 2.9 we will raise an exception if use_reentrant is "
                               "not passed."), stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(chunk):
        def forward(x):
            for f in chunk:
                x = f(x)
            return x
        return forward

    size = len(functions) // segments
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(functions[start:end]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(functions[end:])(input)


# -- the region ----------------------------------------------------------------------------------

def _is_leaf(x) -> bool:
    return isinstance(x, Tensor)


def _edge(t: Tensor):
    if not t._requires_grad:
        return None
    fn = t._grad_fn
    return (fn, t._output_nr) if fn is not None else (accumulator_of(t), 0)


def _rng_state():
    g = _random.default_generator
    return g._seed, g._offset


class _Region:
    """One checkpointed call: what its recomputation needs, and how to run it."""

    __slots__ = ("function", "args", "kwargs", "rng", "context", "check", "reads", "treedef",
                 "avals", "positions", "autocast")

    def __init__(self, function, args, kwargs, preserve, context, check):
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng = _rng_state() if preserve else None
        self.autocast = _autocast.snapshot()  # the recomputation casts as the forward did
        self.context = context
        self.check = check

    # the region is traced and recomputed in torchjax's x64 scope (as torchjax.func's functions)
    @scoped
    def run(self, forward_ctx, node_name):
        """The forward: function under no_grad, watched; its outputs get one node."""
        reads = self.reads = Reads()
        # the arguments as they are now (a change before the backward is an error, as when
        # PyTorch saves them); those requiring grad are checked through `reads`
        watched = [a for a in (*self.args, *self.kwargs.values())
                   if isinstance(a, Tensor) and not a._requires_grad]
        versions = [(a._counter(), a._version, a._data.aval) for a in watched]
        with forward_ctx, watching(reads), no_grad():
            out = self.function(*self.args, **self.kwargs)
        leaves, self.treedef = jax.tree_util.tree_flatten(out, is_leaf=_is_leaf)
        given = {id(a) for a in (*self.args, *self.kwargs.values()) if isinstance(a, Tensor)}
        # outputs that are tensors from outside (an argument, or anything requiring grad:
        # under no_grad nothing made inside does) are returned as they are; the others that
        # can carry a gradient become the node's outputs
        self.positions = tuple(
            k for k, o in enumerate(leaves)
            if isinstance(o, Tensor) and not o._requires_grad and id(o) not in given
            and jnp.issubdtype(o._data.dtype, jnp.inexact))
        if not reads.tensors or not self.positions:
            return out
        self.avals = tuple(leaves[k]._data.aval for k in self.positions)
        node = _node_type(node_name)(
            None, self, tuple(_edge(t) for t in reads.tensors),
            tuple(reads.versions) + tuple(versions), len(self.positions))
        for nr, k in enumerate(self.positions):
            t = leaves[k] = Tensor._wrap(leaves[k]._data)
            t._requires_grad = True
            t._grad_fn = node
            t._output_nr = nr
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    def recompute(self, *arrays):
        """The node's outputs as a pure function of the read tensors' values (traceable)."""
        reads = self.reads
        restorer = Restorer()
        for t in reads.tensors:
            restorer.keep(t)
        g = _random.default_generator
        outside = (g._seed, g._offset, g._key)
        flags = [t._requires_grad for t in reads.tensors]
        try:
            if self.rng is not None:
                g._seed, g._offset = self.rng
                g._key = None if g._seed != outside[0] else outside[2]
            for t, a in zip(reads.tensors, arrays):
                t._data = a
                # JAX differentiates the recomputation: nothing is recorded on the tape, and
                # grad mode stays on so that no_grad inside the function stops JAX's gradient
                t._requires_grad = False
            with self.context, watching(restorer), enable_grad(), \
                    _autocast.restored(self.autocast):
                try:
                    out = self.function(*self.args, **self.kwargs)
                except jax.errors.JAXTypeError as e:
                    raise _HostRead(
                        "torch.utils.checkpoint: the checkpointed function could not be "
                        "recomputed for backward: torchjax recomputes it under jax.vjp, where "
                        "tensor values are traced, and it reads values on the host (for "
                        "example .numpy() or .tolist()). Move that code out of the checkpointed "
                        f"function. ({type(e).__name__})") from e
            return self._outputs(out, restorer)
        finally:
            for t, rg in zip(reads.tensors, flags):
                t._requires_grad = rg
            restorer.restore()
            if self.rng is not None:
                g._seed, g._offset, g._key = outside
            elif g._seed == outside[0] and isinstance(g._key, Tracer):
                g._key = outside[2]  # a key first made inside a trace must not outlive it

    def _outputs(self, out, restorer):
        leaves, treedef = jax.tree_util.tree_flatten(out, is_leaf=_is_leaf)
        if treedef != self.treedef or any(not isinstance(leaves[k], Tensor)
                                          for k in self.positions):
            raise CheckpointError(
                "torch.utils.checkpoint: the recomputed function returned a different "
                f"structure than during the forward pass.\nforward: {self.treedef}\n"
                f"recomputation: {treedef}")
        arrays = tuple(leaves[k]._data for k in self.positions)
        if self.check:
            for pos, (a, b) in enumerate(zip(self.avals, arrays)):
                if a.shape != b.aval.shape or a.dtype != b.aval.dtype:
                    raise CheckpointError(
                        "torch.utils.checkpoint: Recomputed values for the following tensors "
                        "have different metadata than during the forward pass.\n"
                        f"output at position {pos}:\n"
                        f"saved metadata: {_metadata(a)}\nrecomputed metadata: "
                        f"{_metadata(b.aval)}\n")
            if restorer.strays:
                t = restorer.strays[0]
                raise CheckpointError(
                    "torch.utils.checkpoint: the recomputation read a tensor that requires "
                    f"grad (shape {list(t.shape)}) that the forward pass did not read; the "
                    "checkpointed function must do the same computation both times.")
        return arrays


class _HostRead(RuntimeError):
    """The function read a traced value on the host (.numpy(), .item() inside jax.jit)."""


def _metadata(aval) -> dict:
    from .. import _device, _dtypes
    from .._tensor import Size
    return {"shape": Size(aval.shape), "dtype": _dtypes.from_jax(aval.dtype),
            "device": _device.device("cpu")}


# -- the node --------------------------------------------------------------------------------------

def _conj(xs):
    # PyTorch's complex gradients are the conjugates of the cotangents jax.vjp works with
    return tuple(jnp.conj(x) if x is not None and jnp.iscomplexobj(x) else x for x in xs)


def _vjp(fn, arrays, cts):
    outs, pullback = jax.vjp(fn, *arrays)
    cts = _conj(cts)
    return list(_conj(pullback(tuple(c if c is not None else jnp.zeros_like(o)
                                     for c, o in zip(cts, outs)))))


class _PureFunctionNode(Node):
    """A node whose outputs are fn(*arrays) for a pure function of arrays that re-runs user
    Python, so it is never cached as a function; its backward is jax.vjp of fn. _saved is
    the _Region (a checkpoint) or (fn, arrays) (its recorded backward, create_graph=True).
    Not fused into the engine's compiled replays (_spec is None)."""

    __slots__ = ()

    def apply(self, cts, retain_graph: bool):
        self.check_saved()
        fn, arrays = self._fn_and_arrays()
        grads = _compiled_vjp(fn, arrays, cts) if isinstance(self._saved, _Region) \
            else _vjp(fn, arrays, cts)
        if not retain_graph:
            self.release()
        return grads

    def _fn_and_arrays(self):
        saved = self._saved
        if isinstance(saved, _Region):
            return saved.recompute, saved.reads.arrays
        return saved

    def apply_graph(self, cts):
        """create_graph=True: the backward is itself recorded, as a node of the same kind
        over the same arrays and the given gradients (so it differentiates again)."""
        self.check_saved()
        fn, arrays = self._fn_and_arrays()
        n = len(arrays)
        given = tuple(k for k, c in enumerate(cts) if c is not None)
        n_out = self._n_out

        def backward(*leaves):
            full = [None] * n_out
            for k, c in zip(given, leaves[n:]):
                full[k] = c
            return tuple(_vjp(fn, leaves[:n], full))

        leaves = tuple(arrays) + tuple(cts[k]._data for k in given)
        edges = tuple(self._edges) + tuple(_edge(cts[k]) for k in given)
        grads = backward(*leaves)
        node = None
        if STATE.grad_enabled and any(e is not None for e in edges):
            node = _node_type(type(self).__name__ + "Backward")(
                None, (backward, leaves), edges, (), len(grads))
        out = []
        for nr, g in enumerate(grads):
            t = Tensor._wrap(g)
            if node is not None:
                t._requires_grad = True
                t._grad_fn = node
                t._output_nr = nr
            out.append(t)
        return out


# -- the compiled backward ---------------------------------------------------------------------
#
# Run eagerly, jax.vjp costs milliseconds of Python per op (JAX linearizes and transposes each
# op's jitted call one by one). So the recomputation is first traced to a jaxpr (a fraction of
# a millisecond per op: every torchjax op is a cached jitted call, which appears in the jaxpr
# as one equation referring to the same inner jaxpr object each time), and the region's vjp
# is compiled once per jaxpr structure: the blocks of a model, and each training step, reuse
# it. Constants (random keys, buffers) and the scalars baked into the jaxpr as literals (the
# random offset differs every call) become arguments, so they are not part of the structure.

_COMPILED: dict = {}
_COMPILED_MAX = 512  # structures kept; a program with ever-new structures stays bounded


def _compiled_vjp(fn, arrays, cts):
    try:
        closed = jax.make_jaxpr(fn)(*arrays)
    except CheckpointError:
        raise
    except Exception:
        # code that needs values (.item(), a boolean mask) cannot be traced abstractly;
        # under the eager jax.vjp the values are there: run op by op
        return _vjp(fn, arrays, cts)
    lifted = _lift_literals(closed)
    if lifted is None:
        return _vjp(fn, arrays, cts)
    key, jaxpr, consts = lifted
    run = _COMPILED.get(key)
    if run is None:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        run = _COMPILED[key] = jax.jit(_jaxpr_vjp(jaxpr))
    return list(run(consts, tuple(arrays), tuple(cts)))


def _jaxpr_vjp(jaxpr):
    def run(consts, arrays, cts):
        return tuple(_vjp(lambda *xs: tuple(jax.core.eval_jaxpr(jaxpr, consts, *xs)),
                          arrays, cts))
    return run


def _lift_literals(closed):
    """(structure key, the jaxpr with its literal operands turned into constants, the
    constants' values), or None when the jaxpr has effects or unhashable parameters."""
    from jax.extend.core import Jaxpr, Literal, Var

    jaxpr = closed.jaxpr
    if jaxpr.effects:
        return None
    index = {v: k for k, v in enumerate((*jaxpr.constvars, *jaxpr.invars))}
    new_vars, values, avals = [], [], []

    def atom(a):
        if isinstance(a, Literal):
            v = Var(a.aval)
            new_vars.append(v)
            values.append(np.asarray(a.val, a.aval.dtype))
            avals.append(a.aval)
            index[v] = ("literal", len(new_vars))
            return v
        return a

    def ref(a):
        k = index.get(a)
        if k is None:  # an equation's result, or a dropped one
            k = index[a] = len(index)
        return k

    eqns, parts = [], []
    for e in jaxpr.eqns:
        invars = [atom(a) for a in e.invars]
        eqns.append(e.replace(invars=invars))
        parts.append((e.primitive, tuple(sorted(e.params.items())),
                      tuple(ref(a) for a in invars), tuple(ref(a) for a in e.outvars)))
    outvars = [atom(a) for a in jaxpr.outvars]
    key = (len(jaxpr.constvars), tuple(v.aval for v in (*jaxpr.constvars, *jaxpr.invars)),
           tuple(avals),
           tuple(parts), tuple(ref(a) for a in outvars))
    try:
        hash(key)
    except TypeError:
        return None
    lifted = Jaxpr((*jaxpr.constvars, *new_vars), jaxpr.invars, outvars, eqns, jaxpr.effects,
                   jaxpr.debug_info)
    return key, lifted, (*closed.consts, *values)


class _PythonNodeRepr:
    __slots__ = ()

    def __repr__(self) -> str:
        # PyTorch's CheckpointFunctionBackward is a Python autograd.Function node
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"


_NODE_TYPES: dict = {}


def _node_type(name: str) -> type:
    cls = _NODE_TYPES.get(name)
    if cls is None:
        bases = (_PythonNodeRepr, _PureFunctionNode) if name.startswith(
            "CheckpointFunction") else (_PureFunctionNode,)
        cls = _NODE_TYPES[name] = type(name, bases, {"__slots__": ()})
    return cls

