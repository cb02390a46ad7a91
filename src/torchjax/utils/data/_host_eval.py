"""How a forked DataLoader worker computes: JAX programs evaluated with NumPy.

A forked worker cannot run XLA programs (see _start), but it can still trace: JAX turns a
call into a jaxpr without the runtime. `run_jitted` stands in for JAX's call of a jitted
function in such a worker: it evaluates the jaxpr with torchjax's NumPy rules (_numpy_eval)
and puts the results on the host device with device_put (which needs no program). Every
torchjax op and every eager jax.numpy call goes through there, so a dataset that indexes,
converts, stacks or draws random numbers from torchjax tensors works in a forked worker, at
NumPy's speed. A primitive without a rule raises ForkedWorkerError naming it.
"""

from __future__ import annotations

import numpy as np

from ..._numpy_eval import NoRule, evaluate


def run_jitted(*args, jaxpr, **params):
    """Stands in for jax's _pjit_call_impl_python in a forked worker (same arguments and
    results: outputs, executable, profiler, constant arguments)."""
    import jax

    from ._start import ForkedWorkerError, fork_message
    try:
        with np.errstate(all="ignore"):  # lax computes inf and NaN silently
            outs = evaluate(jaxpr.jaxpr, jaxpr.consts, args)
    except NoRule as e:
        raise ForkedWorkerError(fork_message(f"{e} has no NumPy evaluation")) from None
    outs = [jax.device_put(np.asarray(o, order="C")) if isinstance(o, np.ndarray) else o
            for o in outs]
    return outs, None, None, []
