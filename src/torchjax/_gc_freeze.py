"""What importing torchjax made, left out of Python's full garbage collections.

Why: importing jax and torchjax leaves ~130k objects the cyclic collector tracks (modules'
functions, classes, op tables), all of them alive until the process ends. A full (generation
2) collection walks every tracked object, and it comes whenever the objects that survived
younger collections grew by a quarter: an eager workload whose graphs live for a while (a
reinforcement-learning episode's ~1000 tape nodes, kept until its backward) promotes that
many every few episodes. Measured on bench/bench_rl.py's actor-critic (60 episodes, a warm
run): 11 full collections took ~1.0 s of a 4.5 s loop, ~90 ms each; with the import's
objects frozen they took 0.18 s. PyTorch keeps its graph in C++ and does not pay this.

`gc.freeze()` moves every tracked object into the collector's permanent generation, which
no collection walks; it is done once, at the end of `import torchjax`. What is lost: a
cycle that was already garbage then (made before or during the import) is never freed, and
`gc.get_objects()` no longer lists the frozen objects (a tool or test that looks for, say,
the op table's prepared calls through it finds none).
TORCHJAX_GC_FREEZE=0 leaves the collector alone.
"""

from __future__ import annotations

import gc
import os


def freeze_import() -> None:
    if os.environ.get("TORCHJAX_GC_FREEZE", "1").strip().lower() in ("0", "false", "off", ""):
        return
    gc.freeze()
