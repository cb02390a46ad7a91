"""nn.init against PyTorch: deterministic initialisers give PyTorch's exact values; random ones
are checked by their statistics (bounds, means, standard deviations, orthogonality, sparsity),
since the random bits differ."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import torchjax

init = torchjax.nn.init
LIBS = (torch, torchjax)


def same_error(fn):
    got = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            fn(lib)
        got.append((type(info.value), str(info.value)))
    assert got[1] == got[0]


# The statistics use one large shape (every new shape compiles its own XLA programs)
BIG = (200, 100)


def big(*shape):
    return torchjax.empty(*(shape or BIG))


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("conv_transpose3d",),
                                  ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",),
                                  ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu",)])
def test_calculate_gain(args):
    expected = torch.nn.init.calculate_gain(*args)
    got = init.calculate_gain(*args)
    assert got == expected and type(got) is type(expected)


def test_gain_and_fan_errors():
    same_error(lambda lib: lib.nn.init.calculate_gain("swish"))
    same_error(lambda lib: lib.nn.init.calculate_gain("leaky_relu", True))
    same_error(lambda lib: lib.nn.init.calculate_gain("leaky_relu", "0.1"))
    same_error(lambda lib: lib.nn.init._calculate_fan_in_and_fan_out(lib.empty(3)))
    same_error(lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 4), mode="fan_avg"))
    same_error(lambda lib: lib.nn.init.xavier_uniform_(lib.empty(3)))
    same_error(lambda lib: lib.nn.init.eye_(lib.empty(3, 4, 5)))
    same_error(lambda lib: lib.nn.init.dirac_(lib.empty(3, 4)))
    same_error(lambda lib: lib.nn.init.dirac_(lib.empty(3, 4, 3), groups=2))
    same_error(lambda lib: lib.nn.init.orthogonal_(lib.empty(3)))
    same_error(lambda lib: lib.nn.init.sparse_(lib.empty(3, 4, 2), 0.5))


@pytest.mark.parametrize("shape", [(5, 3), (4, 2, 3, 3), (2, 6, 5)])
def test_fan_in_and_fan_out(shape):
    expected = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert init._calculate_fan_in_and_fan_out(torchjax.empty(shape)) == expected


def test_deterministic_initialisers_match_exactly():
    cases = [
        lambda lib, t: lib.nn.init.constant_(t, 0.25),
        lambda lib, t: lib.nn.init.ones_(t),
        lambda lib, t: lib.nn.init.zeros_(t),
    ]
    for fill in cases:
        out = [fill(lib, lib.empty(2, 3)).numpy() for lib in LIBS]
        np.testing.assert_array_equal(out[1], out[0])
    for shape in ((3, 5), (5, 3)):
        out = [lib.nn.init.eye_(lib.empty(*shape)).numpy() for lib in LIBS]
        np.testing.assert_array_equal(out[1], out[0])
    for shape, groups in (((4, 2, 3), 1), ((6, 3, 3, 4), 2), ((4, 2, 3, 3, 3), 2),
                          ((2, 5, 3), 1)):
        out = [lib.nn.init.dirac_(lib.empty(*shape), groups).numpy() for lib in LIBS]
        np.testing.assert_array_equal(out[1], out[0])


def test_initialisers_work_in_place_on_parameters_without_history():
    p = torchjax.nn.Parameter(torchjax.empty(6, 4))
    for fn in (init.uniform_, init.orthogonal_, init.trunc_normal_, init.eye_):
        assert fn(p) is p
        assert p.requires_grad and p.grad_fn is None and p.is_leaf


def test_uniform_and_normal_statistics():
    t = init.uniform_(big(), -0.5, 1.5).numpy()
    assert t.min() >= -0.5 and t.max() < 1.5
    assert abs(t.mean() - 0.5) < 0.02 and abs(t.std() - 2 / math.sqrt(12)) < 0.02
    t = init.normal_(big(), 2.0, 0.5).numpy()
    assert abs(t.mean() - 2.0) < 0.01 and abs(t.std() - 0.5) < 0.01


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 0.0),
                                          (0.0, 0.02, -0.04, 0.04)])
def test_trunc_normal_statistics(mean, std, a, b):
    t = init.trunc_normal_(big(), mean, std, a, b).numpy()
    assert t.min() >= a and t.max() <= b
    # the moments of the truncated normal
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = [math.exp(-x * x / 2) / math.sqrt(2 * math.pi) for x in (alpha, beta)]
    z = 0.5 * (math.erf(beta / math.sqrt(2)) - math.erf(alpha / math.sqrt(2)))
    exp_mean = mean + std * (pdf[0] - pdf[1]) / z
    exp_var = std ** 2 * (1 + (alpha * pdf[0] - beta * pdf[1]) / z
                          - ((pdf[0] - pdf[1]) / z) ** 2)
    assert abs(t.mean() - exp_mean) < 0.02 * std + 1e-4
    assert abs(t.std() - math.sqrt(exp_var)) < 0.02 * std


def test_trunc_normal_warns_far_mean():
    for lib in LIBS:
        with pytest.warns(UserWarning, match="mean is more than 2 std from"):
            lib.nn.init.trunc_normal_(lib.empty(3), mean=10.0)


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_xavier_statistics(gain):
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(big())
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    t = init.xavier_uniform_(big(), gain=gain).numpy()
    bound = math.sqrt(3) * std
    assert np.abs(t).max() <= bound and abs(t.std() - std) < 0.02 * std
    t = init.xavier_normal_(big(), gain=gain).numpy()
    assert abs(t.std() - std) < 0.02 * std and abs(t.mean()) < 0.02 * std


@pytest.mark.parametrize("a,mode,nonlinearity", [(0, "fan_in", "leaky_relu"),
                                                 (0.1, "fan_out", "leaky_relu"),
                                                 (0, "FAN_IN", "relu"), (0, "fan_out", "tanh")])
def test_kaiming_statistics(a, mode, nonlinearity):
    fan = BIG[1] if mode.lower() == "fan_in" else BIG[0]
    std = init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    t = init.kaiming_uniform_(big(), a, mode, nonlinearity).numpy()
    assert np.abs(t).max() <= math.sqrt(3) * std and abs(t.std() - std) < 0.02 * std
    t = init.kaiming_normal_(big(), a, mode, nonlinearity).numpy()
    assert abs(t.std() - std) < 0.02 * std


def test_kaiming_zero_element_tensor_warns():
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            t = torchjax.empty(0, 3)
            assert fn(t) is t


@pytest.mark.parametrize("shape,gain", [((6, 4), 1.0), ((3, 2, 4), 2.5)])
def test_orthogonal(shape, gain):
    t = init.orthogonal_(big(*shape), gain=gain).numpy().reshape(shape[0], -1)
    rows, cols = t.shape
    gram = t @ t.T if rows < cols else t.T @ t
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(rows, cols)), atol=1e-5)


def test_sparse():
    t = init.sparse_(big(), sparsity=0.3, std=0.5).numpy()
    zeros_per_column = (t == 0).sum(0)
    assert (zeros_per_column == math.ceil(0.3 * BIG[0])).all()
    assert abs(t[t != 0].std() - 0.5) < 0.01
    # the zeroed rows differ from column to column
    assert len({tuple(np.nonzero(t[:, j] == 0)[0]) for j in range(BIG[1])}) == BIG[1]


def test_generator_argument():
    def draw(fn, seed, **kw):
        g = torchjax.Generator().manual_seed(seed)
        return fn(torchjax.empty(6, 4), generator=g, **kw).numpy()
    for fn, kw in ((init.uniform_, {}), (init.normal_, {}), (init.trunc_normal_, {}),
                   (init.xavier_uniform_, {}), (init.kaiming_normal_, {}),
                   (init.orthogonal_, {}), (init.sparse_, {"sparsity": 0.0})):
        np.testing.assert_array_equal(draw(fn, 3, **kw), draw(fn, 3, **kw))
        assert not np.array_equal(draw(fn, 3, **kw), draw(fn, 4, **kw))


def test_deprecated_aliases_warn():
    for lib in LIBS:
        with pytest.warns(FutureWarning, match="`nn.init.normal` is now deprecated in favor "
                                               "of `nn.init.normal_`."):
            lib.nn.init.normal(lib.empty(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init.normal_(torchjax.empty(2))
