"""DeviceMesh and DTensor on 8 virtual CPU devices (checks in dtensor_script.py)."""

import pytest

from tests.distributed.conftest import run_check

SCRIPT = "dtensor_script.py"
CHECKS = ["mesh_names_sizes_and_slices", "distribute_tensor_lays_out_shards",
          "redistribute_and_partial", "ops_run_sharded_and_autograd_flows",
          "compiled_step_keeps_shardings",
          "compiled_dtensors_keep_placements", "ops_give_dtensors_with_pytorchs_placements",
          "uneven_shards_follow_torch_chunk", "optimizers_step_dtensor_leaves",
          "mesh_printing_coordinates_and_slicing_as_pytorch"]


@pytest.mark.parametrize("name", CHECKS)
def test_dtensor(name):
    run_check(SCRIPT, name)
