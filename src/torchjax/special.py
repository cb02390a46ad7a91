"""torchjax.special: PyTorch's torch.special, published from the op table's torch.special rows
(named like PyTorch's native functions, "special_<name>") and the plain functions below."""

from ._generate import namespace_functions as _namespace_functions

globals().update(_namespace_functions("torch.special"))

from ._dispatch import FUNCTIONS as _F  # noqa: E402

# torch.special functions that are the torch.* function under another name
expit = _F["sigmoid"]
logit = _F["logit"]
xlogy = _F["xlogy"]
sinc = _F["sinc"]
i0 = _F["i0"]
gammaln = _F["lgamma"]
digamma = psi = _F["digamma"]
polygamma = _F["polygamma"]
multigammaln = _F["mvlgamma"]
log1p = _F["log1p"]
expm1 = _F["expm1"]
exp2 = _F["exp2"]
erf = _F["erf"]
erfc = _F["erfc"]
erfinv = _F["erfinv"]
logsumexp = _F["logsumexp"]
softmax = _F["softmax"]
log_softmax = _F["log_softmax"]
gammainc = _F["igamma"]
gammaincc = _F["igammac"]
