"""torchjax.autograd.gradcheck / gradgradcheck against torch.autograd's, on the same programs:
passing checks, the same GradcheckError messages for wrong backwards, options and warnings."""

import warnings

import pytest
import torch

# torch.autograd.gradcheck names the function; the module is reached by a from-import, as
# torchjax's will be once torchjax.autograd exports the functions
from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError

import torchjax
from torchjax.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck

LIBS = {
    torch: (torch.autograd.gradcheck, torch.autograd.gradgradcheck),
    torchjax: (gradcheck, gradgradcheck),
}


def run(lib, program, check_name="gradcheck"):
    """program(lib, check) with lib's gradcheck or gradgradcheck; its result, or the error."""
    gc, ggc = LIBS[lib]
    check = gc if check_name == "gradcheck" else ggc
    try:
        return program(lib, check)
    except Exception as e:  # compared between the libraries below
        return e


def both(program, check_name="gradcheck"):
    return run(torch, program, check_name), run(torchjax, program, check_name)


def same_error(expected, actual):
    assert isinstance(expected, Exception), expected
    assert isinstance(actual, Exception), actual
    assert type(actual).__name__ == type(expected).__name__, (expected, actual)
    assert str(actual) == str(expected)


def doubles(lib, *shape_values):
    return tuple(lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in shape_values)


# -- custom Functions, the same source in both libraries ---------------------------------------

def cube_fn(lib, wrong=False, detach_in_backward=False):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            if detach_in_backward:
                x = x.detach()  # a first derivative whose own derivative in x is lost
            return (4 if wrong else 3) * x ** 2 * grad
    return Cube


def scaled_fn(lib, backward):
    class Scaled(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return backward(lib, grad)
    return Scaled


# -- passing checks ----------------------------------------------------------------------------

PASSING = {
    "sin_mul": lambda lib: (lambda x: x.sin() * x, doubles(lib, [0.3, -1.2, 2.0])),
    "matmul_tanh": lambda lib: (lambda x, w: (w @ x).tanh(),
                                doubles(lib, [1.0, 2.0, -0.5], [[0.5, -1.0, 2.0],
                                                                [1.0, 0.2, 0.3]])),
    "softmax_logsumexp": lambda lib: (lambda x: (x.softmax(-1), x.logsumexp(-1)),
                                      doubles(lib, [[0.1, 0.7, -0.4], [1.0, 2.0, 0.5]])),
    "broadcast_div_pow": lambda lib: (lambda a, b: (a / b) ** 2 + b.exp(),
                                      doubles(lib, [[1.0, 2.0], [3.0, -4.0]], [0.5, 1.5])),
    "multi_output_max": lambda lib: (lambda x: x.max(0),
                                     doubles(lib, [[1.0, 5.0], [3.0, 2.0], [0.0, -1.0]])),
    "unbind": lambda lib: (lambda x: x.unbind(0), doubles(lib, [[1.0, 2.0], [3.0, 4.0]])),
    "custom_function": lambda lib: (cube_fn(lib).apply, doubles(lib, [0.5, -2.0])),
    # a composite of a custom Function and built-in ops, with a non-tensor argument
    "composite": lambda lib: (
        lambda x, w, k: (cube_fn(lib).apply(x @ w) * k).sum(0).sigmoid(),
        doubles(lib, [[0.2, -0.3], [0.1, 0.4]], [[1.0, 0.5], [-0.5, 2.0]]) + (0.7,)),
    "non_leaf_input": lambda lib: (lambda x: x.cos(), ((doubles(lib, [0.1, 0.2])[0] * 3),)),
    "complex_in_complex_out": lambda lib: (
        lambda z: z * z.conj() + z.exp(),
        (lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex128, requires_grad=True),)),
    "complex_in_real_out": lambda lib: (
        lambda z: (z * z).abs(),
        (lib.tensor([1 + 2j, -0.5 + 1j], dtype=lib.complex128, requires_grad=True),)),
    "real_in_complex_out": lambda lib: (lambda x: x * (1 + 2j), doubles(lib, [1.0, 2.0])),
}


@pytest.mark.parametrize("name", sorted(PASSING))
def test_gradcheck_passes(name):
    def program(lib, check):
        fn, inputs = PASSING[name](lib)
        return check(fn, inputs)
    expected, actual = both(program)
    assert expected is True
    assert actual is True


def test_fast_mode_runs_the_full_check():
    # fast_mode is a performance option: the same verdicts, wrong backwards still caught
    def ok(lib, check):
        fn, inputs = PASSING["matmul_tanh"](lib)
        return check(fn, inputs, fast_mode=True)

    def wrong(lib, check):
        return check(cube_fn(lib, wrong=True).apply, doubles(lib, [0.5, -2.0]), fast_mode=True,
                     raise_exception=False)
    assert both(ok) == (True, True)
    assert both(wrong) == (False, False)


# -- failing checks: a custom Function with a wrong backward --------------------------------------

