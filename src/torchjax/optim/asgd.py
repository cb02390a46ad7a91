"""ASGD (averaged SGD), written here: optax has no transform for it."""

from __future__ import annotations

import jax.numpy as jnp
import optax

from .optimizer import (
    Optimizer,
    _check_differentiable,
    _check_lr,
    _num,
    cast,
    scalar_state,
    zeros_state,
)

__all__ = ["ASGD"]


def _asgd_update(options, h, params, grads, states, fresh):
    lr, lambd = h["lr"], h["lambd"]
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states):
        g, _ = optax.add_decayed_weights(h["weight_decay"]).update(g, None, p)
        step = s["step"] + 1
        eta = s["eta"].astype(jnp.float64)
        p = p * cast(1 - lambd * eta, p) - cast(eta, p) * g
        mu = s["mu"]
        # With mu == 1 PyTorch copies the parameter into the average instead of blending.
        ax = jnp.where(mu == 1, p, s["ax"] + (p - s["ax"]) * mu.astype(p.dtype))
        t = step.astype(jnp.float64)
        new_eta = lr / ((1 + lambd * lr * t) ** h["alpha"])
        new_mu = 1 / jnp.maximum(1.0, t - h["t0"])
        new_params.append(p)
        new_states.append({"step": step, "eta": cast(new_eta, s["eta"]),
                           "mu": cast(new_mu, s["mu"]), "ax": ax})
    return new_params, new_states


class ASGD(Optimizer):
    """Averaged stochastic gradient descent; state["ax"] holds the running average."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_asgd_update)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0), "eta": scalar_state(_num(group["lr"])),
                "mu": scalar_state(1.0), "ax": zeros_state(p)}

    def _hypers(self, group):
        return {k: _num(group[k]) for k in ("lr", "lambd", "alpha", "t0", "weight_decay")}
