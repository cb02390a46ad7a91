"""RNN, LSTM, GRU, the cells and torch.nn.utils.rnn against PyTorch with copied weights:
outputs, final states and the gradients of the input, the initial states and every parameter.

Each distinct configuration costs a scan compile, so the cases are few and shapes small
(seq 5, batch 3, hidden 4)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import torchjax

T, B, IN, H = 5, 3, 3, 4
_rng = np.random.default_rng(0)


def arr(*shape):
    return _rng.uniform(-1, 1, size=shape).astype(np.float32)


def pair(kind, *args, **kwargs):
    """The same layer in both libraries with PyTorch's weights copied into ours."""
    tm = getattr(torch.nn, kind)(*args, **kwargs)
    jm = getattr(torchjax.nn, kind)(*args, **kwargs)
    jm.load_state_dict({k: torchjax.tensor(v.detach().numpy()) for k, v in
                        tm.state_dict().items()})
    return tm, jm


def leaves(lib, *arrays):
    return [None if a is None else lib.tensor(a).requires_grad_() for a in arrays]


def flat(out):
    if isinstance(out, (torch.Tensor, torchjax.Tensor)):
        return [out]
    res = []
    for o in out if isinstance(out, (list, tuple)) else ():
        res.extend(flat(o))
    return res


def close(a, b, what, tol=2e-5):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)


def check_backward(tm, jm, t_out, j_out, t_in, j_in):
    """Backward with the same random cotangents on every output; compare the gradients of
    the inputs given and of every parameter."""
    ts, js = flat(t_out), flat(j_out)
    assert len(ts) == len(js)
    for i, (a, b) in enumerate(zip(js, ts)):
        close(a, b, f"output {i}")
    cts = [_rng.uniform(-1, 1, size=tuple(b.shape)).astype(np.float32) for b in ts]
    torch.autograd.backward(ts, [torch.tensor(c) for c in cts])
    torchjax.autograd.backward(js, [torchjax.tensor(c) for c in cts])
    for i, (a, b) in enumerate(zip(j_in, t_in)):
        if b is not None:
            close(a.grad, b.grad, f"grad of input {i}")
    for (n, p), (_, q) in zip(jm.named_parameters(), tm.named_parameters()):
        close(p.grad, q.grad, f"grad of {n}")


# -- whole layers ------------------------------------------------------------------------------

# (GRU with batch_first, two layers and no bias: tests/ops/samples_rnn.py)
CASES = [
    ("RNN", dict(nonlinearity="relu", num_layers=2, bidirectional=True, batch_first=True), True),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2), True),
]


@pytest.mark.parametrize("kind, kwargs, with_hx", CASES,
                         ids=[f"{k}-{'-'.join(kw)}-{h}" for k, kw, h in CASES])
def test_layer_matches_torch(kind, kwargs, with_hx):
    torch.manual_seed(0)
    tm, jm = pair(kind, IN, H, **kwargs)
    assert repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict())
    d = (2 if kwargs.get("bidirectional") else 1) * kwargs.get("num_layers", 1)
    x = arr(B, T, IN) if kwargs.get("batch_first") else arr(T, B, IN)
    hs = [arr(d, B, kwargs.get("proj_size") or H)] if with_hx else []
    if with_hx and kind == "LSTM":
        hs.append(arr(d, B, H))
    t_in, j_in = leaves(torch, x, *hs), leaves(torchjax, x, *hs)

    def run(m, ins):
        if not with_hx:
            return m(ins[0])
        return m(ins[0], tuple(ins[1:]) if kind == "LSTM" else ins[1])

    t_out, j_out = run(tm, t_in), run(jm, j_in)
    check_backward(tm, jm, t_out, j_out, t_in, j_in)


