"""Samples for the rows in _ops/eig.py (torch.linalg.eig, eigvals). Gradients go through
quantities that do not depend on the eigenvectors' phase (|v|, the eigenvalues), the only
ones PyTorch differentiates."""

import numpy as np

from .harness import S, make, raises

# distinct eigenvalues, a complex pair among them
A4 = make(4, 4)
SYM = (A4 + A4.T).astype("float32")  # real eigenvalues


def _eig_abs(lib, a):
    w, v = lib.linalg.eig(a)
    return w, v.abs()


SAMPLES = {
    "linalg_eig": [
        S(A4, call=_eig_abs),
        S(make(2, 3, 3), call=_eig_abs, desc="batched"),
        S(SYM, call=_eig_abs, desc="real spectrum"),
        S(A4, grad=False, call=lambda lib, a: lib.linalg.eig(a)),
        S(make(2, 3, 3, dtype="float64"), grad=False, call=lambda lib, a: lib.linalg.eig(a)),
        S(make(3, 4), grad=False, call=raises(lambda lib, a: lib.linalg.eig(a))),
        S(make(3, 3, dtype="int64"), grad=False, call=raises(lambda lib, a: lib.linalg.eig(a))),
    ],
    "linalg_eigvals": [
        S(A4),
        S(make(2, 3, 3)),
        S(SYM),
        S(np.eye(3, dtype="float32") * 2, grad=False, desc="repeated eigenvalue"),
        S(make(3), grad=False, call=raises(lambda lib, a: lib.linalg.eigvals(a))),
    ],
}
