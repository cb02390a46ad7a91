"""Sparse COO tensors (torchjax.sparse) against PyTorch: construction, metadata, printing,
gradients into values, dense operands and sparse leaves, errors, and a GCN trained with a
sparse adjacency."""

import numpy as np
import pytest
import torch

import torchjax

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

_I = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) twice: an uncoalesced tensor
_V = [3., 4., -5., 1.]
_D = [[1., 2.], [3., -1.], [0.5, 2.]]


def _np(t):
    if t is None:
        return None
    t = t.detach()
    if t.is_sparse:
        t = t.to_dense()
    return np.asarray(t.numpy())


def _both(fn):
    """fn(lib) in PyTorch and in torchjax."""
    return fn(torch), fn(torchjax)


def _same(a, b, rtol=1e-5, atol=1e-6):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, rtol, atol)
    elif isinstance(a, torch.Tensor):
        assert isinstance(b, torchjax.Tensor), type(b)
        assert str(a.layout) == str(b.layout) and str(a.dtype) == str(b.dtype)
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol)
    else:
        assert a == b, (a, b)


# -- construction, metadata, printing -------------------------------------------------------------

_MAKERS = {
    "uncoalesced": lambda L: L.sparse_coo_tensor(L.tensor(_I), L.tensor(_V), (2, 3)),
    "coalesced": lambda L: L.sparse_coo_tensor(L.tensor(_I), L.tensor(_V), (2, 3)).coalesce(),
    "int values": lambda L: L.sparse_coo_tensor(L.tensor(_I), L.tensor([1, 2, 3, 4]), (2, 3)),
    "float64": lambda L: L.sparse_coo_tensor(L.tensor(_I), L.tensor(_V), (2, 3),
                                             dtype=L.float64),
    "list and float indices": lambda L: L.sparse_coo_tensor([[0., 1.], [1., 0.]], [2., 3.],
                                                           (2, 2)),
    "hybrid": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1, 1]]),
                                            L.arange(6.).reshape(3, 2), (3, 2)),
    "empty": lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0), (2, 3)),
    "to_sparse": lambda L: L.tensor([[0., 2., 0.], [3., 0., 1.5]]).to_sparse(),
    "to_sparse(1)": lambda L: L.tensor([[0., 2.], [0., 0.], [3., 0.]]).to_sparse(1),
    "leaf": lambda L: L.sparse_coo_tensor(L.tensor(_I), L.tensor(_V), (2, 3),
                                          requires_grad=True),
    "from grad values": lambda L: L.sparse_coo_tensor(
        L.tensor(_I), L.tensor(_V, requires_grad=True), (2, 3)),
    "3-d": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1, 2], [1, 2, 0], [0, 0, 1]]),
                                         L.tensor([1., 2., 3.]), (3, 3, 2)),
}


@pytest.mark.parametrize("case", list(_MAKERS))
def test_make_metadata_and_repr(case):
    a, b = _both(_MAKERS[case])
    assert repr(b) == repr(a)
    for f in (lambda t: t.is_sparse, lambda t: str(t.layout), lambda t: t.is_coalesced(),
              lambda t: t._nnz(), lambda t: t.sparse_dim(), lambda t: t.dense_dim(),
              lambda t: tuple(t.shape), lambda t: t.dim(), lambda t: t.numel(),
              lambda t: str(t.dtype), lambda t: t.requires_grad, lambda t: t.is_leaf):
        assert f(b) == f(a)
    _same(a.to_dense(), b.to_dense())
    _same(a._indices(), b._indices())
    _same(a._values(), b._values())
    if a.is_coalesced():
        _same(a.indices(), b.indices())
        _same(a.values(), b.values())
    c, d = a.coalesce(), b.coalesce()
    assert repr(d) == repr(c)


