"""RAdam on optax.scale_by_radam, with PyTorch's eps placement and strict threshold."""

from __future__ import annotations

import math

import jax.numpy as jnp
import optax

from .optimizer import (
    Optimizer,
    _check_betas_eps_wd,
    _check_differentiable,
    _check_lr,
    _num,
    cast,
    scalar_state,
    zeros_state,
)

__all__ = ["RAdam"]

# PyTorch rectifies when rho_t > 5; optax when rho_t >= threshold. The next double above 5
# makes the two tests the same (rho_t is computed in float64 in both).
_THRESHOLD = math.nextafter(5.0, math.inf)


def _radam_one(h, g, s):
    b2 = h["beta2"]
    count = s["step"].astype(jnp.int32)
    # PyTorch divides by sqrt(v) + eps and then multiplies by sqrt(bc2); optax adds eps to
    # sqrt(v / bc2). Scaling optax's eps by 1 / sqrt(bc2) gives PyTorch's denominator exactly.
    bc2_sqrt = jnp.sqrt(1 - b2 ** (count + 1).astype(jnp.float64))
    tx = optax.scale_by_radam(h["beta1"], b2, cast(h["eps"] / bc2_sqrt, g),
                              threshold=_THRESHOLD)
    u, st = tx.update(g, optax.ScaleByAdamState(count=count, mu=s["exp_avg"],
                                                nu=s["exp_avg_sq"]))
    return u, {"step": s["step"] + 1, "exp_avg": st.mu, "exp_avg_sq": st.nu}


def _radam_update(options, h, params, grads, states, fresh):
    (decoupled,) = options
    decay = optax.add_decayed_weights(h["weight_decay"])
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states):
        if not decoupled:
            g, _ = decay.update(g, None, p)
        u, st = _radam_one(h, g, s)
        if decoupled:
            u, _ = decay.update(u, None, p)
        new_params.append(p - h["lr"] * u)
        new_states.append(st)
    return new_params, new_states


class RAdam(Optimizer):
    """Rectified Adam: plain momentum SGD until the variance estimate is tractable."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr(lr)
        _check_betas_eps_wd(betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_radam_update)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0), "exp_avg": zeros_state(p),
                "exp_avg_sq": zeros_state(p)}

    def _options(self, group):
        return (bool(group["decoupled_weight_decay"]),)

    def _hypers(self, group):
        b1, b2 = group["betas"]
        return {"lr": _num(group["lr"]), "beta1": _num(b1), "beta2": _num(b2),
                "eps": _num(group["eps"]), "weight_decay": _num(group["weight_decay"])}
