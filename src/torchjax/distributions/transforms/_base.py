"""Transform, its inverse, and the transforms that combine others (compose, independent,
reshape, cat, stack)."""

from __future__ import annotations

import torchjax as torch

from .. import constraints
from ..utils import lazy_property, sum_rightmost


class Transform:
    """An invertible (or at least forward-computable) map y = t(x) with log|dy/dx|.

    Subclasses define `domain`, `codomain`, `_call`, `_inverse`, `log_abs_det_jacobian`, and
    for shape-changing maps `forward_shape`/`inverse_shape`. With cache_size=1 the transform
    remembers its last (x, y) pair, so inverting a value it just produced returns the very
    x it came from (needed when the inverse is lossy, as for clipped sigmoids).
    """

    bijective = False

    def __init__(self, cache_size: int = 0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv = None
        self._cached_x_y = (None, None)
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None  # a weak back-reference in spirit: rebuilt on demand
        return state

    @property
    def event_dim(self) -> int:
        """How many rightmost dimensions form one event (the larger of the domain's and
        codomain's).
        """
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (the same object on every access)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        """+1 or -1: whether the map is increasing or decreasing (elementwise maps only)."""
        raise NotImplementedError(f"{type(self).__name__} has no sign (it is not a monotone "
                                  "elementwise map)")

    def with_cache(self, cache_size=1):
        """This transform with the given `cache_size` (0 or 1); a cache of 1 remembers the last
        input/output pair so the inverse of a recent output is exact.
        """
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if not self._cache_size:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y):
        if not self._cache_size:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__} does not implement the forward map")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__} does not implement its inverse")

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement "
                                  "log_abs_det_jacobian")

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        return shape

    def inverse_shape(self, shape):
        """The shape of the input that gives an output of shape `shape`."""
        return shape

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform: every method swaps the roles of x and y."""

    def __init__(self, transform: Transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self._inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """`parts[-1](...parts[0](x))`: applied left to right."""

    def __init__(self, parts, cache_size: int = 0):
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The constraint that inputs of this transform satisfy."""
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # walk back from the output: a later part may treat more dims as one event
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The constraint that outputs of this transform satisfy."""
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @lazy_property
    def bijective(self):
        """Whether every part is bijective."""
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self):
        """The product of the parts' signs (for a chain of monotone elementwise transforms)."""
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    @property
    def inv(self):
        """The inverse transform: calling it maps outputs back to inputs."""
        if self._inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            inv._inv = self
            self._inv = inv
        return self._inv

    def with_cache(self, cache_size=1):
        """This transform with the given `cache_size` (0 or 1); a cache of 1 remembers the last
        input/output pair so the inverse of a recent output is exact.
        """
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        if not self.parts:
            return torch.zeros_like(x)
        xs = [x]
        for p in self.parts[:-1]:
            xs.append(p(xs[-1]))
        xs.append(y)
        total = None
        event_dim = self.domain.event_dim
        for p, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = sum_rightmost(p.log_abs_det_jacobian(a, b), event_dim - p.domain.event_dim)
            total = term if total is None else total + term
            event_dim += p.codomain.event_dim - p.domain.event_dim
        return total

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        for p in self.parts:
            shape = p.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        """The shape of the input that gives an output of shape `shape`."""
        for p in reversed(self.parts):
            shape = p.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return "ComposeTransform(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """`base_transform` with `reinterpreted_batch_ndims` more dims treated as the event, so
    its log-det is summed over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims: int, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        """This transform with the given `cache_size` (0 or 1); a cache of 1 remembers the last
        input/output pair so the inverse of a recent output is exact.
        """
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The constraint that inputs of this transform satisfy."""
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The constraint that outputs of this transform satisfy."""
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        """Whether the transform is invertible on its domain."""
        return self.base_transform.bijective

    @property
    def sign(self):
        """The sign of the Jacobian determinant (+1 or -1) for a monotone elementwise transform."""
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        """The shape of the input that gives an output of shape `shape`."""
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Reshape the rightmost `in_shape` dims to `out_shape` (a volume-preserving map)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0):
        self.in_shape = torch.Size(in_shape)
        self.out_shape = torch.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        """The constraint that inputs of this transform satisfy."""
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        """The constraint that outputs of this transform satisfy."""
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        """This transform with the given `cache_size` (0 or 1); a cache of 1 remembers the last
        input/output pair so the inverse of a recent output is exact.
        """
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    @staticmethod
    def _swap(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return torch.Size(tuple(shape[:cut]) + tuple(new))

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        """The shape of the input that gives an output of shape `shape`."""
        return self._swap(shape, self.out_shape, self.in_shape)


class CatTransform(Transform):
    """Transforms `tseq` applied to consecutive slices (of `lengths`) along `dim`."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("CatTransform expects a sequence of Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"CatTransform: {len(self.transforms)} transforms but "
                             f"{len(self.lengths)} lengths")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        """The largest `event_dim` of the concatenated transforms."""
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        """The total size along `dim`: the sum of `lengths`."""
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        """This transform with the given `cache_size` (0 or 1); a cache of 1 remembers the last
        input/output pair so the inverse of a recent output is exact.
        """
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, z):
        if z.size(self.dim) != self.length:
            raise ValueError(f"CatTransform: size {z.size(self.dim)} along dim {self.dim}, "
                             f"expected {self.length}")
        return z.split(self.lengths, self.dim)

    def _call(self, x):
        return torch.cat([t(v) for t, v in zip(self.transforms, self._pieces(x))], self.dim)

    def _inverse(self, y):
        return torch.cat([t.inv(v) for t, v in zip(self.transforms, self._pieces(y))],
                         self.dim)

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        terms = []
        for t, a, b in zip(self.transforms, self._pieces(x), self._pieces(y)):
            terms.append(sum_rightmost(t.log_abs_det_jacobian(a, b),
                                       self.event_dim - t.event_dim))
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        # a cat along a batch dim keeps one log-det per slice; along the event it sums
        return torch.cat(terms, dim) if dim < 0 else sum(terms)

    @property
    def bijective(self):
        """Whether the transform is invertible on its domain."""
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        """The constraint that inputs of this transform satisfy."""
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        """The constraint that outputs of this transform satisfy."""
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Transforms `tseq` applied to the slices of a tensor along `dim`."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("StackTransform expects a sequence of Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        """This transform with the given `cache_size` (0 or 1); a cache of 1 remembers the last
        input/output pair so the inverse of a recent output is exact.
        """
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        if z.size(self.dim) != len(self.transforms):
            raise ValueError(f"StackTransform: size {z.size(self.dim)} along dim {self.dim}, "
                             f"expected {len(self.transforms)}")
        return z.unbind(self.dim)

    def _call(self, x):
        return torch.stack([t(v) for t, v in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return torch.stack([t.inv(v) for t, v in zip(self.transforms, self._slices(y))],
                           self.dim)

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return torch.stack([t.log_abs_det_jacobian(a, b) for t, a, b in
                            zip(self.transforms, self._slices(x), self._slices(y))], self.dim)

    @property
    def bijective(self):
        """Whether the transform is invertible on its domain."""
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        """The constraint that inputs of this transform satisfy."""
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        """The constraint that outputs of this transform satisfy."""
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