def test_one_tape_node_for_the_whole_stack():
    m = torchjax.nn.LSTM(IN, H, num_layers=2, bidirectional=True, proj_size=2)
    x = torchjax.tensor(arr(T, B, IN)).requires_grad_()
    out, (h, c) = m(x)
    assert out.grad_fn is h.grad_fn is c.grad_fn
    kinds = {type(f).__name__ for f, _ in out.grad_fn.next_functions if f is not None}
    assert kinds == {"AccumulateGrad"}


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_packed_input_unequal_lengths(kind):
    torch.manual_seed(0)
    # LSTM: bidirectional; GRU: two layers
    lstm = kind == "LSTM"
    tm, jm = pair(kind, IN, H, bidirectional=lstm, num_layers=1 if lstm else 2)
    d = 2
    x, hs = arr(T, B, IN), [arr(d, B, H)] + ([arr(d, B, H)] if kind == "LSTM" else [])
    lengths = [3, 5, 2]
    outs = {}
    for lib, m in ((torch, tm), (torchjax, jm)):
        ins = leaves(lib, x, *hs)
        u = lib.nn.utils.rnn
        packed = u.pack_padded_sequence(ins[0], lengths, enforce_sorted=False)
        out, hn = m(packed, tuple(ins[1:]) if kind == "LSTM" else ins[1])
        assert type(out).__name__ == "PackedSequence"
        padded, lens = u.pad_packed_sequence(out, batch_first=True)
        outs[lib] = (ins, out, padded, lens, hn)
    (t_in, t_p, t_pad, t_len, t_h), (j_in, j_p, j_pad, j_len, j_h) = outs[torch], outs[torchjax]
    for a, b in zip(j_p[1:], t_p[1:]):
        assert a.tolist() == b.tolist()
    assert j_len.tolist() == t_len.tolist()
    check_backward(tm, jm, [t_p.data, t_pad, t_h], [j_p.data, j_pad, j_h], t_in, j_in)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])  # RNN shares GRU's code path
def test_unbatched_input(kind):
    torch.manual_seed(0)
    tm, jm = pair(kind, IN, H)
    x, h = arr(T, IN), arr(1, H)
    hs = [h, arr(1, H)] if kind == "LSTM" else [h]
    t_in, j_in = leaves(torch, x, *hs), leaves(torchjax, x, *hs)

    def run(m, ins):
        return m(ins[0], tuple(ins[1:]) if kind == "LSTM" else ins[1])

    t_out, j_out = run(tm, t_in), run(jm, j_in)
    assert tuple(j_out[0].shape) == (T, H)
    check_backward(tm, jm, t_out, j_out, t_in, j_in)
    # without a state: zeros, same shapes
    for a, b in zip(flat(jm(j_in[0])), flat(tm(t_in[0]))):
        close(a, b, "unbatched, no state")


def test_dropout_between_layers():
    torch.manual_seed(0)
    # p = 1 zeroes the second layer's input: deterministic, so comparable with PyTorch
    tm, jm = pair("LSTM", IN, H, num_layers=2, dropout=1.0)
    x = arr(T, B, IN)
    t_in, j_in = leaves(torch, x), leaves(torchjax, x)
    check_backward(tm, jm, tm(t_in[0]), jm(j_in[0]), t_in, j_in)
    # p = 0.5: random in training, off in eval
    jm.dropout = 0.5
    xj = torchjax.tensor(x)
    with torchjax.no_grad():
        a, b = jm(xj)[0], jm(xj)[0]
        jm.eval()
        c, d = jm(xj)[0], jm(xj)[0]
    assert not np.allclose(a.numpy(), b.numpy())
    np.testing.assert_array_equal(c.numpy(), d.numpy())


def test_parameters_init_and_attributes():
    torch.manual_seed(0)
    m = torchjax.nn.LSTM(IN, H, num_layers=2, bidirectional=True, proj_size=2)
    t = torch.nn.LSTM(IN, H, num_layers=2, bidirectional=True, proj_size=2)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert [[tuple(p.shape) for p in g] for g in m.all_weights] == \
        [[tuple(p.shape) for p in g] for g in t.all_weights]
    assert m.all_weights[1][0] is m.weight_ih_l0_reverse
    bound = 1 / np.sqrt(H)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert np.all(np.abs(values) <= bound) and values.std() > bound / 3
    assert m.flatten_parameters() is None
    m.weight_hh_l0 = torchjax.nn.Parameter(torchjax.zeros(16, 2))
    assert m._flat_weights[1] is m.weight_hh_l0
    for kind, args in (("RNNCell", (IN, H, False, "relu")), ("LSTMCell", (IN, H)),
                       ("GRUCell", (IN, H, False))):
        jc, tc = getattr(torchjax.nn, kind)(*args), getattr(torch.nn, kind)(*args)
        assert repr(jc) == repr(tc)
        assert list(jc.state_dict()) == list(tc.state_dict())


