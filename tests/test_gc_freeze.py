"""`import torchjax` freezes what it made out of full garbage collections (_gc_freeze.py);
cycles made afterwards are still collected, and TORCHJAX_GC_FREEZE=0 leaves gc alone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

_SCRIPT = textwrap.dedent("""
    import gc, weakref
    import torchjax
    frozen = gc.get_freeze_count()
    class Cycle:
        pass
    a = Cycle()
    a.me = a
    a.t = torchjax.ones(3) * 2  # (a tensor in the cycle too)
    ref = weakref.ref(a)
    del a
    gc.collect()
    print(frozen, ref() is None)
""")


def _run(**env):
    res = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    frozen, freed = res.stdout.split()
    return int(frozen), freed == "True"


def test_import_freezes_and_later_cycles_are_collected():
    frozen, freed = _run()
    assert frozen > 10000 and freed


def test_switch_leaves_gc_alone():
    frozen, freed = _run(TORCHJAX_GC_FREEZE="0")
    assert frozen == 0 and freed
