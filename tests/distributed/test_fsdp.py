"""fully_shard on 8 virtual CPU devices (checks in fsdp_script.py)."""

import pytest

from tests.distributed.conftest import run_check

SCRIPT = "fsdp_script.py"
CHECKS = ["parameters_and_optimizer_state_are_one_eighth_per_device",
          "compiled_training_matches_one_device", "state_dict_is_full_and_round_trips",
          "hsdp_on_a_two_dimensional_mesh_and_uneven_parameters",
          "fsdp_with_tensor_parallel_on_a_2d_mesh"]


@pytest.mark.parametrize("name", CHECKS)
def test_fsdp(name):
    run_check(SCRIPT, name)
