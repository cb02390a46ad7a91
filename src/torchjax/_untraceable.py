"""The error an op raises when traced code needs values that exist only when the program runs.

It is a RuntimeError, as the user sees it in eager mode under jax.jit or torchjax.func. While
torchjax.compile traces a step it sets ON_CREATE to note every such error, so that one caught
by the user's own try/except (a sample's `raises()`, a fallback around an op) still breaks the
graph: otherwise the trace would complete and the program would return whatever the except
clause made of a message that eager mode never produces.
"""

from __future__ import annotations

ON_CREATE = [None]  # a callable given each new error, or None (the compiler's hook)


class Untraceable(RuntimeError):
    """A shape or Python value that depends on a traced tensor's values."""

    def __init__(self, message: str):
        super().__init__(message)
        hook = ON_CREATE[0]
        if hook is not None:
            hook(self)
