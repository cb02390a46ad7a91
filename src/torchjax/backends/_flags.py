"""A context manager that sets some of a backend module's flags and puts them back."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def set_flags(module, **flags):
    """Set module.<name> = value for the flags given (None leaves one as it is), restore after."""
    flags = {k: v for k, v in flags.items() if v is not None}
    saved = {k: getattr(module, k) for k in flags}
    for k, v in flags.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(module, k, v)
