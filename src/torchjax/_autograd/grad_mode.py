"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local)."""

from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False


STATE = _State()


def is_grad_enabled() -> bool:
    """Whether operations are recorded for autograd now (off inside `no_grad`).

    See https://pytorch.org/docs/stable/generated/torch.is_grad_enabled.html.
    """
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference


class _DecoratorContextManager:
    """A context manager that also works as a decorator (with or without parentheses)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        gen.close()
                        raise
                    with self.clone():
                        try:
                            response = gen.send(request)
                        except StopIteration as e:
                            return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        """A new instance of the same context manager."""
        return type(self)()


class no_grad(_DecoratorContextManager):
    """Disable gradient recording inside the block."""

    # (`with no_grad():` is on every no-grad step: the common call, no argument, is
    # answered first, without super())
    def __init__(self, orig_func=None):
        self._prev = None
        if orig_func is not None and callable(orig_func):
            self._wrapped = self(orig_func)

    def __new__(cls, orig_func=None):
        if orig_func is None or not callable(orig_func):
            return object.__new__(cls)
        return cls()(orig_func)  # used as @no_grad without parentheses

    def __enter__(self):
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = False

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside the block (for instance within no_grad)."""

    def __new__(cls, orig_func=None):
        if orig_func is None or not callable(orig_func):
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        self._prev = None

    def __enter__(self):
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = True

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev


class set_grad_enabled(_DecoratorContextManager):
    """Switch gradient recording on or off; takes effect at once, and as a context manager."""

    def __init__(self, mode: bool):
        self._prev = STATE.grad_enabled
        self.mode = bool(mode)
        STATE.grad_enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev

    def clone(self):
        """A new context manager with the same mode."""
        return type(self)(self.mode)

    def __call__(self, func):
        STATE.grad_enabled = self._prev  # as a decorator it must not change the mode now
        return super().__call__(func)


class inference_mode(_DecoratorContextManager):
    """Like no_grad; tensors made inside are inference tensors."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self._prev = None

    def __enter__(self):
        self._prev = (STATE.grad_enabled, STATE.inference)
        if self.mode:
            STATE.grad_enabled = False
            STATE.inference = True

    def __exit__(self, *exc):
        STATE.grad_enabled, STATE.inference = self._prev

    def clone(self):
        """A new context manager with the same mode."""
        return type(self)(self.mode)
