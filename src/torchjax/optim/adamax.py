"""Adamax on optax.scale_by_adamax (PyTorch's formula: u = max(b2 * u, |g| + eps))."""

from __future__ import annotations

import jax.numpy as jnp
import optax

from .optimizer import (
    Optimizer,
    _check_betas_eps_wd,
    _check_differentiable,
    _check_lr,
    _num,
    scalar_state,
    zeros_state,
)

__all__ = ["Adamax"]


def _adamax_update(options, h, params, grads, states, fresh):
    decay = optax.add_decayed_weights(h["weight_decay"])
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states):
        g, _ = decay.update(g, None, p)
        tx = optax.scale_by_adamax(h["beta1"], h["beta2"], h["eps"])
        u, st = tx.update(g, optax.ScaleByAdamState(
            count=s["step"].astype(jnp.int32), mu=s["exp_avg"], nu=s["exp_inf"]))
        new_params.append(p - h["lr"] * u)
        new_states.append({"step": s["step"] + 1, "exp_avg": st.mu, "exp_inf": st.nu})
    return new_params, new_states


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm of past gradients in the denominator."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_betas_eps_wd(betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_adamax_update)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0), "exp_avg": zeros_state(p), "exp_inf": zeros_state(p)}

    def _hypers(self, group):
        b1, b2 = group["betas"]
        return {"lr": _num(group["lr"]), "beta1": _num(b1), "beta2": _num(b2),
                "eps": _num(group["eps"]), "weight_decay": _num(group["weight_decay"])}
