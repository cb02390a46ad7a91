"""Tensor parallel on 8 virtual CPU devices (checks in tp_script.py)."""

import pytest

from tests.distributed.conftest import run_check

SCRIPT = "tp_script.py"
CHECKS = ["mlp_colwise_rowwise_matches_one_device", "attention_block_matches_one_device",
          "compiled_training_step_is_one_program_matching_eager",
          "tensor_parallel_inside_data_parallel_on_a_2d_mesh", "plan_errors_name_the_problem"]


@pytest.mark.parametrize("name", CHECKS)
def test_tp(name):
    run_check(SCRIPT, name)
