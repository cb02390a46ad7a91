"""A jaxpr made ready to evaluate with NumPy many times (the host tier's calls, _host_tier.py).

_numpy_eval.evaluate walks the jaxpr's equations on every call: per equation it reads each
variable from a dict, looks the rule up, checks for typed PRNG keys and for plain dtypes.
Here that is done once: each equation becomes (its rule with its parameters bound, where
each input comes from: a slot or a literal's value, its output slots and dtypes), run in
one loop over a list. Jaxprs the host tier takes hold no typed keys (their dtypes are not
plain), so the keys' path is left out. Calls (pjit, custom_jvp_call, ...) are inlined: their
equations join the caller's list, which is what evaluating the callee would run. Control
flow evaluates its jaxprs as evaluate does.

A plan of rules alone (no control flow) also has a `recipe`: its equations as (primitive
name, parameters), plain values that pickle, so that another process can rebuild the plan
without tracing the program again (_host_plans.py keeps them in the program cache: a
reinforcement-learning script's every new episode length otherwise traced its per-episode
programs anew in every run, 1-20 ms each).
"""

from __future__ import annotations

import functools

import numpy as np

from . import _numpy_eval as E

# parameters no rule reads, left out of recipes: a scatter's combining function as a jaxpr
# (the rules combine with NumPy's ufunc of their primitive)
_UNUSED = frozenset({"update_jaxpr", "update_consts"})


class Plan:
    __slots__ = ("steps", "size", "consts", "ins", "outs", "recipe")

    def __init__(self, steps, size, consts, ins, outs, recipe=None):
        self.steps, self.size, self.consts, self.ins, self.outs = steps, size, consts, ins, outs
        # [(name, params, ins, outs, multiple)] per step, or None (control flow in it)
        self.recipe = recipe


def make(jaxpr, consts) -> Plan:
    """The plan of `jaxpr` (NoRule when an equation has no rule here)."""
    from jax._src import core
    count = [0]
    steps, recipe, const_slots = [], [], []
    keepable = [True]

    def new():
        count[0] += 1
        return count[0] - 1

    def source(env, v):  # (a slot, None) or (None, a literal's value)
        return (None, np.asarray(v.val)) if isinstance(v, core.Literal) else env[v]

    def add(jaxpr, consts, env):
        for v, c in zip(jaxpr.constvars, consts):
            env[v] = (new(), None)
            const_slots.append((env[v][0], E._as_numpy(c)))
        for eqn in jaxpr.eqns:
            ins = tuple(source(env, v) for v in eqn.invars)
            name = eqn.primitive.name
            if name in E._CALLS:
                closed = eqn.params[E._CALLS[name]]
                inner = getattr(closed, "jaxpr", closed)
                sub = dict(zip(inner.invars, ins))
                add(inner, getattr(closed, "consts", ()), sub)
                for v, w in zip(eqn.outvars, inner.outvars):
                    env[v] = source(sub, w)
                continue
            if name in E._CONTROL:
                fn = functools.partial(E._CONTROL[name], **eqn.params)
                keepable[0] = False  # (its jaxprs are no plain values)
            elif name in E._RULES:
                fn = functools.partial(E._RULES[name], **eqn.params)
            else:
                raise E.NoRule(f"the JAX primitive '{name}'")
            outs = []
            for v in eqn.outvars:
                env[v] = (new(), None)
                outs.append((env[v][0], v.aval.dtype if E._is_plain(v.aval) else None))
            outs = tuple(outs)
            multiple = eqn.primitive.multiple_results
            steps.append((fn, ins, outs, multiple))
            if keepable[0]:
                params = {k: v for k, v in eqn.params.items() if k not in _UNUSED}
                recipe.append((name, params, ins, outs, multiple))

    env: dict = {}
    in_slots = []
    for v in jaxpr.invars:
        env[v] = (new(), None)
        in_slots.append(env[v][0])
    add(jaxpr, consts, env)
    outs = tuple(source(env, v) for v in jaxpr.outvars)
    return Plan(steps, count[0], const_slots, in_slots, outs,
                recipe if keepable[0] else None)


def from_recipe(recipe, size, consts, ins, outs) -> Plan:
    """A plan rebuilt from its recipe (KeyError: a primitive with no rule here)."""
    steps = [(functools.partial(E._RULES[name], **params), s_ins, s_outs, multiple)
             for name, params, s_ins, s_outs, multiple in recipe]
    return Plan(steps, size, consts, ins, outs)  # (kept already: no second copy in memory)


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
