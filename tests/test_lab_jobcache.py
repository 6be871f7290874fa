"""The job cache (posenc/lab/jobcache.py, ``--cache DIR``): a run through a cache gives the numbers of a run without
one, bit for bit; a second run reads every job back and trains nothing; a stopped run resumes with what finished."""

from __future__ import annotations

import json

import numpy as np

from posenc.lab import experiment, jobcache
from posenc.lab.experiment import LabConfig, job_key, jobs_of, run_experiment

TINY = LabConfig(schemes=("rope", "alibi"), n_seeds=2, steps=25, train_len=8, n_eval=8, finetune_steps=25)


def _numbers(res: dict) -> str:
    return json.dumps({k: v for k, v in res.items() if k != "seconds"}, sort_keys=True)


def test_a_cached_run_is_bit_identical_and_a_second_run_trains_nothing(tmp_path, monkeypatch):
    plain, plain_w = run_experiment(TINY)
    first, first_w = run_experiment(TINY, cache=tmp_path)
    assert _numbers(first) == _numbers(plain)
    assert len(list(tmp_path.glob("*.json"))) == len(jobs_of(TINY))
    assert len(list(tmp_path.glob("*.npz"))) == len(TINY.schemes)  # the first seed's weights only

    def no_training(*a, **k):
        raise AssertionError("a cached job ran again")

    monkeypatch.setattr(experiment, "run_job", no_training)
    again, again_w = run_experiment(TINY, cache=tmp_path)
    assert _numbers(again) == _numbers(plain) and again["seconds"] == first["seconds"]
    for s in TINY.schemes:
        assert set(again_w[s]) == set(plain_w[s]) and all(np.array_equal(again_w[s][k], plain_w[s][k]) for k in plain_w[s])


def test_a_stopped_run_resumes_with_the_jobs_that_finished(tmp_path, monkeypatch):
    run_experiment(TINY, cache=tmp_path)
    lost = job_key(*jobs_of(TINY)[-1])
    for suffix in (".json", ".npz"):
        (tmp_path / jobcache.name(lost)).with_suffix(suffix).unlink(missing_ok=True)
    ran = []
    real = experiment.run_job

    def counting(cfg, scheme, seed, **kw):
        ran.append((scheme, seed))
        return real(cfg, scheme, seed, **kw)

    monkeypatch.setattr(experiment, "run_job", counting)
    res, _ = run_experiment(TINY, cache=tmp_path)
    assert ran == [jobs_of(TINY)[-1][1:]]
    assert _numbers(res) == _numbers(run_experiment(LabConfig.from_dict(res["config"]))[0])


def test_a_file_under_another_jobs_name_is_not_read(tmp_path):
    a, b = (job_key(*j) for j in jobs_of(TINY)[:2])
    jobcache.save(tmp_path, a, {"scheme": "rope", "seed": 0, "weights": None})
    (tmp_path / jobcache.name(a)).with_suffix(".json").rename((tmp_path / jobcache.name(b)).with_suffix(".json"))
    assert jobcache.load(tmp_path, b) is None and jobcache.load(tmp_path, a) is None
