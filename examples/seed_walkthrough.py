"""Autograd on the seed example, y = x * x + 3 * x + 1, one step at a time, with its graph picture.

    pip install -e ".[demo]" && python examples/seed_walkthrough.py
    python examples/seed_walkthrough.py --out graph   # writes graph.svg (or graph.dot)

Shows what autograd records (each result's grad_fn and the graph behind it through
next_functions), what backward() leaves in .grad, a second derivative with create_graph=True,
a picture of the graph drawn by torchjax.utils.viz.make_dot (SVG when Graphviz's `dot` is
installed, the DOT source otherwise; the picture needs the `viz` extra), and finally the
polynomial's coefficients fitted by gradient descent with a progress bar.
Takes about 10 seconds on 2 CPU cores, most of it compiling the ops the first time.
"""

import argparse
import shutil

from _progress import trange

import torchjax as torch


def walk(node, depth=0, seen=None):
    """Prints the graph behind a grad_fn, as backward() will visit it."""
    seen = set() if seen is None else seen
    print("    " * depth + type(node).__name__)
    if id(node) in seen:
        return
    seen.add(id(node))
    for child, _ in node.next_functions:
        if child is not None:
            walk(child, depth + 1, seen)


def draw(y, x, out):
    """Writes the picture of y's graph: out.svg with Graphviz's dot, out.dot without it."""
    try:
        from torchjax.utils.viz import make_dot
        dot = make_dot(y, params={"x": x})
    except ImportError as e:
        print(f"no picture: {e}")
        return None
    if shutil.which("dot"):
        return dot.render(out, format="svg", cleanup=True)
    path = f"{out}.dot"
    with open(path, "w") as f:
        f.write(dot.source)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="seed_graph", help="file name of the picture, no suffix")
    parser.add_argument("--steps", type=int, default=300, help="gradient-descent steps")
    args = parser.parse_args(argv)

    # 1. The forward pass records a graph: every result knows the op that made it
    x = torch.tensor(2.0, requires_grad=True)
    a = x * x
    b = 3 * x
    y = a + b + 1
    for name, t in [("x", x), ("a = x * x", a), ("b = 3 * x", b), ("y = a + b + 1", y)]:
        print(f"{name:14s} {str(t):40s} is_leaf={t.is_leaf}")

    # 2. The graph behind y, the order backward() walks it in
    print("\nthe graph behind y:")
    walk(y.grad_fn)

    # 3. backward() fills x.grad with dy/dx = 2x + 3
    y.backward(retain_graph=True)
    print(f"\nx.grad = {x.grad}  (by hand: 2 * 2 + 3 = 7)")
    assert x.grad.item() == 7.0

    # 4. A second derivative: record the backward pass itself with create_graph=True
    x2 = torch.tensor(2.0, requires_grad=True)
    (dy,) = torch.autograd.grad(x2 * x2 + 3 * x2 + 1, x2, create_graph=True)
    (d2y,) = torch.autograd.grad(dy, x2)
    print(f"dy/dx = {dy.item()}, d2y/dx2 = {d2y.item()}  (by hand: 7 and 2)")

    # 5. The picture
    path = draw(y, x, args.out)
    if path:
        print(f"graph picture: {path}")

    # 6. Fit c0 + c1 * t + c2 * t^2 to the seed polynomial's values by gradient descent
    torch.manual_seed(0)
    t = torch.linspace(-2, 2, 64)
    target = t * t + 3 * t + 1
    coeffs = torch.zeros(3, requires_grad=True)
    opt = torch.optim.SGD([coeffs], lr=0.05)
    bar = trange(args.steps, desc="fitting")
    for _ in bar:
        opt.zero_grad()
        pred = coeffs[0] + coeffs[1] * t + coeffs[2] * t * t
        loss = ((pred - target) ** 2).mean()
        loss.backward()
        opt.step()
        bar.set_postfix(loss=f"{loss.item():.5f}")
    c = [round(v, 3) for v in coeffs.tolist()]
    print(f"fitted coefficients (c0, c1, c2) = {c}  (the seed's: 1, 3, 1)")
    return c


if __name__ == "__main__":
    main()
