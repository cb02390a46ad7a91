"""torch.solve, lstsq, eig, symeig and matrix_rank (and the Tensor methods of the first four):
PyTorch removed them in 1.9 but keeps the names, which raise a RuntimeError saying what
replaces each. A script that still calls one gets the same guidance here (and an old
script's `hasattr(torch, "solve")` check gives the same answer)."""

from __future__ import annotations

from ._tensor import Tensor

__all__ = ["solve", "lstsq", "eig", "symeig", "matrix_rank"]

_REMOVED = "This function was deprecated since version 1.9 and is now removed."

_MESSAGES = {
    "solve": (
        f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with "
        "`torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
        "replaced with:\nX = torch.linalg.solve(A, B)"),
    "lstsq": (
        f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
        "in the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned "
        "solution in `torch.lstsq` stored the residuals of the solution in the last m - n "
        "columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals "
        "are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
        "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced "
        "with:\nX = torch.linalg.lstsq(A, B).solution"),
    "eig": (
        f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)"),
    "symeig": (
        f"{_REMOVED} The default behavior has changed from using the upper triangular portion "
        "of the matrix by default to using the lower triangular portion.\n\nL, _ = "
        "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, "
        "UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) "
        "should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"),
    "matrix_rank": (
        f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The "
        "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."),
}


def solve(input, A, *, out=None):
    raise RuntimeError(_MESSAGES["solve"])


def lstsq(input, A, *, out=None):
    raise RuntimeError(_MESSAGES["lstsq"])


def eig(self, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(_MESSAGES["eig"])


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(_MESSAGES["symeig"])


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(_MESSAGES["matrix_rank"])


for _f in (solve, lstsq, eig, symeig, matrix_rank):
    _f.__doc__ = f"Removed in PyTorch 1.9: raises PyTorch's RuntimeError naming what replaces " \
                 f"torch.{_f.__name__}."
for _f in (solve, lstsq, eig, symeig):  # PyTorch keeps these as Tensor methods too
    setattr(Tensor, _f.__name__, _f)
