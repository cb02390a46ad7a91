"""RemovableHandle (public as torchjax.utils.hooks.RemovableHandle): every hook registry in
torchjax (tensors, graph nodes, modules, optimizers) is a dict keyed by the handle's id."""

from __future__ import annotations

import weakref
from collections import OrderedDict


def add_hook(store: dict | None, hook) -> tuple[dict, RemovableHandle]:
    """Add `hook` to `store` (made when None); the store and the handle that removes it."""
    if store is None:
        store = OrderedDict()
    handle = RemovableHandle(store)
    store[handle.id] = hook
    return store, handle


class RemovableHandle:
    """A handle that removes a hook from its dict (and from the extra dicts that mark it)."""

    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict or ())

    def remove(self) -> None:
        """Unregisters the hook this handle was returned for; removing twice is harmless."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        # a dict that died with its owner pickles as None: keep a dead reference
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extras = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras if d is not None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
