"""The host tier's jaxprs for sizes that keep changing: one trace with symbolic sizes.

Why: autoregressive generation gives every op of the model a new length at every token, and
a reinforcement-learning episode of a new length gives new shapes to its per-episode ops.
The host tier (_host_tier.py) traced each new signature again: 1-16 ms per op, where its
NumPy evaluation costs microseconds (measured: a 2-layer GPT generating 40 tokens spent 3.8
of its 4.4 s tracing). So when a program's new call differs from its last traced one only in
some sizes, it is traced once more with those sizes symbolic (jax.export's shape
polymorphism: one symbol per distinct size that changed), and that jaxpr is kept as a
template. A later call that fits the template (the same dtypes and ranks, the same fixed
sizes, the symbols' sizes consistent) gets a jaxpr of its own by substitution (each symbolic
size in the avals and parameters replaced by its value: tens of microseconds, no tracing),
which the host tier then checks and plans like a traced one.

Soundness: JAX decides a comparison of symbolic sizes that it cannot prove by raising (the
trace fails, and the call is traced concretely as before), except equality, which it
answers False when unproven (`T == 1` in an op that treats a size of one apart). The trace
records each such unproven equality, and a call whose sizes would make one of them true
does not take the template (it is traced concretely). Symbolic sizes are at least 1 (JAX's
assumption: a call with a size 0 where the template has a symbol does not fit), or at least
the smaller traced length when the trace needed that bound (then a call below it does not
fit), and a
jaxpr with control flow is not made a template (its inner jaxprs would keep their symbols).
"""

from __future__ import annotations

import collections
import re
import threading
import weakref

import numpy as np

from . import _numpy_eval

MAX_TEMPLATES = 16  # per program (a model's Linear layers of several widths share one)
MAX_FAILED = 2  # symbolic traces that failed, per program, before it stops trying
_lock = threading.Lock()
_templates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # _Program -> [Template]
_seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # _Program -> recent specs
SEEN = 16  # recent calls' specs kept per program
_failed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # _Program -> failures
_tls = threading.local()  # .rec: the unproven equalities of this thread's symbolic trace
STATS = {"templates": 0, "instances": 0, "refused": 0, "failed": 0}  # (for tests)


def _dim_as_value(*, dim):
    return np.asarray(dim)


# (a symbolic size used as a value, `x.shape[1]` in arithmetic: after substitution, a number)
_numpy_eval._RULES.setdefault("dim_as_value", _dim_as_value)


class Template:
    __slots__ = ("specs", "names", "closed", "out_tree", "unproven", "fast", "text", "least")

    def __init__(self, specs, names, closed, out_tree, unproven, least=1):
        self.specs = specs  # per leaf: (dtype or scalar type, weak, shape of ints and names)
        self.names = names  # the symbols' names
        self.closed = closed  # the symbolic ClosedJaxpr
        self.out_tree = out_tree
        self.unproven = unproven  # size expressions the trace took as nonzero
        self.least = least  # the smallest length it was traced for (see _template)
        self.fast = _fast_plan(closed)
        # its pattern without the configuration (the same in a kept plan's process: its key
        # holds it), as text a plan keeps (`mark`)
        self.text = repr(specs[1:])

    def bind(self, specs):
        """{symbol: size} for a call of these specs, or None when it does not fit."""
        if len(specs) != len(self.specs):
            return None
        env: dict = {}
        least = self.least
        for (kind, weak, shape), (k, w, s) in zip(self.specs, specs):
            if kind != k or weak != w:
                return None
            if shape is None:
                continue
            if s is None or len(s) != len(shape):
                return None
            for want, got in zip(shape, s):
                if want.__class__ is str:
                    if got < least or env.setdefault(want, got) != got:
                        return None
                elif want != got:
                    return None
        return env


def specs_of(leaves):
    """Per argument leaf: (dtype, weak, shape), or (scalar type, None, None); None when a leaf
    is neither."""
    out = []
    for x in leaves:
        if x.__class__ in (bool, int, float):
            out.append((x.__class__, None, None))
            continue
        shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
        if shape is None or dtype is None:
            return None
        out.append((np.dtype(dtype), bool(getattr(x, "weak_type", False)), tuple(shape)))
    return tuple(out)


