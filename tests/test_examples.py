"""The README's demo runs end to end (one epoch) and learns."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")


def test_digits_demo_trains():
    path = pathlib.Path(__file__).parents[1] / "examples" / "train_digits.py"
    spec = importlib.util.spec_from_file_location("train_digits", path)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    accuracy = demo.main(["--epochs", "2"])
    assert accuracy > 0.5  # chance is 0.1
