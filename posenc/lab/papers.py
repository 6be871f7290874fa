"""The papers against the lab: what each paper measured, as read, beside what the shipped lab results measure.

One ``Claim`` per paper claim: the paper, its claim, what the paper measured as read here (a quote and where it was
read), and a rule that reads the shipped results of every task into the lab's numbers and a reading.  A claim whose
measurement could not be read here says so (``read=False``) and its reading is "not compared", whatever the numbers:
"agrees" is written only about what was read.  Readings: "agrees", "agrees in part", "disagrees", "not compared".

The rules compare the quantities the agreement table of docs/lab.md compared on 2026-12-05 (3 seeds), written down as
code before the 10-seed results they now read: a scheme's gap past L as a share of a uniform guess's gap
(``results.beyond_fraction``), RoPE's extension rows' gap at 4L, and the spread over seeds.  ``rows()`` is the table
of the README, docs/lab.md and the lab page; tests/test_lab_papers.py checks each rule on made-up numbers and the
README's table against ``rows()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from posenc.lab import results as R
from posenc.lab.positions import NAMES

AGREES, PART, DISAGREES, NOT_COMPARED = "agrees", "agrees in part", "disagrees", "not compared"
READINGS = (AGREES, PART, DISAGREES, NOT_COMPARED)


@dataclass(frozen=True)
class Claim:
    key: str
    paper: str  # authors, year, arXiv id
    claim: str
    measured: str  # what the paper measured, as read here, and where it was read
    read: bool  # False: the paper's measurement was not read here, so the reading is "not compared"
    rule: Callable[[dict[str, dict]], tuple[str, str]]  # {task: results} -> (the lab's numbers, reading)


PRESS_DEGRADE = ("sinusoidal", "rope", "t5")  # Press et al.'s Figure 1: the methods it shows degrading past L
FIRE_RIVALS = ("rope", "t5", "alibi", "kerple", "nope")  # the lab's schemes among those Li et al. compare FIRE with


def _pct(x: float) -> str:
    return "—" if not np.isfinite(x) else f"{100 * x:.0f} %" if abs(x) >= 0.1 else f"{100 * x:.1f} %"


def _share(res: dict, scheme: str) -> float:
    """The scheme's gap past L ÷ a uniform guess's, mean over seeds (nan without a row past L)."""
    return R.beyond_fraction(res, scheme)["fraction"]


def _learned(res: dict, scheme: str) -> bool:
    return all(r["learned"] for r in R.learned_check(res) if r["scheme"] == scheme)


def _at4(res: dict, row: str | None) -> float:
    """RoPE's mean gap at 4L over seeds: plain (row None) or with an extension row ("pi", "pi_ft", ...)."""
    n = 4 * res["config"]["train_len"]
    scheme = R.extended_scheme(res)
    if row is None:
        return float(np.mean(R.gaps(res, scheme, n)))
    return float(np.mean([r["extensions"][row][str(n)]["gap"] for r in res["runs"][scheme].values()]))


def _combine(per_task: list[bool]) -> str:
    return AGREES if all(per_task) else DISAGREES if not any(per_task) else PART


def _press(tasks):
    parts, ok = [], []
    for task, res in tasks.items():
        alibi = _share(res, "alibi")
        others = {s: _share(res, s) for s in PRESS_DEGRADE}
        ok.append(R.verdict_word(alibi) == R.VERDICTS[0] and all(v > alibi for v in others.values()))
        parts.append(f"{R.task_title(task)}: " + ", ".join(f"{NAMES[s]} {_pct(v)}" for s, v in others.items())
                     + f"; ALiBi {_pct(alibi)} ({R.verdict_word(alibi)})")
    return "; ".join(parts), _combine(ok)


def _press_tables(tasks):
    parts = [f"{R.task_title(t)}: RoPE {_pct(_share(r, 'rope'))} vs sinusoid {_pct(_share(r, 'sinusoidal'))}; T5 (HF buckets) "
             f"{_pct(_share(r, 't5'))}, scaled to L {_pct(_share(r, 't5_scaled'))}" for t, r in tasks.items()]
    return "; ".join(parts), NOT_COMPARED


