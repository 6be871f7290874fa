"""Extrapolation lab: tiny transformers trained at L on a Markov task with an exact floor, measured to 8L."""

import streamlit as st

from posenc.charts.base import style
from posenc.charts.lab import band_chart, extension_chart, gap_chart, head_attention_maps, head_mass_chart, order_chart, position_chart
from posenc.lab.evaluate import mass_on_context, position_losses
from posenc.lab.experiment import LabConfig, run_experiment
from posenc.lab.positions import DEFAULT_SCHEMES, LAB_SCHEMES, NAMES, positions, reads_positions
from posenc.lab.results import VERDICT_RULE, extended_scheme, load_task, load_tasks
from posenc.lab.task import MarkovSource
from posenc.ui import controls
from posenc.ui.cache import cached
from posenc.ui.frame import chart, header, show_code, table, wrap_up
from posenc.ui.lab_train import train_button, train_run
from posenc.ui.quiz import ask_first
from posenc.ui.section import full_run_frame, section
from posenc.ui.spine import headline
from posenc.views import lab as views
from posenc.views import lab_papers
from posenc.views import lab_predict as predict
from posenc.views.takeaways import lab_takeaway

PATH = "pages/lab.py"
DEFAULT = LabConfig()


@st.cache_resource(max_entries=1)
def _store() -> dict:
    """Completed custom runs by configuration key, shared by every session (at most 4 kept)."""
    return {}


@st.cache_data(max_entries=256, max_size="64MB", show_spinner=False)
def _view(name: str, key: tuple, args: tuple, _run: dict):
    """A view of one run, cached on the run's configuration key and scalar arguments (not the run)."""
    return getattr(views, name)(_run, *args)


header(PATH, "Every positional scheme trained on the same task at length L, then asked to read 2, 4 and 8 times "
       "further. The task is a k-th order Markov source, so the best possible loss (the **floor**) is known exactly "
       "and every number below is *loss − floor*: what the model failed to learn, or to carry past L. "
       "**Look at** which lines stay flat after L, and in the attention maps, where attention goes past L.")
st.latex(r"\text{floor} = H(X_t \mid X_{t-k..t-1}) = \sum_c \pi(c) \sum_y -T_{cy} \log T_{cy}")  # one a line: 390 px
st.latex(r"\text{gap}_t = \mathrm{KL}\big(P(\cdot \mid x_{<t}) \,\|\, q_\theta(\cdot \mid x_{<t})\big)")
results_box, why_box, custom_box = st.container(), st.container(), st.container()
notice = results_box.empty()  # always there, empty or not: an element appearing above would move and rebuild every chart (docs/performance.md, 8)
tasks = list(cached(load_tasks))
task = tasks[0] if len(tasks) == 1 else controls.choice("task", "task", tasks, default=tasks[0], format_func=views.task_title,
                                                        container=results_box, help="Each task's shipped results")
shipped = cached(load_task, task)
headline((views.top_sentence([_view("finding", (t,), (), _run=cached(load_task, t)) for t in tasks]), predict.KEY))  # it ranks them

SHOWN = "_lab_shown"  # session slot: what the last full run showed for its configuration (``_outside``)


def _outside(cfg: LabConfig) -> tuple:
    """What the page outside the Train section shows for ``cfg``: its run if trained here, else the shipped one (with the
    notice, unless ``cfg`` is the default)."""
    key = cfg.key()
    return ("custom", key) if key in _store() else ("shipped", key != DEFAULT.key())


@section(PATH)
def custom_section(per_run: float) -> LabConfig:
    """The configuration and its Train button: a setting reruns only this, unless it changes what the page shows."""
    st.subheader("Train a custom configuration", anchor=False)
    c = st.columns(6)
    vocab = controls.number("vocabulary V", "V", default=DEFAULT.vocab, lo=2, hi=16, container=c[0])
    order = controls.number("order k", "k", default=DEFAULT.order, lo=1, hi=3, container=c[1], help="V^k at most 4096")
    train_len = controls.choice("training length L", "L", ["8", "16", "32", "64"], default=str(DEFAULT.train_len), style="select", container=c[2])
    n_seeds = controls.number("seeds", "seeds", default=DEFAULT.n_seeds, lo=1, hi=3, container=c[3])
    steps = controls.choice("steps", "steps", ["250", "500", "1000", "2000", "4000"], default=str(DEFAULT.steps), style="select", container=c[4])
    rand = controls.choice("randomized positions", "randomize", ["off", "256", "512", "2048"], default="off", style="select",
                           container=c[5], help="Ruoss et al. 2023: every batch reads a sorted random sample of positions "
                                                "from [0, N), in training and evaluation")
    picked = controls.multi("schemes", "schemes", list(LAB_SCHEMES), default=list(DEFAULT_SCHEMES), format_func=NAMES.get)
    randomize = 0 if rand == "off" else int(rand)
    blind = [s for s in picked if randomize and not reads_positions(s)]
    cfg = LabConfig(vocab=vocab, order=order, train_len=int(train_len), n_seeds=n_seeds, steps=int(steps), randomize=randomize,
                    schemes=tuple(s for s in LAB_SCHEMES if s in picked and s not in blind) or DEFAULT.schemes)
    if blind:
        st.caption(f":material/block: {', '.join(NAMES[s] for s in blind)} reads no positions (causal mask only): randomized "
                   "positions would change nothing, so it is left out of this run.")
    pressed = train_button(cfg, per_run, DEFAULT)  # its price; the training runs in the page's run, below (issue 41)
    if full_run_frame() is None and (pressed or st.session_state.get(SHOWN) != _outside(cfg)):
        st.rerun()  # a training (whose Cancel must interrupt it), another run shown above, or the notice comes or goes
    return cfg


