"""How a torch.nn.functional call is recorded, matching what PyTorch's graphs show.

PyTorch records a Python-level functional (relu, softmax, dropout, ...) through the
`handle_torch_function` call inside it: its leading tensor arguments positional, every other
parameter as a keyword with its value or default (`relu(x, inplace = False)`). Functionals
that are C++ builtins in PyTorch (linear, conv2d, gelu, ...) are recorded as the user called
them. torchjax's functionals have PyTorch's signatures, so the same normalisation applies.
"""

from __future__ import annotations

import inspect

# PyTorch's functionals that are builtins: recorded with the arguments as given
AS_CALLED = frozenset("""
adaptive_avg_pool1d avg_pool1d avg_pool2d avg_pool3d bilinear celu_ channel_shuffle conv1d
conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity
elu_ gelu hardshrink hardtanh_ leaky_relu_ linear logsigmoid native_channel_shuffle one_hot
pairwise_distance pdist pixel_shuffle pixel_unshuffle prelu relu_ rrelu_
scaled_dot_product_attention selu_ softplus softshrink threshold_ threshold
upsample upsample_bilinear upsample_nearest multi_head_attention_forward
""".split())

# how many leading arguments PyTorch passes positionally (1 for the functionals not listed)
_POSITIONAL = {
    "adaptive_avg_pool2d": 2, "adaptive_avg_pool3d": 2, "adaptive_max_pool1d_with_indices": 2,
    "adaptive_max_pool2d_with_indices": 2, "adaptive_max_pool3d_with_indices": 2,
    "affine_grid": 2, "batch_norm": 3, "binary_cross_entropy": 2,
    "binary_cross_entropy_with_logits": 2, "cosine_embedding_loss": 3, "cross_entropy": 2,
    "ctc_loss": 4, "embedding": 2, "embedding_bag": 2, "fold": 3,
    "fractional_max_pool2d_with_indices": 2, "fractional_max_pool3d_with_indices": 2,
    "gaussian_nll_loss": 3, "grid_sample": 2, "group_norm": 2, "hinge_embedding_loss": 2,
    "huber_loss": 2, "kl_div": 2, "l1_loss": 2, "layer_norm": 2, "local_response_norm": 2,
    "lp_pool1d": 3, "lp_pool2d": 3, "lp_pool3d": 3, "margin_ranking_loss": 3,
    "max_pool1d_with_indices": 2, "max_pool2d_with_indices": 2, "max_pool3d_with_indices": 2,
    "max_unpool1d": 3, "max_unpool2d": 3, "max_unpool3d": 3, "mse_loss": 2,
    "multi_margin_loss": 2, "multilabel_margin_loss": 2, "multilabel_soft_margin_loss": 2,
    "nll_loss": 2, "pad": 2, "poisson_nll_loss": 2, "rms_norm": 2, "smooth_l1_loss": 2,
    "soft_margin_loss": 2, "triplet_margin_loss": 3, "triplet_margin_with_distance_loss": 3,
    "unfold": 2,
    # boolean_dispatch in PyTorch: recorded by the function it dispatches to
    "max_pool1d": 2, "max_pool2d": 2, "max_pool3d": 2, "adaptive_max_pool1d": 2,
    "adaptive_max_pool2d": 2, "adaptive_max_pool3d": 2, "fractional_max_pool2d": 2,
    "fractional_max_pool3d": 2,
}

_signatures: dict = {}


def normalize(name: str, orig, args: tuple, kwargs: dict):
    """(args, kwargs) as PyTorch records the functional `name` called with them."""
    if name in AS_CALLED:
        return args, kwargs
    sig = _signatures.get(name)
    if sig is None:
        try:
            sig = inspect.signature(orig)
        except (TypeError, ValueError):
            sig = False
        _signatures[name] = sig
    if sig is False or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                           for p in sig.parameters.values()):
        return args, kwargs
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs
    bound.apply_defaults()
    values = list(bound.arguments.items())
    n = _POSITIONAL.get(name, 1)
    return tuple(v for _, v in values[:n]), dict(values[n:])
