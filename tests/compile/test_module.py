"""Compiled modules and forward-only functions: inference under no_grad, a compiled forward
in an eager training loop (backward runs over it as one node), Module.compile, and donation
that never leaves a reachable tensor on a deleted array."""

from __future__ import annotations

import numpy as np

import torchjax as torch
import torchjax.nn.functional as F
from torchjax import nn


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.GELU(), nn.Dropout(0.2),
                         nn.Linear(8, 3))


def test_compiled_forward_in_eager_loop_matches_eager():
    eager, comp = _model(), _model()
    cmodel = torch.compile(comp)
    assert isinstance(cmodel, torch.compiler.OptimizedModule)
    assert list(cmodel.state_dict()) == ["_orig_mod." + k for k in comp.state_dict()]
    assert list(cmodel.parameters())[0] is comp[0].weight
    oe = torch.optim.SGD(eager.parameters(), lr=0.1)
    oc = torch.optim.SGD(cmodel.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for i in range(3):
        x = torch.tensor(rng.standard_normal((6, 4)).astype(np.float32))
        y = torch.tensor(rng.integers(0, 3, 6))
        results = []
        for model, opt in ((eager, oe), (cmodel, oc)):
            torch.manual_seed(i)
            opt.zero_grad()
            out = model(x)
            loss = F.cross_entropy(out, y)
            loss.backward()
            opt.step()
            results.append((out, loss))
        (out_e, loss_e), (out_c, loss_c) = results
        assert out_c.grad_fn.name() == "CompiledFunctionBackward"
        np.testing.assert_allclose(loss_c.item(), loss_e.item(), rtol=1e-5)
        for pe, pc in zip(eager.parameters(), comp.parameters()):
            np.testing.assert_allclose(pc.grad.numpy(), pe.grad.numpy(), rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(pc.detach().numpy(), pe.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
        for be, bc in zip(eager.buffers(), comp.buffers()):
            np.testing.assert_allclose(bc.numpy(), be.numpy(), rtol=1e-5, atol=1e-6)


def test_inference_under_no_grad_and_module_compile():
    model = _model().eval()
    x = torch.randn(5, 4)
    with torch.no_grad():
        want = model(x)
    model.compile()
    with torch.no_grad():
        got = model(x)
        again = model(x)
    assert not got.requires_grad
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(again.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert model._compiled_call_impl.compiles == 1


def test_donation_never_leaves_a_deleted_array_reachable():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)

    @torch.compile
    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    x = torch.ones(4, 3)
    step(x)
    step(x)
    kept = model.weight.detach()          # shares the parameter's storage, as in PyTorch
    old = kept._data
    sd = opt.state_dict()["state"][0]["exp_avg"]
    before = kept.numpy().copy()
    step(x)
    # the detached alias sees the update (as eager mode's does) and the array it held was
    # copied rather than donated, so nothing reachable was deleted
    np.testing.assert_array_equal(kept.numpy(), model.weight.detach().numpy())
    assert not np.array_equal(kept.numpy(), before)
    assert not old.is_deleted()
    assert np.isfinite(sd.numpy()).all()
    # without other references the old state arrays are donated to the program
    prog = step.programs[-1]
    assert len(prog.donated) >= 2


def test_compiled_forward_links_outputs_as_the_tape_does():
    """A compiled forward's outputs require grad and its inputs get gradients exactly as in
    eager mode, zero derivatives included: sign(x) requires grad and gives x a zero gradient,
    an input no output reaches gets None, and a detached result does not require grad."""
    def f(x, y, z):
        return x.sign(), torch.floor(y) * 2, z.detach() + 1
    compiled = torch.compile(f, fullgraph=True)
    results = []
    for fn in (f, compiled, compiled):  # the second compiled call runs the cached program
        x, y, z = (torch.randn(3, requires_grad=True) for _ in range(3))
        outs = fn(x, y, z)
        flags = [o.requires_grad for o in outs]
        grads = torch.autograd.grad(outs[0].sum() + outs[1].sum(), [x, y, z], allow_unused=True)
        results.append((flags, [None if g is None else g.tolist() for g in grads]))
    assert results[2] == results[1] == results[0] == ([True, True, False],
                                                      [[0.0] * 3, [0.0] * 3, None])
    assert compiled.compiles == 1
