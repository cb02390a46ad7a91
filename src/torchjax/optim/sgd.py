"""SGD on optax's transforms: weight decay (optax.add_decayed_weights), momentum (optax.trace)."""

from __future__ import annotations

import jax.numpy as jnp
import optax

from .._tensor import Tensor
from .optimizer import Optimizer, _check_differentiable, _check_fused, _num, zeros_state

__all__ = ["SGD"]


def _sgd_update(options, h, params, grads, states, fresh):
    nesterov, with_momentum, with_decay = options
    if with_decay:  # PyTorch skips it at 0 (so an inf weight does not turn its update to nan)
        grads, _ = optax.add_decayed_weights(h["weight_decay"]).update(grads, None, params)
    if not with_momentum:
        return [p - h["lr"] * g for p, g in zip(params, grads)], [{} for _ in params]
    # PyTorch's buffer starts as the gradient itself and later adds (1 - dampening) * grad;
    # optax.trace computes buf = momentum * buf + update from a zero buffer, so feeding it the
    # undamped gradient on a parameter's first step and the damped one afterwards is the same.
    damped = [jnp.where(f, g, (1 - h["dampening"]) * g) for g, f in zip(grads, fresh)]
    bufs = [s["momentum_buffer"] for s in states]
    updates, trace = optax.trace(decay=h["momentum"], nesterov=nesterov).update(
        damped, optax.TraceState(trace=bufs))
    new_params = [p - h["lr"] * u for p, u in zip(params, updates)]
    return new_params, [{"momentum_buffer": b} for b in trace.trace]


class SGD(Optimizer):
    """Stochastic gradient descent with PyTorch's momentum, dampening and nesterov rules."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        _check_differentiable(differentiable)

    def step(self, closure=None):
        """Perform a single optimization step; returns the closure's loss if one is given."""
        return self._default_step(closure)

    _update = staticmethod(_sgd_update)

    def _stateful(self, group):
        # PyTorch only touches state (the momentum buffer) when momentum is non-zero.
        return group["momentum"] != 0

    def _init_state(self, p, group):
        return {"momentum_buffer": zeros_state(p)}

    def _options(self, group):
        # (weight decay on or off is a choice, as PyTorch's `if weight_decay != 0`: a compiled
        # step then neither takes it as an input nor computes grad + 0 * param)
        return (bool(group["nesterov"]), group["momentum"] != 0, group["weight_decay"] != 0)

    def _hypers(self, group):
        return {k: _num(group[k]) for k in ("lr", "momentum", "dampening", "weight_decay")}