def jaxpr_for(prog, args, leaves, config):
    """What _instantiate gives (a jaxpr of sizes substituted, or a template's plan with them
    filled in) for this call from a template of `prog` (one made now, when the call's sizes
    differ in one length from an earlier call's), or None: trace it concretely. `config`: what else its trace reads (JAX's trace context,
    torchjax's default dtype: _programs._call_key's), which a template must share."""
    _tls.mark = None
    specs = specs_of(leaves)
    if specs is None:
        return None
    specs = ((config, None, None),) + specs  # (compared as a leaf's kind is)
    with _lock:
        templates = list(_templates.get(prog, ()))
        seen = _seen.get(prog)
        if seen is None:
            seen = _seen[prog] = collections.deque(maxlen=SEEN)
        earlier = list(seen)
        seen.append(specs)
    for t in templates:
        env = t.bind(specs)
        if env is not None:
            got = _instantiate(t, env)
            if got is not None:
                _tls.mark = (t.text, env["d0"], 0)
                return got
    if len(templates) >= MAX_TEMPLATES or _failed.get(prog, 0) >= MAX_FAILED:
        return None
    changed = _one_length(earlier, specs)
    if changed is None:
        return None
    t = _template(prog, args, specs, changed[0])
    if t is None and changed[1] > 1:
        t = _template(prog, args, specs, changed[0], changed[1])
    if t is None:
        with _lock:
            _failed[prog] = _failed.get(prog, 0) + 1
        STATS["failed"] += 1
        return None
    with _lock:
        _templates.setdefault(prog, []).append(t)
    STATS["templates"] += 1
    env = t.bind(specs)
    if env is None:
        return None
    _tls.mark = (t.text, env["d0"], 0)
    return _instantiate(t, env)


def mark():
    """(the template's pattern as text, the length, 0) of this thread's last jaxpr_for, when
    a template gave it; else None (and so at the next call: it is taken). `served` counts
    it; the plan kept for it (_host_plans) holds the count in place of the 0, so that a
    later process that reads the plan instead counts its lengths as this one did."""
    got = getattr(_tls, "mark", None)
    _tls.mark = None
    return got


_served: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # _Program -> {text: lengths}


def served(prog, mark) -> int:
    """How many lengths `prog`'s template of the marked pattern has served in this process,
    this one's included, or the mark's count if more: a kept plan's, what its template had
    served in the process that made it (a warm generate makes no template: each length's
    plan is on disk, and lengths that were then compiled are loaded, not counted here)."""
    text, length, count = mark
    with _lock:
        by_text = _served.get(prog)
        if by_text is None:
            by_text = _served[prog] = {}
        lengths = by_text.get(text)
        if lengths is None:
            if len(by_text) >= MAX_TEMPLATES:
                by_text.clear()
            lengths = by_text[text] = set()
        lengths.add(length)
        return max(len(lengths), count)


_INTEGER = re.compile(r"int:-?[0-9]+")
_variants: dict = {}  # a program's name with its integers masked -> programs seen so named


def family_of(ident: str) -> str:
    """The name of `ident`'s family: programs named alike but for their integers (static
    sizes, dims, slice bounds)."""
    return _INTEGER.sub("int:", ident)


def variants(key: str) -> int:
    """How many programs of the family `key` (family_of) have made their first call, this
    one included (_host_tier.FAMILIES)."""
    with _lock:
        n = _variants.get(key, 0) + 1
        if len(_variants) >= 4096:
            _variants.clear()
        _variants[key] = n
    return n


def _one_length(earlier, specs):
    """(the places (leaf, axis), the smaller of the two lengths) where `specs` differs from
    the closest of the `earlier` calls (the same dtypes and ranks) in one length only: every
    changed size was the same size before and is the same size now (a sequence's length, in
    each array it sizes). None when
    no earlier call differs so. (Several call sites share a program: a model's Linear layers
    of other widths are no earlier length of this one.)"""
    best = least = None
    for old in earlier:
        if len(old) != len(specs):
            continue
        changed, pairs = [], set()
        for i, ((k0, w0, s0), (k1, w1, s1)) in enumerate(zip(old, specs)):
            if k0 != k1 or w0 != w1 or (s0 is None) != (s1 is None) or (
                    s0 is not None and len(s0) != len(s1)):
                break
            if s0 is not None:
                for j, (a, b) in enumerate(zip(s0, s1)):
                    if a != b:
                        changed.append((i, j))
                        pairs.add((a, b))
        else:
            if len(pairs) == 1 and min(next(iter(pairs))) >= 1 and (
                    best is None or len(changed) < len(best)):
                best, least = changed, min(next(iter(pairs)))
    return None if best is None else (best, least)


