"""python -m torchjax script.py [args...]: run a PyTorch script, unchanged, on torchjax.

The script sees `import torch` (and every torch.X, `from torch import ...`) as torchjax, and
runs as if started with `python script.py args...`: __name__ == "__main__", sys.argv is
[script.py, args...] and the script's directory is sys.path[0]. `-m module args...` runs a
module the same way (as `python -m module`). See torchjax.install_as_torch.
"""

from __future__ import annotations

import os
import runpy
import sys

_USAGE = """usage: python -m torchjax script.py [args ...]
       python -m torchjax -m module [args ...]

Runs a PyTorch program with `import torch` resolving to torchjax."""


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stdout if argv else sys.stderr)
        raise SystemExit(0 if argv else 2)
    if argv[0] == "-m" and len(argv) < 2:
        print(_USAGE, file=sys.stderr)
        raise SystemExit(2)
    if argv[0] != "-m" and not os.path.exists(argv[0]):
        print(f"python -m torchjax: can't open file {argv[0]!r}: no such file", file=sys.stderr)
        raise SystemExit(2)
    import torchjax
    torchjax.install_as_torch()
    if argv[0] == "-m":
        sys.argv = argv[1:]  # run_module puts the module's file name in sys.argv[0]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = argv[0]
    sys.argv = list(argv)
    # `python -m` put the working directory first on sys.path; `python script.py` puts the
    # script's directory there, where the script's own imports look
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


def _run(argv: list[str]) -> None:
    try:
        main(argv)
    except BaseException as e:
        code = e.code if isinstance(e, SystemExit) else 1
        if code not in (None, 0) and "torchjax.distributed._exit" in sys.modules:
            # A rank that fails in a job of several processes exits without JAX's exit
            # barrier, so that the launcher stops the others (torchjax/distributed/_exit.py;
            # init_process_group imported it). Seen here too: a `raise SystemExit(1)` that
            # no sys.exit recorded
            from torchjax.distributed import _exit
            if _exit.in_multiprocess_job():
                _exit.skip_exit_barrier()
        raise


if __name__ == "__main__":
    _run(sys.argv[1:])
