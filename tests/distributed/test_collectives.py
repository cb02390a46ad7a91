"""The collectives compiled in a job of one process (checks in collectives_script.py)."""

import pytest

from tests.distributed.conftest import run_check

SCRIPT = "collectives_script.py"
CHECKS = ["compiled_collectives_on_one_process"]


@pytest.mark.parametrize("name", CHECKS)
def test_collectives(name):
    run_check(SCRIPT, name)