def _template(prog, args, specs, changed, least=1):
    """A Template of `prog` traced with the sizes of `specs` at the places `changed` (one
    length) symbolic, or None. With `least`, the length is known to be at least that (JAX
    then proves comparisons it would refuse: `x[:, -128:]` of a growing sequence is a
    dynamic_slice of 128 of `d0`, which needs d0 >= 128), and only such lengths fit."""
    changed = set(changed)
    names = ("d0",)
    pattern = tuple((k, w, None if s is None else tuple(
        "d0" if (i, j) in changed else d for j, d in enumerate(s)))
        for i, (k, w, s) in enumerate(specs))
    try:
        import jax
        from jax import export
        scope = export.SymbolicScope((f"d0 >= {least}",) if least > 1 else ())
        symbols = dict(zip(names, export.symbolic_shape(",".join(names), scope=scope)))
        leaves, tree = jax.tree_util.tree_flatten(args)
        abstract = [x if s is None else jax.ShapeDtypeStruct(
            tuple(symbols[d] if d.__class__ is str else d for d in s), k, weak_type=w)
            for x, (k, w, s) in zip(leaves, pattern[1:])]
        _install_recording()
        _tls.rec = unproven = []
        try:
            traced = prog.jit.trace(*jax.tree_util.tree_unflatten(tree, abstract))
        finally:
            _tls.rec = None
        closed = traced.jaxpr
        if _has_control_flow(closed.jaxpr):
            return None
        return Template(pattern, tuple(names), closed,
                        jax.tree_util.tree_structure(traced.out_info), unproven, least)
    except Exception:  # noqa: BLE001  (an op that needs its sizes: traced concretely)
        return None


def _has_control_flow(jaxpr) -> bool:
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in _numpy_eval._CONTROL:
            return True
        if name in _numpy_eval._CALLS:
            inner = eqn.params[_numpy_eval._CALLS[name]]
            if _has_control_flow(getattr(inner, "jaxpr", inner)):
                return True
    return False


def _instantiate(t, env):
    """(a ClosedJaxpr, its output tree), or from a template's plan (None, plan, in avals,
    output tree, output avals, flops): `t` for the sizes `env`; None when refused."""
    _import_jax()
    for e in t.unproven:
        if int(e._evaluate(env)) == 0:  # (the trace took it as nonzero)
            STATS["refused"] += 1
            return None
    env = {**env, _AVALS: {}}
    try:
        if t.fast is not None:
            got = _from_plan(t, env)
        else:
            got = t.closed.replace(jaxpr=_concrete(t.closed.jaxpr, env)), t.out_tree
    except Exception:  # noqa: BLE001  (a parameter this substitution does not know)
        return None
    STATS["instances"] += 1
    return got


def _fast_plan(closed):
    """(the plan of the symbolic jaxpr, the indices of its steps whose parameters hold a
    size, its flops as an expression) when the host tier would take the jaxpr whatever the
    sizes (its checks read no size), else None: each instance is then a substituted jaxpr,
    planned anew. A call then rebuilds only its size-dependent steps (~10-20 us) instead of
    substituting the jaxpr and planning it (~150 us)."""
    try:
        from . import _host_tier, _numpy_plan
        _import_jax()
        if not _host_tier.takes_jaxpr(closed):
            return None
        plan = _numpy_plan.make(closed.jaxpr, closed.consts)
        if plan.recipe is None or len(plan.recipe) != len(plan.steps):
            return None
        dynamic = tuple(i for i, (fn, *_) in enumerate(plan.steps)
                        if _holds_size(tuple(fn.keywords.values())))
        return plan, dynamic, _host_tier._flops(closed.jaxpr)
    except Exception:  # noqa: BLE001  (no rule, a size the checks need: planned per instance)
        return None


def _holds_size(v) -> bool:
    if v.__class__ is _DimExpr:
        return True
    if isinstance(v, (tuple, list)):
        return any(_holds_size(x) for x in v)
    return isinstance(v, (_core.Jaxpr, _core.ClosedJaxpr, _core.AbstractValue))


