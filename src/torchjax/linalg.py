"""torchjax.linalg: PyTorch's torch.linalg, published from the op table's torch.linalg rows
(named like PyTorch's native functions, "linalg_<name>") and the plain functions below."""

from ._generate import namespace_functions as _namespace_functions

globals().update(_namespace_functions("torch.linalg"))

# Functions that read LAPACK's info (when the values are concrete) to raise PyTorch's errors
# for singular or non-positive-definite inputs, or that adjust a row's outputs.
from ._dispatch import FUNCTIONS as _F  # noqa: E402
from ._linalg_tensor import tensorinv, tensorsolve, vander  # noqa: E402,F401
from ._ops.torch_linalg import (  # noqa: E402,F401
    LinAlgError,
    cholesky,
    cholesky_ex,
    inv,
    inv_ex,
    solve,
    solve_ex,
)

matmul = _F["matmul"]  # torch.linalg.matmul is torch.matmul
from ._ops.ldl import ldl_factor, ldl_factor_ex  # noqa: E402,F401
from ._ops.linalg_pinv import lstsq  # noqa: E402,F401
from ._ops.lu import lu, lu_factor, lu_factor_ex, lu_solve  # noqa: E402,F401
