"""Which public names of PyTorch's tensor API exist in torchjax.

    python tools/coverage.py > docs/coverage.md

Lists, per namespace (torch, torch.Tensor, torch.nn.functional, torch.linalg, torch.fft,
torch.special), the public callables of PyTorch 2.13 and whether torchjax has them. A name
counts only if torchjax defines it; rows that merely raise "not implemented" are not added.

Then torch's public names that are not functions (modules, classes, dtypes, constants), present
and missing, and every name of dir(torch) torchjax lacks grouped by the reason it is absent:
the groups are tests/test_torch_names.py's ALLOWED_MISSING, which that test keeps exact.
"""

from __future__ import annotations

import inspect
import pathlib
import sys

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


def _kind(value) -> str:
    if inspect.ismodule(value):
        return "modules"
    if inspect.isclass(value):
        return "classes"
    if isinstance(value, torch.dtype):
        return "dtypes"
    return "constants and other values"


def other_names() -> list[str]:
    """torch's public names that are not functions: modules, classes, dtypes, constants."""
    lines = ["", "## torch: names that are not functions", "",
             "Modules, classes, dtypes and constants of `dir(torch)` (the functions are above)."]
    kinds: dict = {}
    for n in dir(torch):
        if n.startswith("_"):
            continue
        v = getattr(torch, n)
        if inspect.ismodule(v) or inspect.isclass(v) or not callable(v):
            kinds.setdefault(_kind(v), []).append(n)
    for kind in ("modules", "classes", "dtypes", "constants and other values"):
        names = sorted(kinds.get(kind, []))
        have = [n for n in names if hasattr(torchjax, n)]
        lines += ["", f"### {kind}: {len(have)} of {len(names)}", "",
                  "present: " + ", ".join(f"`{n}`" for n in have), "",
                  "missing: " + ", ".join(f"`{n}`" for n in names if n not in have)]
    # the reasons live with the test that keeps the list exact
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from tests.test_torch_names import ALLOWED_MISSING, torch_names_torchjax_lacks
    missing = torch_names_torchjax_lacks()
    lines += ["", "### why names of torch are missing", "",
              "Every public name of `dir(torch)` torchjax lacks, functions included, by reason "
              "(tests/test_torch_names.py fails when this list and torchjax disagree).", ""]
    for why, names in ALLOWED_MISSING.items():
        absent = sorted(n for n in names if n in missing)
        if absent:
            lines.append(f"- {why}: " + ", ".join(f"`{n}`" for n in absent))
    unexplained = sorted(missing - {n for names in ALLOWED_MISSING.values() for n in names})
    if unexplained:
        lines.append("- no reason recorded: " + ", ".join(f"`{n}`" for n in unexplained))
    return lines


def main():
    total_have = total = tensor_api = 0
    lines = ["# API coverage", "",
             "Public callables of PyTorch 2.13 and whether torchjax has them, then torch's "
             "other public names (modules, classes, dtypes, constants) and why each missing "
             "name is missing. Made by `python tools/coverage.py > docs/coverage.md`.", ""]
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
    print("\n".join(lines + detail + other_names()) + "\n\n" + "\n\n".join(extra))


if __name__ == "__main__":
    main()
