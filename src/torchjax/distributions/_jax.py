"""Pure JAX functions as torchjax ops, for the distributions' formulas and samplers.

`@kernel(name)` is `interop.from_jax`: the function runs as one jitted call and records one
tape node, whose backward is JAX's vjp of it. Non-array arguments (shapes, flags, Python
numbers) are static: each new value compiles once.

`@sampler` turns `fn(key, shape, *params) -> array` into `draw(shape, *params,
generator=None)` taking Tensors. The key comes from `_random.key_parts` (the generator's
base key and offset: the hook vmap's randomness modes and compiled mode use) and reaches
`fn` already folded. A draw that is differentiable in its parameters (loc + scale * eps;
jax.random.gamma, whose gradient in the concentration is JAX's implicit reparameterisation)
is an rsample with gradients, and under no_grad it is a sample.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

from .. import _random
from .._tensor import Tensor
from .._x64 import scope
from ..interop import from_jax


def kernel(name: str):
    """Decorator: a module-level pure JAX function as a torchjax op named `name`."""
    def decorate(fn):
        return from_jax(fn, name=name)
    return decorate


def sampler(fn):
    """Wrap a module-level `fn(key, shape, *params)` (define it once: it keys a compile cache)."""

    def keyed(key_data, offset, shape, *params):
        key = jax.random.fold_in(jax.random.wrap_key_data(key_data), offset)
        return fn(key, shape, *params)

    op = kernel(fn.__name__.lstrip("_"))(keyed)

    def draw(shape, *params, generator=None):
        # in torchjax's x64 scope, as every entry point that computes arrays: the
        # generator's hooks (vmap's randomness modes) fold keys here, before the op's own
        # scope begins
        with scope():
            key, offset = _random.key_parts(generator)
            # key and offset travel as tensors (not compile-cache keys), so a new draw reuses
            # the compiled sampler
            return op(Tensor._wrap(jax.random.key_data(key)),
                      Tensor._wrap(jnp.asarray(offset)), tuple(shape), *params)

    draw.__name__ = fn.__name__
    draw.__doc__ = fn.__doc__
    return draw


def float_dtype(*arrays):
    """The floating dtype of a draw from parameters `arrays`."""
    dt = jnp.result_type(*arrays)
    return dt if jnp.issubdtype(dt, jnp.floating) else jnp.float32


def tiny(dtype):
    return jnp.finfo(dtype).tiny


def eps(dtype):
    return jnp.finfo(dtype).eps


# PyTorch's derivatives at kinks, where jax.numpy's differ: |x|' = sign(x) (0 at 0, where
# jnp.abs gives 1) and clamp's derivative is 1 on the boundary (jnp.maximum splits it, 0.5).

def abs0(x):
    """|x| whose derivative at 0 is 0, as torch.abs's."""
    return x * jnp.sign(x)


def clamp_min(x, lower):
    """max(x, lower) whose derivative is 1 where x == lower, as torch.clamp's."""
    return jnp.where(x >= lower, x, lower)


def clamp(x, lower, upper):
    """clip(x, lower, upper) whose derivative is 1 on [lower, upper], as torch.clamp's."""
    return jnp.where((x >= lower) & (x <= upper), x, jnp.clip(x, lower, upper))


@jax.custom_jvp
def xlogy(x, y):
    """x * log(y), 0 where x == 0, differentiated as torch.xlogy is: the derivative in x is
    0 where x == 0 and y <= 0 (jax's is log(y), -inf at y = 0), so Gamma(1, rate).log_prob(0)
    has a finite gradient in the concentration."""
    return jsp.xlogy(x, y)


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    x, y = primals
    dx, dy = tangents
    at_zero = (x == 0) & (y <= 0)
    # the log of a safe argument, so the unused branch carries no nan into higher derivatives
    dlog = jnp.where(at_zero, 0.0, jnp.log(jnp.where(at_zero, 1.0, y)))
    return jsp.xlogy(x, y), dx * dlog + dy * x / y
