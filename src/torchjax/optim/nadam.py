"""NAdam with PyTorch's momentum-decay schedule (optax's nadam has no such schedule)."""

from __future__ import annotations

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

__all__ = ["NAdam"]


def _nadam_one(h, p, g, s):
    """Dozat's NAdam as PyTorch runs it: mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * psi)) and the
    running product of the mu_t replace optax.nadam's constant beta1 (written here for that)."""
    b1, b2, lr = h["beta1"], h["beta2"], h["lr"]
    step = s["step"] + 1
    t = step.astype(jnp.float64)
    mu = b1 * (1.0 - 0.5 * 0.96 ** (t * h["momentum_decay"]))
    mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * h["momentum_decay"]))
    # The product is stored in the state's dtype (float32), as PyTorch's in-place multiply.
    mu_product = (s["mu_product"].astype(jnp.float64) * mu).astype(s["mu_product"].dtype)
    prod = mu_product.astype(jnp.float64)
    m = optax.tree.update_moment(g, s["exp_avg"], b1, 1)
    v = optax.tree.update_moment_per_elem_norm(g, s["exp_avg_sq"], b2, 2)
    denom = jnp.sqrt(v / cast(1 - b2 ** t, v)) + h["eps"]
    p = p + cast(-lr * (1.0 - mu) / (1.0 - prod), p) * g / denom
    p = p + cast(-lr * mu_next / (1.0 - prod * mu_next), p) * m / denom
    return p, {"step": step, "mu_product": mu_product, "exp_avg": m, "exp_avg_sq": v}


def _nadam_update(options, h, params, grads, states, fresh):
    (decoupled,) = options
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states):
        if decoupled:
            p = p * (1 - h["lr"] * h["weight_decay"])
        else:
            g, _ = optax.add_decayed_weights(h["weight_decay"]).update(g, None, p)
        p, st = _nadam_one(h, p, g, s)
        new_params.append(p)
        new_states.append(st)
    return new_params, new_states


class NAdam(Optimizer):
    """Adam with Nesterov momentum and a decaying momentum schedule (momentum_decay)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_betas_eps_wd(betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_nadam_update)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0), "mu_product": scalar_state(1.0),
                "exp_avg": zeros_state(p), "exp_avg_sq": zeros_state(p)}

    def _options(self, group):
        return (bool(group["decoupled_weight_decay"]),)

    def _hypers(self, group):
        b1, b2 = group["betas"]
        return {"lr": _num(group["lr"]), "beta1": _num(b1), "beta2": _num(b2),
                "eps": _num(group["eps"]), "weight_decay": _num(group["weight_decay"]),
                "momentum_decay": _num(group["momentum_decay"])}
