"""Functions whose call nodes dead-code elimination keeps (torch.fx.node.has_side_effect).

As PyTorch's: setitem, torch._assert, the profiler's record_function calls, random draws
(unless impure_random=False) and whatever has_side_effect marked. A method call is never
kept for its side effect (an unused `x.add_(1)` is erased, as PyTorch erases it).
"""

from __future__ import annotations

import operator

_SIDE_EFFECTFUL: set = {operator.setitem}
_NAMES = frozenset({"_assert", "_assert_async", "_record_function_enter",
                    "_record_function_enter_new", "_record_function_exit"})
_RANDOM = frozenset({"rand", "randn", "randint", "randperm", "rand_like", "randn_like",
                     "randint_like", "normal", "bernoulli", "multinomial", "poisson"})


def has_side_effect(fn):
    """Marks fn so that eliminate_dead_code never erases a call of it; returns fn."""
    _SIDE_EFFECTFUL.add(fn)
    return fn


def is_side_effectful(fn, impure_random: bool = True) -> bool:
    orig = getattr(fn, "_fx_original", fn)
    if fn in _SIDE_EFFECTFUL or orig in _SIDE_EFFECTFUL:
        return True
    name = getattr(fn, "__name__", "")
    if not (getattr(fn, "__module__", None) or "").startswith(("torch", "_operator")) and \
            orig is fn and name not in _NAMES:
        return False  # a user's function of the same name as a torch one
    return name in _NAMES or (impure_random and name in _RANDOM)
