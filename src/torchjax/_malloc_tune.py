"""glibc malloc's thresholds, set so that XLA:CPU's buffers are reused rather than mapped
and unmapped at every step.

Why: on the CPU backend every array XLA makes is host memory from malloc. glibc serves a
request above its mmap threshold (128 KiB at start) with a fresh mapping and returns it to
the kernel when freed, and trims the top of its heap once more than its trim threshold is
free: the next step's buffers then cost page faults and zero-filled pages again. glibc
raises both thresholds by itself when a large mapped block is freed, so how often this
happens depends on what the process did before: measured on bench/bench_startup.py's GPT
(2 blocks, d 128, AdamW), the steady step of a process that compiled its programs (large
compile buffers freed early) was 19-20 ms, of one that loaded them from the program cache
25-28 ms, with 35-42 ms of CPU per step against 26-28 (perf: page faults, unmap_page_range,
clear_page in the slow one). With both thresholds set (mmap 32 MiB, glibc's own ceiling for
its adjustment; trim 256 MiB) the loaded process's step took 24.6 ms of CPU.

Set at `import torchjax` on Linux with glibc; TORCHJAX_MALLOC_TUNE=0 leaves malloc alone,
and so does a process whose environment sets glibc's own MALLOC_MMAP_THRESHOLD_,
MALLOC_TRIM_THRESHOLD_ or GLIBC_TUNABLES (the user's choice). What it costs: up to the trim
threshold of freed memory stays in the process rather than going back to the kernel.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1  # (glibc's malloc.h)
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20
_USERS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")
APPLIED = [False]  # (read by tests)


def tune() -> bool:
    """Set the thresholds (once, at import); whether they were set."""
    if not sys.platform.startswith("linux"):
        return False
    if os.environ.get("TORCHJAX_MALLOC_TUNE", "1").strip().lower() in ("0", "false", "off", ""):
        return False
    if any(k in os.environ for k in _USERS):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc: another libc's mallopt differs)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    APPLIED[0] = (mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                  and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1)
    return APPLIED[0]
