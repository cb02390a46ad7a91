"""Samples for the matrix products (mm, bmm, matmul, dot, mv, outer, einsum, t, addmm)."""

from .harness import S, Z, make, own_make, raises

# the in-place samples added later draw from their own generator, so that the other
# samples keep their arrays
_m = own_make(201)

# PyTorch's einsum contracts through a path of other ops; the last one names the node
GRAD_NAME_SKIP = {"einsum": "PermuteBackward0, SumBackward1, MulBackward0 ... by path"}

SAMPLES = {
    "mm": [
        S(make(2, 3), make(3, 4)),
        S(make(1, 5), make(5, 1)),
        S(make(3, 0), make(0, 2)),
        S(make(2, 3, dtype="int64", low=-5, high=5), make(3, 2, dtype="int64", low=-5, high=5)),
        S(make(2, 3, dtype="int32", low=-5, high=5), make(3, 2, dtype="int32", low=-5, high=5)),
        S(make(2, 3), make(3, 4), call=lambda lib, a, b: a.mm(b)),
    ],
    "bmm": [
        S(make(4, 2, 3), make(4, 3, 5)),
        S(make(1, 1, 3), make(1, 3, 1)),
        S(make(2, 2, 3, dtype="int64"), make(2, 3, 2, dtype="int64")),
        S(make(3, 2, 3), make(3, 3, 2), call=lambda lib, a, b: a.bmm(b)),
    ],
    "matmul": [
        S(make(2, 3), make(3, 4)),
        S(make(3), make(3)),
        S(make(2, 3), make(3)),
        S(make(3), make(3, 4)),
        S(make(5, 2, 3), make(3, 4)),
        S(make(2, 3), make(5, 3, 4)),
        S(make(5, 2, 3), make(5, 3, 4)),
        S(make(5, 2, 3), make(3)),
        S(make(3), make(5, 3, 4)),
        S(make(2, 1, 2, 3), make(4, 3, 2)),  # batch dims broadcast
        S(make(2, 3, dtype="int64"), make(3, dtype="int64")),
        S(make(2, 3), make(3, 2), call=lambda lib, a, b: a @ b),
        S(make(2, 3), make(3, 2), call=lambda lib, a, b: a.matmul(b)),
    ],
    "dot": [
        S(make(5), make(5)),
        S(make(0), make(0)),
        S(make(4, dtype="int64"), make(4, dtype="int64")),
        S(make(3), make(3), call=lambda lib, a, b: a.dot(b)),
    ],
    "mv": [
        S(make(2, 3), make(3)),
        S(make(4, 1), make(1)),
        S(make(2, 3, dtype="int64"), make(3, dtype="int64")),
        S(make(2, 3), make(3), call=lambda lib, a, b: a.mv(b)),
    ],
    "outer": [
        S(make(3), make(4)),
        S(make(3), make(2, dtype="float64")),  # outer promotes, unlike the other products
        S(make(3, dtype="int32"), make(2, dtype="int64")),
        S(make(3, dtype="int64"), make(2)),
        S(make(2, dtype="bool"), make(2, dtype="bool")),
        S(make(3), make(2), call=lambda lib, a, b: lib.ger(a, b)),
        S(make(3), make(2), call=lambda lib, a, b: a.outer(b)),
    ],
    "einsum": [
        S("ij,jk->ik", make(2, 3), make(3, 4)),
        S("ij,jk", [make(2, 3), make(3, 4)]),
        S("bij,bjk->bik", (make(2, 2, 3), make(2, 3, 4))),
        S("ij->ji", make(2, 3)),
        S("ii", make(3, 3)),
        S("ii->i", make(3, 3)),
        S("i,i->", make(4), make(4)),
        S("i,j->ij", make(2), make(3)),
        S("...ij,...jk->...ik", make(2, 2, 3), make(2, 3, 2)),
        S("i j , j k -> i k", make(2, 3), make(3, 4)),
        S("ij,jk->ik", make(2, 1), make(3, 4)),  # size-1 dims broadcast
        S("ij,jk->ik", make(2, 3, dtype="int64"), make(3, 2, dtype="int64")),
    ],
    "t": [
        S(make(2, 3)),
        S(make(3)),
        S(make()),
        S(make(2, 3), call=lambda lib, x: x.t()),
        S(make(2, 3, dtype="int64")),
    ],
    "addmm": [
        S(make(2, 4), make(2, 3), make(3, 4)),
        S(make(4), make(2, 3), make(3, 4)),
        S(make(2, 1), make(2, 3), make(3, 4), beta=0.5, alpha=2.0),
        S(make(2, 4), make(2, 3), make(3, 4), beta=0),
        S(make(2, 2, dtype="int64"), make(2, 3, dtype="int64"), make(3, 2, dtype="int64"),
          beta=2, alpha=3),
        S(make(2, 4), make(2, 3), make(3, 4), call=lambda lib, c, a, b: c.addmm(a, b)),
        # Tensor.addmm_: in place into (a copy of) input, which must have the result's shape
        S(_m(2, 4), _m(2, 3), _m(3, 4),
          call=lambda lib, c, a, b: c.clone().addmm_(a, b, beta=0.5, alpha=2.0)),
        S(_m(2, 4), _m(2, 3), _m(3, 4), call=lambda lib, c, a, b: c.clone().addmm_(a, b)),
        S(_m(4), _m(2, 3), _m(3, 4), grad=False,
          call=raises(lambda lib, c, a, b: c.clone().addmm_(a, b))),
    ],
    "baddbmm": [
        S(make(2, 2, 4), make(2, 2, 3), make(2, 3, 4)),
        S(make(4), make(2, 2, 3), make(2, 3, 4), beta=-1.0, alpha=0.5),
        S(make(2, 2, 4), make(2, 2, 3), make(2, 3, 4), beta=0),
        S(_m(2, 2, 4), _m(2, 2, 3), _m(2, 3, 4),
          call=lambda lib, c, a, b: c.clone().baddbmm_(a, b, beta=-1.0, alpha=0.5)),
        S(_m(4), _m(2, 2, 3), _m(2, 3, 4), grad=False,
          call=raises(lambda lib, c, a, b: c.clone().baddbmm_(a, b))),
    ],
    "dist": [
        S(make(3, 4), make(3, 4)),
        S(make(3, 4), make(4), 1),
        S(make(5), make(5), float("inf")),
        S(make(5), make(5), 0, grad=False),  # PyTorch's backward for p=0 fails
        S(make(2, 3), make(2, 3), 3.5),
    ],
    "inner": [
        S(make(3, 4), make(2, 4)),
        S(make(4), make(4)),
        S(make(2, 3), Z(2.0)),
        S(make(2, 3), make(4, 2), call=raises(lambda lib, a, b: lib.inner(a, b))),
    ],
    "vdot": [
        S(make(4), make(4)),
        S(make(4), make(4), call=lambda lib, a, b: a.vdot(b)),
        S(make(2, 2), make(4), call=raises(lambda lib, a, b: lib.vdot(a, b))),
    ],
}