def test_dense_tensor_answers():
    a, b = _both(lambda L: L.tensor([[0., 2.], [3., 0.]]))
    assert b.is_sparse is False and b.layout is torchjax.strided
    assert b.to_dense() is b and b.sparse_dim() == 0 and b.dense_dim() == 2
    assert b.to_sparse().to_sparse() is not b
    s = b.to_sparse()
    assert s.to_sparse() is s and s.coalesce() is s


# -- gradients -------------------------------------------------------------------------------------

def _sp(L, requires_grad=True):
    v = L.tensor(_V, requires_grad=requires_grad)
    return L.sparse_coo_tensor(L.tensor(_I), v, (2, 3)), v


_GRAD_CASES = {
    "sparse.mm": lambda L, s, d: L.sparse.mm(s, d),
    "mm": lambda L, s, d: L.mm(s, d),
    "spmm": lambda L, s, d: L.spmm(s, d),
    "matmul": lambda L, s, d: s @ d,
    "method mm": lambda L, s, d: s.mm(d),
    "mv": lambda L, s, d: L.stack([s @ d[:, 0], L.mv(s, d[:, 1])]),
    "addmm": lambda L, s, d: L.addmm(d[:2] * 3, s, d, beta=0.5, alpha=2),
    "sparse.addmm": lambda L, s, d: L.sparse.addmm(d[:2], s, d, beta=2),
    "dense @ sparse": lambda L, s, d: L.sparse.mm(d.t(), s.t().coalesce()),
    "to_dense": lambda L, s, d: s.to_dense() * s.to_dense(),
    "sparse.sum": lambda L, s, d: L.sparse.sum(s) * d,
    "sparse.sum(dim)": lambda L, s, d: L.sparse.sum(s, 1).to_dense() ** 2,
    "sparse.sum(dims)": lambda L, s, d: L.sparse.sum(s, (0, 1)) * d,
    "sum()": lambda L, s, d: s.sum() * d,
    "coalesce values": lambda L, s, d: s.coalesce().values() ** 2,
    "softmax": lambda L, s, d: L.sparse.mm(L.sparse.softmax(s, 1), d),
    "log_softmax": lambda L, s, d: L.sparse.log_softmax(s, 0).to_dense().exp(),
    "scalar ops": lambda L, s, d: L.sparse.mm(-(2 * s / 4).double().float(), d),
    "t": lambda L, s, d: L.sparse.mm(s.t().coalesce().t(), d),
    "add": lambda L, s, d: L.sparse.mm(L.add(s, s, alpha=0.5), d) + (d.t() + s).sum(),
    "to_sparse": lambda L, s, d: L.sparse.mm((d * d).t().to_sparse(), d * 2),
}


@pytest.mark.parametrize("case", list(_GRAD_CASES))
def test_gradients_values_and_dense(case):
    def run(L):
        s, v = _sp(L)
        d = L.tensor(_D, requires_grad=True)
        out = _GRAD_CASES[case](L, s, d)
        w = L.arange(float(out.numel())).reshape(out.shape) / 7 + 1
        (out * w).sum().backward()
        return out, out.grad_fn.name().rsplit("::")[-1], v.grad, d.grad

    (a, an, av, ad), (b, bn, bv, bd) = _both(run)
    _same(a, b)
    assert bn == an
    for x, y in ((av, bv), (ad, bd)):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_allclose(_np(y), _np(x), rtol=1e-5, atol=1e-6)


_LEAF_CASES = {
    # (what, PyTorch's .grad layout): sparse at the stored positions, or dense
    "sparse.mm": lambda L, s, d: L.sparse.mm(s, d),
    "to_dense": lambda L, s, d: s.to_dense() ** 2,
    "sparse.sum": lambda L, s, d: L.sparse.sum(s, 0).to_dense() * 3,
    "mm (dense grad)": lambda L, s, d: L.mm(s, d),
    "sum() (dense grad)": lambda L, s, d: s.sum() * d,
    "mm + sparse.mm": lambda L, s, d: L.mm(s, d) + L.sparse.mm(s, d),
}


