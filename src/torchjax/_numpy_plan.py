"""A jaxpr made ready to evaluate with NumPy many times (the host tier's calls, _host_tier.py).

_numpy_eval.evaluate walks the jaxpr's equations on every call: per equation it reads each
variable from a dict, looks the rule up, checks for typed PRNG keys and for plain dtypes.
Here that is done once: each equation becomes (its rule with its parameters bound, where
each input comes from: a slot or a literal's value, its output slots and dtypes), run in
one loop over a list. Jaxprs the host tier takes hold no typed keys (their dtypes are not
plain), so the keys' path is left out; nested calls and control flow evaluate their jaxprs
as evaluate does.
"""

from __future__ import annotations

import functools

import numpy as np

from . import _numpy_eval as E


class Plan:
    __slots__ = ("steps", "size", "consts", "ins", "outs")

    def __init__(self, steps, size, consts, ins, outs):
        self.steps, self.size, self.consts, self.ins, self.outs = steps, size, consts, ins, outs


def make(jaxpr, consts) -> Plan:
    """The plan of `jaxpr` (NoRule when an equation has no rule here)."""
    from jax._src import core
    slots: dict = {}

    def slot(v):
        return slots.setdefault(v, len(slots))

    const_slots = [slot(v) for v in jaxpr.constvars]
    in_slots = [slot(v) for v in jaxpr.invars]
    steps = []
    for eqn in jaxpr.eqns:
        ins = tuple((None, np.asarray(v.val)) if isinstance(v, core.Literal) else (slots[v], None)
                    for v in eqn.invars)
        name = eqn.primitive.name
        if name in E._CALLS:
            fn = functools.partial(_call, eqn.params[E._CALLS[name]])
        elif name in E._CONTROL:
            fn = functools.partial(E._CONTROL[name], **eqn.params)
        elif name in E._RULES:
            fn = functools.partial(E._RULES[name], **eqn.params)
        else:
            raise E.NoRule(f"the JAX primitive '{name}'")
        outs = tuple((slot(v), v.aval.dtype if E._is_plain(v.aval) else None)
                     for v in eqn.outvars)
        steps.append((fn, ins, outs, eqn.primitive.multiple_results))
    outs = tuple((None, np.asarray(v.val)) if isinstance(v, core.Literal) else (slots[v], None)
                 for v in jaxpr.outvars)
    return Plan(steps, len(slots), [(s, E._as_numpy(c)) for s, c in zip(const_slots, consts)],
                in_slots, outs)


def _call(closed, *args):
    return E._call(closed, args)


def run(plan: Plan, args) -> list:
    """The outputs of the planned jaxpr for `args` (NumPy arrays)."""
    env = [None] * plan.size
    for s, c in plan.consts:
        env[s] = c
    for s, a in zip(plan.ins, args):
        env[s] = a
    asarray = np.asarray
    for fn, ins, outs, multiple in plan.steps:
        got = fn(*[env[s] if s is not None else lit for s, lit in ins])
        if not multiple:
            s, dtype = outs[0]
            env[s] = got if dtype is None else asarray(got, dtype=dtype)
        else:
            for (s, dtype), out in zip(outs, got):
                env[s] = out if dtype is None else asarray(out, dtype=dtype)
    return [env[s] if s is not None else lit for s, lit in plan.outs]
