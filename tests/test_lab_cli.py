"""``python -m posenc.lab``: its flags, a default run that cannot touch the package's data/, and --check's comparison
(tested on the shipped record itself: a real check retrains, ``python -m posenc.lab --schemes t5 --seeds 1 --check``)."""

from __future__ import annotations

import copy
import json

import pytest

from posenc.lab import __main__ as cli
from posenc.lab.reevaluate import dumps
from posenc.lab.results import DATA, LONGER_FILE, RESULTS_FILE, load_shipped

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
    for flag in ("--task", "--schemes", "--seeds", "--steps", "--out", "--ship", "--check", "--reevaluate-extensions"):
        assert flag in text


@pytest.mark.parametrize("argv", [["--out", str(DATA)], ["--out", str(DATA / "sub")], ["--schemes", "nope", "--ship"],
                                  ["--steps", "10", "--ship"], ["--check", "--out", "x"]])
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
    def fake_run(cfg, progress=None):
        assert cfg.schemes == ("t5",) and cfg.n_seeds == 1
        res = _one("t5")
        res["runs"]["t5"]["0"]["train_loss"][0] += change
        return res, {}

    monkeypatch.setattr(cli, "run_experiment", fake_run)
    assert cli.main(["--schemes", "t5", "--seeds", "1", "--check"]) == code
    assert ("MISMATCH" in capsys.readouterr().out) == bool(code)


def test_the_results_file_round_trips_byte_for_byte():
    """--reevaluate-extensions rewrites only the extension entries: the rest of the file comes back byte-identical."""
    text = RESULTS_FILE.read_text(encoding="utf-8")
    assert dumps(json.loads(text)) == text


def test_reevaluate_extensions_reproduces_a_small_run_and_refuses_a_changed_one():
    """The re-evaluation retrains each seed and checks it against the file before rewriting the extension entries."""
    from posenc.lab.experiment import LabConfig, run_experiment
    from posenc.lab.reevaluate import reevaluate_extensions

    res, weights = run_experiment(LabConfig(schemes=("rope",), n_seeds=1, steps=25, train_len=8, n_eval=8))
    res = json.loads(json.dumps(res))
    again = reevaluate_extensions(res, weights=weights)
    assert dumps(again) == dumps(res)  # the same code: every entry, the dynamic one too, comes back equal
    stale = copy.deepcopy(res)
    stale["runs"]["rope"]["0"]["extensions"]["dynamic"]["32"]["gap"] = 0.0
    assert reevaluate_extensions(stale)["runs"]["rope"]["0"]["extensions"]["dynamic"]["32"]["gap"] != 0.0
    changed = copy.deepcopy(res)
    changed["runs"]["rope"]["0"]["mean"]["16"]["gap"] += 1e-6
    with pytest.raises(ValueError, match="does not reproduce"):
        reevaluate_extensions(changed)


def test_the_reevaluate_flag_writes_out_only(tmp_path, monkeypatch):
    import posenc.lab.reevaluate as reev

    monkeypatch.setattr(reev, "run", lambda out_dir, progress=print: SHIPPED)
    assert cli.main(["--reevaluate-extensions", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "lab_results.json").read_text(encoding="utf-8") == RESULTS_FILE.read_text(encoding="utf-8")
