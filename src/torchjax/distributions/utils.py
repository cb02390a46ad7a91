"""Helpers shared by the distributions: parameter broadcasting, probs <-> logits, lazily
computed attributes, and the checks that need concrete values."""

from __future__ import annotations

import numbers

import jax
import numpy as np

import torchjax as torch

from .._tensor import Tensor
from ..interop import from_jax

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "euler_constant",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values):
    """Turn numbers into tensors and broadcast everything to one shape.

    Numbers take the dtype of the first tensor argument, or the default dtype when there is
    none, so `Normal(0.0, scale64)` is a float64 distribution.
    """
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = like.dtype if like is not None else torch.get_default_dtype()
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, numbers.Number):
            out.append(torch.tensor(v, dtype=dtype))
        else:
            raise ValueError("Input arguments must all be instances of numbers.Number, "
                             "torch.Tensor or objects implementing __torch_function__.")
    return tuple(torch.broadcast_tensors(*out))


def as_value(value, like: Tensor):
    """A log_prob/cdf argument as a Tensor (numbers take the parameters' dtype)."""
    if isinstance(value, Tensor):
        return value
    return torch.tensor(value, dtype=like.dtype)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the `dim` rightmost dims of value."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into [eps, 1 - eps] of their dtype, so their logs are finite."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: sigmoid for binary events, softmax over the last dim else."""
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped first, so 0 and 1 give large finite logits)."""
    p = clamp_probs(probs)
    if is_binary:
        return torch.log(p) - torch.log1p(-p)
    return torch.log(p)


class lazy_property:
    """An attribute computed on first access and then stored on the instance.

    The computation runs with grad enabled, so a value first needed inside `sample()`'s
    no_grad (probs from logits, say) is still differentiable when log_prob uses it later.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = getattr(wrapped, "__doc__", None)
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return _LazyClassView(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _LazyClassView(lazy_property, property):
    """What a lazy_property looks like on the class: also a property, so tools that list
    properties (and Distribution's validation, which skips lazy parameters) see it."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return lazy_property.__get__(self, instance, owner)


def is_traced(t: Tensor) -> bool:
    """Whether t holds a JAX tracer (inside jit/vmap): value checks are skipped there."""
    return isinstance(t._data, jax.core.Tracer)


def all_true(t: Tensor) -> bool:
    """bool(t.all()), or True for a traced tensor (its values are unknown)."""
    if is_traced(t):
        return True
    return bool(t.all())


# -- validation as one program -------------------------------------------------------------------
#
# A check such as simplex's (value >= 0, .all(-1), .sum(-1), - 1, .abs(), < tol, &) is several
# ops, and op by op each new shape compiles each of them: validation, which is on by default,
# would cost more first-call time than the distribution's own math. So a constraint whose
# attributes are plain values is checked by one op that traces its check(), keyed by the
# constraint's structure (fresh instances such as a Categorical's integer_interval(0, k - 1)
# share it). A constraint holding tensors (Uniform's interval(low, high)), or whose check needs
# concrete values (symmetric's early exit), is checked op by op.

_CONSTRAINTS: dict = {}  # structure -> a constraint with that structure
_OP_BY_OP: set = set()  # structures whose check cannot be traced


def _structure(constraint):
    """A hashable description of a constraint and its parameters, or None when one of them
    is a tensor (or anything else that is not a plain value)."""
    def of(v):
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, (tuple, list)):
            parts = tuple(of(x) for x in v)
            return None if None in parts and None not in v else parts
        if hasattr(v, "check") and hasattr(v, "event_dim"):
            return _structure(v)
        return None

    parts = []
    for name, v in sorted(vars(constraint).items()):
        s = of(v)
        if s is None and v is not None:
            return None
        parts.append((name, s))
    return (type(constraint), tuple(parts))


def _check_all(value, structure):
    return _CONSTRAINTS[structure].check(Tensor._wrap(value)).all()._data


_check_op = from_jax(_check_all, name="ConstraintCheck")

_UNTRACEABLE = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                jax.errors.TracerIntegerConversionError)


def satisfied(constraint, value: Tensor) -> bool:
    """Whether every element of value satisfies the constraint (True for a traced value:
    inside jit or vmap the values are unknown, and validation is skipped)."""
    if is_traced(value):
        return True
    structure = _structure(constraint)
    if structure is not None and structure not in _OP_BY_OP:
        _CONSTRAINTS.setdefault(structure, constraint)
        try:
            return bool(_check_op(value.detach(), structure))
        except _UNTRACEABLE:
            _OP_BY_OP.add(structure)
    return bool(constraint.check(value).all())


def _tril_positions(n: int, diag: int):
    """Row-major (row, col) indices of the entries on or below diagonal `diag` of n x n."""
    rows, cols = np.tril_indices(n, k=diag)
    return rows, cols


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular entries (on or below diagonal `diag`) of the last two dims, in
    row order."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_positions(n, diag)
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat[..., torch.tensor(rows * n + cols)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of tril_matrix_to_vec: a batch of square matrices, zero above `diag`."""
    m = vec.shape[-1]
    # the positive root of n^2 + (1 + 2 diag) n - |diag| (diag + 1) - 2 m = 0
    b = 1 + 2 * diag
    root = (-b + (b * b + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    n = round(root)
    if abs(n - root) > 1e-6:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    rows, cols = _tril_positions(n, diag)
    # gather from vec padded with one zero: entries off the triangle read the zero
    where = np.full(n * n, m, dtype=np.int64)
    where[rows * n + cols] = np.arange(len(rows))
    padded = torch.cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    return padded[..., torch.tensor(where)].reshape(tuple(vec.shape[:-1]) + (n, n))


def one_of(probs, logits):
    """Check that exactly one of probs/logits was given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def float_value(value, like: Tensor) -> Tensor:
    """A count argument as a floating tensor of like's dtype (integer counts would otherwise
    reach lgamma as int64 and come back float64)."""
    value = as_value(value, like)
    return value if value.is_floating_point() else value.to(like.dtype)
