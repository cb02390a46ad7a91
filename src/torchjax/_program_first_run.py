"""An executable's first run, made on zeros by the thread that loaded or compiled it.

An XLA:CPU executable's first run, after loading it from the program cache or compiling it,
costs more than its later ones: measured, 1.1-3.3 ms against 0.3-0.6 ms for a 30-parameter
update, and 75-100 ms against ~10 ms for a GPT's fused backward, most of it YNNPACK building
its matrix-multiply pipelines. That first run would otherwise be the step's, on the main
thread. So the thread that compiles a program ahead of the step that will use it
(_programs.compile_ahead: the fused backward) runs it once on zeros before keeping it.
(_program_prefetch's loaders do not: measured, it cost the warm step more than it saved; see
there.) Only on CPU devices (what was measured), only in a one-process job, only programs of
at most MAX_ELEMENTS argument elements (the zeros are this thread's memory), never one with a
loop.
"""

from __future__ import annotations


def on_zeros(compiled) -> None:
    """Run `compiled` (a jax.stages.Compiled on CPU devices) once on zeros of its argument
    types; any failure (a key array, a weakly typed argument the zeros do not match) leaves
    the first run to the step."""
    try:
        import jax
        import numpy as np

        from ._host_put import _single_process
        from ._x64 import scope

        # never in a job of several processes: an SPMD program's collectives would meet the
        # other processes' real calls of it
        if not _single_process():
            return

        avals = [a._aval for a in jax.tree_util.tree_leaves(compiled.args_info)]
        if sum(a.size for a in avals) > MAX_ELEMENTS:
            return
        # never a loop: how often it runs may depend on the values, and zeros could make it
        # run for ever (a process waits for this thread at exit)
        if " while(" in compiled.as_text():
            return
        # input_shardings leaves out the arguments the program does not use (a fused
        # backward's, an update's): those get the executable's one device
        shardings = jax.tree_util.tree_leaves(compiled.input_shardings)
        if len(shardings) != len(avals):
            devices = compiled._executable.xla_executable.local_devices()
            if len(devices) != 1:
                return
            shardings = [devices[0]] * len(avals)
        # (in torchjax's x64 scope: a program with int64 or float64 arguments was compiled in
        # it, and zeros made outside it would be int32 / float32)
        with scope():
            zeros = [jax.device_put(np.zeros(a.shape, a.dtype), s)
                     for a, s in zip(avals, shardings)]
            args, kwargs = jax.tree_util.tree_unflatten(compiled.in_tree, zeros)
            jax.block_until_ready(compiled(*args, **kwargs))
    except Exception:  # noqa: BLE001
        pass


MAX_ELEMENTS = 16 << 20