with custom_box:
    per_run = _view("overview", ("shipped",), (), _run=shipped)["seconds_per_run"]
    cfg = custom_section(per_run)
    train_run(cfg, per_run, _store(), DEFAULT)
st.session_state[SHOWN] = shown = _outside(cfg)
if shown[0] == "custom":
    key = shown[1]
    run, label = _store()[key], "this custom run"
else:
    run, label, key = shipped, f"the shipped default run on the {views.task_title(task)} task (`python -m posenc.lab`)", ("shipped", task)
    if shown[1]:
        notice.info("This configuration has not been trained on this server yet: press **Train** below. "
                    "Showing the shipped default run meanwhile.", icon=":material/info:")

@section(PATH, box=("Against the papers: what each measured, beside the shipped runs", "lab_papers"))
def papers_section() -> None:
    """The papers' measurements beside the shipped runs: computed once its box opens, not at the reveal that shows it."""
    st.markdown(cached(lab_papers.papers_markdown))
    st.caption(lab_papers.CAPTION)


with results_box:  # the prediction first; until it is revealed the schemes it asks about stop at L in every figure below
    full = (run, key)  # the attention maps below carry no gap: the same run before and after the reveal
    if not ask_first(ask := predict.ranking(run)):
        run, shipped, key, ask = predict.hidden(run, shipped, key, ask)
    ov = _view("overview", key, (), _run=run)
    L, k = ov["train_len"], ov["order"]
    settings = (f"V = {ov['vocab']}, k = {k}, L = {L}, {ov['seeds']} seeds, {ov['steps']} Adam steps"
                + (f", positions randomized from [0, {ov['randomize']:,})" if ov["randomize"] else ""))
    found = _view("finding", (task,), (), _run=shipped)
    st.caption(found["caveat"])
    bv = _view("bands_view", key, (), _run=shipped) if run is shipped else views.bands_view(shipped, run)
    chart(style(band_chart(bv)), key="lab_bands", data=bv["frame"],
          caption="Gap per band of positions, out to 8L: mean over seeds, bar = 95 % bootstrap interval over seeds; "
                  "grey dashed: the uniform guess's gap on the same positions. A line above it past L is worse than guessing. "
                  + ("Your run: the thick pale lines, over the shipped ones. " if run is not shipped else "")
                  + VERDICT_RULE.replace("**", ""))
    m = st.columns(4)
    m[0].metric("floor (exact)", f"{ov['floor']:.4f} nats", help=f"Bayes loss on the evaluation contexts at L: {ov['bayes_at_L']:.4f}")
    m[1].metric("uniform guess", f"{ov['uniform']:.4f} nats")
    m[2].metric("models that learned the task", f"{ov['n_learned']} of {ov['n_models']}",
                help="gap at L ≤ 10 % of (uniform − floor), per scheme and seed")
    m[3].metric("results", "custom" if run is not shipped else "shipped")
    chart(style(gap_chart(ov["frame"], ov["names"])), key="lab_gap", data=ov["frame"],
          caption=f"Results of {label}: {settings}. Line: mean over seeds; band: min–max. Trained at the first point; "
                  "a flat line after it means the scheme carries the task past L. Falsified by a run (other seeds, below) "
                  "whose band leaves this one's.")
    table(predict.blank(ov["table"], ask), key="lab_overview")
    for name, seeds in ov["not_learned"].items():
        st.caption(f":material/warning: {name} did not learn the task at L (gap over {ov['learned_fraction']:.0%} of uniform − floor) at "
                   f"{len(seeds)} of {ov['seeds']} training seeds ({', '.join(map(str, seeds))}): its longer lengths measure a "
                   "model that has not learned it." + (" It is trained longer below." if ov["longer"] and name in ov["longer"]["names"] else ""))
    for name, why in ov["undefined"].items():
        st.caption(f":material/block: {name}: {why}.")
    with st.expander("Registry schemes the lab does not train, and why"):
        st.markdown("\n".join(f"- **{name}**: {why}." for name, why in views.not_trained()))
    if not (sweep := predict.hidden_sweep(cached(views.order_sweep), ask)).empty:
        with st.expander(views.ORDERS_TITLE):
            sv = views.order_view(sweep)
            chart(style(order_chart(sv)), key="lab_orders", data=sweep, caption=sv["sentence"] + " " + views.ORDERS_CAPTION)
    if not (ask and ask.get("hidden")):  # it ranks the asked schemes: after the reveal
        papers_section()
    if (more := ov["longer"]) is not None:
        st.markdown(f"**Trained {more['steps'] // ov['steps']}× longer** ({more['steps']:,} steps; every other setting equal): "
                    f"{', '.join(more['names'])}, because {'it' if len(more['names']) == 1 else 'they'} did not learn the task at "
                    f"{ov['steps']:,} steps. Dashed in the chart above.")
        table(more["table"], key="lab_more")
        st.caption(f"Learned the task with {more['steps']:,} steps: {more['n_learned']} of {more['n_models']} models. Made by the "
                   "same command, which trains again whatever did not learn; its verdict is the one the Compare "
                   f"table shows. Falsified by a seed of the follow-up whose gap at L is over the same {ov['learned_fraction']:.0%} line.")
    pv = _view("by_position", key, (), _run=run)
    chart(style(position_chart(pv["frame"], pv["names"], train_len=L)), key="lab_positions", data=pv["frame"],
          caption=f"Gap per position at {pv['length']} tokens (mean over seeds; the learned table stops at L; {settings}). "
                  "Positions before the dashed line were seen in training; a scheme carries the task past L if its line "
                  "stays at its level after the line, and a rise there falsifies that.")
    ext = _view("extensions", key, (), _run=run)
    if ext is not None:
        chart(style(extension_chart(ext["frame"], ext["methods"])), key="lab_ext", data=ext["frame"],
              caption="The RoPE model, unchanged, evaluated with each context extension applied at test time (factor = "
                      "length / L; dynamic NTK at each query's own length t + 1, s = max(1, (t + 1) / L), one forward pass "
                      f"per position as transformers without a cache; the Context extension page's formulas). Lowest at 4L: "
                      f"{ext['best'][4 * L]}; at 8L: {ext['best'][8 * L]} ({settings}; a method that needs fine-tuning "
                      "would show no gain here).")
        table(_view("extension_table", key, (), _run=run), key="lab_extensions")
        ident = _view("extension_identity", key, (), _run=run)
        if ident["identical"]:
            st.caption(ident["sentence"])

