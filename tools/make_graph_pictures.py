"""Regenerate the autograd-graph pictures in docs/images/ (shown by docs/graphs.md).

    pip install "torchjax[viz]"        # the graphviz Python package
    apt-get install graphviz           # the `dot` program that renders SVG
    python tools/make_graph_pictures.py

Each picture is made by the seed program quoted in docs/graphs.md, run unchanged with
`import torchjax as torch`.
"""

from __future__ import annotations

import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import torchjax as torch  # noqa: E402
from torchjax import nn  # noqa: E402
from torchjax.utils.viz import make_dot  # noqa: E402

IMAGES = ROOT / "docs" / "images"


def polynomial():
    """The seed's first example: y = x * x + 3 * x + 1."""
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x + 3 * x + 1
    return {
        "polynomial": make_dot(y, params={"x": x}),
        "polynomial_saved": make_dot(y, params={"x": x}, show_saved=True),
    }


def mlp():
    """The seed's complete example: a two-layer MLP and its mean squared error."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(4, 8),
        nn.ReLU(),
        nn.Linear(8, 1),
    )
    X = torch.randn(10, 4)
    y = torch.randn(10, 1)
    pred = model(X)
    loss = ((pred - y) ** 2).mean()
    return {"mlp": make_dot(loss, params=model)}


def main() -> None:
    if shutil.which("dot") is None:
        sys.exit("Graphviz's `dot` program is needed to render: apt-get install graphviz")
    IMAGES.mkdir(parents=True, exist_ok=True)
    for make in (polynomial, mlp):
        for name, dot in make().items():
            (IMAGES / f"{name}.svg").write_bytes(dot.pipe(format="svg"))
            print(f"wrote docs/images/{name}.svg")


if __name__ == "__main__":
    main()
