"""Python numbers handed to an op's compiled call as device arrays made once.

A Python number passed to a jitted function is converted to a device array on every call
(`x * 2` pays it on each dispatch; measured in docs/performance.md, issue 14). JAX turns the
number into a weakly typed array (`~int64[]` for an int under torchjax's x64 scope; a bool
becomes `bool[]`), and `jax.device_put(number)` makes exactly that array, so handing the compiled call a kept copy
changes neither the program it runs nor the result's dtype (weak types promote the same).

Making the array costs ~100 us (more than the per-call conversion saves in ten calls), so a
value is kept only once it has been passed `_AFTER` times: loop constants (`* 2`, `+ 1`, a
fixed learning rate) are kept, one-off values (`x * i` over a loop counter) pay a dict
update. Both tables are bounded and simply cleared when full.

Only the exact classes int, float and bool are kept, and never 0.0 / -0.0 (equal as dict
keys, different results: `1 / (x * -0.0)`), NaN (unequal to itself, so never found again)
or ints outside int64 (JAX raises for them: the number is passed through for that error).
The arrays are made under the x64 scope, so callers use this only while x64 is on and no JAX
transformation is tracing (inside one the number becomes a literal of that trace anyway).
"""

from __future__ import annotations

import jax

_AFTER = 8
_MAX = 1024
_ARRAYS: dict = {}  # (class, value) -> the weakly typed array JAX makes from that number
_SEEN: dict = {}  # (class, value) -> how many times it was passed before it was kept
_KEPT_CLASSES = frozenset((int, float, bool))
_I64_MIN, _I64_MAX = -(2 ** 63), 2 ** 63 - 1


def seen_enough(table: dict, key, times: int, limit: int) -> bool:
    """Count one more sighting of key in table; True at the `times`-th (the count is then
    forgotten). The table holds at most `limit` keys (it starts over when full): what never
    recurs stays cheap."""
    n = table.get(key, 0) + 1
    if n < times:
        if len(table) >= limit:
            table.clear()
        table[key] = n
        return False
    table.pop(key, None)  # (another thread may have cleared the table)
    return True


def on_device(v):
    """The kept array for the number v, or v itself (not kept yet, or never keepable)."""
    cls = v.__class__
    key = (cls, v)
    got = _ARRAYS.get(key)
    # (a kept array is never handed out as a tensor's data, but should one ever be donated
    # by a compiled step, it is made again instead of failing every later call)
    if got is not None and not got.is_deleted():
        return got
    if cls not in _KEPT_CLASSES:
        return v
    if cls is float:
        if v == 0.0 or v != v:
            return v
    elif cls is int and not _I64_MIN <= v <= _I64_MAX:
        return v
    if not seen_enough(_SEEN, key, _AFTER, _MAX):
        return v
    if len(_ARRAYS) >= _MAX:
        _ARRAYS.clear()
    got = _ARRAYS[key] = jax.device_put(v)
    return got
