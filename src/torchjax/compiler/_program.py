"""A traced step as one jitted XLA program: gather the state, run, write the state back.

The jaxpr's constants (hyper-parameters, generator keys and offsets, tensors found while
tracing) become leading inputs, read anew on every call; then come the arrays of the known
tensors. Arrays of state the step overwrites are donated, so a step does not hold two copies
of the parameters and optimizer state, unless something else still references the array (a
`p.detach()` the user kept, a graph saved by an eager forward): that call passes a copy
instead, so no reachable tensor is left holding a deleted array.
"""

from __future__ import annotations

import operator
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, jaxpr_as_fun
from jax.extend.core import Literal as Literal_

from .. import _programs
from .._autograd.grad_mode import STATE
from .._autograd.node import node_class
from .._functionalize import LEAF, tree_unflatten
from .._jax_node import edge_of, record
from .._tensor import Tensor
from . import _program_name
from ._trace import OUT, SPMD, Extra, GradWrite, Hyper, Literal, RngKey, RngOffset, TensorWrite

try:
    from jax._src.interpreters.partial_eval import convert_constvars_jaxpr
except ImportError:  # pragma: no cover - moved in a newer jax
    from jax.interpreters.partial_eval import convert_constvars_jaxpr

_copy = jax.jit(jnp.copy)


class Stale(Exception):
    """A state array's shape, dtype or device is not what the program was traced for."""


def _trace_once(fun, made=None, avals=None):
    """fun for jax.jit, refusing a second trace: jax.jit traces again only when an
    argument's aval or sharding changed, and the program is then stale (state that is not
    part of the cache key, like a parameter replaced by one of another shape). `made()`:
    whether the program already holds an executable it did not trace for (one loaded from
    the program cache for the first signature), which makes a first trace a second one;
    `avals`: the (shape, dtype) of each argument the jaxpr was traced for, refused otherwise
    (a program loaded, then dropped from memory by _programs.clear(), is traced first for
    whatever signature comes)."""
    traced = [False]

    def once(*args):
        if traced[0] or made is not None and made() or avals is not None and avals != [
                (a.shape, a.dtype) for a in args]:
            raise Stale()
        traced[0] = True
        return fun(*args)
    once.__name__ = fun.__name__
    return once


def _donation_order(jaxpr, tr, donated, holders):
    """The jaxpr with the new values of donated arrays first among its state outputs, in
    the order of the donated inputs, and the writes in the same order.

    XLA gives a donated input's buffer to an output of the same shape and dtype, taken in
    output order; in the order the step wrote things (a gradient, then the optimizer's
    moments, ...) a parameter's buffer would go to another tensor's new value and the
    program would copy the rest around (measured: 14 full-size copies per step on an MLP)."""
    n = tr.n_outputs
    entries = []  # (write, has_value, outvar or None)
    k = n
    for w, has_value in tr.writes:
        entries.append((w, has_value, jaxpr.outvars[k] if has_value else None))
        k += has_value
    first = []
    for j in donated:
        for e in entries:
            w = e[0]
            if e[1] and isinstance(w, TensorWrite) and w.t in holders[j] and e not in first:
                first.append(e)
                break
    ordered = first + [e for e in entries if e not in first]
    outvars = list(jaxpr.outvars[:n]) + [e[2] for e in ordered if e[1]]
    return jaxpr.replace(outvars=outvars), [(e[0], e[1]) for e in ordered]


