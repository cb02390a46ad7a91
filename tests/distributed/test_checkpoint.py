"""Checkpoints of sharded state on 8 virtual CPU devices (checks in checkpoint_script.py):
torch.save / torch.load of DTensors on meshes of several dimensions, and
torch.distributed.checkpoint save / load resharding between layouts."""

import pytest

from tests.distributed.conftest import run_check

SCRIPT = "checkpoint_script.py"
CHECKS = ["dtensors_keep_mesh_and_placements_through_save_and_load",
          "pytorch_reads_a_dtensor_file_of_a_two_dimensional_mesh",
          "dcp_saves_each_piece_once_and_reshards_on_load",
          "dcp_loads_a_checkpoint_of_one_device_onto_eight",
          "pytorchs_dcp_directory_of_a_sharded_model_both_ways",
          "map_location_moves_a_gpu_jobs_dtensors_onto_this_jobs_devices"]


@pytest.mark.parametrize("name", CHECKS)
def test_checkpoint(name):
    run_check(SCRIPT, name)
