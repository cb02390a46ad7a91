"""A PyTorch checkpoint loaded into torchjax, exported to pure JAX, fine-tuned with optax.

    pip install -e ".[demo]" && python examples/checkpoint_to_jax.py
    python examples/checkpoint_to_jax.py --make-checkpoint   # rewrite the checkpoint (needs PyTorch)

The migration path in both directions, without importing PyTorch:
1. examples/data/regressor.pt is a state_dict written by PyTorch's torch.save (an MLP fitted
   to y = sin(x0) + x1 * x2 with PyTorch); torchjax.load reads it (weights only) and the same
   model class, written against torchjax, takes it with load_state_dict;
2. torchjax.func.functionalize turns the model into apply_fn(params, buffers, x), a pure
   function of JAX arrays, checked to give the module's own outputs;
3. jax.jit, jax.value_and_grad and optax.adam fine-tune the params on a changed target
   (y + x3 / 2), as any JAX program would, with a progress bar;
4. torchjax.func.load_params writes the trained arrays back into the module, and
   torchjax.save writes a checkpoint PyTorch's torch.load reads.
Takes about 20 seconds on 2 CPU cores.
"""

import argparse
import pathlib

import numpy as np
from _progress import trange

import torchjax as torch
from torchjax import nn

HERE = pathlib.Path(__file__).resolve().parent
CHECKPOINT = HERE / "data" / "regressor.pt"


def make_model(nn):
    """The model, written once for any module that has PyTorch's nn (torch.nn or torchjax.nn)."""
    return nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 1))


def make_data(n: int, seed: int, shifted: bool):
    """Inputs and targets from NumPy, so PyTorch and torchjax see the same numbers."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(n, 4)).astype(np.float32)
    y = np.sin(x[:, 0]) + x[:, 1] * x[:, 2] + (x[:, 3] / 2 if shifted else 0)
    return x, y[:, None].astype(np.float32)


def make_checkpoint(path: pathlib.Path) -> None:
    """Trains the MLP with real PyTorch and writes its state_dict with torch.save."""
    try:
        import torch as real_torch
    except ImportError as e:
        raise ImportError("--make-checkpoint trains with PyTorch: pip install torch "
                          '(or pip install -e ".[test]")') from e
    real_torch.manual_seed(0)
    model = make_model(real_torch.nn)
    x, y = (real_torch.from_numpy(a) for a in make_data(2048, seed=0, shifted=False))
    opt = real_torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in trange(600, desc="training with PyTorch"):
        opt.zero_grad()
        loss = real_torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    path.parent.mkdir(parents=True, exist_ok=True)
    real_torch.save(model.state_dict(), path)
    print(f"wrote {path} (PyTorch {real_torch.__version__}), training MSE {loss.item():.4f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help="optax fine-tuning steps")
    parser.add_argument("--out", default="regressor_finetuned.pt",
                        help="where to write the fine-tuned checkpoint")
    parser.add_argument("--make-checkpoint", action="store_true",
                        help="train the MLP with PyTorch and rewrite examples/data/regressor.pt")
    args = parser.parse_args(argv)
    if args.make_checkpoint:
        make_checkpoint(CHECKPOINT)
        return None

    import jax
    import jax.numpy as jnp
    import optax

    from torchjax.func import functionalize, load_params

    # 1. PyTorch's file into the torchjax model
    model = make_model(nn)
    model.load_state_dict(torch.load(CHECKPOINT))
    x_old, y_old = (torch.from_numpy(a) for a in make_data(512, seed=1, shifted=False))
    x_new, y_new = make_data(2048, seed=2, shifted=True)
    with torch.no_grad():
        print(f"loaded {CHECKPOINT.name}: MSE on the task it was trained for "
              f"{nn.functional.mse_loss(model(x_old), y_old).item():.4f}")

    # 2. The module as a pure JAX function
    apply_fn, params, buffers = functionalize(model)
    print("params:", {k: tuple(v.shape) for k, v in params.items()})
    with torch.no_grad():
        same = np.allclose(np.asarray(apply_fn(params, buffers, jnp.asarray(x_new[:8]))),
                           model(torch.from_numpy(x_new[:8])).numpy(), atol=1e-6)
    print(f"apply_fn gives the module's outputs: {same}")

    # 3. Fine-tune with jax.jit, jax.value_and_grad and optax
    tx = optax.adam(3e-3)
    opt_state = tx.init(params)

    @jax.jit
    def step(params, opt_state, x, y):
        def loss_fn(p):
            return jnp.mean((apply_fn(p, buffers, x) - y) ** 2)
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    x_j, y_j = jnp.asarray(x_new), jnp.asarray(y_new)
    bar = trange(args.steps, desc="fine-tuning with optax")
    for i in bar:
        params, opt_state, loss = step(params, opt_state, x_j, y_j)
        if i % 20 == 0 or i == args.steps - 1:
            bar.set_postfix(mse=f"{float(loss):.4f}")

    # 4. Back into the module, and out as a PyTorch checkpoint
    load_params(model, params)
    with torch.no_grad():
        final = nn.functional.mse_loss(model(torch.from_numpy(x_new)),
                                       torch.from_numpy(y_new)).item()
    print(f"the torchjax module after load_params: MSE on the new task {final:.4f}")
    torch.save(model.state_dict(), args.out)
    print(f"wrote {args.out}: torch.load reads it (weights_only=True)")
    return final


if __name__ == "__main__":
    main()