def _chen(tasks):
    parts, ok = [], []
    for task, res in tasks.items():
        plain, tuned, direct, zero = _at4(res, None), _at4(res, "pi_ft"), _at4(res, "ft"), _at4(res, "pi")
        ok.append(tuned < plain and tuned < direct)
        parts.append(f"{R.task_title(task)}, gap at 4L: PI + fine-tune {tuned:.3f}, plain fine-tune {direct:.3f}, no "
                     f"fine-tune {plain:.3f} (PI at 0 steps {zero:.3f})")
    return "; ".join(parts), _combine(ok)


def _peng(tasks):
    names = {"ntk": "NTK-aware", "dynamic": "dynamic NTK", "yarn": "YaRN"}
    parts, helped = [], {e: [] for e in names}
    for task, res in tasks.items():
        plain = _at4(res, None)
        cells = []
        for e, name in names.items():
            v = _at4(res, e)
            helped[e].append(v < plain)
            cells.append(f"{name} {v:.3f}")
        parts.append(f"{R.task_title(task)}, gap at 4L without fine-tuning: " + ", ".join(cells) + f" vs plain {plain:.3f}")
    per = [all(v) for v in helped.values()]
    return "; ".join(parts), _combine(per)


def _best(scheme: str):
    """Agrees on a task where ``scheme`` learned the task and has the smallest share past L of every scheme."""
    def rule(tasks):
        parts, ok = [], []
        for task, res in tasks.items():
            shares = {s: _share(res, s) for s in res["runs"]}
            ranked = [s for v, s in sorted((v, s) for s, v in shares.items() if np.isfinite(v))]
            learned = _learned(res, scheme)
            ok.append(learned and ranked[0] == scheme)
            parts.append(f"{R.task_title(task)}: {NAMES[scheme]} {_pct(shares[scheme])}"
                         + ("" if learned else " (did not learn the task at L)")
                         + f", rank {ranked.index(scheme) + 1} of {len(ranked)}; best {NAMES[ranked[0]]} "
                         f"{_pct(shares[ranked[0]])}")
        return "; ".join(parts), _combine(ok)
    return rule


def _ruoss(tasks):
    parts, ok = [], []
    for task, res in tasks.items():
        rand, plain = _share(res, "rope_randomized"), _share(res, "rope")
        ok.append(rand < plain)
        parts.append(f"{R.task_title(task)}: RoPE + randomized {_pct(rand)} vs RoPE {_pct(plain)}")
    return "; ".join(parts), _combine(ok)


def seed_spread(res: dict) -> dict[str, tuple[float, float]]:
    """{scheme: (coefficient of variation over seeds of the gap on [0, L), of the share past L)} for every scheme with a
    share past L (std with ddof 0 ÷ mean)."""
    L = res["config"]["train_len"]
    out = {}
    for s in res["runs"]:
        per = np.asarray(R.beyond_fraction(res, s)["per_seed"], dtype=np.float64)
        inside = np.asarray(R.band_gaps(res, s)[(0, L)], dtype=np.float64)
        if per.size:
            out[s] = (float(inside.std() / inside.mean()), float(per.std() / per.mean()))
    return out


def _zhou(tasks):
    parts, ok = [], []
    for task, res in tasks.items():
        cv = seed_spread(res)
        wider = [s for s, (inside, past) in cv.items() if past > inside]
        ok.append(2 * len(wider) > len(cv))
        worst = max(cv, key=lambda s: cv[s][1])
        parts.append(f"{R.task_title(task)}: the spread over seeds is wider past L than in [0, L) for {len(wider)} of {len(cv)} "
                     f"schemes; widest past L: {NAMES[worst]} (coefficient of variation {cv[worst][1]:.2f})")
    return "; ".join(parts), _combine(ok)


def _holds(scheme: str):
    def rule(tasks):
        shares = {t: _share(r, scheme) for t, r in tasks.items()}
        text = "; ".join(f"{R.task_title(t)}: {_pct(v)} ({R.verdict_word(v)})" for t, v in shares.items())
        return text, _combine([R.verdict_word(v) == R.VERDICTS[0] for v in shares.values()])
    return rule


def _fire(tasks):
    parts, ok = [], []
    for task, res in tasks.items():
        fire = _share(res, "fire")
        rivals = {s: _share(res, s) for s in FIRE_RIVALS}
        better = [s for s, v in rivals.items() if fire < v]
        ok.append(len(better) / len(rivals))
        worse = [f"{NAMES[s]} {_pct(v)}" for s, v in rivals.items() if s not in better]
        parts.append(f"{R.task_title(task)}: FIRE {_pct(fire)}, better than {', '.join(NAMES[s] for s in better) or 'none'}"
                     + (f"; worse than {', '.join(worse)}" if worse else ""))
    reading = AGREES if all(x == 1 for x in ok) else DISAGREES if not any(ok) else PART
    return "; ".join(parts), reading