def test_constructor_and_forward_errors():
    nn = torchjax.nn
    for make, msg in [
        (lambda: nn.GRU(IN, H, proj_size=2), "proj_size argument is only supported for LSTM"),
        (lambda: nn.RNN(IN, H, nonlinearity="gelu"), "Unknown nonlinearity 'gelu'"),
        (lambda: nn.LSTM(IN, H, dropout=1.5), "dropout should be a number in range"),
        (lambda: nn.LSTM(IN, H, proj_size=H), "proj_size has to be smaller than hidden_size"),
        (lambda: nn.LSTM(IN, 0), "hidden_size must be greater than zero"),
    ]:
        with pytest.raises(ValueError, match=re.escape(msg)):
            make()
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(IN, H, dropout=0.2)
    # the same shapes as the other tests: each new parameter shape compiles an init sampler
    lstm, gru, x = nn.LSTM(IN, H), nn.GRU(IN, H), torchjax.zeros(T, 2, IN)
    errors = [
        (lambda: lstm(torchjax.zeros(T, 2, 2)), RuntimeError,
         "input.size(-1) must be equal to input_size. Expected 3, got 2"),
        (lambda: gru(x, torchjax.zeros(1, 3, H)), RuntimeError,
         "Expected hidden size (1, 2, 4), got [1, 3, 4]"),
        (lambda: lstm(x, (torchjax.zeros(1, 2, H), torchjax.zeros(1, 3, H))), RuntimeError,
         "Expected hidden[1] size (1, 2, 4), got [1, 3, 4]"),
        (lambda: gru(x, torchjax.zeros(2, H)), RuntimeError,
         "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
        (lambda: lstm(torchjax.zeros(T, IN), (torchjax.zeros(1, 1, H),) * 2), RuntimeError,
         "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) tensors"),
        (lambda: gru(torchjax.zeros(T, 2, IN, 1)), ValueError,
         "GRU: Expected input to be 2D or 3D, got 4D instead"),
        (lambda: gru(x.double()), ValueError,
         "RNN input dtype (torch.float64) does not match weight dtype (torch.float32)"),
    ]
    for f, exc, msg in errors:
        with pytest.raises(exc, match=re.escape(msg)):
            f()


# -- cells -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(kind):
    torch.manual_seed(0)
    extra = ("relu",) if kind == "RNNCell" else ()
    tm, jm = pair(kind, IN, H, True, *extra)
    for batched in (True, False):
        x = arr(B, IN) if batched else arr(IN)
        hs = [arr(*(B, H)[1 - batched:]) for _ in range(2 if kind == "LSTMCell" else 1)]
        t_in, j_in = leaves(torch, x, *hs), leaves(torchjax, x, *hs)
        state = (lambda ins: tuple(ins[1:])) if kind == "LSTMCell" else (lambda ins: ins[1])
        tm.zero_grad()
        jm.zero_grad()
        check_backward(tm, jm, tm(t_in[0], state(t_in)), jm(j_in[0], state(j_in)), t_in, j_in)
        for a, b in zip(flat(jm(j_in[0])), flat(tm(t_in[0]))):
            close(a, b, "no state")


def test_cell_errors():
    c, lc = torchjax.nn.GRUCell(IN, H), torchjax.nn.LSTMCell(IN, H)
    for f, exc, msg in [
        (lambda: c(torchjax.zeros(2, 5)), RuntimeError,
         "input has inconsistent input_size: got 5 expected 3"),
        (lambda: c(torchjax.zeros(2, 3), torchjax.zeros(3, 4)), RuntimeError,
         "Input batch size 2 doesn't match hidden0 batch size 3"),
        (lambda: lc(torchjax.zeros(2, 3), (torchjax.zeros(2, 4), torchjax.zeros(2, 5))),
         RuntimeError, "hidden1 has inconsistent hidden_size: got 5, expected 4"),
        (lambda: c(torchjax.zeros(2, 3, 1)), ValueError,
         "GRUCell: Expected input to be 1D or 2D, got 3D instead"),
        (lambda: lc(torchjax.zeros(2, 3), (torchjax.zeros(2, 4, 1), torchjax.zeros(2, 4))),
         ValueError, "LSTMCell: Expected hx[0] to be 1D or 2D, got 3D instead"),
    ]:
        with pytest.raises(exc, match=re.escape(msg)):
            f()


# -- torch.nn.utils.rnn ------------------------------------------------------------------------

def both(f):
    """f(lib) in both libraries, results as nested Python lists."""
    def plain(v):
        if isinstance(v, (torch.Tensor, torchjax.Tensor)):
            return np.round(v.detach().numpy().astype(np.float64), 5).tolist()
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v
    return plain(f(torchjax)), plain(f(torch))


def test_pad_pack_helpers_match_torch():
    seqs = [arr(2, 3), arr(5, 3), arr(1, 3)]
    x, y = arr(5, 3, 2), arr(3, 4, 2)

    def ts(lib):
        return [lib.tensor(s) for s in seqs]

    cases = [
        lambda lib: lib.nn.utils.rnn.pad_sequence(ts(lib)),
        lambda lib: lib.nn.utils.rnn.pad_sequence(ts(lib), batch_first=True, padding_value=-1,
                                                  padding_side="left"),
        lambda lib: lib.nn.utils.rnn.pack_sequence(ts(lib), enforce_sorted=False),
        lambda lib: lib.nn.utils.rnn.unpack_sequence(
            lib.nn.utils.rnn.pack_sequence(ts(lib), enforce_sorted=False)),
        lambda lib: lib.nn.utils.rnn.unpad_sequence(
            lib.nn.utils.rnn.pad_sequence(ts(lib), batch_first=True), lib.tensor([2, 5, 1]),
            batch_first=True),
        lambda lib: lib.nn.utils.rnn.unpad_sequence(lib.nn.utils.rnn.pad_sequence(ts(lib)),
                                                    lib.tensor([2, 5, 1])),
        lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
            lib.nn.utils.rnn.pack_padded_sequence(lib.tensor(x),
                                                  lib.tensor([5, 2, 2])),
            padding_value=7.0, total_length=6),
        lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.tensor(y), [1, 3, 2],
                                                          batch_first=True,
                                                          enforce_sorted=False),
        lambda lib: lib.nn.utils.rnn.invert_permutation(lib.tensor([2, 0, 1])),
    ]
    for f in cases:
        a, b = both(f)
        assert a == b


