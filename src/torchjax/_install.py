"""`import torch` as torchjax: install_as_torch() and the "not supported" errors.

After install_as_torch(), `torch` and every `torch.X.Y` are the module objects `torchjax` and
`torchjax.X.Y` (not copies), so classes, isinstance checks and pickles agree whichever name a
script used. Three pieces do it:

- sys.modules: every torchjax module already imported is entered under its torch name too;
- a meta-path finder maps a later `import torch.X.Y` onto `torchjax.X.Y`, and for a module
  torchjax does not have raises "torch.X.Y is not supported by torchjax";
- a directory holding a one-line `torch` module that calls install_as_torch() goes on
  sys.path, so processes started by multiprocessing (DataLoader workers, spawn), which re-run
  the script before they import anything else, get torchjax as torch as well.

A missing attribute of a torchjax module names the torch API it stands for: the package's
`__getattr__` (and, once installed, every torchjax module's) imports a submodule of that name
if there is one (PyTorch makes its submodules attributes) and otherwise raises
`AttributeError: torch.foo is not supported by torchjax`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys

__all__ = ["install_as_torch"]

_SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_shim")


def _torch_name(name: str) -> str:
    return "torch" + name[len("torchjax"):]


def _not_supported_getattr(module_name: str):
    """A module-level __getattr__ for `module_name`: submodules on first use, else the error."""

    def __getattr__(name: str):
        if name == "__path__":
            # (asked by the import system at every `from .module import name` inside a
            # function, of a module that is no package: the answer, without the message)
            raise AttributeError(name)
        module = sys.modules.get(module_name)
        if not (name.startswith("__") and name.endswith("__")) and hasattr(module, "__path__"):
            full = f"{module_name}.{name}"
            try:
                found = importlib.util.find_spec(full) is not None
            except (ImportError, ValueError):
                found = False
            if found:
                try:
                    return importlib.import_module(full)
                except ImportError as e:
                    # hasattr() and getattr(..., default) catch AttributeError only
                    raise AttributeError(f"{_torch_name(full)} is not available: {e}") from e
        raise AttributeError(
            f"{_torch_name(module_name)}.{name} is not supported by torchjax (module "
            f"{module_name!r} has no attribute {name!r})")

    __getattr__.__qualname__ = __getattr__.__name__
    return __getattr__


_package_getattr = _not_supported_getattr("torchjax")


class _TorchAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `torch.X.Y` as the already-imported module object `torchjax.X.Y`."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        real = "torchjax" + fullname[len("torch"):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as e:
            # only a missing torchjax module is "not supported"; a missing third-party
            # package that a torchjax module needs keeps its own message
            if e.name is not None and (real == e.name or real.startswith(e.name + ".")):
                raise ModuleNotFoundError(
                    f"{_torch_name(e.name)} is not supported by torchjax (there is no module "
                    f"{e.name!r})", name=fullname) from None
            raise
        _original_specs[real] = module.__spec__
        return importlib.util.spec_from_loader(
            fullname, self, origin=getattr(module, "__file__", None),
            is_package=hasattr(module, "__path__"))

    def create_module(self, spec):
        return sys.modules["torchjax" + spec.name[len("torch"):]]

    def exec_module(self, module):
        # the import system has just set module.__spec__ to the alias's spec; torchjax's own
        # relative imports read __spec__ and __package__, which must keep saying torchjax
        module.__spec__ = _original_specs[module.__name__]
        _add_getattr(module)


# torchjax module name -> its own spec, put back after the import system overwrites it
_original_specs: dict = {}
_finder = _TorchAliasFinder()


def _add_getattr(module) -> None:
    name = getattr(module, "__name__", "")
    if name.startswith("torchjax") and "__getattr__" not in vars(module):
        module.__getattr__ = _not_supported_getattr(name)


def _alias(name: str, module) -> None:
    sys.modules.setdefault(_torch_name(name), module)
    _add_getattr(module)


def install_as_torch() -> None:
    """Make `import torch` (and `torch.X.Y`, `from torch import ...`) give torchjax.

    Call it before anything imports torch; `python -m torchjax script.py` calls it for you.
    It also puts a directory on sys.path whose `torch` module does the same, so that processes
    multiprocessing starts (DataLoader workers, torch.multiprocessing.spawn) get torchjax too.

        import torchjax
        torchjax.install_as_torch()
        import torch, torch.nn as nn  # torchjax, torchjax.nn
    """
    torchjax = sys.modules["torchjax"]
    current = sys.modules.get("torch")
    shim = os.path.dirname(getattr(current, "__file__", None) or "") == _SHIM_DIR
    if current is not None and current is not torchjax and not shim:
        raise RuntimeError(
            f"torch is already imported in this process as PyTorch itself ({current!r}); call "
            f"torchjax.install_as_torch() before anything imports torch, or run the script "
            f"with `python -m torchjax script.py`")
    sys.modules["torch"] = torchjax
    for name, module in list(sys.modules.items()):
        if (name == "torchjax" or name.startswith("torchjax.")) and module is not None \
                and name != "torchjax.__main__":
            _alias(name, module)
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    if _SHIM_DIR not in sys.path:
        # after the script's own directory (sys.path[0]) and before site-packages, where a
        # real PyTorch may be installed
        sys.path.insert(1 if sys.path else 0, _SHIM_DIR)
