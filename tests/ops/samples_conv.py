"""Samples for the rows of src/torchjax/_ops/conv.py, padding.py and fold.py."""

from .harness import S, make, raises


def F(name):
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


def pad(mode, amounts, **kw):
    return lambda lib, x: lib.nn.functional.pad(x, amounts, mode, **kw)


_CONV = dict(atol=1e-4)  # sums of products: float32 rounding above the default atol

SAMPLES = {
    "convolution": [
        S(make(1, 2, 4, 4), make(3, 2, 2, 2), make(3), call=F("conv2d"), **_CONV),
        S(make(2, 4, 4), make(2, 2, 3, 3), make(2), stride=2, padding=1, call=F("conv2d"),
          **_CONV),
        S(make(2, 4, 6), make(4, 2, 3), None, padding="same", dilation=2, groups=2,
          call=F("conv1d"), **_CONV),
        S(make(1, 2, 5), make(2, 2, 2), make(2), padding="same", call=F("conv1d"), **_CONV),
        S(make(1, 2, 3, 3, 3), make(2, 2, 2, 2, 2), make(2), stride=(1, 2, 1),
          padding=(1, 0, 1), call=F("conv3d"), **_CONV),
        S(make(1, 4, 3, 3), make(4, 1, 3, 3), make(2), stride=2, padding=1, output_padding=1,
          groups=2, call=F("conv_transpose2d"), **_CONV),
        S(make(2, 4), make(2, 3, 3), make(3), stride=3, output_padding=2, dilation=2,
          call=F("conv_transpose1d"), **_CONV),
        S(make(1, 2, 2, 2, 2), make(2, 2, 2, 2, 2), stride=2, call=F("conv_transpose3d"),
          **_CONV),
        S(make(1, 2, 5), make(3, 2, 3), make(3),
          call=lambda lib, x, w, b: lib.convolution(x, w, b, [2], [1], [1], False, [0], 1),
          **_CONV),
        S(make(1, 2, 4, 4, dtype="int64", low=-3, high=3),
          make(3, 2, 2, 2, dtype="int64", low=-3, high=3), call=F("conv2d")),
        S(make(2, 3), make(4, 3, 3, 3), call=raises(F("conv2d"))),
        S(make(2, 3, 5, 5), make(4, 2, 3, 3), call=raises(F("conv2d"))),
        S(make(2, 3, 5, 5), make(3, 3, 3, 3), groups=2, call=raises(F("conv_transpose2d"))),
    ],
    "constant_pad_nd": [
        S(make(2, 3, 4), (1, 2, -1, 1), value=1.5, call=F("pad")),
        S(make(3, 4), (2, 0), call=lambda lib, x, p: lib.constant_pad_nd(x, p, -1)),
        S(make(2, 3, dtype="int64", low=-5, high=5), (1, 1, 2, 0), value=2.7, call=F("pad")),
        S(make(2, 3, 4), (1, 2, 3), call=raises(F("pad"))),
    ],
    "reflection_pad1d": [
        S(make(2, 3, 5), call=pad("reflect", (2, 3))),
        S(make(3, 5), call=pad("reflect", (-2, 4))),
        S(make(2, 3, 4), call=raises(pad("reflect", (4, 0)))),
    ],
    "reflection_pad2d": [
        S(make(1, 2, 4, 5), call=pad("reflect", (1, 2, 3, -1))),
        S(make(2, 4, 4), call=pad("reflect", (3, 3, 1, 1))),
    ],
    "reflection_pad3d": [
        S(make(1, 2, 3, 3, 3), call=pad("reflect", (1, 2, 2, 0, 1, -1))),
        S(make(2, 3, 3, 3), call=pad("reflect", (1, 1, 1, 1, 1, 1))),
    ],
    "replication_pad1d": [
        S(make(2, 3, 5), call=pad("replicate", (2, 3))),
        S(make(3, 5), call=pad("replicate", (-2, 4))),
    ],
    "replication_pad2d": [
        S(make(1, 2, 4, 5), call=pad("replicate", (1, 6, 3, -1))),
        S(make(2, 4, 4), call=pad("replicate", (3, 3, 1, 1))),
    ],
    "replication_pad3d": [
        S(make(1, 2, 3, 3, 3), call=pad("replicate", (1, 2, 4, 0, 1, -1))),
        S(make(2, 3, 3, 3), call=pad("replicate", (1, 1, 1, 1, 1, 1))),
    ],
    "_pad_circular": [
        S(make(2, 3, 5), call=pad("circular", (2, 5))),
        S(make(1, 2, 4, 4), call=pad("circular", (1, -2, 3, 2))),
        S(make(2, 3, 3, 3), call=pad("circular", (1, 1, 0, 2, 1, 1))),
        S(make(2, 3, 4), call=raises(pad("circular", (5, 0)))),
    ],
    "im2col": [
        S(make(2, 2, 4, 4), 2, call=F("unfold")),
        S(make(2, 4, 5), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1), call=F("unfold")),
        S(make(2, 3, 5, 5), 6, call=raises(F("unfold"))),
    ],
    "col2im": [
        S(make(2, 8, 9), (4, 4), 2, call=F("fold")),
        S(make(6, 4), (3, 4), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1),
          call=F("fold")),
        S(make(2, 8, 8), (4, 4), 2, call=raises(F("fold"))),
    ],
}