def _from_plan(t, env):
    import functools

    from . import _numpy_plan
    plan, dynamic, flops = t.fast
    steps, recipe = list(plan.steps), list(plan.recipe)
    for i in dynamic:
        fn, ins, outs, multiple = steps[i]
        params = {k: _param(v, env) for k, v in fn.keywords.items()}
        steps[i] = (functools.partial(fn.func, **params), ins, outs, multiple)
        name, kept, *rest = recipe[i]
        recipe[i] = (name, {k: params[k] for k in kept}, *rest)
    closed = t.closed
    return (None, _numpy_plan.Plan(steps, plan.size, plan.consts, plan.ins, plan.outs, recipe),
            [_aval(a, env) for a in closed.in_avals], t.out_tree,
            [_aval(a, env) for a in closed.out_avals], _size(flops, env))


# -- substitution --------------------------------------------------------------------------

def _size(d, env):
    if d.__class__ is not _DimExpr:
        return d
    memo = env[_AVALS]  # (JAX's evaluation of an expression takes ~10 us: once per kind)
    got = memo.get(id(d))
    if got is None:
        got = memo[id(d)] = int(d._evaluate(env))
    return got


def _aval(a, env):
    shape = getattr(a, "shape", None)
    if not shape:
        return a
    memo = env[_AVALS]
    got = memo.get(id(a))  # (by identity: hashing a symbolic shape compares expressions)
    if got is None:
        new = tuple(_size(d, env) for d in shape)
        got = a if new == shape else a.update(shape=new)
        memo[id(a)] = got  # (the template holds `a`: its id stays its own)
    return got


_AVALS = object()  # env's entry of the avals and sizes made so far, by the id of the
                   # template's (a jaxpr's many equal ones: ~10 us for each new ShapedArray)
_PLAIN = frozenset({int, float, bool, str, type(None), np.dtype})


def _param(v, env):
    c = v.__class__
    if c in _PLAIN:
        return v
    if c is _DimExpr:
        return _size(v, env)
    if c is tuple or c is list:
        new = [_param(x, env) for x in v]
        return v if all(a is b for a, b in zip(new, v)) else c(new)
    if isinstance(v, _core.ClosedJaxpr):
        return v.replace(jaxpr=_concrete(v.jaxpr, env))
    if isinstance(v, _core.Jaxpr):
        return _concrete(v, env)
    if isinstance(v, _core.AbstractValue):
        return _aval(v, env)
    if isinstance(v, tuple) and hasattr(v, "_fields"):  # (a NamedTuple: dimension numbers)
        new = [_param(x, env) for x in v]
        return v if all(a is b for a, b in zip(new, v)) else c(*new)
    return v


def _concrete(jaxpr, env):
    """`jaxpr` with every symbolic size of its avals and parameters replaced by its value."""
    new_vars: dict = {}
    literal, drop, plain = _core.Literal, _core.DropVar, _core.Var

    def var(v):
        if v.__class__ is literal:
            return v
        w = new_vars.get(v)
        if w is None:
            w = new_vars[v] = (drop if v.__class__ is drop else plain)(_aval(v.aval, env))
        return w

    constvars = [var(v) for v in jaxpr.constvars]
    invars = [var(v) for v in jaxpr.invars]
    eqns = [e.replace(invars=[var(v) for v in e.invars],
                      params={k: _param(p, env) for k, p in e.params.items()},
                      outvars=[var(v) for v in e.outvars])
            for e in jaxpr.eqns]
    return jaxpr.replace(constvars=constvars, invars=invars,
                         outvars=[var(v) for v in jaxpr.outvars], eqns=eqns)


_core = _DimExpr = None


def _import_jax():
    global _core, _DimExpr
    if _core is None:
        from jax._src import core
        from jax._src.export import shape_poly
        _core, _DimExpr = core, shape_poly._DimExpr


# -- unproven equalities -------------------------------------------------------------------

_installed = []


def _install_recording() -> None:
    """Make JAX's equality of symbolic sizes note, during a trace of this module, the
    differences it answered False without proof (once per process; other threads and other
    traces see JAX's own answer, unchanged)."""
    if _installed:
        return
    with _lock:
        if _installed:
            return
        from jax._src.export import shape_poly
        cls = shape_poly._DimExpr
        plain_eq = cls.__eq__

        def __eq__(self, other):
            equal = plain_eq(self, other)
            rec = getattr(_tls, "rec", None)
            if rec is not None and equal is False:
                try:
                    diff = self - other
                except Exception:  # noqa: BLE001  (not a size: unequal for sure)
                    diff = None
                if diff is not None and shape_poly.is_symbolic_dim(diff):
                    rec.append(diff)
            return equal

        cls.__eq__ = __eq__
        _installed.append(plain_eq)
