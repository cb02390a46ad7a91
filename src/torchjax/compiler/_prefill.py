"""One program for a training loop from its first call.

A step's first call usually finds no `.grad` yet and no optimizer state (optimizers create
their state lazily, on their first step), and every later call finds both: two signatures,
two XLA compiles, and the second costs as much as the first. So when a trace shows that the
step creates gradients or optimizer state, they are created right away, before the program
is built: gradients as zeros, optimizer state as the optimizer's own initial state
(`_init_state`, what its first step would make). The step is traced again over that state,
and that program, the one every later call uses, runs the first call too.

Tracing costs as much as a third of a first call (the GPT step: ~4 s of tracing, ~11 s of XLA
compile), and the step above is traced twice. So a loop that looks fresh (its optimizers hold
no state, its parameters no gradients) gets the state before the first trace instead, for
every parameter its optimizers hold (`prefill_fresh`), and `confirmed` then checks the trace
against that guess: every such parameter ends the step with a gradient and had its optimizer
state updated, and nothing else was created lazily. A wrong guess (a parameter the step never
reaches, an optimizer the step does not call) is undone, and the step traced as above.

The first call computes the same values either way: gradients accumulated into zeros are the
gradients, and an optimizer updating its initial state is what its first step does. The one
exception is SGD with momentum and dampening, whose first step treats the buffer specially
(`fresh`): then the loop keeps its two programs. Only what the trace created is made: a
parameter that gets no gradient keeps `.grad` None and no optimizer state, as in eager mode.
"""

from __future__ import annotations

import jax
import numpy as np

from .. import _one_off
from .._tensor import Tensor
from ._trace import GradClear, GradWrite, OptStateWrite, TensorWrite


def lazy_writes(traced) -> list:
    """(write, value aval) of the gradients and optimizer state the trace created."""
    avals = traced.jaxpr.out_avals[traced.n_outputs:]
    out, k = [], 0
    for w, has_value in traced.writes:
        if has_value:
            if isinstance(w, (GradWrite, OptStateWrite)):
                out.append((w, avals[k]))
            k += 1
    return out


def _dampened(opt) -> bool:
    return any(g.get("momentum", 0) != 0 and g.get("dampening", 0) != 0
               for g in opt.param_groups)


def prefill(lazy, known, n_inputs) -> bool:
    """Create the lazily made state now; False (having changed nothing it could not undo
    through the caller's snapshot) when this loop cannot start from it. The arguments'
    gradients (the first n_inputs known tensors) are not state: each call sets them anew."""
    groups: dict = {}
    for w, aval in lazy:
        if isinstance(w, GradWrite) and w.t < n_inputs:
            continue
        if isinstance(w, OptStateWrite):
            opt = w.opt
            if _dampened(opt) or not hasattr(opt, "_init_state"):
                return False
            p = known[w.p]
            st = opt.state[p]
            if id(p) not in groups:
                if st:
                    return False
                group = next((g for g in opt.param_groups
                              if any(q is p for q in g["params"])), None)
                if group is None:
                    return False
                st.update(_beside(opt._init_state(p, group), p))
                groups[id(p)] = st
            if w.key not in st or not isinstance(st[w.key], Tensor) \
                    or tuple(st[w.key].shape) != tuple(aval.shape):
                return False
        else:
            t = known[w.t]
            # made on the host and put beside the parameter: jnp.zeros would compile a
            # program per shape
            zeros = np.zeros(aval.shape, aval.dtype)
            t._grad = Tensor._wrap(jax.device_put(zeros, t._data.sharding))
    return True


def _beside(state: dict, p) -> dict:
    """The initial state of a parameter laid out over several devices, its scalars (Adam's
    step) replicated over the same mesh: where the program leaves them, so that the second
    call's state has the first's signature (one program, not two)."""
    sharding = p._data.sharding
    if (not isinstance(sharding, jax.sharding.NamedSharding) or len(sharding.device_set) == 1
            or not sharding.is_fully_addressable):  # (across processes a step runs per rank)
        return state
    whole = jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec())
    for v in state.values():
        if isinstance(v, Tensor) and tuple(v.shape) != tuple(p.shape):
            v._data = jax.device_put(v._data, whole)
    return state


def prefill_fresh(optimizers) -> list | None:
    """Zero gradients and initial optimizer state for every parameter the optimizers hold
    (see the module docstring); [(parameter, its state tensors)], or None (having changed
    nothing) when the loop is not a fresh one."""
    if not optimizers:
        return None
    for opt in optimizers:
        if opt.state or _dampened(opt) or not hasattr(opt, "_init_state"):
            return None
        for group in opt.param_groups:
            for p in group["params"]:
                if p._grad is not None:
                    return None
    made = []
    for opt in optimizers:
        for group in opt.param_groups:
            stateful = opt._stateful(group)
            for p in group["params"]:
                if not p._requires_grad:
                    continue
                zeros = np.zeros(p._data.shape, p._data.dtype)
                p._grad = Tensor._wrap(_one_off.place(zeros, p._data.sharding))
                states = []
                if stateful:
                    st = _beside(opt._init_state(p, group), p)
                    opt.state[p].update(st)
                    states = [v for v in st.values() if isinstance(v, Tensor)]
                made.append((p, states))
    return made


def confirmed(traced, made, known) -> bool:
    """Whether the trace over the guessed state did what the guess assumed."""
    pos = {id(t): i for i, t in enumerate(known)}
    written = {w.t for w, has_value in traced.writes
               if has_value and isinstance(w, TensorWrite)}
    cleared = {w.t for w, _ in traced.writes if isinstance(w, GradClear)}
    for p, states in made:
        if pos.get(id(p)) in cleared:
            return False  # the step left it without a gradient: eager makes no state
        if any(pos.get(id(s)) not in written for s in states):
            return False  # the optimizer did not step it
    for w, _ in lazy_writes(traced):
        if isinstance(w, OptStateWrite) or known[w.t]._grad is None:
            return False  # state the guess did not make
    return True
