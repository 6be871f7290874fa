"""The Extrapolation lab's Train section: a click's cost before the button, the training in its turn of the worker's
long-job queue (``posenc.ui.queue``, issue 41 S3).

A worker trains one configuration at a time: a session whose click arrives while another trains is told
"Waiting: position k" with an estimate, in the notice slot above the progress bar, until its turn.  A click above
the queue's cap is refused before it is made (the button is disabled and the caption says why).  A configuration
another session trained while this one waited is not trained again: it is in the shared store.
"""

from __future__ import annotations

import time
from collections.abc import MutableMapping

import streamlit as st

from posenc.lab.experiment import LabConfig, run_experiment
from posenc.ui import queue as jobs
from posenc.views.lab import eta_text

RUNNING = "_lab_running"  # session slot: the configuration being trained (cleared when it completes)
TRAIN = "_lab_train"  # session slot set by the Train button's callback
KEPT = 4  # completed custom runs kept per worker, for every session


def cost(cfg: LabConfig, seconds_per_run: float, default: LabConfig) -> jobs.Price:
    """What a click on Train costs at ``cfg``: runs (schemes × seeds) × steps × length, timed from the shipped
    run's seconds per scheme and seed at ``default``."""
    return jobs.price(runs=len(cfg.schemes) * cfg.n_seeds, steps=cfg.steps, length=cfg.train_len,
                      seconds_per_unit=seconds_per_run / (default.steps * default.train_len))


def train_button(cfg: LabConfig, seconds_per_run: float, default: LabConfig) -> bool:
    """The price and the Train button (disabled above the cap); True once it has been pressed, until ``train_run``.

    The page may draw these in a section that reruns alone (``posenc.ui.section``), but not ``train_run``: Streamlit
    lets no section's rerun interrupt a run in progress, so a Cancel drawn in a section could not stop a training."""
    price = cost(cfg, seconds_per_run, default)
    st.caption(f":material/{'block' if price.refused else 'timer'}: {price.text}")
    st.button("Train", key="lab_train", icon=":material/model_training:", type="primary", disabled=price.refused,
              on_click=st.session_state.update, kwargs={TRAIN: True})  # a callback survives the router's rerun
    st.caption(f"{len(cfg.schemes)} schemes × {cfg.n_seeds} seeds; the shipped run took {seconds_per_run:.0f} s per scheme "
               "and seed at the defaults. Runs are kept (4 at most) for every visitor of this server; **Cancel** stops a "
               "run (or leaves the queue) and keeps nothing.")
    return bool(st.session_state.get(TRAIN))


def train_run(cfg: LabConfig, seconds_per_run: float, store: MutableMapping, default: LabConfig) -> None:
    """A pressed click's training in its queue turn, with its progress and Cancel (which reruns the page and so stops
    it); after a stopped one, a note that nothing was kept."""
    price = cost(cfg, seconds_per_run, default)
    if st.session_state.pop(RUNNING, None) is not None:
        st.warning("The last run was stopped before it finished; nothing was kept.", icon=":material/cancel:")
    if not st.session_state.pop(TRAIN, False) or price.refused:
        return
    key = cfg.key()
    st.session_state[RUNNING] = key
    notice = st.empty()  # "Waiting: position k ..." while another session's training runs
    bar = st.progress(0.0, text="waiting for this server's queue")
    st.button("Cancel", key="lab_cancel", icon=":material/cancel:")
    with jobs.turn(f"lab training {len(cfg.schemes)} × {cfg.n_seeds} runs", seconds=price.seconds, notice=notice):
        if key not in store:  # another session may have trained the same configuration while this one waited
            t0 = time.monotonic()

            def _tick(info):
                done = (info["run"] + info["step"] / info["steps"]) / info["runs"]
                bar.progress(done, text=f"{info['name']} · seed {info['seed']} · step {info['step']} / {info['steps']} "
                                        f"· run {info['run'] + 1} of {info['runs']} · {eta_text(done, time.monotonic() - t0)}")

            res, weights = run_experiment(cfg, progress=_tick)
            store[key] = {"results": res, "weights": weights}
            while len(store) > KEPT:
                store.pop(next(iter(store)))
    st.session_state.pop(RUNNING, None)
    bar.empty()
