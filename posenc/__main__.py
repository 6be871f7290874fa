"""``python -m posenc inspect CONFIG [--seq-len N] [--format text|json|md]``: a model's RoPE, measured, in a terminal.

CONFIG is a config.json (or Meta's params.json), a GGUF file (only its header is read) or the name of an example
(``posenc.io.examples``).  Printed: the RoPE description and the kinds of layer (``rope_from_config``), the notes,
short-range fidelity against plain RoPE and the long-range logit and entropy percentiles out to the served length,
computed by the Context extension page's own views (``posenc.views.measure``, every method at the model's settings),
so the numbers and units are the page's.  Exit status: 0, or 1 when the config is refused (the reason on stderr),
2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np

from posenc.io.configjson import MAX_CONFIG_BYTES, decode_config_bytes
from posenc.io.examples import EXAMPLE_TEXTS
from posenc.io.gguf import MAGIC, gguf_config
from posenc.io.ropeconfig import RopeFromConfig, rope_from_config
from posenc.schemes.scaling import MAX_CONTEXT

FORMATS = ("text", "json", "md")
DISTANCES = (1, 16, 256, 4096, 32768)  # logit percentiles printed at these distances (and at the served length)


def load(arg: str) -> tuple[str, str]:
    """(config.json text, what it is) for a path to a config or GGUF file, or an example's name; ValueError otherwise."""
    if os.path.isfile(arg):
        with open(arg, "rb") as f:
            head = f.read(MAX_CONFIG_BYTES + 1)
        if head[:4] == MAGIC:
            return json.dumps(gguf_config(arg)), f"GGUF header of {os.path.basename(arg)}"
        return decode_config_bytes(head), os.path.basename(arg)
    names = {n.lower(): n for n in EXAMPLE_TEXTS}
    if arg.lower() in names:
        return EXAMPLE_TEXTS[names[arg.lower()]], f"the example {names[arg.lower()]!r} (posenc/io/examples.py)"
    raise FileNotFoundError(f"{arg!r} is neither a file nor an example; examples: {', '.join(EXAMPLE_TEXTS)}")


def _n(x) -> str:
    return "—" if x is None else f"{x:,}" if isinstance(x, int) else f"{x:.6g}"


def report(text: str, source: str, seq_len: int | None = None) -> dict:
    """Everything ``inspect`` prints, as plain data."""
    from posenc.views.measure import bands_view, fidelity_view, long_range_view, summary_table

    r: RopeFromConfig = rope_from_config(text, seq_len=seq_len)
    m = r.model
    L = r.seq_len or r.served_length or 1
    at = r.logit_scale_at(max(L - 1, 0))
    desc = {"model": r.name, "model_type": r.model_type, "source": source, "read from": m.source, "rope_type": r.rope_type,
            "head_dim": r.head_dim, "rotary_dim": r.rotary_dim, "base": r.base, "factor": m.factor,
            "trained_length": r.trained_length, "served_length": r.served_length, "at_length": r.seq_len, "layout": r.layout,
            "attention_factor": r.attention_factor, "logit_scale": r.logit_scale,
            "logit_scale_at_last_position": at, "longest_wavelength": float(2 * math.pi / r.inv_freq[r.inv_freq > 0][-1])}
    if m.query_scale:
        q = m.query_scale
        desc["query_scale"] = {"formula": q["formula"], "layers": q["layers"],
                               "at": {p: m.query_factor(p) for p in sorted({q["period"], max(L - 1, 0)})}}
    layers = [{"kind": k, "count": v["count"], "rope": v["rope"], "attention": v["attention"], "window": v["window"],
               "base": v["base"], "query_scale": v["query_scale"]["formula"] if v["query_scale"] else None}
              for k, v in r.layers.items()]
    out = {"rope": desc, "layers": layers, "notes": list(r.notes)}
    args = (m.rotary_dim if m.rotary_dim >= 4 else 4, m.base, max(16, r.trained_length or 16), max(1.0, min(m.factor, 128.0)), text,
            "model")
    fid, lr, bands = fidelity_view(*args), long_range_view(*args), bands_view(*args)
    model_label = lr["labels"][-1]
    f = fid["frame"][fid["frame"]["method"] == model_label]
    out["short_range"] = {"unit": "|Δscore| / (|q||k|) against plain RoPE at the same d, base and softmax scale",
                          "window": fid["window"], "n_samples": fid["n_samples"],
                          "model": {"max": float(f["max"].max()), "mean": float(f["mean"].mean())},
                          "methods": fid["table"].to_dict("records")}
    lg = lr["logits"][lr["logits"]["method"] == model_label]
    en = lr["entropy"][lr["entropy"]["method"] == model_label]
    T = int(lg["distance"].max())
    picks = sorted({d for d in DISTANCES if d < T} | {T})
    idx = [int(np.argmin(np.abs(lg["distance"].to_numpy() - d))) for d in picks]
    out["long_range"] = {"unit": "logit (scale and 1/sqrt(d) included), k = rho q + sqrt(1 - rho^2) e; entropy in nats",
                         "rho": lr["rho"], "n_samples": lr["n_samples"], "target": T,
                         "logits": lg.iloc[idx][["distance", "p5", "p50", "p95"]].to_dict("records"),
                         "entropy": en.iloc[np.unique(np.linspace(0, len(en) - 1, 8).round().astype(int))][
                             ["length", "p5", "p50", "p95", "uniform"]].to_dict("records")}
    out["summary"] = summary_table(fid, lr, bands).drop(columns=["Extrapolation lab"]).to_dict("records")
    names = dict(zip(lr["labels"], lr["names"]))  # "YaRN · d 128, ..." -> "YaRN": the settings are said once, under the tables
    for row in out["summary"] + out["short_range"]["methods"]:
        row["name"] = names.get(row["method"], row["method"])
    out["drawn"] = lr["drawn"]
    return out


