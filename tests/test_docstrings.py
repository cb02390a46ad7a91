"""Every public class, function and method that the API reference documents has a docstring.

The reference (docs/reference/, mkdocstrings) shows each module's `__all__`; a name there
without a docstring renders as a bare signature. Names re-exported from outside torchjax
(Python's multiprocessing classes) keep their own documentation and are not checked.

Methods: every public method and property (name not starting with "_") of those classes has a
docstring, as `inspect.getdoc` finds it (so `help()` shows one; it falls back to the parent
class's doc for an undocumented override). mkdocstrings does not fall back: the reference
renders an override without its own docstring bare, so a method a public class defines in its
own body must carry its own docstring. Deliberately not checked:
- members a class inherits from outside torchjax (object, dict, Python's multiprocessing):
  documented by their own library;
- data attributes (class constants such as `group.WORLD`, `__slots__` fields, a distribution's
  `support` when it is a constraint object, a namedtuple's fields): they are values, not
  methods; distributions' `lazy_property` attributes (probs, logits, ...) are checked.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = [
    "nn", "nn.init", "nn.utils", "nn.utils.parametrize", "nn.utils.rnn", "optim",
    "optim.lr_scheduler", "optim.swa_utils", "autograd", "autograd.functional", "autograd.graph",
    "func", "compiler", "utils", "utils.data", "utils.checkpoint", "utils.hooks", "utils.viz",
    "amp", "distributed", "distributed.tensor", "distributed.fsdp", "distributions", "sparse",
    "interop", "testing", "random", "serialization", "backends", "cuda", "cpu", "hub", "jit",
    "profiler", "multiprocessing", "overrides", "types", "onnx", "version",
]


def _public_classes(name):
    module = importlib.import_module(f"torchjax.{name}" if name else "torchjax")
    for attr in getattr(module, "__all__", []):
        obj = getattr(module, attr, None)
        if inspect.isclass(obj) and getattr(obj, "__module__", "").startswith("torchjax"):
            yield obj


def _is_method(raw) -> bool:
    """A function, property or other callable in a class body; not a nested class or a value."""
    if _lazy(raw):
        return True
    if isinstance(raw, (staticmethod, classmethod)):
        raw = raw.__func__
    if inspect.isclass(raw) or inspect.ismemberdescriptor(raw) or (
            inspect.isdatadescriptor(raw) and not isinstance(raw, property)):
        return False
    return isinstance(raw, property) or callable(raw)


def _lazy(raw) -> bool:
    # distributions' lazy_property: a property computed once, wrapping its getter
    return inspect.isfunction(getattr(raw, "wrapped", None))


def _methods(cls):
    """(name, the class that defines it, its raw class-body object) for the public methods
    torchjax defines on cls or on one of its (possibly private) torchjax bases."""
    for attr in dir(cls):
        if attr.startswith("_"):
            continue
        owner = next((k for k in cls.__mro__ if attr in vars(k)), None)
        if owner is None or not owner.__module__.startswith("torchjax"):
            continue
        raw = vars(owner)[attr]
        if _is_method(raw):
            yield attr, owner, raw


def _doc(cls, attr, raw) -> str:
    # a property's getdoc is its own (or its parent's, by name); a method's through the class
    if _lazy(raw):
        return (raw.wrapped.__doc__ or "").strip()
    target = raw if isinstance(raw, property) else getattr(cls, attr)
    return (inspect.getdoc(target) or "").strip()


@pytest.mark.parametrize("name", ["", *MODULES])
def test_public_methods_have_docstrings(name):
    missing = sorted({f"{owner.__qualname__}.{attr}"
                      for cls in _public_classes(name)
                      for attr, owner, raw in _methods(cls) if not _doc(cls, attr, raw)})
    assert not missing, f"torchjax.{name}: public methods without a docstring: {missing}"


@pytest.mark.parametrize("name", ["", *MODULES])
def test_methods_a_public_class_defines_have_their_own_docstring(name):
    # what the reference renders: mkdocstrings (inherited_members: false) shows each method a
    # class defines in its own body, with that definition's docstring and no parent fallback
    missing = []
    for cls in _public_classes(name):
        for attr, owner, raw in _methods(cls):
            if owner is not cls:
                continue
            # a property's doc is its own (property(fget, doc=...)) or its getter's
            func = raw.wrapped if _lazy(raw) else getattr(raw, "__func__", raw)
            if not (getattr(func, "__doc__", None) or "").strip():
                missing.append(f"{cls.__qualname__}.{attr}")
    assert not missing, f"torchjax.{name}: methods without their own docstring: {missing}"


@pytest.mark.parametrize("name", MODULES)
def test_public_names_have_docstrings(name):
    module = importlib.import_module(f"torchjax.{name}")
    missing = []
    for attr in getattr(module, "__all__", []):
        obj = getattr(module, attr, None)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not getattr(obj, "__module__", "").startswith("torchjax"):
            continue  # a re-export of another library's object, documented there
        if not (inspect.getdoc(obj) or "").strip():
            missing.append(attr)
    assert not missing, f"torchjax.{name}: public names without a docstring: {missing}"
