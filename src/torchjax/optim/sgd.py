"""SGD on optax's transforms: weight decay, then momentum (optax.trace), then -lr."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from .._autograd.grad_mode import no_grad
from .optimizer import Optimizer, required


@jax.jit
def _no_state_step(params, grads, lr, weight_decay, maximize_sign):
    def upd(p, g):
        g = maximize_sign * g + weight_decay * p
        return p - lr * g
    return [upd(p, g) for p, g in zip(params, grads)]


def _momentum_fn(momentum, dampening, nesterov):
    # optax.trace is PyTorch's momentum buffer when dampening is 0 (b = m*b + g; first b = g);
    # with dampening, PyTorch scales g by (1 - dampening) after the first step, so we keep the
    # buffer ourselves in that case.
    tx = optax.trace(decay=momentum, nesterov=nesterov)

    def step(params, grads, bufs, first, lr, weight_decay, maximize_sign):
        gs = [maximize_sign * g + weight_decay * p for p, g in zip(params, grads)]
        if dampening == 0:
            state = optax.TraceState(trace=bufs)
            upd, state = tx.update(gs, state)
            new_bufs = list(state.trace)
            if not nesterov:
                upd = new_bufs
        else:
            new_bufs = [jnp.where(first, g, momentum * b + (1 - dampening) * g)
                        for b, g in zip(bufs, gs)]
            upd = [g + momentum * b for g, b in zip(gs, new_bufs)] if nesterov else new_bufs
        return [p - lr * u for p, u in zip(params, upd)], new_bufs

    return jax.jit(step)


class SGD(Optimizer):
    """Stochastic gradient descent with PyTorch's momentum, dampening and nesterov rules."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))
        self._fns: dict = {}

    @no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            from .._autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        for g in self.param_groups:
            ps = [p for p in g["params"] if p._grad is not None]
            if not ps:
                continue
            params = [p._data for p in ps]
            grads = [p._grad._data for p in ps]
            lr = jnp.asarray(g["lr"], params[0].dtype)
            wd = jnp.asarray(g["weight_decay"], params[0].dtype)
            sign = jnp.asarray(-1.0 if g["maximize"] else 1.0, params[0].dtype)
            m = g["momentum"]
            if m == 0:
                new = _no_state_step(params, grads, lr, wd, sign)
            else:
                key = (m, g["dampening"], g["nesterov"])
                fn = self._fns.get(key)
                if fn is None:
                    fn = self._fns[key] = _momentum_fn(*key)
                bufs = []
                first = []
                for p in ps:
                    st = self.state[p]
                    b = st.get("momentum_buffer")
                    first.append(b is None)
                    bufs.append(jnp.zeros_like(p._data) if b is None else b._data)
                new, new_bufs = fn(params, grads, bufs, jnp.asarray(all(first)), lr, wd, sign)
                from .._tensor import Tensor
                for p, b in zip(ps, new_bufs):
                    st = self.state[p]
                    if st.get("momentum_buffer") is None:
                        st["momentum_buffer"] = Tensor._wrap(b)
                    else:
                        st["momentum_buffer"]._data = b
            for p, a in zip(ps, new):
                p._write(a)
        return loss
