"""Which public names of PyTorch's tensor API exist in torchjax.

    python tools/coverage.py > docs/coverage.md

Lists, per namespace (torch, torch.Tensor, torch.nn.functional, torch.linalg, torch.fft,
torch.special), the public callables of PyTorch 2.13 and whether torchjax has them. A name
counts only if torchjax defines it; rows that merely raise "not implemented" are not added.
"""

from __future__ import annotations

import inspect
import pathlib

import torch

import torchjax

NAMESPACES = [
    ("torch", torch, torchjax),
    ("torch.Tensor", torch.Tensor, torchjax.Tensor),
    ("torch.nn.functional", torch.nn.functional, getattr(torchjax.nn, "functional", None)),
    ("torch.linalg", torch.linalg, getattr(torchjax, "linalg", None)),
    ("torch.fft", torch.fft, getattr(torchjax, "fft", None)),
    ("torch.special", torch.special, getattr(torchjax, "special", None)),
]


def public_callables(ns) -> list[str]:
    names = []
    for n in dir(ns):
        if n.startswith("_"):
            continue
        try:
            v = getattr(ns, n)
        except Exception:
            continue
        if inspect.ismodule(v) or inspect.isclass(v):
            continue
        if callable(v):
            names.append(n)
    return sorted(set(names))


def main():
    total_have = total = tensor_api = 0
    lines = ["# API coverage", "",
             "Public callables of PyTorch 2.13 and whether torchjax has them. Made by "
             "`python tools/coverage.py > docs/coverage.md`.", ""]
    detail = []
    for label, ref, ours in NAMESPACES:
        names = public_callables(ref)
        have = [n for n in names if ours is not None and hasattr(ours, n)]
        total += len(names)
        total_have += len(have)
        if label != "torch.nn.functional":
            tensor_api += len(have)
        lines.append(f"- `{label}`: {len(have)} of {len(names)}")
        detail += ["", f"## {label}", "",
                   "present: " + ", ".join(f"`{n}`" for n in have), "",
                   "missing: " + ", ".join(f"`{n}`" for n in names if n not in have)]
    lines.insert(4, f"Total: {total_have} of {total} names; {tensor_api} in torch, torch.Tensor, "
                    "torch.linalg, torch.fft and torch.special.\n")
    # the table of torch's other submodules and the distributions section are written by hand
    # (what works is not a list of names); they follow the generated sections
    here = pathlib.Path(__file__)
    extra = [here.with_name(f"coverage_{part}.md").read_text().rstrip()
             for part in ("submodules", "distributions")]
    print("\n".join(lines + detail) + "\n\n" + "\n\n".join(extra))


if __name__ == "__main__":
    main()
