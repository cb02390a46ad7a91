"""Which compiled programs may be kept in the program cache (_programs.py), and what a
process must set up before it runs one it did not lower itself.

A program cache entry is run without tracing or lowering it again, and lowering is where JAX
prepares the runtime state some custom calls read. Found with jax 0.10.2: the LAPACK kernels
behind `jnp.linalg.cholesky`, `qr`, `eigh`, `svd`, `lu`, triangular solves ... (`lapack_*`
custom calls) look their routines up in function pointers that `jaxlib.cpu._lapack.initialize()`
fills in (from SciPy's LAPACK), and JAX calls that only while lowering such a call. A process
that loads the executable and runs it jumps through a null pointer: a segmentation fault, which
no `try` can catch. So an entry names the runtimes it needs, and they are set up before it is
loaded; a custom call of any other kind (a host callback, whose executable refers to a Python
function registered in the process that compiled it; an FFI target a library registered) is
not kept at all: such a program is traced and lowered each time, and JAX's persistent cache
(keyed after lowering, so after the setup) still spares its compile.
"""

from __future__ import annotations

import re

_CALL = re.compile(r'custom_call @([\w$.\-]+)|call_target_name = "([^"]*)"')


class NotKept(Exception):
    """A program whose executable cannot be run safely by another process."""


def _lapack() -> None:
    from jax._src.lax import linalg  # initialize_lapack: jax 0.10.2's name for the setup
    linalg.initialize_lapack()


# the custom calls a kept entry may hold: target name prefix -> (runtime name, its setup)
_RUNTIMES = {"lapack_": ("lapack", _lapack)}
_SETUP = dict(_RUNTIMES.values())


def needs(lowered) -> tuple[str, ...]:
    """The runtimes `lowered`'s executable needs set up in a process that did not lower it;
    NotKept when it holds a custom call that no setup makes safe."""
    try:  # the module's text without its large constants (only call targets are read)
        text = lowered.compiler_ir("stablehlo").operation.get_asm(
            large_elements_limit=16, enable_debug_info=False)
    except Exception:  # noqa: BLE001  (another JAX's lowering API)
        text = lowered.as_text()
    if "custom_call" not in text:
        return ()
    out = set()
    for pretty, generic in _CALL.findall(text):
        target = pretty or generic
        for prefix, (runtime, _) in _RUNTIMES.items():
            if target.startswith(prefix):
                out.add(runtime)
                break
        else:
            raise NotKept(target)
    if not out:  # "custom_call" in a form the pattern missed: not kept, to be safe
        raise NotKept("custom call")
    return tuple(sorted(out))


def set_up(runtimes) -> None:
    """Prepare this process for an entry needing `runtimes` (before loading it). An unknown
    runtime (an entry of a torchjax that knew more) raises NotKept: the entry is not used."""
    for name in runtimes:
        setup = _SETUP.get(name)
        if setup is None:
            raise NotKept(name)
        setup()
