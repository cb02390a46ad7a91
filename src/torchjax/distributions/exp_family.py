"""ExponentialFamily: distributions with density exp(<t(x), theta> - F(theta) + k(x))."""

from __future__ import annotations

import torchjax as torch

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of the exponential families. A subclass that gives its natural parameters theta
    (`_natural_params`), log normaliser F (`_log_normalizer`) and mean carrier measure E[k(x)]
    gets a generic entropy, F(theta) - <theta, grad F(theta)> - E[k(x)], and a generic KL
    divergence to its own family (the Bregman divergence of F)."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} does not define _natural_params")

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError(f"{type(self).__name__} does not define _log_normalizer")

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError(f"{type(self).__name__} does not define "
                                  "_mean_carrier_measure")

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        thetas = [p.detach().requires_grad_() for p in self._natural_params]
        with torch.enable_grad():
            f = self._log_normalizer(*thetas)
            grads = torch.autograd.grad(f.sum(), thetas, create_graph=True)
        result = f - self._mean_carrier_measure
        for theta, g in zip(thetas, grads):
            result = result - (theta * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