@section(PATH, box=("The attention maps at L and past it, and each head's mass on the tokens that matter", "lab_why"),
         opens_with=views.WHY_KEYS)
def why_section(run: dict, key: tuple, L: int, k: int, settings: str) -> None:
    """Scheme and length rerun only this section (a shipped run's next long length is computed ahead); layer and head pick,
    in the browser, among what it sent.  Drawn only while its box is open: closed, a first paint and a change of task skip it."""
    w = st.columns(4)
    runs = list(run["results"]["runs"])
    scheme = controls.choice("scheme", "scheme", runs, default=extended_scheme(run["results"]) or runs[0], format_func=NAMES.get,
                             style="select", container=w[0])
    mult = controls.select_slider("long length", "mult", [2, 4, 8], default=4, format_func=lambda v: f"{v}L", container=w[1])
    av = (cached(views.shipped_attention_stack, key[1], scheme, mult, ahead={"mult": 2}) if key[0] == "shipped"
          else _view("attention_stack", key, (scheme, mult), _run=run))
    layers, heads = range(1, av["layers"] + 1), range(1, av["heads"] + 1)
    layer = controls.in_chart("layer", "layer", layers, default=1, container=w[2])
    head = controls.in_chart("head", "head", heads, default=1, container=w[3])
    w[2].caption("Layer and head: the buttons under the first map.")
    cols = st.columns(len(av["maps"]))
    for i, (col, (lbl, frame)) in enumerate(zip(cols, av["maps"].items())):
        with col:
            chart(style(head_attention_maps(frame, name=av["name"], label=lbl, layer=layer, head=head)),
                  key=f"lab_attn_{lbl[0]}", data=frame, bindings=i == 0,
                  caption="Mean over 16 evaluation sequences; " + ("every query and key drawn." if av["steps"][lbl][0] == 1
                          else f"one query and key in {av['steps'][lbl][0]} drawn (exact values, strided).")
                          + " The CSV holds every layer and head.")
    note = st.empty()  # always there, so that a scheme with a note leaves the mass chart in its place
    if av["note"]:
        note.caption(f":material/block: {av['note']}: the maps and the mass stop at L.")
    chart(style(head_mass_chart(av["mass"], av["mass_summary"], layer=layer, head=head, train_len=L, order=k)),
          key="lab_mass", data=av["mass"], bindings=False,
          caption=f"Attention on the {k} input positions holding the tokens the next one depends on (the query's own "
                  f"included), every head of the chosen layer (the chosen head thick), first seed; the title gives the chosen "
                  f"head's mean before and after L ({settings}). A scheme whose heads keep their mass past L keeps its loss.")

with why_box:
    st.subheader("Why: where attention goes", anchor=False)
    if run["weights"] is not None:
        why_section(*full, L, k, settings)
    else:
        st.caption(f":material/block: No weights ship for the {views.task_title(task)} task, so its attention is not drawn.")

show_code(run_experiment, position_losses, positions, MarkovSource.from_table, mass_on_context, views.attention_stack)
wrap_up(PATH, predict.takeaway(lab_takeaway(ov), ask))
