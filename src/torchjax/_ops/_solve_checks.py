"""PyTorch's argument checks of a solve against a square matrix A for right-hand sides b,
shared by cholesky_solve and triangular_solve (linalg_solve_ex has its own words)."""

from __future__ import annotations

from .torch_linalg import _name


def check_b_and_a(fname: str, b, A) -> None:
    """Same dtype, A square, b's rows A's size: PyTorch's messages (the dims check is the
    caller's: its words differ per function)."""
    if b.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_name(b)} and A of type {_name(A)} instead.")
    n, m = A.shape[-2:]
    if n != m:
        raise RuntimeError(f"A must be batches of square matrices, but they are {n} by {m} "
                           f"matrices")
    if b.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {fname}: each A matrix is {n} by {n} "
                           f"but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