class Program:
    """One compiled signature of a compiled function."""

    def __init__(self, traced, n_input_known: int, donate: bool, name: str):
        self.traced = tr = traced
        self.n_consts = len(tr.jaxpr.consts)
        self.slots = tr.const_slots
        self._const_cache = [None] * len(self.slots)
        self._hyper_memo: dict = {}
        self.array_of = tr.array_of
        self.n_arrays = tr.n_known
        self.draws = tr.draws
        self.pre_steps = [(s, a) for s, a, after in tr.scheduler_steps if not after]
        self.post_steps = [(s, a) for s, a, after in tr.scheduler_steps if after]
        # donate an array when every tensor holding it is state the step overwrites
        written = {w.t for w, _ in tr.writes if isinstance(w, TensorWrite)}
        holders: dict = {}
        for i, j in enumerate(tr.array_of):
            holders.setdefault(j, []).append(i)
        self.donated = tuple(j for j, idx in holders.items() if donate and all(
            i >= n_input_known and i in written for i in idx))
        self.holders = {j: len(holders[j]) for j in self.donated}
        jaxpr, self.writes = _donation_order(convert_constvars_jaxpr(tr.jaxpr.jaxpr), tr,
                                             self.donated, holders)
        fun = jaxpr_as_fun(ClosedJaxpr(jaxpr, ()))
        fun.__name__ = name
        self.fun = fun
        self._jaxpr = jaxpr  # (names the recorded forward's program, _run_recorded)
        self.shapes = tuple((v.aval.shape, v.aval.dtype) for v in tr.jaxpr.jaxpr.invars)
        self._call(jaxpr, fun, holders, name)
        self.differentiable = tr.differentiable_outputs
        # outputs that required grad in a step whose backward already ran inside it (the
        # returned loss): they show a grad_fn whose graph is spent, as PyTorch's compiled
        # forward's outputs do after their backward
        self.spent = (tuple(tr.out_requires_grad) if tr.backward_ran
                      and any(tr.out_requires_grad) else None)
        self._flat = None
        self._reach_rows = self._reach() if self.differentiable else None
        self.n_outputs = tr.n_outputs
        self.executions = 0
        self._spent_node = _spent_node(len(tr.out_requires_grad)) if self.spent else None
        self._data_writes, self._grad_writes, self._other_writes = [], [], []
        r = 0
        for w, has_value in self.writes:
            if has_value and w.__class__ is TensorWrite:
                self._data_writes.append((w.t, r))
            elif has_value and w.__class__ is GradWrite and w.tag is None:
                self._grad_writes.append((w.t, r))
            else:
                self._other_writes.append((w, r if has_value else None))
            r += has_value
        self._single = (tr.out_spec == LEAF and len(tr.out_template) == 1
                        and tr.out_template[0] is OUT)

    def _call(self, jaxpr, fun, holders, name):
        """self.jitted and what _call_args gathers for it: the inputs the program reads (and
        the donated ones), since the state walk also finds tensors a step only replaces (the
        .grad arrays zero_grad drops) and every argument of a jitted call costs its dispatch
        about a microsecond. Across processes (SPMD) every input, in the jaxpr's order, which
        the per-rank runner indexes by."""
        n = self.n_consts
        donated = set(self.donated)
        if SPMD[0] is not None:
            keep = list(range(len(jaxpr.invars)))
        else:
            read = _read_invars(jaxpr)
            keep = [k for k, v in enumerate(jaxpr.invars) if v in read or k - n in donated]
        self._call_slots = tuple(k for k in keep if k < n)
        self._call_arrays = tuple(holders[k - n][-1] for k in keep if k >= n)
        self._call_donated = tuple((pos, self.holders[keep[pos] - n])
                                   for pos in range(len(self._call_slots), len(keep))
                                   if keep[pos] - n in donated)
        donate = tuple(pos for pos, _ in self._call_donated)
        jaxpr = jaxpr.replace(invars=[jaxpr.invars[k] for k in keep])
        # named by its jaxpr, so that a warm process loads the program untraced (None: the
        # cache is off or cannot name it; then a plain jax.jit)
        self.ident = _program_name.ident("compiled step", jaxpr)
        if SPMD[0] is not None:
            self.jitted = SPMD[0].jit(_trace_once(fun, lambda: self.jitted.made()), donate,
                                      self)
            return
        fun = jaxpr_as_fun(ClosedJaxpr(jaxpr, ()))
        fun.__name__ = name
        self.jitted = _programs.program(
            _trace_once(fun, lambda: _programs.holds_any(self.jitted),
                        [(v.aval.shape, v.aval.dtype) for v in jaxpr.invars]),
            self.ident, donate_argnums=donate)

    # -- inputs ----------------------------------------------------------------------------------

    def _consts(self, which=None):
        """The values of the const slots `which` (every slot when None), read now."""
        hypers: dict = {}
        out = []
        cache = self._const_cache
        slots = self.slots
        for i in range(len(slots)) if which is None else which:
            s = slots[i]
            cls = s.__class__
            if cls is Literal:
                out.append(s.value)
            elif cls is Hyper:
                k = (id(s.opt), s.group)
                h = hypers.get(k)
                if h is None:
                    h = hypers[k] = self._hypers(s.opt, s.group)
                v = h[s.key]
                # a Python float argument costs the jitted call a conversion to a device
                # array (~5 µs each, as much as the rest of a small step's Python): keep the
                # array of the last value (the same weak-typed f64 the call would make)
                c = cache[i]
                if c is None or c[0] != v or c[0].__class__ is not v.__class__:
                    c = cache[i] = (v, jax.device_put(v))
                out.append(c[1])
            elif cls is RngKey:
                out.append(s.gen._base_key())
            elif cls is RngOffset:
                out.append(np.uint32(s.gen._offset & 0xFFFFFFFF))
            elif cls is Extra:
                out.append(s.t._data)
        return out

    def _hypers(self, opt, i):
        """opt._hypers() of param group i, kept while the group's entries (all but its
        params) compare equal to those it was computed from: most steps change no
        hyper-parameter, and computing them is a fifth of a small step's Python."""
        group = opt.param_groups[i]
        k = (id(opt), i)
        kept = self._hyper_memo.get(k)
        if kept is not None:
            try:
                if kept[0](group) == kept[1]:
                    return kept[2]
            except KeyError:  # the group lost an entry: computed below (and fails there)
                pass
        h = opt._hypers(group)
        get = operator.itemgetter(*(name for name in group if name != "params"))
        values = get(group)
        if not any(isinstance(v, Tensor) or isinstance(v, tuple) and any(
                isinstance(x, Tensor) for x in v) for v in values):
            # (a tensor lr changed in place keeps comparing equal: never kept)
            self._hyper_memo[k] = (get, values, h)
        return h

    def _arrays(self, known):
        """Every array input, in the jaxpr's order (the recorded call: nothing donated)."""
        arrays = [None] * self.n_arrays
        for t, j in zip(known, self.array_of):
            arrays[j] = t._data
        return arrays

    def _call_args(self, known):
        """The jitted call's arguments: the slots and arrays it reads, in its order; a
        donated array something else still references is passed as a copy."""
        args = self._consts(self._call_slots)
        args += [known[i]._data for i in self._call_arrays]
        for pos, holders in self._call_donated:
            # references: the holders' _data, this list, getrefcount's argument
            if sys.getrefcount(args[pos]) > holders + 2:
                args[pos] = _copy(args[pos])
        return args

    # -- a call --------------------------------------------------------------------------------

    def run(self, known, pre_done=False):
        """One call: scheduler steps before, the program, writes back, steps after. Raises
        Stale (before changing anything but the steps before) when an argument's shape,
        dtype or device differs from the trace's; pre_done then skips those steps on the
        retry."""
        if not pre_done:
            for sched, args in self.pre_steps:
                sched.step(*args)
        n = self.n_outputs
        if self.differentiable and STATE.grad_enabled:
            consts = self._consts()
            arrays = self._arrays(known)
            if tuple((a.shape, a.dtype) for a in arrays) != self.shapes:
                raise Stale()
            outs = self._run_recorded(known, consts, arrays)
            raw = [t._data for t in outs[n:]]
        else:
            raw = self.jitted(*self._call_args(known))
            outs = [Tensor._wrap(o) for o in raw[:n]]
            for i in self.traced.out_long32:  # the dtype policy's int64-as-int32 tag
                outs[i].__dict__["_long32"] = True
            raw = raw[n:]
            if self.spent is not None and STATE.grad_enabled:
                _mark_spent(outs, self.spent, self._spent_node)
        for i, tag in self.traced.out_tags:  # DTensors the step returned (distributed.tensor)
            tag.apply(outs[i])
        self.executions += 1
        # the writes back, the common kinds inline (a small step's Python is its cost)
        for i, r in self._data_writes:
            t = known[i]
            vc = t._vc
            if vc is None:
                t._vc = [1]
            else:
                vc[0] += 1
            t._data = raw[r]
            if t._views:
                t._refresh_views()
        wrap = Tensor._wrap
        for i, r in self._grad_writes:
            known[i]._grad = wrap(raw[r])
        for w, r in self._other_writes:
            w.put(known, None if r is None else raw[r])
        for gen, count in self.draws:
            gen._offset += count
        for sched, args in self.post_steps:
            sched.step(*args)
        if self._single:
            return outs[0]
        tr = self.traced
        leaves = list(tr.out_template)
        res = iter(outs[:n])
        for i, v in enumerate(leaves):
            if v is OUT:
                leaves[i] = next(res)
        return tree_unflatten(leaves, tr.out_spec)

    def _run_recorded(self, known, consts, arrays):
        """The program as one tape node (a compiled forward called with grad): its backward
        is JAX's vjp of the program."""
        if self._flat is None:
            fun = self.fun
            self._flat = lambda *a: tuple(fun(*a))
            # its program and backward named by the jaxpr, as the step's own program is
            self._flat_ident = _program_name.ident("compiled forward", self._jaxpr)
        edges = []
        for s in self.slots:
            edges.append(edge_of(s.t) if s.__class__ is Extra else None)
        by_array: list = [None] * self.n_arrays
        for t, j in zip(known, self.array_of):
            if by_array[j] is None or (t._requires_grad and not by_array[j]._requires_grad):
                by_array[j] = t
        edges.extend(edge_of(t) for t in by_array)
        return list(record(self._flat, (*consts, *arrays), tuple(edges),
                           "CompiledFunctionBackward", self._reach_rows, self._flat_ident))

    def _reach(self):
        """reach[k][i]: output k reaches leaf i of the program on the traced tape (see
        Traced.out_reach), so its outputs require grad and its inputs get gradients (zeros
        included) exactly as in eager mode."""
        n = self.n_consts
        rows = []
        for indices, ids in self.traced.out_reach:
            row = [s.__class__ is Extra and id(s.t) in ids for s in self.slots]
            row += [False] * self.n_arrays
            for i in indices:
                row[n + self.array_of[i]] = True
            rows.append(row)
        # the new state values (written back, never part of the graph) come last
        n_state = sum(has_value for _, has_value in self.writes)
        return rows + [[False] * (n + self.n_arrays)] * n_state


def _spent_node(n):
    """A grad_fn whose saved values are already freed: a later backward through the
    outputs holding it raises PyTorch's "backward through the graph a second time" error.
    One per program, shared by its calls' outputs (it holds nothing)."""
    node = node_class("CompiledFunctionBackward")(None, None, (), (), n)
    node._released = True
    return node


def _mark_spent(outs, flags, node):
    for k, (t, rg) in enumerate(zip(outs, flags)):
        if rg:
            t._requires_grad = True
            t._grad_fn = node
            t._output_nr = k


def _read_invars(jaxpr) -> set:
    """The input variables of `jaxpr` that an equation or an output reads."""
    read = {v for v in jaxpr.outvars if not isinstance(v, Literal_)}
    for eqn in jaxpr.eqns:
        read.update(v for v in eqn.invars if not isinstance(v, Literal_))
    return read & set(jaxpr.invars)
