"""DistributedDataParallel and DataParallel on 8 virtual CPU devices (ddp_script.py)."""

import pytest

from tests.distributed.conftest import run_check

SCRIPT = "ddp_script.py"
CHECKS = ["ddp_matches_one_device_over_five_steps", "ddp_compiled_step_matches_one_device",
          "ddp_no_sync_accumulates_as_pytorch", "ddp_on_a_mesh_dimension_and_uneven_batch_error",
          "batchnorm_under_ddp_uses_the_global_batch", "data_parallel_over_local_devices"]


@pytest.mark.parametrize("name", CHECKS)
def test_ddp(name):
    run_check(SCRIPT, name)
