"""``python -m posenc.lab``: its flags and each one's refusal (naming the flag and its range), a default run that cannot
touch the package's data/, --check's comparison (tested on the shipped record itself: a real check retrains,
``python -m posenc.lab --schemes t5 --seeds 1 --check``) against the task's own shipped file, and --ship's files."""

from __future__ import annotations

import copy
import json
import re

import pytest

from posenc.lab import __main__ as cli
from posenc.lab.results import DATA, LONGER_FILE, load_shipped

SHIPPED = load_shipped()["results"]


def _one(scheme="rope", seed="0") -> dict:
    """The shipped file cut down to one scheme and seed: what a one-scheme, one-seed run writes."""
    res = copy.deepcopy(SHIPPED)
    res["runs"] = {scheme: {seed: res["runs"][scheme][seed]}}
    res["config"] = {**res["config"], "schemes": [scheme], "n_seeds": 1}
    return res


def test_help_shows_the_flags(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--task", "--order", "--schemes", "--seeds", "--steps", "--out", "--ship", "--check", "--jobs", "--cluster"):
        assert f"\n  {flag} " in text  # its own line in the options list
    assert "--reevaluate-extensions" not in text  # retired: --ship regenerates every row


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "0"], r"argument --seeds must be an integer in \[1, 10\], got 0"),
    (["--seeds", "11"], r"argument --seeds must be an integer in \[1, 10\], got 11"),
    (["--steps", "0"], r"argument --steps must be an integer in \[1, 100000\], got 0"),
    (["--order", "5"], r"argument --order must be an integer in \[1, 4\], got 5"),
    (["--order", "0"], r"argument --order must be an integer in \[1, 4\], got 0"),
    (["--task", "induction", "--order", "2"], r"argument --order: the Markov task's order; the induction task has none"),
    (["--task", "nope"], r"argument --task: invalid choice: 'nope' \(choose from 'markov', 'induction'\)"),
    (["--jobs", "0"], r"argument --jobs must be an integer in \[1, 64\], got 0"),
    (["--jobs", "65"], r"argument --jobs must be an integer in \[1, 64\], got 65"),
    (["--jobs", "2", "--cluster", "tcp://127.0.0.1:1"], r"argument --jobs: give --jobs or --cluster, not both"),
    (["--cluster", " "], r"argument --cluster: a Dask scheduler address such as tcp://127.0.0.1:8786"),
    (["--randomize", "-1"], r"argument --randomize must be an integer in \[0, 65536\], got -1"),
    (["--schemes", "rope,nope2"], r"argument --schemes: nope2: choose from raw_index, "),
    (["--ship", "--order", "2"], r"--ship regenerates every shipped file at the default settings"),
    (["--ship", "--task", "induction"], r"--ship regenerates every shipped file at the default settings"),
    (["--order", "3", "--check"], r"--check: no shipped results at order 3"),
])
def test_each_flag_refuses_with_its_name_and_range(argv, message, capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "DATA", tmp_path)  # --check's missing-file refusal: an empty data directory
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.parametrize("argv", [["--out", str(DATA)], ["--out", str(DATA / "sub")], ["--schemes", "nope", "--ship"],
                                  ["--steps", "10", "--ship"], ["--check", "--out", "x"], ["--seeds", "2", "--ship"],
                                  ["--task", "induction", "--out", str(DATA)], ["--jobs", "2", "--out", str(DATA)]])
def test_a_run_cannot_write_the_package_data_without_ship(argv, capsys):
    before = {p.name: p.read_bytes() for p in DATA.iterdir() if p.is_file()}
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert {p.name: p.read_bytes() for p in DATA.iterdir() if p.is_file()} == before
    assert LONGER_FILE.exists()


def test_the_default_destination_is_not_the_package():
    ap = cli._parser()
    out = cli._destination(ap, ap.parse_args([]))
    assert out == cli.DEFAULT_OUT and not cli._inside(out, DATA)
    assert cli._destination(ap, ap.parse_args(["--ship"])) == DATA
    assert cli._destination(ap, ap.parse_args(["--check"])) is None


def test_a_small_run_writes_its_out_dir_only(tmp_path, monkeypatch):
    before = {p.name: p.read_bytes() for p in DATA.iterdir() if p.is_file()}
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--schemes", "alibi", "--seeds", "1", "--steps", "50"]) == 0
    written = tmp_path / cli.DEFAULT_OUT
    assert (written / "lab_results.json").exists() and (written / "README.md").exists()
    assert json.loads((written / "lab_results.json").read_text())["config"]["steps"] == 50
    assert "--schemes alibi --seeds 1 --steps 50" in (written / "README.md").read_text()
    assert {p.name: p.read_bytes() for p in DATA.iterdir() if p.is_file()} == before


def test_check_accepts_the_shipped_record_and_catches_a_change():
    assert cli.check_against(_one(), SHIPPED) == []
    assert cli.check_against(_one("t5", "2"), SHIPPED) == []
    moved = _one()
    moved["runs"]["rope"]["0"]["mean"]["128"]["gap"] += 2e-6
    assert cli.check_against(moved, SHIPPED) == [
        f"rope seed 0 /mean/128/gap: {moved['runs']['rope']['0']['mean']['128']['gap']!r} != shipped "
        f"{SHIPPED['runs']['rope']['0']['mean']['128']['gap']!r} (by 2e-06)"]
    within = _one()
    within["runs"]["rope"]["0"]["gap_by_position"][5] += 5e-7
    assert cli.check_against(within, SHIPPED) == []
    other = _one()
    other["config"]["steps"] = 500
    assert cli.check_against(other, SHIPPED) == ["settings differ from the shipped run: steps = 500, shipped 1000"]
    missing = _one()
    del missing["runs"]["rope"]["0"]["extensions"]["yarn"]
    assert any("in one only" in line for line in cli.check_against(missing, SHIPPED))


