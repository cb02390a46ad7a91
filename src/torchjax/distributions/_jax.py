"""Pure JAX functions as torchjax ops, for the distributions' formulas and samplers.

`@kernel(name)` is `interop.from_jax` around a jitted copy of the function: from_jax runs the
function once more under jax.linearize the first time it meets new shapes (to learn which
outputs depend on which inputs), and a jitted body makes that one compiled program instead of
one dispatch per jax.numpy operation. Non-array arguments (shapes, flags, Python numbers) are
static to the jit, as they are to from_jax.

`@sampler` turns `fn(key, shape, *params) -> array` into `draw(shape, *params,
generator=None)` taking Tensors. The key comes from `_random.key_parts` (the generator's
base key and offset: the hook vmap's randomness modes and compiled mode use) and reaches
`fn` already folded. A draw that is differentiable in its parameters (loc + scale * eps;
jax.random.gamma, whose gradient in the concentration is JAX's implicit reparameterisation)
is an rsample with gradients, and under no_grad it is a sample.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .. import _random
from .._tensor import Tensor
from ..interop import from_jax


def _is_array(x) -> bool:
    return isinstance(x, (jax.Array, jax.core.Tracer))


def _jitted_by_statics(fn):
    """fn, jitted with its non-array positional arguments static (one jit per pattern)."""
    jits: dict = {}

    @functools.wraps(fn)
    def call(*args):
        statics = tuple(i for i, a in enumerate(args) if not _is_array(a))
        f = jits.get(statics)
        if f is None:
            f = jits[statics] = jax.jit(fn, static_argnums=statics)
        return f(*args)

    return call


def kernel(name: str):
    """Decorator: a module-level pure JAX function as a torchjax op named `name`."""
    def decorate(fn):
        return from_jax(_jitted_by_statics(fn), name=name)
    return decorate


def sampler(fn):
    """Wrap a module-level `fn(key, shape, *params)` (define it once: it keys a compile cache)."""

    def keyed(key_data, offset, shape, *params):
        key = jax.random.fold_in(jax.random.wrap_key_data(key_data), offset)
        return fn(key, shape, *params)

    op = kernel(fn.__name__.lstrip("_"))(keyed)

    def draw(shape, *params, generator=None):
        key, offset = _random.key_parts(generator)
        # key and offset travel as tensors (not compile-cache keys), so a new draw reuses the
        # compiled sampler
        return op(Tensor._wrap(jax.random.key_data(key)), Tensor._wrap(jnp.asarray(offset)),
                  tuple(shape), *params)

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