def test_wrong_backward_message_matches_torch():
    def program(lib, check):
        return check(cube_fn(lib, wrong=True).apply, doubles(lib, [1.0, 2.0, 3.0]))
    expected, actual = both(program)
    same_error(expected, actual)
    assert isinstance(expected, TorchGradcheckError) and isinstance(actual, GradcheckError)
    assert isinstance(actual, RuntimeError)
    assert "Jacobian mismatch for output 0 with respect to input 0" in str(actual)
    # numerical d(x^3)/dx = 3x^2 against the wrong 4x^2 on the diagonal
    assert "numerical:tensor([[ 3.0000,  0.0000,  0.0000]" in str(actual)
    assert "analytical:tensor([[ 4.,  0.,  0.]" in str(actual)


def test_wrong_backward_second_input_and_output():
    # the indices in the message count differentiable outputs and inputs requiring grad
    def program(lib, check):
        bad = cube_fn(lib, wrong=True)
        a, b = doubles(lib, [1.0, 2.0], [0.5, 1.5])
        c = lib.tensor([1.0, 1.0], dtype=lib.float64)  # does not require grad: not counted
        return check(lambda c, a, b: (a * 2, a.sin() + bad.apply(b) * c), (c, a, b))
    expected, actual = both(program)
    same_error(expected, actual)
    assert str(actual).startswith("Jacobian mismatch for output 1 with respect to input 1,")


def test_wrong_complex_backward_names_the_part():
    def program(lib, check):
        wrong_conj = scaled_fn(lib, lambda lib, g: g.conj() * 2)
        z = lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex128, requires_grad=True)
        return check(wrong_conj.apply, (z,))
    expected, actual = both(program)
    same_error(expected, actual)
    assert str(actual).startswith("While considering the imaginary part of complex outputs "
                                  "only, Jacobian mismatch for output 0 with respect to input 0")


def test_raise_exception_false_returns_false():
    def program(lib, check):
        return check(cube_fn(lib, wrong=True).apply, doubles(lib, [1.0, 2.0]),
                     raise_exception=False)
    assert both(program) == (False, False)


@pytest.mark.parametrize("case", ["not_multiplied", "not_reentrant"])
def test_other_backward_defects(case):
    def program(lib, check):
        if case == "not_multiplied":  # right at grad_output == 1, not scaled by it
            fn = scaled_fn(lib, lambda lib, g: lib.ones_like(g) * 2)
            return check(fn.apply, doubles(lib, 1.5))
        noisy = scaled_fn(lib, lambda lib, g: g * 2 + lib.rand(g.shape, dtype=g.dtype) * 1e-9)
        return check(noisy.apply, doubles(lib, [1.0, 2.0]))
    expected, actual = both(program)
    assert type(actual).__name__ == type(expected).__name__ == "GradcheckError"
    phrase = ("backward not multiplied by grad_output" if case == "not_multiplied"
              else "Backward is not reentrant, i.e., running backward with same input and "
                   "grad_output multiple times gives different values")
    assert phrase in str(expected)
    assert phrase in str(actual)


def test_nondet_tol_allows_small_differences():
    def program(lib, check):
        noisy = scaled_fn(lib, lambda lib, g: g * 2 + lib.rand(g.shape, dtype=g.dtype) * 1e-9)
        # passes the Jacobian checks; then zero grad_outputs still give the noise
        return check(noisy.apply, doubles(lib, [1.0, 2.0]), nondet_tol=1e-7,
                     raise_exception=False)
    assert both(program) == (False, False)


def test_no_differentiable_output():
    def step(threshold):
        def program(lib, check):
            return check(lambda x: (x > threshold).double(), doubles(lib, [0.5, 2.0]))
        return program
    assert both(step(1.0)) == (True, True)  # locally constant: passes
    expected, actual = both(step(2.0))  # an element sits on the step
    same_error(expected, actual)
    assert str(actual) == "Numerical gradient for function expected to be zero"


@pytest.mark.parametrize("case", ["shape", "dtype"])
def test_wrong_gradient_shape_and_dtype(case):
    # the engine checks a custom backward's gradients before gradcheck sees them: a wrong
    # shape is an error, a wrong dtype is cast back to the input's
    def program(lib, check):
        if case == "shape":
            fn = scaled_fn(lib, lambda lib, g: lib.cat([g, g]) * 2)
        else:
            fn = scaled_fn(lib, lambda lib, g: (g * 2).float())
        return check(fn.apply, doubles(lib, [1.0, 2.0]), check_grad_dtypes=True)
    expected, actual = both(program)
    if case == "shape":
        same_error(expected, actual)
        assert "returned an invalid gradient at index 0" in str(actual)
    else:
        assert expected is True
        assert actual is True


# -- inputs, warnings and options ----------------------------------------------------------------

def test_non_double_input_warns_like_torch():
    def program(lib, check):
        x = lib.tensor([1.0, 2.0], requires_grad=True)  # float32
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ok = check(lambda x: x * 2, (x,), eps=1e-3, atol=1e-3, rtol=1e-3)
        return ok, [(w.category, str(w.message)) for w in caught]
    expected, actual = both(program)
    assert expected == actual
    assert actual[0] is True
    assert actual[1][0][1].startswith("Input #0 requires gradient and is not a double precision "
                                      "floating point or complex.")