CLAIMS = (
    Claim("press", "Press et al. 2022 (ALiBi, arXiv:2108.12409)",
          "sinusoidal, rotary and T5 degrade past L; ALiBi does not",
          "Figure 1's caption: \"as the (validation-set's) input sequence gets longer (x-axis), current position methods "
          "(sinusoidal, rotary, and T5) show degraded perplexity (y-axis, lower is better), but our method (§3) does not\" "
          "(WikiText-103, L = 512 and 1,024; read in the paper)", True, _press),
    Claim("press_tables", "Press et al. 2022 (ALiBi, arXiv:2108.12409)",
          "rotary extrapolates better than the sinusoid; T5's bias improves a little past L",
          "their Tables 2–3 (perplexity per length): not checked, their text could not be read here", False, _press_tables),
    Claim("chen", "Chen et al. 2023 (PI, arXiv:2306.15595)",
          "PI extends RoPE \"with minimal fine-tuning (within 1000 steps)\"; extrapolation \"may lead to catastrophically "
          "high attention scores\"",
          "the abstract (read). Their table of PI at 0 fine-tuning steps: not checked", True, _chen),
    Claim("peng", "Peng et al. 2023 (YaRN, arXiv:2309.00071)",
          "NTK-aware, dynamic NTK and YaRN extend a pretrained model without fine-tuning",
          "the introduction (read): \"the 'Dynamic NTK' interpolation method for pre-trained models without "
          "fine-tuning\"; §3.3's scale s = max(1, l′/L). Their perplexity figures: not checked", True, _peng),
    Claim("kazemnejad", "Kazemnejad et al. 2023 (arXiv:2305.19466)",
          "\"NoPE outperforms other explicit positional encoding methods\"",
          "the abstract (read; decoder-only models of ~100M parameters on reasoning and mathematical tasks)", True,
          _best("nope")),
    Claim("ruoss", "Ruoss et al. 2023 (arXiv:2305.16843)",
          "randomized positions improve length generalisation (\"by 12.0% on average\")",
          "the abstract (read; 15 algorithmic tasks, 6,000 models)", True, _ruoss),
    Claim("zhou", "Zhou et al. 2024 (arXiv:2402.09371)",
          "length generalisation shows \"large variances across different random seeds\"",
          "the abstract (read; addition, FIRE + randomized positions + index hints)", True, _zhou),
    Claim("chi", "Chi et al. 2022 (Kerple, arXiv:2205.09921)",
          "the logarithmic variant extrapolates",
          "the abstract (read): \"the logarithmic variant achieves excellent extrapolation performance on three large "
          "language modeling datasets\"", True, _holds("kerple")),
    Claim("li", "Li et al. 2023 (FIRE, arXiv:2310.04418)",
          "FIRE generalises to longer contexts better than other relative encodings",
          "the abstract (read): \"FIRE models have better generalization to longer contexts on both zero-shot language "
          "modeling and long text benchmarks\"", True, _fire),
)


def rows(tasks: dict[str, dict] | None = None) -> list[dict]:
    """One row per claim: {"key", "paper", "claim", "measured", "lab", "reading"} on ``tasks`` ({task: results};
    default: every shipped task)."""
    tasks = R.load_tasks() if tasks is None else tasks
    out = []
    for c in CLAIMS:
        lab, reading = c.rule(tasks)
        out.append({"key": c.key, "paper": c.paper, "claim": c.claim, "measured": c.measured, "lab": lab,
                    "reading": reading if c.read else NOT_COMPARED})
    return out


def markdown(tasks: dict[str, dict] | None = None) -> str:
    """``rows`` as the Markdown table of the README and docs/lab.md."""
    lines = ["| paper | claim | what the paper measured (as read) | the lab | reading |", "|---|---|---|---|---|"]
    lines += [f"| {r['paper']} | {r['claim']} | {r['measured']} | {r['lab']} | **{r['reading']}** |" for r in rows(tasks)]
    return "\n".join(lines)