def test_packed_sequence_class():
    u = torchjax.nn.utils.rnn
    p = u.pack_sequence([torchjax.tensor([1.0, 2.0]), torchjax.tensor([3.0])])
    t = torch.nn.utils.rnn.pack_sequence([torch.tensor([1.0, 2.0]), torch.tensor([3.0])])
    assert repr(p) == repr(t)
    assert isinstance(p, tuple) and p._fields == t._fields
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert batch_sizes.dtype == torchjax.int64 and sorted_indices is None
    q = p.double()
    assert q.data.dtype == torchjax.float64 and q.batch_sizes is p.batch_sizes
    assert p.to(torchjax.float32) is p and not p.is_cuda
    r = u.pack_sequence([torchjax.tensor([1.0]), torchjax.tensor([2.0, 3.0])],
                        enforce_sorted=False).long()
    assert r.data.dtype == torchjax.int64 and r.unsorted_indices.tolist() == [1, 0]


def test_helper_errors():
    u = torchjax.nn.utils.rnn
    x = torchjax.zeros(5, 3, 4)
    for f, exc, msg in [
        (lambda: u.pack_padded_sequence(x, [3, 5, 2]), RuntimeError,
         "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True"),
        (lambda: u.pack_padded_sequence(x, [5, 3, 0]), RuntimeError,
         "Length of all samples has to be greater than 0"),
        (lambda: u.pack_padded_sequence(x, [5, 3]), RuntimeError,
         "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)"),
        (lambda: u.pad_packed_sequence(u.pack_padded_sequence(x, [5, 3, 2]), total_length=3),
         ValueError, "Expected total_length to be at least the length of the longest sequence"),
        (lambda: u.pad_sequence([]), RuntimeError, "received an empty list of sequences"),
        (lambda: u.pad_sequence(5), RuntimeError,
         "pad_sequence: Expected iterable for input sequences"),
        (lambda: u.pad_sequence([x[0], x[0]], padding_side="middle"), RuntimeError,
         "Expected padding_side to be one of left or right, but got middle."),
        (lambda: u.pad_sequence([torchjax.zeros(2, 3), torchjax.zeros(4, 2)]), RuntimeError,
         "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
         "dimension 1"),
    ]:
        with pytest.raises(exc, match=re.escape(msg)):
            f()
