"""Mistakes give PyTorch's error type and key phrase."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

CASES = [
    ("int negative power", lambda lib: lib.tensor([2, 3]) ** -1, RuntimeError,
     "Integers to negative integer powers are not allowed."),
    ("int negative power in place", lambda lib: lib.tensor([2, 3]).pow_(-2), RuntimeError,
     "Integers to negative integer powers are not allowed."),
    ("int floor division by zero", lambda lib: lib.tensor([2, 3]) // 0, RuntimeError,
     "ZeroDivisionError"),
    ("int remainder by zero tensor", lambda lib: lib.tensor([2, 3]) % lib.tensor([1, 0]),
     RuntimeError, "ZeroDivisionError"),
    ("int fmod by zero", lambda lib: lib.fmod(lib.tensor([2, 3]), 0), RuntimeError,
     "ZeroDivisionError"),
    ("int trunc division by zero",
     lambda lib: lib.div(lib.tensor([2]), lib.tensor(0), rounding_mode="trunc"), RuntimeError,
     "ZeroDivisionError"),
    ("int in-place floor division by zero",
     lambda lib: lib.tensor([2], dtype=lib.uint8).floor_divide_(lib.tensor([0])), RuntimeError,
     "ZeroDivisionError"),
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
    ("cat shapes", lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 4)]), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4"),
    ("stack shapes", lambda lib: lib.stack([lib.ones(2, 3), lib.ones(3, 2)]), RuntimeError,
     r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[3, 2\] "
     "at entry 1"),
    ("bmm shapes", lambda lib: lib.bmm(lib.ones(2, 3, 4), lib.ones(2, 5, 6)), RuntimeError,
     r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: "
     r"\[2, 5\]"),
    ("dot sizes", lambda lib: lib.dot(lib.ones(3), lib.ones(4)), RuntimeError,
     "inconsistent tensor size"),
    ("mm dtypes", lambda lib: lib.mm(lib.ones(2, 2), lib.ones(2, 2, dtype=lib.float64)),
     RuntimeError, "expected m1 and m2 to have the same dtype, but got: float != double"),
    ("linear dtypes", lambda lib: lib.nn.functional.linear(lib.ones(2, 3, dtype=lib.float64),
                                                          lib.ones(4, 3)),
     RuntimeError, "expected m1 and m2 to have the same dtype, but got: double != float"),
    ("linear bias dtype", lambda lib: lib.nn.functional.linear(
        lib.ones(2, 3), lib.ones(4, 3), lib.ones(4, dtype=lib.float64)),
     RuntimeError, "self and mat2 must have the same dtype, but got Double and Float"),
    ("bitwise on floats", lambda lib: lib.ones(2) & lib.ones(2), RuntimeError,
     "\"bitwise_and_cpu\" not implemented for 'Float'"),
    ("dim out of range", lambda lib: lib.ones(2, 3).sum(dim=2), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    ("gather index dtype", lambda lib: lib.gather(lib.ones(2, 3), 1, lib.zeros(2, 1)),
     RuntimeError, "gather\\(\\): Expected dtype int32/int64 for index"),
    ("index out of range", lambda lib: lib.ones(2, 3)[5], IndexError,
     "index 5 is out of bounds for dimension 0 with size 2"),
    ("masked_fill float mask", lambda lib: lib.ones(2).masked_fill(lib.ones(2), 0.0),
     RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype float"),
    ("argmax of empty", lambda lib: lib.ones(0).argmax(), IndexError,
     "Expected reduction dim to be specified for input.numel\\(\\) == 0"),
    ("arange step sign", lambda lib: lib.arange(0, 10, -1), RuntimeError,
     "upper bound and lower bound inconsistent with step sign"),
    ("einsum sizes", lambda lib: lib.einsum("ij,jk->ik", lib.ones(2, 3), lib.ones(4, 5)),
     RuntimeError, "einsum\\(\\): subscript j has size 4 for operand 1 which does not broadcast "
     "with previously seen size 3"),
    ("ragged list", lambda lib: lib.tensor([[1, 2], [3]]), ValueError,
     "expected sequence of length 2 at dim 1 \\(got 1\\)"),
    ("len of 0-d", lambda lib: len(lib.tensor(1.0)), TypeError, "len\\(\\) of a 0-d tensor"),
    ("float of many", lambda lib: float(lib.ones(2)), (ValueError, RuntimeError),
     "only one element tensors can be converted to Python scalars"),
]


@pytest.mark.parametrize("name,fn,exc,msg", CASES, ids=[c[0] for c in CASES])
def test_same_error_as_pytorch(name, fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn(torch)
    with pytest.raises(exc, match=msg):
        fn(torchjax)


def test_integer_power_and_division_values_match_pytorch():
    # negative exponents in an integer tensor are allowed: 1 and -1 keep their power, else 0
    def calls(lib):
        b = lib.tensor([0, 1, -1, 2, -2, 3])
        e = lib.tensor([-1, -3, -2, -2, -1, 2])
        return [b ** e, b.to(lib.uint8) ** e, 2 ** b.abs(), b // 2, b % 3, b / 0,
                lib.div(b, -4, rounding_mode="trunc")]
    for a, b in zip(calls(torchjax), calls(torch)):
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
