"""Every public class and function that the API reference documents has a docstring.

The reference (docs/reference/, mkdocstrings) shows each module's `__all__`; a name there
without a docstring renders as a bare signature. Names re-exported from outside torchjax
(Python's multiprocessing classes) keep their own documentation and are not checked; methods
are not checked yet.
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