def _table(rows: list[dict], cols: list[str], fmt: str, esc) -> list[str]:
    cells = [[esc(_n(r[c]) if not isinstance(r[c], str) else r[c]) for c in cols] for r in rows]
    if fmt == "md":
        return ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)] + ["| " + " | ".join(c) + " |" for c in cells]
    w = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(cols)]
    return ["  " + "  ".join(c.ljust(w[i]) for i, c in enumerate(cols)).rstrip()] + \
           ["  " + "  ".join(v.ljust(w[i]) for i, v in enumerate(row)).rstrip() for row in cells]


def render(rep: dict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rep, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o))
    if fmt == "md":
        from posenc.ui.md import escape  # outside strings (model names, config keys) reach Markdown escaped

        def esc(s):
            return escape(s, limit=400)
        head, sub = "## ", "### "
    else:
        def esc(s):
            return str(s)
        head, sub = "", ""
    d = rep["rope"]
    lines = [f"{head}posenc inspect: {esc(d['model'])} ({esc(d['source'])})", ""]
    lines.append(f"{sub}RoPE")
    at = d["logit_scale_at_last_position"]
    rows = [("model_type", d["model_type"]), ("read from", d["read from"]), ("rope_type", d["rope_type"]),
            ("head_dim (rotated)", f"{d['head_dim']} ({d['rotary_dim']})"), ("base (rope_theta)", _n(d["base"])),
            ("factor s", _n(d["factor"])), ("trained length", _n(d["trained_length"])), ("served length", _n(d["served_length"])),
            ("pairing layout", d["layout"]), (f"attention factor (at length {_n(d['at_length'])})", _n(d["attention_factor"])),
            (f"logit scale at p = {at['position']:,}",
             f"{at['total']:.6g} = attention factor² {at['attention_factor^2']:.6g} x softmax {at['softmax']:.6g} "
             f"x mscale² {at['mscale^2']:.6g} x query(p) {at['query(p)']:.6g}  [{at['layer']}]"),
            ("longest wavelength 2π/θ′", f"{d['longest_wavelength']:,.6g} positions")]
    if "query_scale" in d:
        q = d["query_scale"]
        rows.append(("query scale", f"{q['formula']} ({q['layers']} layers): "
                     + ", ".join(f"x {v:.4f} at p = {p:,}" for p, v in q["at"].items())))
    lines += _table([{"field": k, "value": v} for k, v in rows], ["field", "value"], fmt, esc)
    lines += ["", f"{sub}Layers"]
    lines += _table([{**r, "rope": "yes" if r["rope"] else "no", "query_scale": r["query_scale"] or "—"} for r in rep["layers"]],
                    ["kind", "count", "rope", "window", "base", "query_scale"], fmt, esc)
    lines += ["", f"{sub}Notes"] + [f"- {esc(n)}" for n in rep["notes"]]
    s = rep["short_range"]
    lines += ["", f"{sub}Short-range fidelity: max and mean {s['unit']}, distances 0 .. {s['window']}, "
                  f"{s['n_samples']} seeded q ≠ k (every method at the model's settings)"]
    lines += _table(s["methods"], ["name", "max", "mean"], fmt, esc)
    lr = rep["long_range"]
    lines += ["", f"{sub}Long range, the model: {lr['unit']} (ρ = {lr['rho']:g}, {lr['n_samples']} seeded q), "
                  f"out to {lr['target']:,}"]
    lines += _table([{k: (int(v) if k == "distance" else v) for k, v in r.items()} for r in lr["logits"]],
                    ["distance", "p5", "p50", "p95"], fmt, esc)
    lines += [""] + _table([{k: (int(v) if k == "length" else v) for k, v in r.items()} for r in lr["entropy"]],
                           ["length", "p5", "p50", "p95", "uniform"], fmt, esc)
    lines += ["", f"{sub}Summary (the page's table)"]
    cols = ["name", "short-range max |Δ|", "fast pairs changed by", "logit scale", "entropy at target − at L (nats)"]
    lines += _table(rep["summary"], cols, fmt, esc)
    lines += ["", esc(rep["drawn"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc", description="posenc from a terminal")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("inspect", help="a model's RoPE from its config.json, GGUF file or an example name, measured")
    p.add_argument("config", metavar="CONFIG", help="config.json / params.json, a .gguf file, or an example name")
    p.add_argument("--seq-len", type=int, default=None, help="the current length the RoPE is described at (default: served)")
    p.add_argument("--format", choices=FORMATS, default="text")
    args = parser.parse_args(argv)
    if args.seq_len is not None and not 1 <= args.seq_len <= MAX_CONTEXT:
        parser.error(f"--seq-len must be in [1, {MAX_CONTEXT:,}]")
    try:
        text, source = load(args.config)
        rep = report(text, source, args.seq_len)
    except FileNotFoundError as exc:
        print(f"posenc inspect: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"posenc inspect: refused: {exc}", file=sys.stderr)
        return 1
    print(render(rep, args.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
