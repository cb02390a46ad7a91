"""Samples for the rows of _ops/strided.py: as_strided, a view of its base's storage (and
slice_inverse, which reads it with another tensor's geometry), and
as_strided_scatter, its out-of-place write.

PyTorch 2.13's as_strided_scatter gives the wrong gradient to `input` (it fails its own
gradcheck: the gradient lands on the overwritten elements instead of the others), and to
`src` when input is not its own contiguous storage (it reads the gradient as if it were),
so those samples compare values, the node's name and, for contiguous roots, src's
gradient; tests/test_strides.py checks both gradients by finite differences."""

from .harness import S, make, raises

# own seeds: drawing from the shared stream would change the samples of every file after this
# one (the table imports them in name order)

SAMPLES = {
    "_as_strided": [
        S(make(12, seed=1), call=lambda lib, x: x.as_strided((3, 3), (3, 1))),
        S(make(12, seed=2), call=lambda lib, x: x.as_strided((2, 2), (1, 1), 2),
          desc="overlapping windows: gradients add up"),
        S(make(3, 4, seed=3), call=lambda lib, x: lib.as_strided(x, (4,), (3,)), desc="function form"),
        S(make(3, 4, seed=4), call=lambda lib, x: x.t().as_strided((2, 3), (1, 4), 1),
          desc="of a view: its base's storage"),
    ],
}


SAMPLES["_slice_inverse"] = [
    S(make(5, 4, seed=7), call=lambda lib, x: lib.slice_inverse(x[1:3], x, 0, 1, 3, 1)),
    S(make(3, 6, seed=8), call=lambda lib, x: x[:, 1:6:2].slice_inverse(x, 1, 1, 6, 2),
      desc="method form, a stepped slice"),
]


def _scatter(view, *args, src_grad=True):
    """as_strided_scatter on view(x), and (src_grad) src's gradient through it."""
    def call(lib, x, src):
        src = src.requires_grad_()
        y = lib.as_strided_scatter(view(x), src, *args)
        if not src_grad:
            return y, y.grad_fn.name()
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(tuple(y.shape))).sum().backward()
        return y, src.grad, y.grad_fn.name()
    return call


SAMPLES["_as_strided_scatter"] = [
    S(make(3, 4, seed=5), make(2, 2, seed=6), grad=False,
      call=_scatter(lambda x: x * 2, (2, 2), (4, 1), 1)),
    S(make(3, 4, seed=7), make(2, 2, seed=8), grad=False,
      call=_scatter(lambda x: x.t(), (2, 2), (4, 1), 1, src_grad=False),
      desc="transposed: storage order"),
    S(make(3, 4, seed=9), make(2, seed=10), grad=False,
      call=_scatter(lambda x: x[1:], (2,), (1,), 0, src_grad=False),
      desc="a view: writes before its offset do not show"),
    S(make(3, 4, seed=11), make(3, seed=12), grad=False,
      call=_scatter(lambda x: x[1:], (3,), (3,), src_grad=False),
      desc="from the view's own offset"),
    S(make(6, seed=13), make(2, seed=14).astype("float64"), grad=False,
      call=lambda lib, x, src: x.as_strided_scatter(src, (2,), (3,), 1),
      desc="method form, src of another dtype"),
    S(make(6, seed=15), make(3, seed=16), grad=False,
      call=raises(lambda lib, x, src: lib.as_strided_scatter(x, src, (2,), (1,), 0)),
      desc="src of another size"),
    S(make(6, seed=17), make(2, seed=18), grad=False,
      call=raises(lambda lib, x, src: lib.as_strided_scatter(x, src, (2,), (1,), 5)),
      desc="past the storage"),
]
