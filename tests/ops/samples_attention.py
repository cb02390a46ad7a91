"""Samples for the rows of src/torchjax/_ops/attention.py.

The row is the core of F.scaled_dot_product_attention, so most samples call that; one calls
torch._scaled_dot_product_attention_math itself with an explicit dropout mask, which makes
dropout deterministic and comparable with PyTorch.
"""

import numpy as np

from .harness import Const, S, make, raises


def sdpa(lib, *a, **k):
    return lib.nn.functional.scaled_dot_product_attention(*a, **k)


def math_kernel(lib, *a, **k):
    """PyTorch's private math kernel: the output and (detached) attention weights. PyTorch
    names the weights' grad_fn by its last inner op, a name one tape node cannot have."""
    out, attn = lib._scaled_dot_product_attention_math(*a, **k)
    return out, attn.detach()


def _bool_mask(*shape, seed):
    m = make(*shape, dtype="bool", seed=seed)
    m[..., 0, :] = False  # a fully masked row: zeros, not NaN
    return m


_Q, _K, _V = make(2, 2, 3, 4, seed=1), make(2, 2, 5, 4, seed=2), make(2, 2, 5, 4, seed=3)

SAMPLES = {
    "_scaled_dot_product_attention_math": [
        S(_Q, _K, _V, call=sdpa),
        S(make(2, 3, 4), make(2, 5, 4), make(2, 5, 6), make(3, 5), call=sdpa, scale=0.4,
          desc="3-D, value head dim 6, a float mask that gets a gradient"),
        S(_Q, _K, _V, Const(_bool_mask(2, 1, 3, 5, seed=4)), call=sdpa,
          desc="bool mask broadcast over heads, one row fully masked"),
        S(make(2, 4, 4), make(2, 3, 4), make(2, 3, 4), call=sdpa, is_causal=True,
          desc="causal with L > S: top-left aligned"),
        S(make(1, 4, 2, 4), make(1, 2, 3, 4), make(1, 1, 3, 4), call=sdpa, enable_gqa=True,
          desc="grouped-query attention, key and value with their own head counts"),
        S(make(3, 4), make(5, 4), make(5, 4), call=sdpa, scale=-0.5, desc="2-D, negative scale"),
        S(_Q, _K, _V, None, 0.4, False, Const(make(2, 2, 3, 5, dtype="bool", seed=5)),
          call=math_kernel, desc="dropout through an explicit mask"),
        # PyTorch's CPU flash kernel (4-D inputs) merges both masks; its math kernel and
        # the documentation reject the pair, as torchjax does for every shape
        S(_Q[0], _K[0], _V[0], Const(np.ones((3, 5), bool)), call=raises(sdpa), is_causal=True),
        S(_Q, _K, _V.astype(np.float64), call=raises(sdpa)),
        S(_Q, _K, _V, Const(np.ones((3, 5), np.int64)), call=raises(sdpa)),
        S(_Q[:, :1], _K, _V, call=raises(sdpa), enable_gqa=True),
        S(_Q, _K, _V, call=raises(sdpa), dropout_p=1.5),
        S(_Q[..., :3], _K, _V, call=raises(sdpa)),
        S(make(2, 3, 3, 4), _K, _V, call=raises(sdpa)),
        S(_Q, _K, _V, Const(make(4, 5)), call=raises(sdpa)),
        S(_Q, _K, _V, Const(make(2, 2, 2, 3, 5)), call=raises(sdpa)),
    ],
}