@pytest.mark.parametrize("case", list(_LEAF_CASES))
def test_sparse_leaf_grad(case):
    def run(L):
        s = L.sparse_coo_tensor(L.tensor(_I), L.tensor(_V), (2, 3), requires_grad=True)
        d = L.tensor(_D, requires_grad=True)
        out = _LEAF_CASES[case](L, s, d)
        (out * out).sum().backward()
        return s.grad, d.grad, s.grad.is_sparse and s.grad.is_coalesced()

    a, b = _both(run)
    _same(a[:2], b[:2])
    assert a[2] == b[2]
    if a[0].is_sparse:
        assert repr(b[0]) == repr(a[0])


def test_two_steps_accumulate_and_fuse():
    # the second identical backward runs as one fused program
    def run(L):
        s = L.sparse_coo_tensor(L.tensor(_I), L.tensor(_V), (2, 3), requires_grad=True)
        d = L.tensor(_D, requires_grad=True)
        for _ in range(3):
            L.sparse.mm(s, d).tanh().sum().backward()
        return s.grad, d.grad

    (a, b) = _both(run)
    _same(a, b, rtol=1e-4, atol=1e-5)


# -- errors ----------------------------------------------------------------------------------------

_ERRORS = {
    "exp": lambda L: L.exp(_sp(L, False)[0]),
    "cumsum": lambda L: _sp(L, False)[0].cumsum(0),
    "in-place": lambda L: _sp(L, False)[0].exp_(),
    "view": lambda L: _sp(L, False)[0].view(6),
    "numpy": lambda L: _sp(L, False)[0].numpy(),
    "values uncoalesced": lambda L: _sp(L, False)[0].values(),
    "indices uncoalesced": lambda L: _sp(L, False)[0].indices(),
    "indices of dense": lambda L: L.ones(2).indices(),
    "values of dense": lambda L: L.ones(2).values(),
    "is_coalesced of dense": lambda L: L.ones(2).is_coalesced(),
    "_nnz of dense": lambda L: L.ones(2)._nnz(),
    "sparse + dense": lambda L: _sp(L, False)[0] + L.ones(2, 3),
    "sparse + number": lambda L: _sp(L, False)[0] + 1,
    "nnz mismatch": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1., 2., 3.]),
                                                  (3,)),
    "size rank": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1., 2.]),
                                               (2, 3, 4)),
    "bounds": lambda L: L.sparse_coo_tensor(L.tensor([[0, 5]]), L.tensor([1., 2.]), (2,),
                                            check_invariants=True),
    "mm shapes": lambda L: L.mm(_sp(L, False)[0], L.ones(4, 2)),
    "sparse.mm shapes": lambda L: L.sparse.mm(_sp(L, False)[0], L.ones(4, 2)),
    "addmm dense mat1": lambda L: L.addmm(L.ones(2, 3), L.ones(2, 2), _sp(L, False)[0]),
    "mm dtypes": lambda L: L.sparse.mm(_sp(L, False)[0], L.ones(3, 2, dtype=L.float64)),
    "to_sparse sparse_dim": lambda L: _sp(L, False)[0].to_sparse(1),
    "sum dim range": lambda L: L.sparse.sum(_sp(L, False)[0], 2),
}


@pytest.mark.parametrize("case", list(_ERRORS))
def test_errors_match_pytorch(case):
    with pytest.raises(Exception) as want:
        _ERRORS[case](torch)
    with pytest.raises(Exception) as got:
        _ERRORS[case](torchjax)
    assert type(got.value) is type(want.value)
    key = str(want.value).split(". This could be")[0]
    if "Could not run" in key:  # PyTorch's phrase, then what torchjax supports instead
        key = key.split(" with arguments")[0]
    assert key in str(got.value), (str(got.value), key)


def test_compressed_layouts_raise():
    with pytest.raises(NotImplementedError, match="COO"):
        torchjax.ones(2, 2).to_sparse(layout=torchjax.sparse_csr)
    with pytest.raises(AttributeError, match="not supported by torchjax"):
        torchjax.sparse_csr_tensor


