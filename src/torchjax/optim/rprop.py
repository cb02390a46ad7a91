"""Rprop with PyTorch's rules (written here: optax.scale_by_rprop differs, see below)."""

from __future__ import annotations

import jax.numpy as jnp

from .optimizer import (
    Optimizer,
    _check_differentiable,
    _check_lr,
    _num,
    full_state,
    scalar_state,
    zeros_state,
)

__all__ = ["Rprop"]


def _rprop_update(options, h, params, grads, states, fresh):
    # PyTorch clamps the step size on every step (also when the sign product is 0, which
    # optax.scale_by_rprop leaves unclamped) and remembers the masked gradient, not the step.
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states):
        sign = jnp.sign(g * s["prev"])
        factor = jnp.where(sign > 0, h["etaplus"], jnp.where(sign < 0, h["etaminus"], 1.0))
        step_size = jnp.clip(s["step_size"] * factor.astype(g.dtype), h["step_size_min"],
                             h["step_size_max"])
        g = jnp.where(sign < 0, jnp.zeros_like(g), g)
        new_params.append(p - jnp.sign(g) * step_size)
        new_states.append({"step": s["step"] + 1, "prev": g, "step_size": step_size})
    return new_params, new_states


class Rprop(Optimizer):
    """Resilient backpropagation: per-element step sizes adapted by the gradient's sign."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_rprop_update)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0), "prev": zeros_state(p),
                "step_size": full_state(p, _num(group["lr"]))}

    def _hypers(self, group):
        (etaminus, etaplus), (lo, hi) = group["etas"], group["step_sizes"]
        return {"etaminus": _num(etaminus), "etaplus": _num(etaplus),
                "step_size_min": _num(lo), "step_size_max": _num(hi)}
