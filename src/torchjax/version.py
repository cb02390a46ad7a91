"""torchjax.version: the PyTorch version whose API torchjax follows, and build facts.

`__version__` is "2.13.0+torchjax": scripts read torch.__version__ to choose which PyTorch API
to use, and the API torchjax implements (and is tested against) is PyTorch 2.13's. The local
label "+torchjax" says which implementation this is, as "+cpu" or "+cu121" do for PyTorch's
builds. torchjax's own release is `torchjax_version`.

    >>> import torchjax
    >>> torchjax.version.__version__ >= "2.0", torchjax.version.__version__ >= (2, 13)
    (True, True)
"""

from __future__ import annotations

import re

__all__ = ["TorchVersion", "__version__", "cuda", "hip", "rocm", "xpu", "debug", "git_version",
           "torchjax_version"]

torchjax_version = "0.1.0"

# torchjax has no CUDA, ROCm or XPU build of its own (JAX's plugins provide the accelerators),
# so these are None as in PyTorch's CPU build; scripts test them to pick GPU-only code paths.
cuda = None
hip = None
rocm = None
xpu = None
debug = False
git_version = "unknown"

_VERSION = re.compile(
    r"v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>a|b|rc|alpha|beta|c)[-_.]?(?P<pre_n>\d*))?"
    r"(?:[-_.]?post[-_.]?(?P<post>\d*))?"
    r"(?:[-_.]?dev[-_.]?(?P<dev>\d*))?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?",
    re.IGNORECASE)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}


def _sort_key(text: str) -> tuple:
    """A tuple that orders PEP 440 versions: X.devN < XaN < XbN < XrcN < X < X+local < X.postN."""
    m = _VERSION.fullmatch(text.strip())
    if m is None:
        raise ValueError(text)
    release = [int(p) for p in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:  # "2.13" and "2.13.0" are the same release
        release.pop()
    if m["pre"] is not None:
        pre = (0, _PRE_RANK[m["pre"].lower()], int(m["pre_n"] or 0))
    elif m["dev"] is not None and m["post"] is None:
        pre = (-1,)  # a dev release of X comes before X's pre-releases
    else:
        pre = (1,)
    post = (-1,) if m["post"] is None else (int(m["post"] or 0),)
    dev = (1,) if m["dev"] is None else (0, int(m["dev"] or 0))
    local = () if m["local"] is None else tuple(
        (1, int(p), "") if p.isdigit() else (0, 0, p.lower())
        for p in re.split(r"[-_.]", m["local"]))
    return (tuple(release), pre, post, dev, (m["local"] is not None,) + local)


class TorchVersion(str):
    """A version string that compares as a version with strings and tuples of ints.

    `TorchVersion("2.13.0+torchjax") >= (2, 1)` and `>= "2.1"` are True; a string that is not a
    version compares as a string.
    """

    def _compare(self, other, op) -> bool:
        if isinstance(other, (tuple, list)):
            other = ".".join(str(p) for p in other)
        if not isinstance(other, str):
            return NotImplemented
        try:
            return op(_sort_key(self), _sort_key(other))
        except ValueError:
            return op(str(self), str(other))

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = str.__hash__


__version__ = TorchVersion("2.13.0+torchjax")
