"""torchjax.func.vmap against torch.func.vmap: in_dims / out_dims, nesting, chunking,
randomness modes and PyTorch's errors."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import torchjax

from . import arr, check, check_raises

A = arr(4, 3, seed=5)
B = arr(3, 4, seed=6)
V = arr(3, seed=7)


def test_in_dims_none_negative_and_nested():
    check(lambda lib: lib.func.vmap(lambda a, v: a * v + 1, in_dims=(0, None))(
        lib.tensor(A), lib.tensor(V)))
    check(lambda lib: lib.func.vmap(lambda a, b: a @ b, in_dims=(0, -1))(
        lib.tensor(A), lib.tensor(B)))
    check(lambda lib: lib.func.vmap(lambda d, s: d["x"] * d["y"][0] * s,
                                    in_dims=({"x": 0, "y": [1]}, None))(
        {"x": lib.tensor(A), "y": [lib.tensor(B)]}, 2.0))


def test_integer_inputs_one_hot():
    check(lambda lib: lib.func.vmap(lambda i: lib.nn.functional.one_hot(i, 4))(
        lib.tensor([[0, 3], [2, 1]])))


def test_kwargs_are_not_batched():
    check(lambda lib: lib.func.vmap(lambda a, *, w: a * w)(lib.tensor(A), w=lib.tensor(V)))


def test_out_dims():
    check(lambda lib: lib.func.vmap(lambda a: (a.sum(), a * 2), out_dims=(0, 1))(
        lib.tensor(A)))
    check(lambda lib: lib.func.vmap(lambda a: a.unsqueeze(0), out_dims=-1)(lib.tensor(A)))
    check(lambda lib: lib.func.vmap(lambda a, v: (a + v, v * 2, "tag"),
                                    in_dims=(0, None), out_dims=(0, None, None))(
        lib.tensor(A), lib.tensor(V)))


def test_unbatched_output_is_expanded():
    check(lambda lib: lib.func.vmap(lambda a, v: v * 3, in_dims=(0, None))(
        lib.tensor(A), lib.tensor(V)))


def test_nested_vmap():
    # outer over rows of A, inner over rows of B: an outer product of dot products
    check(lambda lib: lib.func.vmap(lib.func.vmap(lambda a, b: (a * b).sum(),
                                                  in_dims=(None, 1)), in_dims=(0, None))(
        lib.tensor(A), lib.tensor(B)))
    check(lambda lib: lib.func.vmap(lib.func.vmap(lambda x: x.sin() * x.max()))(
        lib.tensor(A)))


def test_vmap_of_grad_and_grad_of_vmap():
    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    check(lambda lib: lib.func.vmap(lib.func.grad(f))(lib.tensor(A)))
    check(lambda lib: lib.func.grad(lambda a: lib.func.vmap(f)(a).sum())(lib.tensor(A)))


@pytest.mark.parametrize("chunk_size", [1, 3])
def test_chunk_size(chunk_size):
    check(lambda lib: lib.func.vmap(lambda a, v: (a * v, a.sum()), in_dims=(0, None),
                                    out_dims=(1, 0), chunk_size=chunk_size)(
        lib.tensor(A), lib.tensor(V)))


def test_functools_partial_and_name():
    def scaled(x, s):
        return x * s
    check(lambda lib: lib.func.vmap(functools.partial(scaled, s=3.0))(lib.tensor(A)))
    assert torchjax.func.vmap(scaled).__name__ == "scaled"


def test_randomness():
    check_raises(lambda lib: lib.func.vmap(lambda x: x + lib.randn(3))(lib.tensor(A)))
    check_raises(lambda lib: lib.func.vmap(lambda x: lib.nn.functional.dropout(x, 0.5))(
        lib.tensor(A)))
    check_raises(lambda lib: lib.func.vmap(lambda x: x, randomness="sometimes"))

    def same(lib):
        out = lib.func.vmap(lambda x: lib.rand(3) + x * 0, randomness="same")(lib.tensor(A))
        return bool((out == out[0]).all())
    assert check(same) is True

    def different(lib):
        out = lib.func.vmap(lambda x: lib.rand(3) + x * 0, randomness="different")(
            lib.tensor(A))
        rows_differ = all(not bool((out[i] == out[0]).all()) for i in range(1, 4))
        return tuple(out.shape), rows_differ, bool(((out >= 0) & (out < 1)).all())
    check(different)

    def same_dropout_mask(lib):
        x = lib.ones(4, 50)
        out = lib.func.vmap(lambda r: lib.nn.functional.dropout(r, 0.5), randomness="same")(x)
        return bool((out == out[0]).all()), sorted(set(out.flatten().tolist()))
    check(same_dropout_mask)

    def chunked_same(lib):
        out = lib.func.vmap(lambda x: lib.rand(2) + x * 0, randomness="same", chunk_size=1)(
            lib.tensor(V))
        return bool((out == out[0]).all())
    assert check(chunked_same) is True


def test_randomness_different_is_independent_per_example():
    torchjax.manual_seed(0)
    out = torchjax.func.vmap(lambda x: torchjax.randn(2000) + x * 0,
                             randomness="different")(torchjax.zeros(3)).numpy()
    corr = np.corrcoef(out)
    assert np.all(np.abs(corr[np.triu_indices(3, 1)]) < 0.1)
    np.testing.assert_allclose(out.std(axis=1), 1.0, atol=0.1)
    # the generator moved on: a second call draws new values
    again = torchjax.func.vmap(lambda x: torchjax.randn(2000) + x * 0,
                               randomness="different")(torchjax.zeros(3)).numpy()
    assert not np.allclose(out, again)


def test_data_dependent_errors():
    check_raises(lambda lib: lib.func.vmap(lambda x: x.sum().item())(lib.tensor(A)))
    check_raises(lambda lib: lib.func.vmap(lambda x: x if x.sum() > 0 else -x)(lib.tensor(A)))


def test_vmap_errors():
    t = lambda lib: lib.tensor(A)  # noqa: E731
    check_raises(lambda lib: lib.func.vmap(lambda x: x * 2, out_dims=None)(t(lib)))
    check_raises(lambda lib: lib.func.vmap(lambda x: 3)(t(lib)))
    check_raises(lambda lib: lib.func.vmap(lambda x, y: x + y, in_dims=(0,))(t(lib), t(lib)),
                 match="in_dims is not compatible with the structure of `inputs`")
    check_raises(lambda lib: lib.func.vmap(lambda x, y: x + y, in_dims=[0, 0])(t(lib), t(lib)))
    check_raises(lambda lib: lib.func.vmap(lambda x, y: x, in_dims=(None, None))(t(lib), 1))
    check_raises(lambda lib: lib.func.vmap(lambda x, y: x + y)(t(lib), lib.ones(3)))
    check_raises(lambda lib: lib.func.vmap(lambda x, y: x + y)(t(lib), 2.0))
    check_raises(lambda lib: lib.func.vmap(lambda x: x, in_dims=2)(t(lib)))
    check_raises(lambda lib: lib.func.vmap(lambda x: x, in_dims=(0.5,))(t(lib)))
    check_raises(lambda lib: lib.func.vmap(lambda x: x)())
    check_raises(lambda lib: lib.func.vmap(lambda x: x, chunk_size=0))
    check_raises(lambda lib: lib.func.vmap(lambda x: (x, x), out_dims=(0,))(t(lib)),
                 match="out_dims is not compatible with the structure of `outputs`")
    check_raises(lambda lib: lib.func.vmap(lambda x: x, out_dims="a")(t(lib)))


def test_inplace_on_batched_inputs_writes_through():
    def run(lib):
        x = lib.tensor(A)
        out = lib.func.vmap(lambda r: r.mul_(2))(x)
        y = lib.tensor(A)
        lib.func.vmap(lambda c: c[0].add_(5), in_dims=1)(y)
        return x, out, y
    check(run)


def test_inplace_on_unbatched_argument_with_batched_value_is_refused():
    def run(lib):
        n = lib.zeros(3)

        def f(x, n):
            n.add_(x)
            return x
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            lib.func.vmap(f, in_dims=(0, None))(lib.tensor(A), n)
        return n  # left as it was
    check(run)
