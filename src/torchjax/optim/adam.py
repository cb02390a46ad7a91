"""Adam (and AdamW's decoupled weight decay) on optax.scale_by_adam / optax.scale_by_amsgrad."""

from __future__ import annotations

import jax.numpy as jnp
import optax

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_betas_eps_wd,
    _check_differentiable,
    _check_fused,
    _check_lr,
    _num,
    cast,
    scalar_state,
    zeros_state,
)

__all__ = ["Adam"]


def _adam_one(amsgrad, h, g, s):
    """One parameter's Adam direction (before -lr) and its new moments."""
    b1, b2 = h["beta1"], h["beta2"]
    count = s["step"].astype(jnp.int32)
    if not amsgrad:
        u, st = optax.scale_by_adam(b1, b2, h["eps"]).update(
            g, optax.ScaleByAdamState(count=count, mu=s["exp_avg"], nu=s["exp_avg_sq"]))
        return u, {"exp_avg": st.mu, "exp_avg_sq": st.nu}
    # PyTorch keeps the running max of the *uncorrected* second moment and divides it by the
    # current bias correction: m_hat / (sqrt(max_v) / sqrt(bc2) + eps). optax's
    # bias_correction_nu=False gives m_hat / (sqrt(max_v) + eps'); with eps' = eps * sqrt(bc2)
    # and the result times sqrt(bc2) that is exactly PyTorch's formula.
    bc2_sqrt = jnp.sqrt(1 - b2 ** (count + 1).astype(jnp.float64))
    tx = optax.scale_by_amsgrad(b1, b2, cast(h["eps"] * bc2_sqrt, g), bias_correction_nu=False)
    u, st = tx.update(g, optax.ScaleByAmsgradState(
        count=count, mu=s["exp_avg"], nu=s["exp_avg_sq"], nu_max=s["max_exp_avg_sq"]))
    return u * cast(bc2_sqrt, u), {"exp_avg": st.mu, "exp_avg_sq": st.nu,
                                   "max_exp_avg_sq": st.nu_max}


def _adam_update(options, h, params, grads, states, fresh):
    amsgrad, decoupled = options
    decay = optax.add_decayed_weights(h["weight_decay"])
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states):
        if not decoupled:
            g, _ = decay.update(g, None, p)
        u, st = _adam_one(amsgrad, h, g, s)
        if decoupled:
            # AdamW: p * (1 - lr * wd) - lr * u, i.e. the decay joins the update before -lr.
            u, _ = decay.update(u, None, p)
        new_params.append(p - h["lr"] * u)
        new_states.append({"step": s["step"] + 1, **st})
    return new_params, new_states


def _check_betas_kind(betas, capturable, foreach) -> None:
    if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    for i in (0, 1):
        if isinstance(betas[i], Tensor):
            if not capturable and foreach:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                 "capturable=False and foreach=True")
            if betas[i].numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")


def _squeeze(x):
    return x.squeeze() if isinstance(x, Tensor) and x.dim() != 0 else x


class Adam(Optimizer):
    """Adam, with amsgrad and (decoupled_weight_decay=True) AdamW's weight decay."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        _check_lr(lr)
        _check_betas_eps_wd(betas, eps, weight_decay)
        _check_betas_kind(betas, capturable, foreach)
        betas = tuple(map(_squeeze, betas))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        _check_differentiable(differentiable)

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_adam_update)

    def _init_state(self, p, group):
        state = {"step": scalar_state(0.0), "exp_avg": zeros_state(p),
                 "exp_avg_sq": zeros_state(p)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_state(p)
        return state

    def _options(self, group):
        return (bool(group["amsgrad"]), bool(group["decoupled_weight_decay"]))

    def _hypers(self, group):
        b1, b2 = group["betas"]
        return {"lr": _num(group["lr"]), "beta1": _num(b1), "beta2": _num(b2),
                "eps": _num(group["eps"]), "weight_decay": _num(group["weight_decay"])}
