"""RMSprop on optax.scale_by_rms / scale_by_stddev (eps outside the root) and optax.trace."""

from __future__ import annotations

import optax

from .optimizer import Optimizer, _check_differentiable, _check_lr, _num, scalar_state, zeros_state

__all__ = ["RMSprop"]


def _rmsprop_update(options, h, params, grads, states, fresh):
    centered, with_momentum = options
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states):
        g, _ = optax.add_decayed_weights(h["weight_decay"]).update(g, None, p)
        # PyTorch adds eps after the square root: g / (sqrt(v) + eps), optax's eps_in_sqrt=False.
        st = {"step": s["step"] + 1}
        if centered:
            tx = optax.scale_by_stddev(h["alpha"], h["eps"], eps_in_sqrt=False)
            u, rms = tx.update(g, optax.ScaleByRStdDevState(mu=s["grad_avg"],
                                                             nu=s["square_avg"]))
            st["grad_avg"] = rms.mu
        else:
            tx = optax.scale_by_rms(h["alpha"], h["eps"], eps_in_sqrt=False)
            u, rms = tx.update(g, optax.ScaleByRmsState(nu=s["square_avg"]))
        st["square_avg"] = rms.nu
        if with_momentum:
            u, tr = optax.trace(h["momentum"]).update(
                u, optax.TraceState(trace=s["momentum_buffer"]))
            st["momentum_buffer"] = tr.trace
        new_params.append(p - h["lr"] * u)
        new_states.append(st)
    return new_params, new_states


class RMSprop(Optimizer):
    """RMSprop with optional centering and momentum."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_rmsprop_update)

    def _init_state(self, p, group):
        state = {"step": scalar_state(0.0), "square_avg": zeros_state(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_state(p)
        if group["centered"]:
            state["grad_avg"] = zeros_state(p)
        return state

    def _options(self, group):
        return (bool(group["centered"]), group["momentum"] > 0)

    def _hypers(self, group):
        return {k: _num(group[k]) for k in ("lr", "alpha", "eps", "weight_decay", "momentum")}
