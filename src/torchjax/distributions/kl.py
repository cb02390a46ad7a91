"""kl_divergence(p, q) and the registry of closed forms behind it.

`register_kl(P, Q)` adds a function for distributions of types P and Q (or subclasses). A
lookup takes the most specific registered pair by class hierarchy, warns when two pairs
are equally specific in different ways, and is memoised per (type(p), type(q)).
"""

from __future__ import annotations

import warnings

from .distribution import Distribution

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}  # (P, Q) -> function: what was registered
_KL_MEMOIZE: dict = {}  # (type(p), type(q)) -> function or NotImplemented: resolved lookups


def register_kl(type_p, type_q):
    """Decorator registering `fn(p, q)` as KL(p || q) for p of type_p and q of type_q.

    Example::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q):
            ...
    """
    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"Expected a Distribution subclass but got {t}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()  # a new pair can change which one is most specific
        return fn

    return decorator


def _more_specific(a: tuple, b: tuple) -> bool:
    """a <= b in the lexicographic order of "is a subclass of" over the pair's types."""
    for x, y in zip(a, b):
        if not issubclass(x, y):
            return False
        if x is not y:
            break
    return True


def _most_specific(pairs):
    best = pairs[0]
    for pair in pairs[1:]:
        if _more_specific(pair, best) and pair != best:
            best = pair
    return best


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left = _most_specific(matches)  # most specific in p first
    right = _most_specific([(q, p) for p, q in matches])  # most specific in q first
    left_fn, right_fn = _KL_REGISTRY[left], _KL_REGISTRY[right[1], right[0]]
    if left_fn is not right_fn:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left[0].__name__}, {right[0].__name__})",
                      RuntimeWarning, stacklevel=3)
    return left_fn


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], one value per batch element.

    Raises NotImplementedError when no closed form is registered for the pair of types.
    """
    key = (type(p), type(q))
    fn = _KL_MEMOIZE.get(key)
    if fn is None:
        fn = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fn is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fn(p, q)


from . import _kl_pairs  # noqa: E402,F401  (registers the closed forms)
