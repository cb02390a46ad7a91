"""Samples for the rows of src/torchjax/_ops/loss.py, called through torch.nn.functional (each
public loss routes to the row named by the key)."""

import numpy as np

from .harness import A, Const, K, S, Z, make


def F(name):
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


def _ints(*shape, high=3, seed=0):
    return np.random.default_rng(seed).integers(0, high, size=shape)


def _probs(*shape, seed=1):
    """Class probabilities along dim 1 (dim 0 for a 1-d shape)."""
    p = np.random.default_rng(seed).uniform(0.1, 1, size=shape).astype(np.float32)
    return p / p.sum(axis=1 if len(shape) > 1 else 0, keepdims=True)


def _log_probs(*shape):
    """Log-probabilities along the last dim."""
    x = make(*shape)
    return (x - np.log(np.exp(x).sum(axis=-1, keepdims=True))).astype(np.float32)


def _signs(*shape, seed=2):
    return np.where(np.random.default_rng(seed).random(shape) > 0.5, 1, -1).astype(np.float32)


def _ctc_logits(lib, x, targets, input_lengths, target_lengths, **k):
    # through log_softmax the gradient is the true derivative (PyTorch's CTC backward returns
    # the one for logits), so finite differences check it too
    lp = x.log_softmax(2)
    return lib.nn.functional.ctc_loss(lp, targets, input_lengths, target_lengths, **k)


def _ctc_tuple_lengths(lib, x, targets, **k):
    return lib.nn.functional.ctc_loss(x.log_softmax(2), targets, (5, 4), (3, 2), **k)


def _ctc_unbatched(lib, x, targets, **k):
    return lib.nn.functional.ctc_loss(x.log_softmax(1), targets, lib.tensor(5), lib.tensor(3),
                                      **k)


_TARGETS = np.array([[1, 2, 2], [3, 1, 0]])
_LENGTHS = (np.array([5, 4]), np.array([3, 2]))

