"""L-BFGS with PyTorch's iteration, history and strong-Wolfe line search.

The loop needs the loss and several reductions on the host at every iteration (PyTorch's
stopping tests), so it runs in Python; the two-loop recursion over the history is one jitted
call on stacked, fixed-size history buffers.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._autograd.grad_mode import enable_grad, no_grad
from .._tensor import Tensor
from .optimizer import Optimizer, _check_lr, _num

__all__ = ["LBFGS"]


@jax.jit
def _two_loop(flat_grad, dirs, stps, ro, num_old, h_diag):
    """The L-BFGS direction -H g from the newest `num_old` rows of the history (oldest first)."""

    def backward(j, carry):
        q, al = carry
        i = num_old - 1 - j
        a = jnp.dot(stps[i], q) * ro[i]
        return q - a * dirs[i], al.at[i].set(a)

    q, al = lax.fori_loop(0, num_old, backward, (-flat_grad, jnp.zeros_like(ro)))

    def forward(i, r):
        be = jnp.dot(dirs[i], r) * ro[i]
        return r + (al[i] - be) * stps[i]

    return lax.fori_loop(0, num_old, forward, q * h_diag), al


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to the bounds."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if not d2_square >= 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


def _dot(a, b) -> float:
    return float(jnp.dot(a, b))


class _Bracket:
    """The line search's interval: step sizes, losses, gradients and directional derivatives."""

    def __init__(self, ts, fs, gs, gtds):
        self.t, self.f, self.g, self.gtd = list(ts), list(fs), list(gs), list(gtds)

    def set(self, i, t, f, g, gtd):
        self.t[i], self.f[i], self.g[i], self.gtd[i] = t, f, g, gtd

    def copy(self, dst, src):
        self.set(dst, self.t[src], self.f[src], self.g[src], self.gtd[src])


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Find a step satisfying the strong Wolfe conditions (bracketing, then zooming)."""
    d_norm = float(jnp.max(jnp.abs(d)))
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    bracket = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = _Bracket((t_prev, t), (f_prev, f_new), (g_prev, g_new),
                               (gtd_prev, gtd_new))
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = _Bracket((t,), (f_new,), (g_new,), (gtd_new,))
            done = True
            break
        if gtd_new >= 0:
            bracket = _Bracket((t_prev, t), (f_prev, f_new), (g_prev, g_new),
                               (gtd_prev, gtd_new))
            break
        # Extrapolate between 1.01 t and 10 t.
        t_next = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                    bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = _Bracket((0, t), (f, f_new), (g, g_new), (gtd, gtd_new))

    insuf_progress = False
    low, high = (0, 1) if bracket.f[0] <= bracket.f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket.t[1] - bracket.t[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket.t[0], bracket.f[0], bracket.gtd[0],
                               bracket.t[1], bracket.f[1], bracket.gtd[1])
        # Keep away from the interval's ends unless the last step made too little progress.
        top, bottom = max(bracket.t), min(bracket.t)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insuf_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket.f[low]:
            bracket.set(high, t, f_new, g_new, gtd_new)
            low, high = (0, 1) if bracket.f[0] <= bracket.f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket.t[high] - bracket.t[low]) >= 0:
                bracket.copy(high, low)
            bracket.set(low, t, f_new, g_new, gtd_new)
    return bracket.f[low], bracket.g[low], bracket.t[low], evals


def _as_real_flat(a):
    if jnp.iscomplexobj(a):
        a = jnp.stack([a.real, a.imag], -1)
    return a.reshape(-1)


def _scalar(x, dtype) -> Tensor:
    return Tensor._wrap(jnp.asarray(x, dtype))


class LBFGS(Optimizer):
    """L-BFGS (a single parameter group; step() needs a closure returning the loss)."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # -- flat views of the parameters ------------------------------------------------------

    def _gather_flat_grad(self):
        return jnp.concatenate([
            _as_real_flat(p.grad._data) if p.grad is not None
            else jnp.zeros(_as_real_flat(p._data).shape, _as_real_flat(p._data).dtype)
            for p in self._params])

    def _add_grad(self, step_size, update) -> None:
        offset = 0
        for p in self._params:
            a = p._data
            n = _as_real_flat(a).size
            piece = update[offset:offset + n]
            if jnp.iscomplexobj(a):
                piece = piece.reshape(a.shape + (2,))
                piece = lax.complex(piece[..., 0], piece[..., 1])
            p._write(a + (step_size * piece.reshape(a.shape)).astype(a.dtype))
            offset += n

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, a in zip(self._params, x):
            p._write(a)
        return loss, flat_grad

    @staticmethod
    def _direction(flat_grad, old_dirs, old_stps, ro, h_diag, history_size):
        """The two-loop recursion on the history padded to history_size rows (one compile)."""
        num_old = len(old_dirs)
        pad = [jnp.zeros_like(flat_grad)] * (history_size - num_old)
        zero = jnp.zeros((), flat_grad.dtype)
        return _two_loop(flat_grad, jnp.stack([v._data for v in old_dirs] + pad),
                         jnp.stack([v._data for v in old_stps] + pad),
                         jnp.stack([r._data for r in ro] + [zero] * (history_size - num_old)),
                         num_old, jnp.asarray(_num(h_diag), flat_grad.dtype))

    # -- the step --------------------------------------------------------------------------

    @no_grad()
    def step(self, closure):
        """Run up to max_iter L-BFGS iterations; returns the closure's first loss."""
        group = self.param_groups[0]
        lr = group["lr"]
        lr = _num(lr) if isinstance(lr, Tensor) else lr  # an int lr stays an int, as t
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        closure = enable_grad()(closure)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if float(jnp.max(jnp.abs(flat_grad))) <= tol_grad:
            return orig_loss

        d = state["d"]._data if state.get("d") is not None else None
        t = state.get("t")
        old_dirs, old_stps = state.get("old_dirs"), state.get("old_stps")
        ro, h_diag = state.get("ro"), state.get("H_diag")
        prev_flat_grad = state.get("prev_flat_grad")
        prev_flat_grad = prev_flat_grad._data if prev_flat_grad is not None else None
        prev_loss = state.get("prev_loss")
        al = None
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1
            else:
                y, s = flat_grad - prev_flat_grad, d * t
                ys = _dot(y, s)
                if ys > 1e-10:  # keep the pair only while the curvature condition holds
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(Tensor._wrap(y))
                    old_stps.append(Tensor._wrap(s))
                    ro.append(_scalar(1.0 / ys, y.dtype))
                    h_diag = _scalar(ys / _dot(y, y), y.dtype)
                state.setdefault("al", [None] * history_size)
                d, al = self._direction(flat_grad, old_dirs, old_stps, ro, h_diag,
                                        history_size)
                num_old = len(old_dirs)
            prev_flat_grad = flat_grad
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(jnp.sum(jnp.abs(flat_grad)))) * lr
            else:
                t = lr
            gtd = _dot(flat_grad, d)
            if gtd > -tol_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._data for p in self._params]

                def obj_func(x, step, direction):
                    return self._directional_evaluate(closure, x, step, direction)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = float(jnp.max(jnp.abs(flat_grad))) <= tol_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = float(jnp.max(jnp.abs(flat_grad))) <= tol_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if (n_iter == max_iter or current_evals >= max_eval or opt_cond
                    or float(jnp.max(jnp.abs(d * t))) <= tol_change
                    or abs(loss - prev_loss) < tol_change):
                break

        if al is not None:  # the two-loop coefficients PyTorch leaves in state["al"]
            for i, a in enumerate(np.asarray(al)[:num_old]):
                state["al"][i] = _scalar(a, al.dtype)
        state.update(d=Tensor._wrap(d), t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro,
                     H_diag=h_diag, prev_flat_grad=Tensor._wrap(prev_flat_grad),
                     prev_loss=prev_loss)
        return orig_loss
