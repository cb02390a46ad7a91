"""torchjax.func: PyTorch's composable function transforms (torch.func), built on JAX's.

grad, vjp, jvp, jacrev, jacfwd, hessian and vmap turn a function over Tensors into a pure
function of jax arrays (torchjax._functionalize) and apply jax.vjp / jax.jvp / jax.vmap to it;
they nest freely (vmap(grad(f)), jacfwd(jacrev(f)), ...). functional_call runs a Module with
parameters passed in as arguments, so a transform can differentiate or batch over them.

Differences from PyTorch: results carry no autograd history (as with detached parameters);
tensors the function reads from its closure are constants of the transform.
"""

from ._export import functionalize, load_params
from ._functional_call import functional_call, stack_module_state
from ._grad import grad, grad_and_value, jvp, linearize, vjp
from ._jacobian import hessian, jacfwd, jacrev
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "vmap", "functional_call", "stack_module_state", "functionalize", "load_params"]
