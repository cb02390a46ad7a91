"""Random sampling functions of the torch namespace (bernoulli, multinomial, poisson, ...),
honouring manual_seed and an explicit Generator."""

from __future__ import annotations

__all__: list[str] = []
