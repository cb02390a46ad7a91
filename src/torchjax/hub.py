"""torchjax.hub: checkpoints from the local hub cache, and models from local hubconf.py files.

torchjax downloads nothing: load_state_dict_from_url reads the file PyTorch would have cached,
`<hub dir>/checkpoints/<file name>`, and says where to put it when it is missing; load / list
/ help work with source="local" (a directory with a hubconf.py) and raise for GitHub.
"""

from __future__ import annotations

import importlib.util
import os
import sys

__all__ = ["get_dir", "set_dir", "load", "list", "help", "load_state_dict_from_url",
           "download_url_to_file"]

_hub_dir: str | None = None


def _torch_home() -> str:
    cache = os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache"))
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch")))


def get_dir() -> str:
    """The hub cache directory: set_dir's, else $TORCH_HOME/hub, else ~/.cache/torch/hub."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_torch_home(), "hub")


def set_dir(d) -> None:
    """Sets the hub directory that `get_dir` and `load_state_dict_from_url` use.

    See https://pytorch.org/docs/stable/hub.html#torch.hub.set_dir.
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def _no_network(what: str):
    return RuntimeError(
        f"{what} is not supported by torchjax: it downloads nothing (the network is not "
        f"reachable). Put the files in the hub cache yourself ({get_dir()}), or use a local "
        f"directory with source='local'")


def download_url_to_file(url: str, dst: str, hash_prefix=None, progress: bool = True) -> None:
    """Raises: torchjax downloads nothing. Place the file under the hub directory yourself.

    See https://pytorch.org/docs/stable/hub.html#torch.hub.download_url_to_file.
    """
    raise _no_network(f"torch.hub.download_url_to_file({url!r})")


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool = False):
    """torchjax.load of the cached copy of `url`: `<model_dir>/<file name of the url>`."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    from urllib.parse import urlparse
    name = file_name or os.path.basename(urlparse(url).path)
    path = os.path.join(model_dir, name)
    if not os.path.exists(path):
        raise RuntimeError(
            f"torch.hub.load_state_dict_from_url: {url} is not in the local cache ({path}) "
            f"and torchjax does not download files; download it there yourself and run again")
    from .serialization import load as _load
    return _load(path, map_location=map_location, weights_only=weights_only)


def _hubconf(repo_or_dir: str, source: str):
    if source != "local":
        raise _no_network(f"torch.hub with source={source!r} ({repo_or_dir!r})")
    path = os.path.join(os.path.expanduser(repo_or_dir), "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"torch.hub: no hubconf.py in {repo_or_dir!r}")
    directory = os.path.dirname(os.path.abspath(path))
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    # hubconf.py imports its repository's own modules, as PyTorch lets it
    sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(directory)
    return module


def _entrypoint(module, model: str):
    fn = getattr(module, model, None)
    if model.startswith("_") or not callable(fn):
        raise RuntimeError(f"torch.hub: no callable entrypoint {model!r} in hubconf.py")
    return fn


def load(repo_or_dir: str, model: str, *args, source: str = "github", trust_repo=None,
         force_reload: bool = False, verbose: bool = True, skip_validation: bool = False,
         **kwargs):
    """The model `model` of a local hubconf.py (source="local"), called with args/kwargs."""
    return _entrypoint(_hubconf(repo_or_dir, source), model)(*args, **kwargs)


def list(repo_or_dir: str, source: str = "github", force_reload: bool = False,  # noqa: A001
         skip_validation: bool = False, trust_repo=None, verbose: bool = True):
    """The entrypoints of a local hubconf.py (source="local")."""
    module = _hubconf(repo_or_dir, source)
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(repo_or_dir: str, model: str, source: str = "github",  # noqa: A001
         force_reload: bool = False, skip_validation: bool = False, trust_repo=None) -> str:
    """The docstring of one entrypoint of a local hubconf.py (source="local")."""
    return _entrypoint(_hubconf(repo_or_dir, source), model).__doc__ or ""
