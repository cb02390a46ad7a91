"""Samples for the rows in _ops/eig.py (torch.linalg.eig, eigvals). Gradients go through
quantities that do not depend on the eigenvectors' phase (|v|, the eigenvalues), the only
ones PyTorch differentiates. The order geev returns eigenvalues in depends on the LAPACK
build (PyTorch's and jaxlib's differ for some matrices): the samples sort them (and the
eigenvectors with them) by real, then imaginary part."""

import numpy as np

from .harness import S, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(110)

# distinct eigenvalues, a complex pair among them
A4 = make(4, 4)
SYM = (A4 + A4.T).astype("float32")  # real eigenvalues


def _order(w):
    # distinct eigenvalues in the samples: real part first, the imaginary part breaks ties
    return (w.real * 1e4 + w.imag).detach().argsort(dim=-1)


def _sorted_eig(lib, a):
    w, v = lib.linalg.eig(a)
    idx = _order(w)
    return w.gather(-1, idx), v.gather(-1, idx.unsqueeze(-2).expand(v.shape))


def _eig_abs(lib, a):
    w, v = _sorted_eig(lib, a)
    return w, v.abs()


def _eigvals(lib, a):
    w = lib.linalg.eigvals(a)
    return w.gather(-1, _order(w))


SAMPLES = {
    "linalg_eig": [
        S(A4, call=_eig_abs),
        S(make(2, 3, 3), call=_eig_abs, desc="batched"),
        S(SYM, call=_eig_abs, desc="real spectrum"),
        S(A4, grad=False, call=_sorted_eig),
        S(make(2, 3, 3, dtype="float64"), grad=False, call=_sorted_eig),
        S(make(3, 4), grad=False, call=raises(lambda lib, a: lib.linalg.eig(a))),
        S(make(3, 3, dtype="int64"), grad=False, call=raises(lambda lib, a: lib.linalg.eig(a))),
    ],
    "linalg_eigvals": [
        S(A4, call=_eigvals),
        S(make(2, 3, 3), call=_eigvals),
        S(SYM, call=_eigvals),
        S(np.eye(3, dtype="float32") * 2, grad=False, desc="repeated eigenvalue"),
        S(make(3), grad=False, call=raises(lambda lib, a: lib.linalg.eigvals(a))),
    ],
}
