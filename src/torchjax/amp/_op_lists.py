"""PyTorch's autocast op lists (torch 2.13, aten/src/ATen/autocast_mode.{h,cpp}) per device
type, by PyTorch op name, and the torchjax rows those names are.

The policies are _autocast's: "lower" runs in the autocast dtype, "fp32" in float32,
"fp32_opt" in float32 unless dtype= is given, "promote" in the widest input type,
"banned" raises (CUDA's binary_cross_entropy). Ops not listed run in their inputs' types.
"""

from __future__ import annotations

_CPU_LOWER = """conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear
    _convolution matmul conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d prelu
    scaled_dot_product_attention"""
# PyTorch runs these as compositions of listed ops (einsum and tensordot as bmm/mm, RNN
# cells as linear), so under CPU autocast their results come out in the low dtype too;
# torchjax computes each as one row, which therefore needs the policy itself
_CPU_LOWER_COMPOSITE = "einsum tensordot linalg_multi_dot chain_matmul rnn_tanh_cell rnn_relu_cell"
_CPU_FP32 = """avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft
    cdist grid_sampler_2d grid_sampler_3d trace view_as_complex cholesky cholesky_inverse
    cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d max_unpool3d
    adaptive_avg_pool3d reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d
    replication_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss
    poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss huber_loss margin_ranking_loss
    soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss kl_div
    multilabel_margin_loss binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2
    fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn
    fft_hfft fft_ihfft linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky
    linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product
    linalg_tensorinv linalg_tensorsolve fake_quantize_per_tensor_affine geqrf _lu_with_info qr
    svd triangular_solve fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d
    linalg_qr linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex"""
_CPU_PROMOTE = "stack cat index_copy"

_CUDA_LOWER = """_convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d
    conv_transpose3d convolution prelu addmm addmv addr matmul einsum mm mv linalg_vecdot
    linear addbmm baddbmm bmm chain_matmul linalg_multi_dot lstm_cell gru_cell rnn_tanh_cell
    rnn_relu_cell scaled_dot_product_attention"""
_CUDA_FP32 = """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan
    pow softplus layer_norm rms_norm group_norm frobenius_norm nuclear_norm cosine_similarity
    poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss kl_div
    l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss multilabel_margin_loss
    soft_margin_loss triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits
    dist pdist cdist renorm logsumexp upsample_nearest1d _upsample_nearest_exact1d
    upsample_nearest2d _upsample_nearest_exact2d upsample_nearest3d _upsample_nearest_exact3d
    upsample_linear1d upsample_bilinear2d upsample_trilinear3d upsample_bicubic2d norm"""
# cross_entropy is log_softmax then nll_loss in PyTorch, both float32 on CUDA
_CUDA_FP32_COMPOSITE = "cross_entropy_loss"
_CUDA_FP32_OPT = """prod softmax log_softmax cumprod cumsum linalg_vector_norm
    linalg_matrix_norm sum"""
_CUDA_PROMOTE = """addcdiv addcmul atan2 bilinear cross linalg_cross dot vdot grid_sampler
    index_put tensordot scatter_add"""
_CUDA_BANNED = "binary_cross_entropy"

# PyTorch op name -> the torchjax row that computes it, where they differ
ROW = {
    "conv1d": "convolution", "conv2d": "convolution", "conv3d": "convolution",
    "conv_transpose1d": "convolution", "conv_transpose2d": "convolution",
    "conv_transpose3d": "convolution", "_convolution": "convolution",
    "scaled_dot_product_attention": "_scaled_dot_product_attention_math",
    "inverse": "linalg_inv_ex", "linalg_inv": "linalg_inv_ex",
    "cholesky": "_cholesky_torch", "linalg_cholesky": "linalg_cholesky_ex",
    "svd": "_svd_torch", "chain_matmul": "_chain_matmul",
    "linalg_solve": "linalg_solve_ex",
    "max_pool3d": "max_pool3d_with_indices",
    "adaptive_max_pool3d": "adaptive_max_pool3d_with_indices",
    "cross_entropy_loss": "cross_entropy",
    # torch.lu and torch.lu_solve compute through the linalg rows
    "_lu_with_info": "linalg_lu_factor_ex", "lu_solve": "linalg_lu_solve",
}


def _table(*groups) -> dict[str, str]:
    table = {}
    for names, policy in groups:
        for name in names.split():
            table[name] = policy
    return table


CPU = _table((_CPU_LOWER, "lower"), (_CPU_LOWER_COMPOSITE, "lower"), (_CPU_FP32, "fp32"),
             (_CPU_PROMOTE, "promote"))
CUDA = _table((_CUDA_LOWER, "lower"), (_CUDA_FP32, "fp32"), (_CUDA_FP32_COMPOSITE, "fp32"),
              (_CUDA_FP32_OPT, "fp32_opt"), (_CUDA_PROMOTE, "promote"),
              (_CUDA_BANNED, "banned"))
# torch_xla's TPU autocast follows the CUDA lists, in bfloat16
BY_DEVICE = {"cpu": CPU, "cuda": CUDA, "tpu": CUDA, "xla": CUDA}


def by_row(table: dict[str, str]) -> dict[str, str]:
    """The table keyed by torchjax row name (what dispatch looks up)."""
    return {ROW.get(name, name): policy for name, policy in table.items()}
