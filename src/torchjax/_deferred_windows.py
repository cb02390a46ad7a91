"""A deferred sequence with tape nodes and no program of its own runs window by window.

Why: a sequence's program is keyed on the whole sequence (_deferred_programs.py), so a graph
whose structure is new every step (a tree net over a new tree per sample) never finds one,
and its ops ran one XLA call each. Its ops repeat in small groups, though: every internal
node of a tree is cat, Linear, tanh, on inputs that come from outside that group. Cut into
such windows, each keyed on its own ops and on where its inputs come from counted from the
window's start, the sequence finds the same few window programs whatever the tree: one XLA
call per tree node instead of three (a fused cat-Linear-tanh with its two outputs measured
5.5 µs here, three dependent calls 13 µs).

Windows: one starts at the sequence's first op and again wherever that op's kind of call
comes back (a loop body), or after MAX_WINDOW ops. A window's program returns the results
used by later windows, alive outside, or saved by tape nodes. A window gets its program the
same way a sequence does (program_for: seen twice, two ops or more, compiled on the worker
thread), and runs op by op until then.

Only sequences that record tape nodes (_deferred_grad.py) run this way: a no-grad sequence
repeats as a whole (the chain, inference), and windows there would only compile more.
"""

from __future__ import annotations

from . import _deferred_programs as _dp

MAX_WINDOW = 16  # ops per window at most


def windows(ops, flat):
    """(index of the first op of each window, then len(ops); the window of each op)."""
    starts = []
    win = []
    first = None
    n = 0
    w = -1
    for _, _, a, _ in ops:
        tok = flat[a - 1]
        if w < 0 or tok == first or n >= MAX_WINDOW:
            w += 1
            starts.append(len(win))
            first = tok
            n = 0
        win.append(w)
        n += 1
    starts.append(len(win))
    return starts, win


def _used_outside(ops, flat, win, live):
    """Per op: whether its result leaves its window (read by a later window, or live)."""
    out = [False] * len(ops)
    for i in live:
        out[i] = True
    for k, (_, _, a, b) in enumerate(ops):
        wk = win[k]
        for s in flat[a:b]:
            if s.__class__ is int:
                if s < 0 and win[~s] != wk:
                    out[~s] = True
            elif s[0] is None:  # a list argument: (None, its sources)
                for x in s[1]:
                    if x.__class__ is int and x < 0 and win[~x] != wk:
                        out[~x] = True
    return out


def run(ops, flat, ext, live):
    """The live results of a sequence, computed window by window."""
    _dp.STATS["windows"] += 1
    starts, win = windows(ops, flat)
    out = _used_outside(ops, flat, win, live)
    vals = [None] * len(ops)
    programs = _dp.PROGRAMS
    for w in range(len(starts) - 1):
        lo, hi = starts[w], starts[w + 1]
        args = []
        where = {}  # a source outside the window -> its argument index

        def local(s, lo=lo, args=args, where=where):
            if s.__class__ is tuple:
                if s[0] is None:
                    return (None, tuple(local(x) for x in s[1]))
                return s  # a constant number
            if s < 0 and ~s >= lo:
                return ~(~s - lo)  # a result of this window
            j = where.get(s)
            if j is None:
                j = where[s] = len(args)
                args.append(ext[s] if s >= 0 else vals[~s])
            return j

        lflat = []
        lops = []
        for call, pure, a, b in ops[lo:hi]:
            lflat.append(flat[a - 1])
            la = len(lflat)
            lflat.extend(local(s) for s in flat[a:b])
            lops.append((call, pure, la, len(lflat)))
        wlive = tuple(k - lo for k in range(lo, hi) if out[k])
        if not wlive:
            continue
        key = (tuple(lflat), wlive)
        prog = programs.get(key)
        if prog is None:
            prog = _dp.program_for(key, lops, wlive, args, True)
        res = prog(*args) if prog is not None else _dp.op_by_op(lops, lflat, args, wlive)
        for j, r in zip(wlive, res):
            vals[lo + j] = r
    return [vals[i] for i in live]
