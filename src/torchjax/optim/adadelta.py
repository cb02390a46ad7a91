"""Adadelta on optax.scale_by_adadelta (the same formula as PyTorch's)."""

from __future__ import annotations

import optax

from .optimizer import Optimizer, _check_differentiable, _check_lr, _num, scalar_state, zeros_state

__all__ = ["Adadelta"]


def _adadelta_update(options, h, params, grads, states, fresh):
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states):
        g, _ = optax.add_decayed_weights(h["weight_decay"]).update(g, None, p)
        tx = optax.scale_by_adadelta(h["rho"], h["eps"])
        u, st = tx.update(g, optax.ScaleByAdaDeltaState(e_g=s["square_avg"],
                                                         e_x=s["acc_delta"]))
        new_params.append(p - h["lr"] * u)
        new_states.append({"step": s["step"] + 1, "square_avg": st.e_g, "acc_delta": st.e_x})
    return new_params, new_states


class Adadelta(Optimizer):
    """Adadelta: steps scaled by the ratio of running RMS of updates and of gradients."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_adadelta_update)

    def _init_state(self, p, group):
        return {"step": scalar_state(0.0), "square_avg": zeros_state(p),
                "acc_delta": zeros_state(p)}

    def _hypers(self, group):
        return {k: _num(group[k]) for k in ("lr", "rho", "eps", "weight_decay")}
