"""Values computed ahead on the pages whose slider steps wait on the server (posenc/ui/ahead.py; Compare has its own file):
after a run, the call at the slider's next value is computed in the background, and a step onto that value draws it
without computing it again.  Precision's head_dim d (the six error scans of a new d: 0.27 s of a 0.40 s step in run AW,
docs/performance.md) and the lab's long length (the model's attention at 8L: 0.45 of 0.70 s)."""

from __future__ import annotations

import threading
import time

import pytest
from apphelpers import chart, open_page, text_of

import posenc.views.lab as lab_views
import posenc.views.precision as precision_views
from posenc.io.modelconfig import EXAMPLE_CONFIGS
from posenc.ui import ahead

# page, link, the call ahead (qualified name, its argument the slider sets, the value after the link's), the slider's key,
# the module and function the call computes with (counted on the step), and what the page shows at the new value
CASES = {
    "precision": ("pages/precision.py", {}, "posenc.views.precision:precision_view", 0, 130, "d",
                  (precision_views, "cos_error_profile"), lambda at: "RoPE, d 130, base 500000" in text_of(at)),
    "lab": ("pages/lab.py", {"mult": "2L", "scheme": "ALiBi"}, "posenc.views.lab:shipped_attention_stack", 2, 4, "mult",
            (lab_views, "attention_stack"), lambda at: "4L = 128" in str(chart(at, "lab_attn_4")["spec"])),
}


def _done(name: str, arg: int, value) -> bool:
    return any(c[0] == name and c[1][arg] == value for c in ahead.done())


def _counted(monkeypatch, module, fn: str) -> list:
    """The calls of ``module.fn`` from now on by a page's run (their arguments after the first), not by the worker, which
    goes on computing the other values ahead meanwhile."""
    computed, real = [], getattr(module, fn)

    def counted(*a, **k):
        if threading.current_thread().name != ahead.THREAD:
            computed.append(a[1:])
        return real(*a, **k)

    monkeypatch.setattr(module, fn, counted)
    return computed


@pytest.mark.parametrize("case", CASES)
def test_a_step_finds_the_next_value_computed_ahead(case, monkeypatch, ahead_on):
    path, link, name, arg, value, key, (module, fn), shows = CASES[case]
    at = open_page(path, link, timeout=180)  # the lab's link opens its "why" box
    assert not at.exception
    t0 = time.monotonic()
    while not _done(name, arg, value):
        assert time.monotonic() - t0 < 120, f"{name} at {value} was not computed ahead: {[c[:2] for c in ahead.done()]}"
        time.sleep(0.05)
    computed = _counted(monkeypatch, module, fn)
    at.session_state[key] = value
    at.run()
    assert not at.exception
    assert computed == [], f"the step computed {fn} again"
    assert shows(at)


def test_a_model_on_the_precision_page_plans_nothing_ahead_and_a_step_of_its_sliders_computes_nothing(monkeypatch, ahead_on):
    """With a model chosen the page draws the model's own d and base, so a step of the sliders changes nothing drawn:
    nothing is computed ahead for it, and the step finds the model's view in the cache (run AY, 2026-12-07: each step
    of base computed the same view again, 0.15-0.18 s of a 0.3 s step)."""
    before = set(ahead.done())  # another test's calls, computed in this process
    at = open_page("pages/precision.py", {"model": next(iter(EXAMPLE_CONFIGS))}, timeout=180)
    assert not at.exception
    with ahead._cond:
        queued = {*ahead._pending, ahead._current[0], *ahead.done()} - before - {None}
    assert not [c for c in queued if c[0] == "posenc.views.precision:precision_view"]
    computed, shown = _counted(monkeypatch, precision_views, "cos_error_profile"), text_of(at)
    for key, value in (("base", 501000.0), ("d", 130)):
        at.session_state[key] = value
        at.run()
        assert not at.exception and text_of(at) == shown
    assert computed == [], "a step of a slider the model overrides computed the view again"
