"""python -m posenc inspect: a config.json, a GGUF header or an example name, with the Context extension page's numbers."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from posenc.__main__ import main
from posenc.io.examples import EXAMPLE_TEXTS
from posenc.views.measure import fidelity_view, long_range_view

REAL = json.loads((Path(__file__).parent / "data" / "real_configs.json").read_text())


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_an_example_by_name_in_every_format(capsys):
    code, out, err = run(capsys, "inspect", "gemma 2 27b")  # names match without regard to case
    assert code == 0 and err == ""
    for section in ("RoPE", "Layers", "Notes", "Short-range fidelity", "Long range, the model", "Summary (the page's table)"):
        assert section in out
    assert "google/gemma-2-27b" in out and "x softmax 0.942809" in out and "sliding_attention" in out
    code, out, _ = run(capsys, "inspect", "Gemma 2 27B", "--format", "json")
    rep = json.loads(out)
    assert code == 0 and rep["rope"]["logit_scale_at_last_position"]["softmax"] == pytest.approx(math.sqrt(128 / 144))
    code, out, _ = run(capsys, "inspect", "Gemma 2 27B", "--format", "md")
    assert code == 0 and out.startswith("## posenc inspect: google/gemma-2-27b") and "| kind | count |" in out


def test_the_numbers_are_the_pages(tmp_path, capsys):
    cfg = REAL["Ministral 3 8B"]["config"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out, _ = run(capsys, "inspect", str(path), "--format", "json")
    rep = json.loads(out)
    assert code == 0 and rep["rope"]["source"] == "config.json"
    text = path.read_text()
    args = (128, 1e6, 16384, 16.0, text, "model")  # what the page computes with the model loaded, "at the model's settings"
    fid, lr = fidelity_view(*args), long_range_view(*args)
    assert [{k: v for k, v in row.items() if k != "name"} for row in rep["short_range"]["methods"]] == fid["table"].to_dict("records")
    model = lr["logits"][lr["logits"]["method"] == lr["labels"][-1]]
    last = model[model["distance"] == model["distance"].max()].iloc[0]
    assert rep["long_range"]["logits"][-1]["p50"] == pytest.approx(last["p50"], rel=1e-12) and rep["long_range"]["target"] == 262144
    q = rep["rope"]["query_scale"]["at"]
    assert q["16384"] == pytest.approx(1 + 0.1 * math.log(2)) and q["262143"] == pytest.approx(1 + 0.1 * math.log(16))


def test_refused_configs_exit_non_zero(tmp_path, capsys):
    falcon = tmp_path / "config.json"
    falcon.write_text(json.dumps(REAL["Falcon-RW-1B"]["config"]))
    code, out, err = run(capsys, "inspect", str(falcon))
    assert code == 1 and out == "" and "ALiBi" in err and "pages/relative_bias.py" in err
    tok = tmp_path / "tokenizer_config.json"
    tok.write_text('{"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 131072}')
    code, _, err = run(capsys, "inspect", str(tok))
    assert code == 1 and "tokenizer_config.json" in err
    code, _, err = run(capsys, "inspect", "no-such-model")
    assert code == 2 and "neither a file nor an example" in err
    with pytest.raises(SystemExit) as info:
        main(["inspect", "Gemma 2 27B", "--seq-len", "0"])
    assert info.value.code == 2


def test_a_gguf_file(tmp_path, capsys):
    gguf = pytest.importorskip("gguf", reason="the gguf package (requirements-dev.txt) writes the header")
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    for add, v in ((w.add_name, "a llama"), (w.add_block_count, 2), (w.add_context_length, 4096), (w.add_embedding_length, 512),
                   (w.add_head_count, 8), (w.add_head_count_kv, 8), (w.add_rope_freq_base, 10000.0)):
        add(v)
    w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
    w.add_rope_scaling_factor(2.0)
    for f in (w.write_header_to_file, w.write_kv_data_to_file, w.write_tensors_to_file, w.close):
        f()
    code, out, _ = run(capsys, "inspect", str(path), "--seq-len", "2048")
    assert code == 0 and "GGUF header of m.gguf" in out and "interleaved" in out and "linear" in out


def test_it_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "posenc", "inspect", "Mistral 7B v0.3", "--format", "json"],
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[1])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rope"]["base"] == 1e6 and set(EXAMPLE_TEXTS) >= {"Mistral 7B v0.3"}
    assert "streamlit" not in done.stderr


def test_the_readme_shows_what_the_command_prints(capsys):
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    command = '$ python -m posenc inspect "Ministral 3 8B"\n'
    assert command in readme
    shown = readme.split(command, 1)[1].split("\n```", 1)[0]
    code, out, _ = run(capsys, "inspect", "Ministral 3 8B")
    assert code == 0 and out.rstrip("\n") == shown
