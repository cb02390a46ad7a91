"""What unmodified public PyTorch scripts did that torchjax got wrong (docs/real_scripts.md):
each test runs the script's pattern in PyTorch and in torchjax and compares."""

import io

import numpy as np
import torch

import torchjax


def both(fn):
    """fn(lib) for torch and for torchjax."""
    return fn(torch), fn(torchjax)


def test_whole_module_saved_and_loaded_with_safe_globals():
    # word_language_model: torch.save(model, f), then torch.load(f) under
    # serialization.safe_globals([its classes]) (weights_only=True, the default)
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Embedding(5, 3), lib.nn.LSTM(3, 4), lib.nn.Dropout(0.1))
        buf = io.BytesIO()
        lib.save(model, buf)
        buf.seek(0)
        with lib.serialization.safe_globals([lib.nn.Sequential, lib.nn.Embedding, lib.nn.LSTM,
                                             lib.nn.Dropout]):
            loaded = lib.load(buf)
        return [p.detach().numpy() for p in model.parameters()], \
            [p.detach().numpy() for p in loaded.parameters()], type(loaded._parameters)
    (pt_before, pt_after, pt_kind), (tj_before, tj_after, tj_kind) = both(run)
    for a, b in zip(tj_before, tj_after):
        np.testing.assert_array_equal(a, b)
    assert [a.shape for a in pt_after] == [a.shape for a in tj_after]
    assert pt_kind is dict and issubclass(tj_kind, dict)
