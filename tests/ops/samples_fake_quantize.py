"""Samples for the rows in _ops/fake_quantize.py. Their gradient is PyTorch's straight-through
estimator (not the derivative of a step function), so the inputs have 65 elements (K): the
gradients are compared with PyTorch's and finite differences are skipped. tests/
test_fake_quantize.py checks exact halves, dtypes and the errors."""

import numpy as np

from .harness import A, Const, K, S, Z, own_make

make = own_make(131)

# grid points, exact halves between them and values beyond the clamp (scale 0.1)
_GRID = K(-3.0, -0.25, -0.15, 0.0, 0.05, 0.1, 0.35, 0.45, 1.0, 2.9)



def _per_channel(lib, input, scale, zero_point, *args):
    # the table repeats a sample in float64, scale included: PyTorch takes only a float32 one
    return lib.fake_quantize_per_channel_affine(input, scale.float(), zero_point, *args)


SAMPLES = {
    "fake_quantize_per_tensor_affine": [
        S(_GRID, 0.1, 3, -8, 7),
        S(_GRID, 0.02, 128, 0, 255),
        S(_GRID, Const(Z(0.1)), Const(Z(3, "int32")), -8, 7),
        S(make(3, 4), 0.5, 0, -2, 2, grad=False),
    ],
    "fake_quantize_per_channel_affine": [
        S(np.resize(_GRID, (5, 13)), Const(A(0.1, 0.2, 0.05, 0.1, 0.3)),
          Const(A(0, 1, -2, 3, -4, dtype="int32")), 0, -4, 3, call=_per_channel),
        S(np.resize(_GRID, (5, 13)).T.copy(), Const(A(0.1, 0.2, 0.05, 0.1, 0.3)),
          Const(A(0.5, 1, -2, 3.5, -4)), 1, -4, 3, call=_per_channel),
    ],
}
