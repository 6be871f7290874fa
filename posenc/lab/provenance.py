"""The shipped files' names and settings, and the provenance README that ``python -m posenc.lab`` writes beside them.

``__main__`` (the command line) imports everything here; it lives apart to keep each module small.
"""

from __future__ import annotations

import platform
import time

import numpy as np

from posenc.lab import results as R
from posenc.lab.experiment import EXTENSION_ROWS, FINETUNES, LONGER
from posenc.lab.positions import KIND, LAB, NAMES, unseen_share
from posenc.lab.results import RESULTS_FILE, extended_scheme, gaps, learned_check, spread_text
from posenc.lab.task import TASK_NAMES

# Seeds per task in the shipped files (issue 37 asks for at least 10).  A 10-seed --ship is ~95 min of two cores on this
# host (a training step: 12.5-26 ms on one thread, idle, by the time of day); ``--cache DIR`` lets it resume.
SHIP_SEEDS = 10
ORDERS = (1, 2, 3, 4)  # the Markov order sweep (vocab 8: V^k <= task.MAX_CONTEXTS = 4096 up to k = 4)
# seeds per order in lab_orders.json (k = 2 reuses the main run's seed 0: the same job).  One, for the 30-minute --ship:
# measured on 2026-12-05 (load 9-13, one BLAS thread) a default job costs ~15 s CPU, a RoPE job with its extension rows
# and fine-tunes ~115 s, i.e. ~7.5 s / ~58 s idle; one seed per order adds ~3.7 min of two cores, each further seed as
# much.  The spread over seeds at k = 2 is the main run's (SHIP_SEEDS seeds).
ORDER_SEEDS = 1
ORDERS_FILE = "lab_orders.json"

def task_file(task: str) -> str:
    """The shipped results file of ``task``: lab_results.json for the Markov task, lab_<task>.json for another."""
    return RESULTS_FILE.name if task == "markov" else f"lab_{task}.json"


def longer_file(task: str) -> str:
    return "lab_longer.json" if task == "markov" else f"lab_{task}_longer.json"


def weights_file(task: str) -> str:
    return "lab_weights.npz" if task == "markov" else f"lab_{task}_weights.npz"

def _row_label(scheme: str, ext: str) -> str:
    return f"{NAMES[scheme]} + {ext} ({'fine-tuned' if ext in FINETUNES else 'test time'})"


