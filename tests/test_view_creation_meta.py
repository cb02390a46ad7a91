"""In-place writes to views PyTorch forbids to modify (its views' creation meta): outputs of
split/chunk/unbind/split_with_sizes, and views made under no_grad of a tensor that requires
grad, modified with grad mode on. The same code runs in torch and torchjax: the same error
message, or the same values and gradients."""

import numpy as np
import pytest
import torch

import torchjax


def _base(lib):
    x = lib.tensor(np.arange(12.0).reshape(4, 3), dtype=lib.float32, requires_grad=True)
    return x, x * 2


def _no_grad_view(lib):
    x, y = _base(lib)
    with lib.no_grad():
        v = y[0]
    v.mul_(2)
    return x, y


def _no_grad_view_of_view(lib):
    x, y = _base(lib)
    with lib.no_grad():
        v = y.t()
    v[0].add_(1)
    return x, y


def _setitem_on_split(lib):
    x, y = _base(lib)
    y.split(2)[0][0] = 5.0
    return x, y


def _setitem_on(output, key, value=0.0):
    """x[key] = value on output(lib, y) of a multi-output view op; PyTorch writes through the
    view the key makes (Select, Slice, Unsqueeze), or into the output itself, and names that
    view in its error."""
    def case(lib):
        x, y = _base(lib)
        output(lib, y)[key(lib) if callable(key) else key] = value
        return x, y
    return case


def _split_under_no_grad_write(lib):
    x, y = _base(lib)
    parts = y.split(2)
    with lib.no_grad():
        parts[0].mul_(2)
    return x, y


def _split_of_plain_tensor_grad_operand(lib):
    w = lib.ones(3, requires_grad=True)
    b = lib.zeros(4, 3).split(2)[0]
    b.mul_(w)
    return w, b


def _tensor_split_allowed(lib):
    x, y = _base(lib)
    y.tensor_split(2)[0].mul_(3)
    return x, y


def _detached_split_allowed(lib):
    x, y = _base(lib)
    y.split(2)[0].detach().mul_(3)
    return x, y


CASES = {
    "split": lambda lib: _base(lib)[1].split(2)[0].mul_(2),
    "chunk": lambda lib: _base(lib)[1].chunk(2)[1].add_(1),
    "unbind": lambda lib: _base(lib)[1].unbind(1)[2].zero_(),
    "split_with_sizes": lambda lib: _base(lib)[1].split([1, 3])[1].mul_(2),
    "leaf split": lambda lib: _base(lib)[0].split(2)[0].mul_(2),
    "view of a split output": lambda lib: _base(lib)[1].split(2)[0][1].mul_(2),
    "setitem on a split output": _setitem_on_split,
    "setitem slice on a chunk output": _setitem_on(lambda lib, y: y.chunk(2)[1], slice(1, None)),
    "setitem None on an unbind output": _setitem_on(lambda lib, y: y.unbind(1)[0], None),
    "setitem True on a split output": _setitem_on(lambda lib, y: y.split(2)[0], True),
    "setitem int and full slice": _setitem_on(lambda lib, y: y.split(2)[0], (1, slice(None))),
    "setitem full slice, int": _setitem_on(lambda lib, y: y.split(2)[0], (slice(None), 1)),
    "setitem int and index list": _setitem_on(lambda lib, y: y.split(2)[0], (1, [0, 2])),
    "setitem full slice": _setitem_on(lambda lib, y: y.split([1, 3])[1], slice(None)),
    "setitem ellipsis": _setitem_on(lambda lib, y: y.split(2)[1], Ellipsis),
    "setitem index tensor": _setitem_on(lambda lib, y: y.split(2)[0],
                                        lambda lib: lib.tensor([0])),
    "setitem False writes nothing": _setitem_on(lambda lib, y: y.split(2)[0], False),
    "view made under no_grad": _no_grad_view,
    "view of a view made under no_grad": _no_grad_view_of_view,
    "split written under no_grad": _split_under_no_grad_write,
    "split of a plain tensor, operand requiring grad": _split_of_plain_tensor_grad_operand,
    "tensor_split": _tensor_split_allowed,
    "detached split output": _detached_split_allowed,
}


def _outcome(lib, name):
    try:
        out = CASES[name](lib)
    except RuntimeError as e:
        return ("error", str(e))
    if isinstance(out, tuple):
        leaf, result = out
        if result.requires_grad:
            result.sum().backward()
        return ("ok", result.detach().numpy(), None if leaf.grad is None else leaf.grad.numpy())
    return ("ok", out.detach().numpy(), None)


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_on_views_as_pytorch(name):
    want, got = _outcome(torch, name), _outcome(torchjax, name)
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        # PyTorch names the node of the view it modifies: for a view of a no_grad view
        # "Output 0 of Select is a view of a view which was created in no_grad mode"; the
        # reason, which says what to do, is the same sentence
        assert got[1].split(". ", 1)[1] == want[1].split(". ", 1)[1]
        assert ("no_grad mode" in got[1]) == ("no_grad mode" in want[1])
        if name != "view of a view made under no_grad":
            assert got[1] == want[1]
    else:
        np.testing.assert_allclose(got[1], want[1])
        assert (got[2] is None) == (want[2] is None)
        if want[2] is not None:
            np.testing.assert_allclose(got[2], want[2])
