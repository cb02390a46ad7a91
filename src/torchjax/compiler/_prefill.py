"""One program for a training loop from its first call.

A step's first call usually finds no `.grad` yet and no optimizer state (optimizers create
their state lazily, on their first step), and every later call finds both: two signatures,
two XLA compiles, and the second costs as much as the first. So when a trace shows that the
step creates gradients or optimizer state, they are created right away, before the program
is built: gradients as zeros, optimizer state as the optimizer's own initial state
(`_init_state`, what its first step would make). The step is traced again over that state,
and that program, the one every later call uses, runs the first call too.

The first call computes the same values either way: gradients accumulated into zeros are the
gradients, and an optimizer updating its initial state is what its first step does. The one
exception is SGD with momentum and dampening, whose first step treats the buffer specially
(`fresh`): then the loop keeps its two programs. Only what the trace created is made: a
parameter that gets no gradient keeps `.grad` None and no optimizer state, as in eager mode.
"""

from __future__ import annotations

import jax
import numpy as np

from .._tensor import Tensor
from ._trace import GradWrite, OptStateWrite


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


def prefill(lazy, known) -> bool:
    """Create the lazily made state now; False (having changed nothing it could not undo
    through the caller's snapshot) when this loop cannot start from it."""
    groups: dict = {}
    for w, aval in lazy:
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
                st.update(opt._init_state(p, group))
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
