"""A match job crosses to Celery workers as JSON: it must come back equal, salt and names included."""

from __future__ import annotations

import json

from arena.store import MatchJob
from arena.workers.celery_app import job_from_dict, job_to_dict


def test_a_job_survives_the_json_round_trip() -> None:
    job = MatchJob(
        match_id=17,
        bundles=("/b/1", "/b/2"),
        rules=("flags=1",),
        seed=(1 << 63) - 1,
        time_control={"move": 1.0, "bank": 10.0},
        launcher="bwrap",
        salt="00ff" * 8,
        names=(("impostor", "1"), ("greedy", "12")),
    )
    back = job_from_dict(json.loads(json.dumps(job_to_dict(job))))
    assert back == job and isinstance(back.names[1], tuple)
    old = job_to_dict(job)
    del old["names"], old["salt"]  # a job sent by an older runner
    assert job_from_dict(json.loads(json.dumps(old))).names == (("", ""), ("", ""))