@pytest.mark.parametrize("change, code", [(0.0, 0), (1e-3, 1)])
def test_check_exits_non_zero_on_a_mismatch(monkeypatch, capsys, change, code):
    def fake_run(cfg, **how):
        assert cfg.schemes == ("t5",) and cfg.n_seeds == 1
        res = _one("t5")
        res["runs"]["t5"]["0"]["train_loss"][0] += change
        return res, {}

    monkeypatch.setattr(cli, "run_experiment", fake_run)
    assert cli.main(["--schemes", "t5", "--seeds", "1", "--check"]) == code
    assert ("MISMATCH" in capsys.readouterr().out) == bool(code)


def test_check_compares_with_the_tasks_own_file(monkeypatch, tmp_path, capsys):
    """--task induction --check reads lab_induction.json, --order 3 --check the order sweep's entry for k = 3."""
    ind = _one("alibi")
    ind["config"] = {**ind["config"], "task": "induction", "task_params": {"rho": 0.8}, "vocab": 16}
    sweep = _one("alibi")
    sweep["config"] = {**sweep["config"], "task": "markov", "task_params": {}, "order": 3}
    (tmp_path / "lab_induction.json").write_text(json.dumps(ind), encoding="utf-8")
    (tmp_path / cli.ORDERS_FILE).write_text(json.dumps({"orders": {"3": sweep}}), encoding="utf-8")
    monkeypatch.setattr(cli, "DATA", tmp_path)
    seen = []

    def fake_run(cfg, **how):
        seen.append(cfg)
        return json.loads(json.dumps(ind if cfg.task == "induction" else sweep)), {}

    monkeypatch.setattr(cli, "run_experiment", fake_run)
    assert cli.main(["--task", "induction", "--schemes", "alibi", "--seeds", "1", "--check"]) == 0
    assert cli.main(["--order", "3", "--schemes", "alibi", "--seeds", "1", "--check"]) == 0
    assert [(c.task, c.order, c.vocab, dict(c.task_params)) for c in seen] == [("induction", 2, 16, {"rho": 0.8}),
                                                                               ("markov", 3, 8, {})]
    assert cli.shipped_for(seen[0]) == ind and cli.shipped_for(seen[1]) == sweep
    assert "reproduces the shipped file" in capsys.readouterr().out


def test_ship_writes_every_file_and_only_data(monkeypatch, tmp_path, capsys):
    """--ship (here with tiny stand-in configs and a stand-in data/) writes each task's results, weights and follow-up,
    the order sweep and README.md; the order sweep's k = 2 reuses the main run's jobs."""
    from posenc.lab.experiment import LabConfig

    tiny = {"steps": 25, "train_len": 8, "n_eval": 8, "schemes": ("alibi",)}
    configs = {cli.task_file(t): LabConfig.for_task(t, n_seeds=2, **tiny) for t in ("markov", "induction")}
    configs.update({f"{cli.ORDERS_FILE}/{k}": LabConfig.for_task("markov", order=k, n_seeds=1, **tiny) for k in (1, 2)})
    monkeypatch.setattr(cli, "ship_configs", lambda: configs)
    monkeypatch.setattr(cli, "DATA", tmp_path)
    assert cli.main(["--ship", "--jobs", "1"]) == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert {"lab_results.json", "lab_weights.npz", "lab_induction.json", "lab_induction_weights.npz", "lab_orders.json",
            "README.md"} <= names
    main = json.loads((tmp_path / "lab_results.json").read_text())
    ind = json.loads((tmp_path / "lab_induction.json").read_text())
    orders = json.loads((tmp_path / "lab_orders.json").read_text())["orders"]
    assert main["config"]["task"] == "markov" and ind["config"]["task"] == "induction"
    assert sorted(orders) == ["1", "2"] and orders["2"]["runs"]["alibi"]["0"] == main["runs"]["alibi"]["0"]
    err = capsys.readouterr().err
    assert "lab: 5/5 jobs done" in err  # 2 + 2 seeds of the tasks, order 1's seed; order 2's is the main run's
    readme = (tmp_path / "README.md").read_text()
    assert "python -m posenc.lab --ship --jobs 1" in readme and "lab_induction.json" in readme and "Order k = 1" in readme


def test_a_config_per_task_round_trips_and_refuses_what_its_task_does_not_take():
    from posenc.lab.experiment import LabConfig
    from posenc.lab.task import TASK_DEFAULTS

    ind = LabConfig.for_task("induction")
    assert (ind.task, ind.vocab, dict(ind.task_params)) == ("induction", TASK_DEFAULTS["induction"]["vocab"],
                                                           {"rho": TASK_DEFAULTS["induction"]["rho"]})
    assert LabConfig.from_dict(json.loads(json.dumps(ind.as_dict()))) == ind
    assert LabConfig.for_task("markov") == LabConfig()  # the Markov task's defaults are the lab's
    assert LabConfig.from_dict({k: v for k, v in SHIPPED["config"].items()}).task == "markov"  # format 2: no task
    with pytest.raises(ValueError, match="task"):
        LabConfig(task="nope")
    with pytest.raises(ValueError, match="rho"):
        LabConfig(task="markov", task_params=(("rho", 0.5),))
    with pytest.raises(ValueError, match=r"finetune_steps must be an integer in \[25, 10000\]"):
        LabConfig(finetune_steps=0)
    assert [c.order for n, c in cli.ship_configs().items() if n.startswith(cli.ORDERS_FILE)] == list(cli.ORDERS)
    assert {c.n_seeds for n, c in cli.ship_configs().items() if not n.startswith(cli.ORDERS_FILE)} == {cli.SHIP_SEEDS}
