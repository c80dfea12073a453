"""Each local node's environment: several nodes on this machine share its CPUs."""

from __future__ import annotations

import os
import sys

from majob.runner.host import node_environment, threads_per_node

CPUS = len(os.sched_getaffinity(0))


def test_several_nodes_share_the_cpus_and_one_node_keeps_them_all() -> None:
    assert threads_per_node({}, 1) is None  # torch takes every CPU, as in the container
    assert threads_per_node({}, 2) == str(max(1, CPUS // 2))
    assert threads_per_node({}, 64) == "1"  # never none


def test_a_users_choice_is_kept_from_the_shell_or_the_spec() -> None:
    assert threads_per_node({"OMP_NUM_THREADS": "3"}, 4) is None
    shell, said = node_environment({"OMP_NUM_THREADS": "3"}, {}, python=sys.executable, nodes=4)
    spec, _ = node_environment({}, {"OMP_NUM_THREADS": "5"}, python=sys.executable, nodes=4)
    chosen, share = node_environment({}, {}, python=sys.executable, nodes=4)
    assert (shell["OMP_NUM_THREADS"], spec["OMP_NUM_THREADS"], said) == ("3", "5", None)
    assert chosen["OMP_NUM_THREADS"] == share == str(max(1, CPUS // 4))
    assert "OMP_NUM_THREADS" not in node_environment({}, {}, python=sys.executable)[0]