# Most samples share the shape (4, 3) and, within a row, the static arguments, so that the
# compiled programs (and those of the mean/sum that follow) are reused from sample to sample.
X, IDX = (4, 3), _ints(4)
SAMPLES = {
    "mse_loss": [
        S(make(*X), make(*X), call=F("mse_loss")),
        S(make(*X), make(*X), reduction="sum", call=F("mse_loss")),
        S(make(*X), make(*X), reduction="none", call=F("mse_loss")),
    ],
    "l1_loss": [
        S(make(*X), make(*X), call=F("l1_loss")),
        S(K(1, 0, -1, 2), K(1, 0, 0, 2), reduction="sum", call=F("l1_loss"),
          desc="input == target: gradient 0"),
    ],
    "smooth_l1_loss": [
        S(make(*X), make(*X), call=F("smooth_l1_loss")),
        S(make(*X), make(*X), beta=0.5, reduction="sum", call=F("smooth_l1_loss")),
        S(A(1, 0, -1, 0.5, 3), A(0, 0, 0, 0, 0), reduction="none", call=F("smooth_l1_loss")),
    ],
    "huber_loss": [
        S(make(*X), make(*X), call=F("huber_loss")),
        S(make(*X), make(*X), delta=0.5, reduction="none", call=F("huber_loss")),
    ],
    "nll_loss": [
        S(make(*X, low=-3, high=0), IDX, call=F("nll_loss")),
        S(make(*X, low=-3, high=0), IDX, reduction="none", call=F("nll_loss")),
        S(make(*X, low=-3, high=0), IDX, Const(make(3, low=0.1, high=2)), ignore_index=0,
          call=F("nll_loss")),
        S(make(3, low=-3, high=0), np.array(1), Const(make(3, low=0.1, high=2)), reduction="sum",
          call=F("nll_loss")),
    ],
    "nll_loss2d": [
        S(make(2, 3, 2, 2, low=-3, high=0), _ints(2, 2, 2), call=F("nll_loss")),
        S(make(2, 3, 4, low=-3, high=0), _ints(2, 4), reduction="none", call=F("nll_loss")),
        S(make(2, 3, 2, 1, 2, low=-3, high=0), _ints(2, 2, 1, 2), Const(make(3, low=0.1, high=2)),
          ignore_index=1, call=F("nll_loss")),
    ],
    "cross_entropy": [
        S(make(*X), IDX, call=F("cross_entropy")),
        S(make(*X), IDX, Const(make(3, low=0.1, high=2)), reduction="sum",
          call=F("cross_entropy")),
        S(make(*X), IDX, reduction="none", ignore_index=1, call=F("cross_entropy")),
        S(make(3), np.array(1), call=F("cross_entropy")),
    ],
    "cross_entropy_2d": [
        S(make(2, 3, 2, 2), _ints(2, 2, 2), call=F("cross_entropy")),
        S(make(2, 3, 4), _ints(2, 4), reduction="none", call=F("cross_entropy")),
        S(make(2, 3, 2, 1, 2), _ints(2, 2, 1, 2), Const(make(3, low=0.1, high=2)),
          reduction="sum", call=F("cross_entropy")),
    ],
    "cross_entropy_smoothed": [
        S(make(*X), IDX, Const(make(3, low=0.1, high=2)), ignore_index=1, label_smoothing=0.3,
          call=F("cross_entropy")),
        S(make(2, 3, 2, 2), _ints(2, 2, 2), reduction="none", label_smoothing=0.2,
          call=F("cross_entropy")),
        S(make(3), np.array(2), reduction="sum", label_smoothing=0.5, call=F("cross_entropy")),
    ],
    "cross_entropy_probs": [
        S(make(*X), _probs(*X), reduction="sum", call=F("cross_entropy")),
        S(make(*X), _probs(*X), make(3, low=0.1, high=2), reduction="none",
          label_smoothing=0.2, call=F("cross_entropy")),
        S(make(2, 3, 2), _probs(2, 3, 2), reduction="none", call=F("cross_entropy")),
    ],
    "cross_entropy_probs_mean": [
        S(make(*X), _probs(*X), call=F("cross_entropy")),
        S(make(2, 3, 2, 2), _probs(2, 3, 2, 2), make(3, low=0.1, high=2), label_smoothing=0.1,
          call=F("cross_entropy")),
        S(make(3), _probs(3), call=F("cross_entropy")),
    ],
    "multi_margin_loss": [
        S(make(*X), IDX, call=F("multi_margin_loss")),
        S(make(*X), IDX, 2, 0.5, Const(make(3, low=0.1, high=2)), reduction="none",
          call=F("multi_margin_loss")),
        S(make(3), np.array(1), reduction="sum", call=F("multi_margin_loss")),
    ],
    "multilabel_margin_loss": [
        S(make(3, 4), np.array([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 1, 2]]),
          call=F("multilabel_margin_loss")),
        S(make(3, 4), np.array([[0, 0, -1, 1], [3, 2, 1, 0], [2, -1, 0, 0]]), reduction="none",
          call=F("multilabel_margin_loss"), desc="a repeated target counts twice"),
        S(make(4), np.array([2, 1, -1, 0]), reduction="sum", call=F("multilabel_margin_loss")),
    ],
    "binary_cross_entropy": [
        S(make(*X, low=0.05, high=0.95), make(*X, low=0, high=1),
          call=F("binary_cross_entropy")),
        S(make(*X, low=0.05, high=0.95), make(*X, low=0, high=1),
          Const(make(3, low=0.1, high=2)), reduction="none", call=F("binary_cross_entropy")),
        S(K(0, 1, 0.5, 1e-30), Const(K(0.3)), reduction="none", call=F("binary_cross_entropy"),
          desc="clamped logs and the gradient's epsilon"),
    ],
    "binary_cross_entropy_with_logits": [
        S(make(*X), make(*X, low=0, high=1), call=F("binary_cross_entropy_with_logits")),
        S(make(*X), make(*X, low=0, high=1), Const(make(4, 1, low=0.1, high=2)),
          pos_weight=Const(make(3, low=0.1, high=3)), reduction="none",
          call=F("binary_cross_entropy_with_logits")),
        S(A(0.5, -100, 200), A(1, 1, 0.5), pos_weight=Const(A(2)), reduction="sum",
          call=F("binary_cross_entropy_with_logits")),
    ],
    "kl_div": [
        S(make(*X, low=-3, high=-0.1), _probs(*X), reduction="batchmean", call=F("kl_div")),
        S(make(*X, low=-3, high=-0.1), _probs(*X), reduction="none", call=F("kl_div")),
        S(make(*X), make(*X, low=0.1, high=1), reduction="sum", call=F("kl_div")),
    ],
    "kl_div_log_target": [
        S(make(*X, low=-3, high=-0.1), make(*X, low=-3, high=-0.1), reduction="batchmean",
          log_target=True, call=F("kl_div")),
        S(make(*X), make(*X), reduction="none", log_target=True, call=F("kl_div")),
    ],
    "poisson_nll_loss": [
        S(make(*X), make(*X, low=0, high=4), call=F("poisson_nll_loss")),
        S(make(*X, low=0.1, high=3), make(*X, low=0, high=4), log_input=False,
          reduction="none", call=F("poisson_nll_loss")),
    ],
    "poisson_nll_loss_full": [
        S(make(*X), make(*X, low=0.5, high=4), full=True, call=F("poisson_nll_loss")),
        S(make(*X, low=0.1, high=3), make(*X, low=0.5, high=4), log_input=False, full=True,
          reduction="sum", call=F("poisson_nll_loss")),
    ],
    "gaussian_nll_loss": [
        S(make(*X), make(*X), make(4, low=0.1, high=2), reduction="none",
          call=F("gaussian_nll_loss"), desc="var without the last dim"),
        S(make(*X), make(*X), 0.5, reduction="sum", call=F("gaussian_nll_loss")),
        S(K(0.5, 1, 2), K(0, 1, 3), K(0, 1e-7, 2), reduction="none", call=F("gaussian_nll_loss"),
          desc="variances clamped to eps (the gradient does not see the clamp)"),
    ],
    "gaussian_nll_loss_full": [
        S(make(*X), make(*X), make(4, 1, low=0.1, high=2), full=True,
          call=F("gaussian_nll_loss")),
        S(make(*X), make(*X), make(*X, low=0.1, high=2), full=True, eps=0.05,
          reduction="none", call=F("gaussian_nll_loss")),
    ],
    "multilabel_soft_margin_loss": [
        S(make(*X), _ints(*X, high=2).astype(np.float32), call=F("multilabel_soft_margin_loss")),
        S(make(*X), make(*X, low=0, high=1), make(3, low=0.1, high=2), reduction="none",
          call=F("multilabel_soft_margin_loss")),
        S(make(5), _ints(5, high=2).astype(np.float32), reduction="sum",
          call=F("multilabel_soft_margin_loss")),
    ],
    "soft_margin_loss": [
        S(make(*X), Const(_signs(*X)), call=F("soft_margin_loss")),
        S(make(*X), Const(_signs(*X)), reduction="none", call=F("soft_margin_loss")),
    ],
    "hinge_embedding_loss": [
        S(make(*X), Const(_signs(*X)), margin=0.5, call=F("hinge_embedding_loss")),
        S(K(1, 0.5, 1, 2), Const(K(-1, -1, 1, 0)), reduction="none",
          call=F("hinge_embedding_loss"), desc="margin - x == 0 and a target of 0"),
    ],
    "cosine_embedding_loss": [
        S(make(*X), make(*X), _signs(4).astype(np.int64), call=F("cosine_embedding_loss")),
        S(make(*X), make(*X), Const(_signs(4)), margin=0.2, reduction="none",
          call=F("cosine_embedding_loss")),
        S(make(3), make(3), Z(-1), reduction="sum", call=F("cosine_embedding_loss")),
    ],
    "margin_ranking_loss": [
        S(make(*X), make(*X), _signs(*X), call=F("margin_ranking_loss")),
        S(make(*X), make(*X), _signs(*X), margin=0.5, reduction="none",
          call=F("margin_ranking_loss")),
        S(K(1, 2), K(1, 1), K(1, -1), reduction="sum", call=F("margin_ranking_loss"),
          desc="a zero margin term: clamp_min's gradient"),
    ],
    "triplet_margin_loss": [
        S(make(*X), make(*X), make(*X), call=F("triplet_margin_loss")),
        S(make(*X), make(*X), make(*X), call=F("triplet_margin_with_distance_loss"),
          reduction="sum", desc="the default distance"),
        S(make(*X), make(*X), make(*X), p=1, swap=True, margin=0.5, reduction="none",
          call=F("triplet_margin_loss")),
        S(make(3), make(3), make(3), p=3, eps=1e-3, reduction="sum",
          call=F("triplet_margin_loss")),
    ],
    "ctc_loss": [
        S(make(5, 2, 4), _TARGETS, *_LENGTHS, call=_ctc_logits),
        S(make(5, 2, 4), np.array([1, 2, 2, 3, 1]), reduction="sum", call=_ctc_tuple_lengths,
          desc="concatenated targets, lengths as tuples"),
        S(make(5, 4), _TARGETS[0], blank=3, reduction="none", call=_ctc_unbatched),
        S(_log_probs(6, 2, 7), _TARGETS, np.array([2, 6]), _LENGTHS[1], reduction="none",
          call=F("ctc_loss"), desc="PyTorch's gradient with respect to log_probs, and an "
          "impossible alignment (inf, nan gradient); over 64 elements: no finite differences"),
    ],
    "ctc_loss_zero_infinity": [
        S(make(5, 2, 4), _TARGETS, np.array([2, 5]), _LENGTHS[1], zero_infinity=True,
          reduction="none", call=_ctc_logits),
        S(make(5, 2, 4), _TARGETS, *_LENGTHS, zero_infinity=True, call=_ctc_logits),
    ],
}
