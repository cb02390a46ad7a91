"""The programs torchjax.distributed names for the program cache are named by everything that
changes them, and compute their definitions (checks in names_script.py, 8 virtual devices)."""

import pytest

from tests.distributed.conftest import run_check

SCRIPT = "names_script.py"
CHECKS = ["collective_programs_are_named_by_op_kind_and_group",
          "after_a_collective_each_step_and_rank_is_named",
          "layout_moves_are_named_by_their_target",
          "from_jax_and_views_are_named_only_by_what_picks_them"]


@pytest.mark.parametrize("name", CHECKS)
def test_program_names(name):
    run_check(SCRIPT, name)
