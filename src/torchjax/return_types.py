"""torchjax.return_types: the named tuples torch.max(x, dim), torch.sort, torch.linalg.eigh, ...
return, as torch.return_types.max, torch.return_types.sort, ...

They are the very classes the ops return (made once, by name, in _dispatch._return_type), so
`isinstance(torch.max(x, 1), torch.return_types.max)` holds. Each `X_out` class is PyTorch's
type of the same result given an `out=` argument; torchjax's out= forms return the X class.
"""

from __future__ import annotations

from ._dispatch import _return_type

_VALUES_INDICES = ("values", "indices")
# PyTorch 2.13's names and fields; the names with an `_out` form come first
_FIELDS = {
    "aminmax": ("min", "max"), "cummax": _VALUES_INDICES, "cummin": _VALUES_INDICES,
    "frexp": ("mantissa", "exponent"), "geqrf": ("a", "tau"),
    "histogram": ("hist", "bin_edges"), "kthvalue": _VALUES_INDICES,
    "linalg_cholesky_ex": ("L", "info"), "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"), "linalg_inv_ex": ("inverse", "info"),
    "linalg_ldl_factor": ("LD", "pivots"), "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"), "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"), "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"), "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"), "lu_unpack": ("P", "L", "U"), "max": _VALUES_INDICES,
    "median": _VALUES_INDICES, "min": _VALUES_INDICES, "mode": _VALUES_INDICES,
    "nanmedian": _VALUES_INDICES, "qr": ("Q", "R"), "slogdet": ("sign", "logabsdet"),
    "sort": _VALUES_INDICES, "svd": ("U", "S", "V"), "topk": _VALUES_INDICES,
    "triangular_solve": ("solution", "cloned_coefficient"),
}
_WITHOUT_OUT = {"histogramdd": ("hist", "bin_edges")}

all_return_types = []
for _name, _fields in _FIELDS.items():
    all_return_types += [_return_type(_name, _fields), _return_type(_name + "_out", _fields)]
for _name, _fields in _WITHOUT_OUT.items():
    all_return_types.append(_return_type(_name, _fields))
globals().update({cls.__name__: cls for cls in all_return_types})

__all__ = ["all_return_types"] + [cls.__name__ for cls in all_return_types]
