"""What tests/ops/test_compiled.py does not compile as ordinary samples, and why.

Each list is checked against the samples it names (test_lists_name_rows_and_samples), and each
entry is tested for what it claims, so none can go stale: an untraceable sample that starts to
compile, a value check that starts to agree, a known bug that gets fixed, all fail the test
until the entry goes.
"""

from __future__ import annotations

from . import harness

# Rows no program can hold, row -> why. Each sample compiled with fullgraph=True must raise
# Unsupported whose message holds BREAK_REASON; a row that becomes traceable fails here and
# should leave this list.
UNTRACEABLE = {
    "_bincount": "the output's length is the input's largest value + 1",
    "_masked_select": "the output has one element per True in the mask",
    "_nonzero": "nonzero and argwhere give one row per nonzero element",
    "_unique2": "the output has one element per distinct value",
    "_unique_consecutive": "the output has one element per run of equal values",
    "_unique_dim": "the output has one slice per distinct slice",
    "_pack_padded": "the packed data's length and its batch_sizes come from the values of "
                    "`lengths`, which become a tensor (a traced one) inside the row",
    "_pad_packed": "packs first (see _pack_padded), then reads batch_sizes to pad",
}

# Rows with some untraceable samples, row -> (sample indices, why). The row's other samples
# compile; each listed sample, compiled alone, must raise Unsupported naming BREAK_REASON.
UNTRACEABLE_SAMPLES = {
    "_index": ((8, 9, 10, 11, 12, 16), "a boolean mask keeps as many elements as it has True"),
    "_index_put": ((2, 3, 4, 9), "x[mask] = v: the boolean mask is turned into indices, as "
                                 "many as it has True"),
    "_slice": ((9,), "a tensor as a slice bound is read as a Python int"),
    "_rnn": ((1,), "the packed overload reads batch_sizes (tolist) to lay out its time steps"),
    "isclose": ((7, 8, 9, 10, 11, 13), "allclose and equal return a Python bool read from "
                                      "the values"),
    "one_hot": ((0,), "num_classes=-1 takes the class count from the largest value"),
    "repeat_interleave": ((9, 10, 11, 12, 13, 14, 15, 16), "a tensor of repeats sets the "
                                                          "output's length"),
    "tensor_split": ((8, 9), "tensor indices_or_sections set the pieces' lengths"),
    "tensordot": ((7, 8), "tensor dims say which axes contract, so they set the shape"),
    "where": ((11, 12), "where(condition) is nonzero: one row per True"),
}

# What the Unsupported message of every untraceable sample must say: torchjax's reason for a
# value the trace cannot have (a shape from the values, or a Python value read from a tensor),
# not some other error that happens to be raised as Unsupported.
BREAK_REASON = r"depends on|decides the res|reads the value|only has when it runs"

# Samples of UNTRACEABLE rows that trace all the same, row -> indices: errors of the
# arguments' types and shapes, raised before the values are needed. They compile like any
# sample.
SHAPE_ERRORS = {
    "_bincount": (11, 12, 13, 14, 15),
    "_unique_dim": (6,),
}

# Samples that expect an error which eager raises after looking at the values, row ->
# (sample indices, why). While tracing the values are unknown, and these rows skip the check
# on purpose (as PyTorch's compiled one_hot skips its class-range check): compiled, the call
# returns a result instead. The test asserts the difference is still there, so the entry
# goes once compiled mode checks values at run time.
VALUE_CHECKS = {
    "one_hot": ((4, 5), "class values >= num_classes or negative"),
    "quantile": ((9,), "q values outside [0, 1], given as a tensor"),
}

# row -> (sample indices, why): real bugs of torchjax.compile or the core that these samples
# show. Each runs alone as a strict xfail in the mode given, so an entry must go once fixed.
KNOWN_COMPILE_BUGS: dict = {}

# Samples that found a bug (since fixed), row -> indices: compiled by default too, in both modes.
REGRESSIONS = {
    "_embedding": (4,),  # max_norm: JAX's vjp of the program went through the in-place renorm
    "_slice": (10,),     # a bfloat16 result of a compiled forward did not require grad
    "one_hot": (7,),     # empty input, num_classes=-1: a graph break instead of the error
    "sign": (0,),        # a zero derivative: a compiled forward's output lost requires_grad
    "slogdet": (0,),     # its sign output, likewise
}

# Rows that draw random numbers, row -> samples showing the draws. The table's own samples
# hide the random values (they compare out * (x > 0) with PyTorch, whose generator differs):
# these show them, and the compiled draws must be eager's from the same seed, on both calls
# of the program (the generator's offset is an input, not a constant of the trace).
RANDOM_ROWS = {
    "rrelu_with_noise": [
        harness.S(harness.make(3, 4, seed=11), desc="raw random slopes",
                  call=lambda lib, x: lib.nn.functional.rrelu(x, 0.1, 0.3, training=True)),
        harness.S(harness.make(2, 5, seed=12), desc="raw random slopes, in place",
                  call=lambda lib, x: lib.nn.functional.rrelu(x.clone(), training=True,
                                                              inplace=True)),
    ],
}