@pytest.mark.parametrize("method", ["register_hook", "retain_grad"])
def test_gradient_views_of_sparse_tensors_raise(method):
    s = _sp(torchjax)[0]
    with pytest.raises(NotImplementedError, match=method):
        getattr(s, method)(*((lambda g: g,) if method == "register_hook" else ()))


# -- a graph convolution network with a sparse adjacency ------------------------------------------

def _graph(n=12, seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.random((n, n)) < 0.25).astype(np.float32)
    a = np.maximum(a, a.T) + np.eye(n, dtype=np.float32)
    d = 1 / np.sqrt(a.sum(1))
    a = a * d[:, None] * d[None, :]
    idx = np.stack(np.nonzero(a))
    return (idx, a[tuple(idx)], rng.standard_normal((n, 5)).astype(np.float32),
            rng.integers(0, 3, n), rng.standard_normal((5, 8)).astype(np.float32) * 0.3,
            rng.standard_normal((8, 3)).astype(np.float32) * 0.3)


def _gcn(L, steps=3):
    idx, vals, x, y, w1, w2 = _graph()

    class GraphConvolution(L.nn.Module):
        def __init__(self, w):
            super().__init__()
            self.weight = L.nn.Parameter(L.tensor(w))
            self.bias = L.nn.Parameter(L.zeros(w.shape[1]))

        def forward(self, x, adj):
            return L.spmm(adj, L.mm(x, self.weight)) + self.bias

    class GCN(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.gc1, self.gc2 = GraphConvolution(w1), GraphConvolution(w2)

        def forward(self, x, adj):
            h = L.nn.functional.relu(self.gc1(x, adj))
            return L.nn.functional.log_softmax(L.sparse.mm(adj, h @ self.gc2.weight)
                                               + self.gc2.bias, dim=1)

    adj = L.sparse_coo_tensor(L.tensor(idx), L.tensor(vals), (len(x), len(x))).coalesce()
    model = GCN()
    opt = L.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    feats, labels = L.tensor(x), L.tensor(y)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = L.nn.functional.nll_loss(model(feats, adj), labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach() for p in model.parameters()]


def test_gcn_trains_like_pytorch():
    (la, pa), (lb, pb) = _both(_gcn)
    np.testing.assert_allclose(lb, la, rtol=1e-5, atol=1e-6)
    assert la[-1] < la[0]
    _same(pa, pb, rtol=1e-5, atol=1e-6)


def test_legacy_sparse_constructors():
    def run(L):
        i, v = L.tensor([[0, 1], [1, 0]]), L.tensor([2., 3.])
        s = L.sparse.FloatTensor(i, v, L.Size([2, 2]))
        e = L.sparse.DoubleTensor(2, 3)
        return (repr(s), repr(e), isinstance(s, L.sparse.FloatTensor),
                isinstance(v, L.sparse.FloatTensor), repr(L.sparse.FloatTensor))

    with pytest.warns(UserWarning, match="deprecated"):
        got = run(torchjax)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert got == run(torch)


def test_compiled_step_with_sparse_runs_eagerly():
    # a step reading a sparse tensor is a graph break: it runs eagerly, saying why
    def make(L):
        adj = L.sparse_coo_tensor(L.tensor(_I), L.tensor(_V), (2, 3))
        w = L.nn.Parameter(L.tensor(_D))
        opt = L.optim.SGD([w], lr=0.01)

        def step():
            opt.zero_grad()
            loss = L.spmm(adj, w).pow(2).sum()
            loss.backward()
            opt.step()
            return loss
        return step, w

    step, w = make(torchjax)
    compiled = torchjax.compile(step)
    with pytest.warns(UserWarning, match="sparse_coo tensor"):
        losses = [compiled().item() for _ in range(2)]
    ref, rw = make(torch)
    np.testing.assert_allclose(losses, [ref().item() for _ in range(2)], rtol=1e-5)
    _same(rw.detach(), w.detach())
