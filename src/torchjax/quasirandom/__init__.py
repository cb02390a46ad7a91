"""torchjax.quasirandom: torch.quasirandom.SobolEngine, Sobol low-discrepancy sequences.

Unscrambled (PyTorch's default), the points are PyTorch's to the last bit: both follow Joe
and Kuo's direction numbers with 30 bits, in Gray-code order, as scipy.stats.qmc.Sobol does;
scipy (a dependency of JAX) generates them here. Scrambled (scramble=True), the points are a
random linear matrix scramble plus digital shift, as PyTorch's, drawn from scipy's generator
seeded with `seed`: valid scrambled Sobol points, but not PyTorch's values (torchjax's random
streams are not PyTorch's anyway).
"""

from __future__ import annotations

import warnings

__all__ = ["SobolEngine"]


class SobolEngine:
    """Draws points of a Sobol sequence in [0, 1)^dimension, each draw continuing the last."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        from scipy.stats import qmc  # imported here: `import torchjax` does not load scipy
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self._sampler = qmc.Sobol(dimension, scramble=scramble, bits=self.MAXBIT, seed=seed)
        self.num_generated = 0

    def draw(self, n: int = 1, out=None, dtype=None):
        """The next n points, an (n, dimension) tensor of `dtype` (the default dtype)."""
        from .. import _dtypes, tensor
        with warnings.catch_warnings():
            # scipy warns when n is not a power of 2; PyTorch's draw() does not
            warnings.simplefilter("ignore", UserWarning)
            points = self._sampler.random(n)
        self.num_generated += n
        d = _dtypes.get_default_dtype() if dtype is None else dtype
        result = tensor(points, dtype=d)
        if out is not None:
            return out.resize_as_(result).copy_(result)
        return result

    def draw_base2(self, m: int, out=None, dtype=None):
        """The next 2**m points; the total drawn must stay a power of 2."""
        n = 2 ** m
        total_n = self.num_generated + n
        if total_n & (total_n - 1) != 0:
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, "
                "please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Start the sequence again from its first point."""
        self._sampler.reset()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip the next n points."""
        self._sampler.fast_forward(n)
        self.num_generated += n
        return self

    def __repr__(self):
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(parts)})"
