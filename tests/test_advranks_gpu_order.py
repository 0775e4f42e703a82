"""tracelens ranks on one export of a whole node where a rank also ran kernels on GPU 0
(work before torch.cuda.set_device): ranks were numbered by the lowest GPU a process ran
any kernel on, so that process (pid 400, the rank of GPU 1) was named rank 0 and the rank
of GPU 0 rank 1. A rank's GPU is where it ran its collectives (adversarial review,
advranks)."""

from __future__ import annotations

import sqlite3

from fixtures.ranks import build_one_export

from tracelens.ranks import analyse_ranks


def test_a_rank_is_numbered_by_the_gpu_of_its_collectives(tmp_path):
    job = build_one_export(
        tmp_path / "job.sqlite", ranks=3, steps=4, slow_rank=2, pids={0: 500, 1: 400, 2: 600}
    )
    con = sqlite3.connect(job)
    con.execute(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 0 WHERE deviceId = 1 AND "
        "demangledName IN (SELECT id FROM StringIds WHERE value LIKE '%layer_norm%')"
    )
    con.commit()
    con.close()
    r = analyse_ranks([job], jobs=1)
    assert r.ranks.select("rank", "pid", "devices").rows() == [
        (0, 500, 1),
        (1, 400, 2),
        (2, 600, 1),
    ]
    assert r.findings[0].startswith("rank 2 made the others wait 38.00 ms per step")