def _table(results: dict) -> str:
    """The results table of docs/lab.md and of the provenance README.md: scheme x length, mean gap and min-max over seeds."""
    L = results["config"]["train_len"]
    head = "| scheme | " + " | ".join(f"{n // L}L = {n}" if n != L else f"L = {n}" for n in results["lengths"]) + " |"
    lines = [head, "|---|" + "---|" * len(results["lengths"])]
    for s in results["runs"]:
        lines.append(f"| {NAMES[s]} | " + " | ".join(spread_text(gaps(results, s, n)) for n in results["lengths"]) + " |")
    extended = extended_scheme(results)
    if extended is not None:
        runs = list(results["runs"][extended].values())
        for ext in runs[0]["extensions"]:
            cells = [spread_text([r["extensions"][ext][str(n)]["gap"] for r in runs]) if str(n) in runs[0]["extensions"][ext]
                     else "—" for n in results["lengths"]]
            lines.append(f"| {_row_label(extended, ext)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _percent(x: float) -> str:
    return f"{100 * x:.0f} %" if x >= 0.1 else f"{100 * x:.1f} %"


def band_table(results: dict) -> str:
    """The verdict table of docs/lab.md: each scheme's gap by band of positions ([0, L), [L, 2L), ...; mean over seeds
    with its 95 % bootstrap interval), the uniform guess's gap per band, the gap past L as a share of the uniform
    guess's (``results.beyond_fraction``) with its verdict, and ``positions.unseen_share`` at 2L and 8L."""
    cfg = results["config"]
    L = cfg["train_len"]
    uniform = R.uniform_band_gaps(results)
    bl = list(uniform)
    lines = ["| scheme | " + " | ".join(R.band_label(b, L) for b in bl) + " | past L ÷ uniform (95 %) | verdict | unseen at 2L / 8L |",
             "|" + "---|" * (len(bl) + 4),
             "| *uniform guess* | " + " | ".join(f"{uniform[b]:.3f}" for b in bl) + " | 100 % | | |"]
    for s in results["runs"]:
        per_band = R.band_gaps(results, s)
        cells = []
        for b in bl:
            v = per_band.get(b)
            lo, hi = R.bootstrap_interval(v) if v else (None, None)
            cells.append(f"{np.mean(v):.3f} ({lo:.3f}–{hi:.3f})" if v else "no row")
        f = R.beyond_fraction(results, s)
        share = "—" if f["verdict"] is None else f"{_percent(f['fraction'])} ({_percent(f['lo'])}–{_percent(f['hi'])})"
        unseen = " / ".join(f"{unseen_share(s, m * L, train_len=L, d_model=cfg['d_model'], n_heads=cfg['n_heads']):.2f}"
                            for m in (2, 8))
        lines.append(f"| {NAMES[s]} | " + " | ".join(cells) + f" | {share} | {f['verdict'] or f['reason']} | {unseen} |")
    return "\n".join(lines)


def not_learned(results: dict) -> str:
    """The (scheme, seed) models that did not learn the task at L, with their gap there ("none")."""
    return ", ".join(f"{NAMES[r['scheme']]} seed {r['seed']} ({r['gap_at_L']:.3f})" for r in learned_check(results)
                     if not r["learned"]) or "none"


def _longer_section(longer: dict | None, results: dict) -> str:
    if longer is None:
        return "Every model learned the task: there is no follow-up run."
    checks = learned_check(longer)
    names = ", ".join(NAMES[s] for s in longer["runs"])
    return f"""Follow-up (same format): {names}, which did not learn the task at some seed, trained again with
{LONGER} x the steps ({longer["config"]["steps"]}; every other setting equal, by `experiment.longer_config`).
Learned the task there: {sum(c["learned"] for c in checks)} of {len(checks)} models (not learned: {not_learned(longer)}).

{_table(longer)}

By band, with the verdict:

{band_table(longer)}"""


def _task_section(results: dict, longer: dict | None, name: str) -> str:
    cfg = results["config"]
    task = cfg.get("task", "markov")
    checks = learned_check(results)
    settings = ", ".join(f"{k} = {v}" for k, v in cfg.items() if k not in ("schemes", "task"))
    source = (f"Markov source from `default_rng({cfg['source_seed']})`" if task == "markov"
              else f"the {TASK_NAMES[task]} source (task.source_for; no random table)")
    return f"""## {TASK_NAMES[task]}: `{name}` (format {results["format"]})

Settings: {settings}; schemes: {", ".join(cfg["schemes"])}; training seeds 0 .. {cfg["n_seeds"] - 1}; evaluation
sequences from `numpy.random.default_rng([10000, 3])`; {source}.
Floor (the source's conditional entropy): {results["floor"]:.6f} nats; uniform guess: {results["uniform"]:.6f} nats.
Learned the task (gap at L ≤ 10 % of the uniform-to-floor gap): {sum(c["learned"] for c in checks)} of {len(checks)} models.

Not learned: {not_learned(results)}.

Gap = loss − Bayes loss on the same contexts (nats), mean (min–max) over seeds:

{_table(results)}

By band of positions, mean over seeds (95 % bootstrap interval), with the verdict (the gap past L as a share of the
uniform guess's; holds ≤ {_percent(R.HOLDS)}, degrades ≤ {_percent(R.DEGRADES)}, else worse than a uniform guess):

{band_table(results)}

{_longer_section(longer, results)}
"""


def provenance(results: dict, command: str, seconds: float, longer: dict | None = None, *,
               others: list[tuple[str, dict, dict | None]] = (), orders: dict | None = None, where: str = "") -> str:
    """The README.md of a run's directory: what made it, with what, and every results table.  ``others``: further
    tasks as (file name, results, follow-up); ``orders``: the Markov order sweep {k: results}."""
    import scipy

    cfg = results["config"]
    trained = ", ".join(NAMES[s] for s in cfg["schemes"] if KIND[s] == "trained bias")
    settings = "; ".join(_lab_setting(s, cfg.get("randomize", 0)) for s in cfg["schemes"] if _lab_setting(s, cfg.get("randomize", 0)))
    fine = results.get("finetune")
    rows = "\n".join(f"- {k}: {v}" for k, v in EXTENSION_ROWS.items())
    fine_text = "" if fine is None else f"""
Extension rows of the RoPE model (each with the paper whose claim it tests):
{rows}

The fine-tunes start from each seed's trained RoPE model: {fine["steps"]} Adam steps at length {fine["length"]}, batch
{fine["batch"]}, constant lr {fine["lr"]:g} (no warm-up), batches from `default_rng([seed, {fine["stream"]}])`; settings
fixed before any fine-tune ran.  At 8L, pi_ft interpolates by 8 (as the test-time PI row), having been tuned at 4.
"""
    parts = [_task_section(results, longer, task_file(cfg.get("task", "markov")))]
    parts += [_task_section(r, lg, name) for name, r, lg in others]
    if orders:
        parts.append(f"## The Markov order sweep: `{ORDERS_FILE}`\n\n{{\"orders\": {{k: results}}}}, k = "
                     f"{', '.join(map(str, orders))}; {ORDER_SEEDS} seed(s) each (k = 2: the main run's first "
                     f"{ORDER_SEEDS}, the same jobs).\n")
        for k, r in orders.items():
            parts.append(f"### Order k = {k} (floor {r['floor']:.6f} nats)\n\n{_table(r)}\n")
    return f"""# Results of the extrapolation lab

Produced by `{command}` on {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} in {seconds:.0f} s wall{where}.
Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, {platform.machine()} ({platform.system()}).
Every (task, scheme, seed) run is an independent job (`experiment.run_job`); where it ran changes no number.

- `lab_weights.npz` (and `lab_<task>_weights.npz`): the trained weights of seed 0 for every scheme, stored as float32
  (for the attention views only; every number in the JSON comes from the float64 run).

What the lab sets in the registry's entries (`posenc.lab.positions.LAB`): {settings or "nothing"}.
Trained biases start from their scheme's own initialisation (`TrainableBias.init`): {trained or "none"}.
{fine_text}
""" + "\n".join(parts)


def _lab_setting(scheme: str, randomize: int) -> str:
    """What the lab sets in a scheme's registry entry, in words ("" for nothing)."""
    s = LAB[scheme]
    parts = [f"{k} = {v}" for k, v in s.params.items()]
    if s.model != s.key:
        parts.append(f"trained as `{s.model}`")
    if randomize or s.randomize:
        parts.append(f"randomized positions from [0, {randomize or s.randomize}) in training and evaluation")
    return f"{NAMES[scheme]} (`{s.key}`): " + ", ".join(parts) if parts else ""
