"""Mistakes give PyTorch's error type and key phrase."""

from __future__ import annotations

import pytest
import torch

import torchjax

CASES = [
    ("broadcast", lambda lib: lib.ones(10, 5) + lib.ones(5, 1), RuntimeError,
     r"The size of tensor a \(10\) must match the size of tensor b \(5\) at non-singleton "
     r"dimension 0"),
    ("broadcast mul", lambda lib: lib.ones(2, 3) * lib.ones(4), RuntimeError,
     r"The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton "
     r"dimension 1"),
    ("mm shapes", lambda lib: lib.mm(lib.ones(10, 3), lib.ones(4, 8)), RuntimeError,
     r"mat1 and mat2 shapes cannot be multiplied \(10x3 and 4x8\)"),
    ("linear shapes", lambda lib: lib.nn.Linear(4, 8)(lib.ones(10, 3)), RuntimeError,
     r"mat1 and mat2 shapes cannot be multiplied \(10x3 and 4x8\)"),
    ("backward no grad", lambda lib: (lib.ones(2).sum()).backward(), RuntimeError,
     "element 0 of tensors does not require grad and does not have a grad_fn"),
    ("backward non-scalar", lambda lib: (lib.ones(2, requires_grad=True) * 2).backward(),
     RuntimeError, "grad can be implicitly created only for scalar outputs"),
    ("int requires grad", lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_(),
     RuntimeError, "only Tensors of floating point dtype can require gradients"),
    ("int tensor requires grad", lambda lib: lib.tensor([1, 2], requires_grad=True),
     RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"),
    ("inplace cast", lambda lib: lib.ones(2, dtype=lib.int64).mul_(1.5), RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    ("inplace broadcast", lambda lib: lib.ones(3).add_(lib.ones(2, 3)), RuntimeError,
     r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"),
    ("bool sub", lambda lib: lib.tensor([True]) - lib.tensor([False]), RuntimeError,
     "Subtraction, the `-` operator, with two bool tensors is not supported"),
    ("bool neg", lambda lib: -lib.tensor([True]), RuntimeError,
     "Negation, the `-` operator, on a bool tensor is not supported"),
    ("not a tensor", lambda lib: lib.add(lib.ones(2), [1, 2]), TypeError,
     r"add\(\): argument 'other' \(position 2\) must be Tensor, not list"),
    ("mean of ints", lambda lib: lib.tensor([1, 2]).mean(), RuntimeError,
     "mean\\(\\): could not infer output dtype"),
    ("view shape", lambda lib: lib.ones(6).view(2, 5), RuntimeError,
     r"shape '\[2, 5\]' is invalid for input of size 6"),
    ("leaf inplace", lambda lib: lib.ones(2, requires_grad=True).mul_(2), RuntimeError,
     "a leaf Variable that requires grad is being used in an in-place operation"),
    ("grad shape", lambda lib: (lib.ones(2, requires_grad=True) * 2).backward(lib.ones(3)),
     RuntimeError, "Mismatch in shape"),
    ("item", lambda lib: lib.ones(2).item(), RuntimeError,
     "a Tensor with 2 elements cannot be converted to Scalar"),
]


@pytest.mark.parametrize("name,fn,exc,msg", CASES, ids=[c[0] for c in CASES])
def test_same_error_as_pytorch(name, fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn(torch)
    with pytest.raises(exc, match=msg):
        fn(torchjax)