def test_float32_fails_at_default_tolerances():
    # the default eps is meant for float64; both libraries reject float32 sin at it
    def program(lib, check):
        x = lib.tensor([0.3, 1.1], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return check(lambda x: x.sin(), (x,), raise_exception=False)
    assert both(program) == (False, False)


def test_no_input_requires_grad():
    def program(lib, check):
        return check(lambda x: x * 2, (lib.tensor([1.0], dtype=lib.float64),))
    expected, actual = both(program)
    same_error(expected, actual)
    assert isinstance(actual, ValueError)


@pytest.mark.parametrize("kwargs", [
    dict(check_forward_ad=False, check_backward_ad=False),
    dict(check_batched_grad=True, check_backward_ad=False, check_forward_ad=True),
    dict(check_batched_forward_grad=True),
])
def test_invalid_option_combinations(kwargs):
    def program(lib, check):
        return check(lambda x: x * 2, doubles(lib, [1.0]), **kwargs)
    expected, actual = both(program)
    same_error(expected, actual)
    assert isinstance(actual, AssertionError)


@pytest.mark.parametrize("option", ["check_forward_ad", "check_batched_grad"])
def test_unsupported_options_raise(option):
    with pytest.raises(NotImplementedError, match=option):
        gradcheck(lambda x: x * 2, doubles(torchjax, [1.0]), **{option: True})


def test_input_values_restored_and_version_unchanged():
    (x,) = doubles(torchjax, [0.25, 0.5])
    before, array = x._version, x._data
    assert gradcheck(lambda x: x.exp(), (x,))
    assert x.tolist() == [0.25, 0.5]
    assert x._data is array  # the input's own array is put back, not a copy
    assert x._version == before
    assert x.grad is None  # analytical gradients come from autograd.grad, not .grad


# -- gradgradcheck -------------------------------------------------------------------------------

GRADGRAD = {
    "sin_mul": lambda lib: (lambda x: x.sin() * x, doubles(lib, [0.3, -1.2]),
                            doubles(lib, [0.7, -0.4])),
    "matmul_tanh": lambda lib: (lambda x, w: (w @ x).tanh(),
                                doubles(lib, [1.0, -0.5], [[0.5, -1.0], [1.0, 0.2]]),
                                None),
    "two_outputs": lambda lib: (lambda x: (x.exp(), (x * x).sum()), doubles(lib, [0.1, 0.2]),
                                doubles(lib, [1.0, -1.0], 0.5)),
}


@pytest.mark.parametrize("name", sorted(GRADGRAD))
def test_gradgradcheck_passes(name):
    def program(lib, check):
        fn, inputs, grad_outputs = GRADGRAD[name](lib)
        return check(fn, inputs, grad_outputs)
    expected, actual = both(program, "gradgradcheck")
    assert expected is True
    assert actual is True


def test_gradgradcheck_custom_function():
    def program(lib, check):
        return check(cube_fn(lib).apply, doubles(lib, [0.5, -2.0]), doubles(lib, [0.3, 0.9]))
    expected, actual = both(program, "gradgradcheck")
    assert expected is True
    assert actual is True, actual


def test_gradgradcheck_wrong_double_backward_matches_torch():
    def program(lib, check):
        return check(cube_fn(lib, detach_in_backward=True).apply, doubles(lib, [0.3, -0.7]),
                     doubles(lib, [1.0, 2.0]))
    expected, actual = both(program, "gradgradcheck")
    assert "Jacobian mismatch for output 0 with respect to input 0" in str(expected)
    same_error(expected, actual)


def abs_at_kink(lib, check, **kwargs):
    # d|x|/dx = sign(x) passes gradcheck at 0 (0 both ways) but jumps there, so the second
    # derivative's central difference is huge while autograd's is 0
    return check(lambda x: x.abs(), doubles(lib, [0.0, 1.0]), doubles(lib, [0.5, 2.0]),
                 **kwargs)


def test_gradgradcheck_mismatch_message_matches_torch():
    assert both(lambda lib, check: check(lambda x: x.abs(), doubles(lib, [0.0, 1.0])))\
        == (True, True)
    expected, actual = both(abs_at_kink, "gradgradcheck")
    same_error(expected, actual)
    assert str(actual).startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert "numerical:tensor([[500000.,      0.]," in str(actual)  # (0.5 + 0.5) / 2e-6


def test_gradgradcheck_raise_exception_false_and_options():
    def quiet(lib, check):
        return abs_at_kink(lib, check, raise_exception=False)
    assert both(quiet, "gradgradcheck") == (False, False)

    def no_mode(lib, check):
        return check(lambda x: x * x, doubles(lib, [0.5]), check_rev_over_rev=False)
    expected, actual = both(no_mode, "gradgradcheck")
    same_error(expected, actual)
    with pytest.raises(NotImplementedError, match="check_forward_ad"):
        gradgradcheck(lambda x: x * x, doubles(torchjax, [0.5]), check_fwd_over_rev=True)
