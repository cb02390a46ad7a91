"""Samples for the rows in _ops/view_copies.py (torch.view_copy and the other view copies)."""

import numpy as np

from .harness import S, err, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(105)

# complex32 (PyTorch's experimental ComplexHalf) does not exist in JAX: a clear error, as for
# view_as_complex and view_as_real
HALF_SKIP = {("view_as_complex_copy", "float16"): "complex32",
             ("view_as_real_copy", "float16"): "complex32"}


def _complex_grad_error(lib, x):
    """PyTorch refuses to record view_as_complex_copy: its output is complex."""
    return raises(lambda lib, x: lib.view_as_complex_copy(x.requires_grad_()))(lib, x)


SAMPLES = {
    "view_copy": [
        S(make(2, 3), (3, 2)),
        S(make(2, 3), [-1]),
        S(make(4, dtype="int64"), (2, 2)),
        S(make(2, 3), (4, 2), grad=False, call=raises(lambda lib, x, s: lib.view_copy(x, s))),
    ],
    "expand_copy": [
        S(make(2, 1), (2, 4)),
        S(make(3), (2, -1)),
        S(make(2, 3), (3, 3), grad=False,
          call=raises(lambda lib, x, s: lib.expand_copy(x, s))),
    ],
    "permute_copy": [S(make(2, 3, 4), (2, 0, 1)), S(make(2, 3), [1, 0])],
    "t_copy": [S(make(2, 3)), S(make(3)), S(make(2, 2, 2), grad=False,
                                            call=raises(lambda lib, x: lib.t_copy(x)))],
    "transpose_copy": [S(make(2, 3, 4), 0, 2), S(make(2, 3), -1, 0)],
    "squeeze_copy": [
        S(make(1, 3, 1)),
        S(make(1, 3, 1), 2),
        S(make(1, 3, 1), dim=(0, 2)),
        S(make(2, 3), 0),
    ],
    "unsqueeze_copy": [S(make(2, 3), 1), S(make(2, 3), -1)],
    "select_copy": [S(make(2, 3), 1, 2), S(make(2, 3), 0, -1),
                    S(make(2, 3), 0, 5, grad=False,
                      call=raises(lambda lib, x, d, i: lib.select_copy(x, d, i)))],
    "slice_copy": [
        S(make(2, 5), 1, 1, 4, 2),
        S(make(2, 5)),
        S(make(2, 5), 1, -3),
        S(make(2, 5), 1, 10, 20),
        S(make(4, 3), dim=0, end=3),
        S(make(2, 5), 1, 0, 4, 0, grad=False,
          call=raises(lambda lib, x, *a: lib.slice_copy(x, *a))),
    ],
    "alias_copy": [S(make(2, 3)), S(make(3, dtype="int32"))],
    "unbind_copy": [S(make(3, 2)), S(make(2, 3), 1)],
    "split_copy": [S(make(5, 2), 2), S(make(4, 6), 4, 1)],
    "split_with_sizes_copy": [S(make(3, 6), [1, 2, 3], 1), S(make(5, 2), [2, 3])],
    "unfold_copy": [S(make(2, 7), 1, 3, 2), S(make(6), 0, 2, 2)],
    "view_as_real_copy": [S(make(3) + 1j * make(3))],
    "view_as_complex_copy": [S(make(3, 2), grad=False),
                             S(make(3, 2), grad=False, call=_complex_grad_error), S(np.zeros((3,), np.float32), grad=False,
                                              call=raises(lambda lib, x:
                                                          lib.view_as_complex_copy(x)))],
}


def _detach_copy_backward(lib, x):
    """PyTorch records detach_copy with a node that cannot be differentiated."""
    y = lib.detach_copy(x.requires_grad_())
    return err(lambda: y.sum().backward()), y.requires_grad, y.detach()


SAMPLES["detach_copy"] = [S(make(2, 3), grad=False), S(make(3, dtype="int32")),
                          S(make(2, 2), grad=False, call=_detach_copy_backward)]
