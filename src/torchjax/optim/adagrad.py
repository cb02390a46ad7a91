"""Adagrad with PyTorch's formula (written here: optax.scale_by_rss differs, see below)."""

from __future__ import annotations

import jax.numpy as jnp
import optax

from .optimizer import (
    Optimizer,
    _check_differentiable,
    _check_fused,
    _check_lr,
    _num,
    cast,
    full_state,
    scalar_state,
)

__all__ = ["Adagrad"]


def _adagrad_update(options, h, params, grads, states, fresh):
    # optax.scale_by_rss computes g / sqrt(sum + eps) (eps inside the root, and 0 where the sum
    # is 0); PyTorch computes g / (sqrt(sum) + eps) with a learning rate decayed per step.
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states):
        g, _ = optax.add_decayed_weights(h["weight_decay"]).update(g, None, p)
        step = s["step"] + 1
        clr = h["lr"] / (1 + (step.astype(jnp.float64) - 1) * h["lr_decay"])
        total = s["sum"] + g * g
        new_params.append(p - cast(clr, p) * g / (jnp.sqrt(total) + h["eps"]))
        new_states.append({"step": step, "sum": total})
    return new_params, new_states


class Adagrad(Optimizer):
    """Adagrad; its state is created for every parameter at construction, as in PyTorch."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        _check_differentiable(differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._init_state(p, group))

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_adagrad_update)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0),
                "sum": full_state(p, group["initial_accumulator_value"])}

    def _hypers(self, group):
        return {k: _num(group[k]) for k in ("lr", "lr_decay", "eps", "weight_decay")}
