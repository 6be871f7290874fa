"""Section "interact": what a person feels, measured in headless Chromium on a live server.

For every page: (a) the first paint after opening it -- from navigation until the script is idle
and every chart has painted and stopped changing; (b) one step of each slider (a keyboard arrow),
each select box, segmented control, radio, toggle, number input and expander (a click on its summary: a box that
computes only while open reruns its section) -- from the input until the script is idle and every chart and element
has repainted -- and of each in-chart control (a chart parameter's radio buttons, which repaint in the browser): from
the click to the last change before the page tells the server (``SYNC_MS`` later).  The expanders come last and are
left open; then every control they hold is timed the same way.

What a hand does (issue 42): a hand on a slider mostly reaches values nothing has computed.  So each control first
takes a run of ``new_steps`` steps onward, each to a value of that control not visited before in this server process
(a slider or number keeps one direction, turning only at its end; a choice picks an option it has not picked yet),
then ``repeats`` steps back and forth over values it has visited (what dragging back costs: cache hits).  Every
try is filed by the value it reached, read from the control after the step: new (``new_s``, ``new_tries``) or
seen (``repeat_s``, ``repeat_tries``); a toggle or a two-option choice has one new value only.  The goals are judged
on the new values: each page's median new step (``median_new_step_s``) and its worst control's (``worst_new_step_s``).

The floor (``bench/floor_app.py``, on its own server, timed the same way): one slider, one metric and
one 500-point line chart -- what Streamlit itself costs on this machine for a step that redraws one
chart, so a page's figure can be read as the floor plus the page's own work.

How "repainted" is detected: a watcher in the page records the last time anything under the main
area changed -- a DOM mutation (text, elements, attributes), the pixels of any chart canvas
(a 48 x 48 thumbnail of it, hashed every ``POLL_MS``), or a draw on a data grid's canvas -- and the measurement ends
once the script is idle and nothing has changed for ``QUIET_MS``; the figure is that last change minus the moment of
the input.  What is inside a ``<canvas>`` element is its fallback content, which a browser that draws canvases never
paints: the data grid (``st.dataframe``) keeps its accessibility table there and rebuilds it 200 ms after each render
(glide-data-grid's debounce), so mutations there are not counted and the grid counts when it draws (its cells
are drawn on the canvas).  Everything stays on loopback and every wait is bounded.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.timing import IDLE_PROBE_S, MAX_WAIT_S, cpu_identity, cpu_model, cpu_probe, host_verdict, idle_bound, stolen_seconds, wait_for_idle
from posenc.ui.compat import runner_flags
from posenc.ui.pages import PAGES, address
from posenc.ui.runclock import ENV as RUN_LOG_ENV
from posenc.ui.runclock import read_runs
from tools.liveserver import chromium_path, idle_tab, launch_chromium, start_server, stop_server, wait_for_app

POLL_MS = 40
QUIET_MS = 600
TIMEOUT_MS = 60_000

WATCHER = """
() => {
  if (window.__posenc_watch) { return; }
  // The moment of the input: the last pointer press or key press (a select's second click, the one that
  // chooses), or a change when there was neither (a select option chosen by script).  A step is timed from
  // it, not from when the driver began to look for the control (0.04-0.09 s a step here: LEADS).
  window.__posenc_input = null;
  for (const type of ["pointerdown", "keydown"]) {
    document.addEventListener(type, () => { window.__posenc_input = performance.now(); }, true);
  }
  document.addEventListener("change", () => { if (window.__posenc_input === null) window.__posenc_input = performance.now(); }, true);
  const main = document.querySelector("[data-testid='stMain']") || document.body;
  window.__posenc_last = performance.now();
  // A canvas's children are its fallback content, never painted here: the data grid's accessibility table, which
  // glide-data-grid rebuilds 200 ms after the cells are drawn, is not a change a person sees.
  const unpainted = (n) => { const e = n.nodeType === 1 ? n : n.parentElement; return !!(e && e.closest("canvas")); };
  new MutationObserver((records) => {
    if (records.some((r) => !unpainted(r.target))) { window.__posenc_last = performance.now(); }
  }).observe(main, {subtree: true, childList: true, characterData: true, attributes: true});
  // A data grid's cells are drawn on its canvas: each draw on a canvas in the page marks that canvas (read below).
  const ctx2d = CanvasRenderingContext2D.prototype;
  for (const m of ["drawImage", "fillText", "fillRect", "clearRect", "putImageData", "fill", "stroke"]) {
    const f = ctx2d[m];
    ctx2d[m] = function (...args) { if (this.canvas.isConnected) { this.canvas.__posenc_drawn = performance.now(); } return f.apply(this, args); };
  }
  const drawn = new Map();
  const hashes = new Map();
  // Each chart canvas is drawn onto a 48 x 48 thumbnail and its pixels hashed: any change of the chart
  // changes some thumbnail pixel, and the probe costs ~0.1 ms per canvas (encoding the full canvas as a
  // PNG every poll took tens of milliseconds of the page's own main thread, slowing what it measured).
  const thumb = document.createElement("canvas");
  thumb.width = thumb.height = 48;
  const tctx = thumb.getContext("2d", {willReadFrequently: true});
  const hash = (c) => {
    tctx.clearRect(0, 0, 48, 48);
    tctx.drawImage(c, 0, 0, 48, 48);
    const px = tctx.getImageData(0, 0, 48, 48).data;
    let h = 0;
    for (let i = 0; i < px.length; i++) { h = (h * 31 + px[i]) | 0; }
    return h + ":" + c.width + "x" + c.height;
  };
  window.__posenc_watch = setInterval(() => {
    document.querySelectorAll("[data-testid='stVegaLiteChart'] canvas").forEach((c, i) => {
      let h;
      try { h = hash(c); } catch (e) { h = "x"; }
      if (hashes.get(i) !== h) { hashes.set(i, h); window.__posenc_last = performance.now(); }
    });
    document.querySelectorAll("[data-testid='stDataFrame'] canvas").forEach((c) => {
      if (c.__posenc_drawn && drawn.get(c) !== c.__posenc_drawn) {
        drawn.set(c, c.__posenc_drawn);
        window.__posenc_last = Math.max(window.__posenc_last, c.__posenc_drawn);
      }
    });
  }, POLL_MS);
}
""".replace("POLL_MS", str(POLL_MS))

SETTLED = """
([t0, quiet]) => {
  const app = document.querySelector("[data-testid='stApp']");
  const idle = app && app.getAttribute("data-test-script-state") === "notRunning"
               && app.getAttribute("data-test-connection-state") === "CONNECTED";
  return idle && window.__posenc_last >= t0 && performance.now() - window.__posenc_last > quiet;
}
"""


def _settle(page, t0: float) -> float:
    """Milliseconds from ``t0`` (page clock) to the last change, once everything is quiet."""
    page.wait_for_function(SETTLED, arg=[t0, QUIET_MS], timeout=TIMEOUT_MS, polling=50)
    return page.evaluate("() => window.__posenc_last") - t0


def first_paint(page, url: str) -> float:
    """Seconds from navigation start to the settled first render of ``url`` (a new session).

    The page clock (performance.now) starts at navigation, so the last change is the figure."""
    page.goto(url, wait_until="domcontentloaded")
    page.evaluate(WATCHER)
    page.wait_for_function(SETTLED, arg=[0, QUIET_MS], timeout=TIMEOUT_MS, polling=50)
    return page.evaluate("() => window.__posenc_last") / 1000


def controls(page, inside: bool = False, kinds: dict | None = None) -> list[tuple[str, str, int]]:
    """(kind, label, index within its kind) of every visible control on the page that one step can move: the widgets,
    the in-chart buttons and the expanders (``EXPANDER``; opening a box that computes only while open is a step that
    reruns its section).  ``inside``: only the controls within an expander (found once the expanders are open);
    ``kinds``: only these of SELECTORS (``WIDGETS``: every kind but the expanders)."""
    found = []
    for kind, sel in (SELECTORS if kinds is None else kinds).items():
        boxes = page.locator(f"[data-testid='stMain'] {sel}")
        for i in range(boxes.count()):
            box = boxes.nth(i)
            if not box.is_visible() or (inside and (kind == "expander" or box.evaluate(HOME) is None)):
                continue
            name = {"in-chart": ".vega-bind-name", "expander": SUMMARY}.get(kind, "label")
            label = (box.locator(name).first.inner_text() if box.locator(name).count() else kind).strip()[:60]
            found.append((kind, label or kind, i))
    return found


IN_CHART = "form.vega-bindings .vega-bind"  # a chart parameter's buttons (posenc.charts.base.url_param)
EXPANDER = "[data-testid='stExpander']"
# An expander's step is filed as "expander: <label>".  It is reported (each page's ``worst_box_open_s``, the run's
# ``worst_box_open_s``) but not judged against the step goals: the box's own opening transition keeps the page changing
# for about half a second with nothing computed (a plain expander, content sent with the page: 0.51-0.57 s, opening or
# closing, 2026-12-06), so a goal of 0.5 s could not tell a box that computes from one that does not.  What a box
# holds is timed and judged like every other control.
BOX = "expander: "
SUMMARY = "summary [data-testid='stMarkdownContainer']"  # an expander's label (its summary also holds the icon's name)
# the label of the expander a control sits in (null: none)
HOME = f"e => {{ const x = e.parentElement.closest(\"{EXPANDER}\"); return x ? x.querySelector(\"{SUMMARY}\").innerText.trim() : null; }}"
WIDGETS = {"slider": "[data-testid='stSlider']", "select": "[data-testid='stSelectbox']",
           "segmented": "[data-testid='stButtonGroup']", "radio": "[data-testid='stRadio']",
           "toggle": "[data-testid='stCheckbox']", "number": "[data-testid='stNumberInput']", "in-chart": IN_CHART}
SELECTORS = {**WIDGETS, "expander": EXPANDER}  # the expanders last: their steps leave them open, what they hold is timed after


def judged(steps: list[dict]) -> tuple[list[dict], list[dict]]:
    """A page's rows (``control_steps``) split into those the goals judge -- every control that took a step, its
    expanders left out -- and its expanders that took a new step (an opening), reported apart (see BOX)."""
    timed = [s for s in steps if s["median_s"] is not None and not s["control"].startswith(BOX)]
    return timed, [s for s in steps if s["control"].startswith(BOX) and s.get("new_s") is not None]


def _where(page, kind: str, label: str, i: int) -> tuple:
    """A control told apart from one of the same kind and label in another place: (kind, label, its expander's label)."""
    try:
        return kind, label, page.locator(f"[data-testid='stMain'] {SELECTORS[kind]}").nth(i).evaluate(HOME, timeout=5_000)
    except Exception:  # noqa: BLE001 -- gone since the scan (a rerun redrew the page): told apart by kind and label only
        return kind, label, None


SYNC_MS = 900  # an in-chart choice tells the server this long after the hand stops (posenc.ui.assets.CLIENT_PARAMS)

_FORWARD: dict = {}  # (page, kind, index) -> the key its last forward step pressed


_ENDS = """e => {
  const v = Number(e.value ?? e.getAttribute('aria-valuenow'));
  return [v >= Number(e.max ?? e.getAttribute('aria-valuemax')), v <= Number(e.min ?? e.getAttribute('aria-valuemin'))];
}"""


def _arrow(page, thumb, which: tuple, back: bool) -> None:
    """One arrow key on a slider's thumb: forward in the direction of the last forward step (right at first), turning
    only at an end, so that a run of forward steps keeps reaching values not visited; ``back`` the other way."""
    where = (page.url.split("?")[0], *which)
    if back:
        key = "ArrowRight" if _FORWARD.get(where) == "ArrowLeft" else "ArrowLeft"
    else:
        at_max, at_min = thumb.evaluate(_ENDS)
        key = _FORWARD.get(where, "ArrowRight")
        if (key == "ArrowRight" and at_max) or (key == "ArrowLeft" and at_min):
            key = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"
        _FORWARD[where] = key
    thumb.focus()
    thumb.press(key)


_ORIGIN: dict = {}  # (page, kind, index) -> the option a choice's last forward step moved away from


_PICKED: dict = {}  # (page, kind, index) -> every option a choice has shown or been given in this server process
_SEEN: dict = {}  # (page, kind, index) -> every value (``value_of``) the control has shown in this server process


def _choose(page, which: tuple, now, options: list, back: bool, fresh: bool = False):
    """The option one step of a choice picks: forward, the first option other than ``now`` (remembering ``now``) --
    with ``fresh``, the first one not picked before in this server process if there is one; ``back``, the option the
    last forward step left -- so a choice of three or more options returns to a value seen before, as a slider's step
    back does (forward, back, forward: one new value, then two seen).  None: nothing to pick."""
    where = (page.url.split("?")[0], *which)
    picked = _PICKED.setdefault(where, set())
    picked.add(str(now))
    if back and _ORIGIN.get(where) in options and _ORIGIN[where] != now:
        return _ORIGIN[where]
    others = [o for o in options if o != now]
    if not others:
        return None
    _ORIGIN[where] = now
    unpicked = [o for o in others if str(o) not in picked] if fresh else []
    target = (unpicked or others)[0]
    picked.add(str(target))
    return target


def value_of(page, kind: str, i: int) -> str | None:
    """The value control i of ``kind`` shows now, as text (None if it cannot be read): what files a step as new or seen."""
    box = page.locator(f"[data-testid='stMain'] {SELECTORS[kind]}").nth(i)
    try:
        if kind == "slider":
            thumb = box.locator("input[type='range'], [role='slider']").first
            return thumb.evaluate("e => String(e.getAttribute('aria-valuetext') ?? e.getAttribute('aria-valuenow') ?? e.value)")
        if kind == "select":  # the chosen option: the combobox input's value where it has one, else the box's text
            field = box.locator("input, [role='combobox']").first
            shown = field.evaluate("e => e.value || e.getAttribute('aria-label') || ''") if field.count() else ""
            return f"{shown}|{box.inner_text().strip()}"
        if kind == "segmented":
            items = box.locator("[role='radiogroup'] button[role='radio']")
            return str([items.nth(j).get_attribute("aria-checked") for j in range(items.count())])
        if kind == "radio":
            items = box.locator("[role='radiogroup'] input")
            return str([items.nth(j).is_checked() for j in range(items.count())])
        if kind == "toggle":
            return str(box.locator("input").first.is_checked())
        if kind == "number":
            return box.locator("input").first.input_value()
        if kind == "expander":
            return box.locator("details").first.evaluate("e => e.open ? 'open' : 'closed'")
        inputs = box.locator("input[type='radio']")
        if inputs.count():
            return str([inputs.nth(j).is_checked() for j in range(inputs.count())])
        return box.locator("input, select").first.input_value()
    except Exception:  # noqa: BLE001 -- an unreadable control: its tries are filed by position (see control_steps)
        return None


def _choose_nth(page, which: tuple, items, is_on: Callable, back: bool, fresh: bool = False) -> int | None:
    """``_choose`` among a locator's items (radio buttons, segmented buttons) by index; ``is_on`` tells the chosen one."""
    ids = list(range(items.count()))
    return _choose(page, which, next((j for j in ids if is_on(items.nth(j))), None), ids, back, fresh)


def _step(page, kind: str, i: int, back: bool = False, fresh: bool = False) -> bool:
    """Move control i of ``kind`` by one step (``back``: a slider or number one step the other way, a choice back
    to the option it came from; either way a value seen before; ``fresh``: a choice picks an option it has not picked
    yet where it can); False if it cannot move."""
    box = page.locator(f"[data-testid='stMain'] {SELECTORS[kind]}").nth(i)
    box.scroll_into_view_if_needed()
    if kind == "slider":
        _arrow(page, box.locator("input[type='range'], [role='slider']").first, (kind, i), back)
    elif kind == "select":
        box.locator("input, [role='combobox']").first.click()
        options = page.locator("[role='option']")
        options.first.wait_for(timeout=5000)
        texts = [options.nth(j).inner_text() for j in range(options.count())]
        now = next((texts[j] for j in range(len(texts)) if options.nth(j).get_attribute("aria-selected") == "true"), None)
        target = _choose(page, (kind, i), now, texts, back, fresh)
        if target is None:
            page.keyboard.press("Escape")
            return False
        options.nth(texts.index(target)).click()
    elif kind == "segmented":  # the option buttons (not the widget's label or its help icon)
        items = box.locator("[role='radiogroup'] button[role='radio']")
        target = _choose_nth(page, (kind, i), items, lambda e: e.get_attribute("aria-checked") == "true", back, fresh)
        if target is None:
            return False
        items.nth(target).click()
    elif kind == "radio":  # the options of the radio group (not the widget's label)
        items = box.locator("[role='radiogroup'] label")
        target = _choose_nth(page, (kind, i), items, lambda e: e.locator("input").first.is_checked(), back, fresh)
        if target is None:
            return False
        items.nth(target).click()
    elif kind == "in-chart":  # radio buttons, a slider (input range: one arrow key, like a slider) or a select
        radios, rng, sel = box.locator("input[type='radio']"), box.locator("input[type='range']"), box.locator("select")
        if radios.count():
            target = _choose_nth(page, (kind, i), radios, lambda e: e.is_checked(), back, fresh)
            if target is None:
                return False
            radios.nth(target).check()
        elif rng.count():
            _arrow(page, rng.first, (kind, i), back)
        elif sel.count():
            values = sel.first.evaluate("e => [...e.options].map(o => o.value)")
            target = _choose(page, (kind, i), sel.first.input_value(), values, back, fresh)
            if target is None:
                return False
            sel.first.select_option(target)
        else:
            return False
    elif kind in ("toggle", "expander"):  # a toggle's switch; an expander's summary opens or closes it
        box.locator("summary" if kind == "expander" else "label").first.click()
    else:  # forward up (down once the top is reached, and on), back the other way
        where = (page.url.split("?")[0], kind, i)
        ids = {"up": "[data-testid='stNumberInputStepUp']", "down": "[data-testid='stNumberInputStepDown']"}
        if not box.locator("input").first.input_value().strip():
            return _type_number(box, where, back)
        way = _FORWARD.get(where, "up")
        if back:
            way = "down" if way == "up" else "up"
        else:
            there = box.locator(ids[way])
            if not there.count() or there.first.is_disabled():
                way = "down" if way == "up" else "up"
            _FORWARD[where] = way
        button = box.locator(ids[way])
        if not button.count() or button.first.is_disabled():
            return False
        button.first.click()
    return True


_TYPED: dict = {}  # (page, kind, index) -> the numbers typed into a number input while it was empty, in order


def _type_number(box, where: tuple, back: bool) -> bool:
    """One step of a number input that is empty (an exercise's "Your prediction": its step buttons do nothing until it
    holds a number), as a person takes it: type the next whole number not typed into it yet (1, 2, ...) and press
    Enter, the key the step is timed from.  Once it holds a number its step buttons take the steps, back ones too;
    False for a step back while it is empty (no value of its own to return to)."""
    if back:
        return False
    typed = _TYPED.setdefault(where, [])
    value = len(typed) + 1
    typed.append(value)
    field = box.locator("input").first
    field.fill(str(value))
    field.press("Enter")
    return True


LEADS: list[float] = []  # seconds from the driver's start of each step to the input itself (what the figures leave out)
# The servers this run starts log each script run (posenc.ui.runclock); a step's share of it is what the server spent.
RUN_LOG = Path(tempfile.gettempdir()) / f"posenc-bench-runs-{os.getpid()}.log"
SERVER: list[float | None] = []  # per timed step: seconds of the server's runs it caused (None for an in-chart step)


def server_seconds(log: Path, offset: int) -> tuple[float, int]:
    """The wall seconds of the runs ``log`` holds after byte ``offset``, summed (a step may cause two runs: a page's
    ``st.rerun``), and the offset after the last whole line."""
    runs, end = read_runs(log, offset)
    return sum(wall for _, _, wall, _ in runs), end


@contextmanager
def _servers_log_runs() -> Iterator[None]:
    """A fresh RUN_LOG for the servers started inside with ``env=LOG_RUNS`` (posenc.ui.runclock); it goes afterwards."""
    RUN_LOG.unlink(missing_ok=True)
    try:
        yield
    finally:
        RUN_LOG.unlink(missing_ok=True)


LOG_RUNS = {RUN_LOG_ENV: str(RUN_LOG)}  # start_server(env=...): that server logs its runs to RUN_LOG


def step_time(page, kind: str, i: int, back: bool = False, fresh: bool = False) -> float | None:
    """Seconds from the input of one step of control i (the key or pointer press, in the page's clock) to the
    settled repaint (None if it cannot move).  The driver's own time before the press -- finding the control,
    scrolling it into view, opening a select -- is kept in ``LEADS``, not in the figure."""
    page.evaluate(WATCHER)
    wait_for_app(page, timeout_ms=TIMEOUT_MS)
    logged = RUN_LOG.stat().st_size if RUN_LOG.exists() else 0
    t0 = page.evaluate("() => { window.__posenc_input = null; return performance.now(); }")
    if not _step(page, kind, i, back, fresh):
        return None
    if kind == "in-chart":  # repainted in the browser: the last change before the page tells the server
        page.wait_for_timeout(SYNC_MS - 100 - (page.evaluate("() => performance.now()") - t0))
        last = page.evaluate("() => window.__posenc_last")
        _settle(page, t0)  # then let the server's rerun finish before the next control
    else:
        last = _settle(page, t0) + t0
    pressed = page.evaluate("() => window.__posenc_input")
    start = t0 if pressed is None else pressed
    LEADS.append((start - t0) / 1000)
    SERVER.append(None if kind == "in-chart" else round(server_seconds(RUN_LOG, logged)[0], 4))  # in-chart: after the step
    return max(last - start, 0.0) / 1000


def cold_start(browser) -> tuple[float, float]:
    """One cold start: a new server (imports, first run and all) and a new tab with an empty HTTP cache, opened
    while the browser is running and idle (``idle_tab``).  Returns (seconds from launching the server to the first
    painted landing page, seconds of that first paint)."""
    page = idle_tab(browser)  # the cold figure is the server's start and the first paint, not the browser's start
    t0 = time.perf_counter()
    proc, base, _ = start_server()
    try:
        t_nav = time.perf_counter()
        paint = first_paint(page, base + "/")
        return (t_nav - t0) + paint, paint
    finally:
        stop_server(proc)
        page.close()


FLOOR_APP = Path(__file__).with_name("floor_app.py")


def floor(browser, repeats: int = 6) -> dict:
    """First paint and slider step of ``bench/floor_app.py`` (one slider, one metric, one 500-point line chart),
    on its own server, timed exactly like a page: Streamlit's own cost here for a step that redraws one chart."""
    proc, base, _ = start_server(app=FLOOR_APP, extra_args=runner_flags())  # the dashboard's [runner] settings
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        first_paint(page, base + "/")  # warm
        paints = [first_paint(page, base + "/") for _ in range(3)]
        tries = [step_time(page, "slider", 0, back=bool(r % 2)) for r in range(repeats)]
        page.close()
    finally:
        stop_server(proc)
    return {"first_paint_s": statistics.median(paints), "step_s": statistics.median(tries), "tries": tries}


NEW_STEPS = 3  # steps onward to values a control has not shown in this server process (what a hand does)
REPEATS = 1  # then a step back to a value it has shown (a cache hit): 4 steps a control keep a run near 10 minutes


def control_steps(page, kind: str, label: str, i: int, new_steps: int = NEW_STEPS, repeats: int = REPEATS) -> dict:
    """A run of up to ``new_steps`` steps of control i onward to values it has not shown (stopping early when a step
    can reach none: a toggle has one), then ``repeats`` steps back and forth; each try filed by the value it reached
    (``value_of``; unreadable: by its phase) as new or seen.  Returns the control's row of the report."""
    where = (page.url.split("?")[0], kind, i)
    seen = _SEEN.setdefault(where, set())
    now = value_of(page, kind, i)
    if now is not None:
        seen.add(now)
    new, old, order, servers, new_server = [], [], [], [], []
    plan = [(False, True)] * new_steps + [(r % 2 == 0, False) for r in range(repeats)]  # onward; then back, on, back
    phase_new = True
    for back, fresh in plan:
        if fresh and not phase_new:
            continue
        try:
            t = step_time(page, kind, i, back=back, fresh=fresh)
        except Exception as exc:  # noqa: BLE001 -- a control that cannot be driven is reported, not fatal
            return {"control": f"{kind}: {label}", "median_s": None, "error": f"error: {type(exc).__name__}"}
        if t is None:
            break
        value = value_of(page, kind, i)
        is_new = fresh if value is None else value not in seen
        if value is not None:
            seen.add(value)
        (new if is_new else old).append(t)
        order.append(("new" if is_new else "seen", t))
        servers.append(SERVER[-1])
        if is_new and SERVER[-1] is not None:
            new_server.append(SERVER[-1])
        if fresh and not is_new:
            phase_new = False  # nothing new left to reach: on to the repeats
    tries = [t for _, t in order]
    if not tries:
        return {"control": f"{kind}: {label}", "median_s": None, "error": "cannot move"}
    return {"control": f"{kind}: {label}", "median_s": statistics.median(tries), "tries": tries, "order": order,
            "first_s": tries[0], "new_s": statistics.median(new) if new else None, "new_tries": new,
            "repeat_s": statistics.median(old) if old else None, "repeat_tries": old,
            "server_tries": servers, "new_server_s": statistics.median(new_server) if new_server else None}


def _wanted(info, pages: list[str] | None) -> bool:
    """Whether a page is timed: every page without ``pages``; else a page whose file, url path or title contains one
    of them (case-insensitive): ``--interact-pages rope,context`` times RoPE and Context extension."""
    if not pages:
        return True
    names = (info.path.lower(), info.url_path.lower(), info.title.lower())
    return any(w.strip().lower() in n for w in pages if w.strip() for n in names)


def _median(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def interact(repeats: int = 3, pages: list[str] | None = None, cold: bool = True, new_steps: int = NEW_STEPS,
             step_repeats: int = REPEATS, max_wait_s: float = MAX_WAIT_S) -> dict:
    """First paint and every control's steps per page -- a run of new values, then repeats (``control_steps``) --,
    the worst control per page on new values, and a cold server's first painted page (the median of ``repeats`` new
    servers, each try kept in ``cold_tries``).  ``pages`` limits the pages timed (``_wanted``); before each page and
    the floor the run waits up to ``max_wait_s`` for the host to calm (``wait_for_idle``).  On a CPU whose idle reading
    is above its bound (an "AMD EPYC" of 2026-12-06: 0.12-0.23 s against 0.095 s) every wait runs its whole length,
    1,260 s of a 2,000 s run; the verdict reads the probe either way."""
    if chromium_path() is None:
        return {"skipped": "no Chromium on this machine"}
    out: dict = {"repeats": repeats, "new_steps": new_steps, "step_repeats": step_repeats, "poll_ms": POLL_MS,
                 "quiet_ms": QUIET_MS, "max_wait_s": max_wait_s, "pages": [],
                 # the servers inherit this process's environment: POSENC_AHEAD=0 times every step without the values
                 # computed ahead (posenc/ui/ahead.py), as a hand would find them with the feature off
                 "ahead": os.environ.get("POSENC_AHEAD", "1").strip() != "0"}
    if pages:
        out["only_pages"] = list(pages)
    # the host as the run found it: one core's speed before and after, and the CPU time other guests took meanwhile
    probe0, steal0, t0 = cpu_probe(), stolen_seconds(), time.perf_counter()
    cpu, ident = cpu_model(), cpu_identity()
    bound = idle_bound(cpu, ident)  # this CPU's idle reading (bench.timing.IDLE_BOUNDS): a slower core is not a busy host
    probes = [probe0]  # and one before each page: a host that turns busy during the run shows where
    waits: list[float] = []  # seconds the run waited for the host to calm (before each page, the floor)
    _SEEN.clear(), _PICKED.clear(), _FORWARD.clear(), _ORIGIN.clear(), _TYPED.clear()  # a new server: nothing shown yet
    with _servers_log_runs(), sync_playwright() as p:
        browser = launch_chromium(p)
        if cold:  # like every other figure, the median of ``repeats`` tries: here each a new server and a new tab
            tries = [cold_start(browser) for _ in range(repeats)]
            out["cold_tries"] = [{"server_to_first_paint_s": total, "first_paint_s": paint} for total, paint in tries]
            total, paint = sorted(tries)[len(tries) // 2]
            out["cold_first_paint_s"] = paint
            out["cold_server_to_first_paint_s"] = total
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        proc, base, _ = start_server(env=LOG_RUNS)
        try:
            for info in PAGES:
                if not _wanted(info, pages):
                    continue
                url = f"{base}/{address(info)}"  # the landing page at "/"
                reading, waited = wait_for_idle(max_wait_s, bound=bound)  # a burst of other guests is waited out (at most max_wait_s), not timed
                probes.append(reading)
                waits.append(waited)
                t_page = time.perf_counter()
                first_paint(page, url)  # the page's first run at its defaults on this server (its caches)
                paints = [first_paint(page, url) for _ in range(repeats)]
                steps, leads = [], len(LEADS)
                found = controls(page)
                if not found:  # a page still settling its layout: look once more before calling it control-free
                    wait_for_app(page, timeout_ms=TIMEOUT_MS)
                    page.wait_for_timeout(1000)
                    found = controls(page)
                before = {_where(page, *c) for c in found}
                for kind, label, i in found:
                    if kind == "expander":  # found again by its label: a step before it may have added one above it
                        i = next((j for _, lbl, j in controls(page, kinds={kind: EXPANDER}) if lbl == label), i)
                    steps.append(control_steps(page, kind, label, i, new_steps, step_repeats))
                    if kind == "expander" and value_of(page, kind, i) == "closed":  # left open, to time what it holds
                        try:
                            _step(page, kind, i)
                            wait_for_app(page, timeout_ms=TIMEOUT_MS)
                        except Exception:  # noqa: BLE001 -- a box that cannot be opened hides its controls: none is timed
                            pass
                inside = [(c, _where(page, *c)) for c in controls(page, inside=True)]  # what the open expanders hold
                for (kind, label, i), where in inside:
                    if where not in before:
                        steps.append(control_steps(page, kind, label, i, new_steps, step_repeats))
                timed, boxes = judged(steps)
                news = [s for s in timed if s.get("new_s") is not None]
                worst_box = max(boxes, key=lambda s: s["new_s"]) if boxes else None
                worst = max(timed, key=lambda s: s["median_s"]) if timed else None
                worst_new = max(news, key=lambda s: s["new_s"]) if news else None
                out["pages"].append({
                    "page": info.title, "path": info.path, "cpu_probe_s": round(probes[-1], 4), "waited_for_idle_s": waited,
                    "first_paint_s": statistics.median(paints),
                    "first_paint_tries": paints,  # the spread: one page's paints differ by up to ~0.3-0.5 s here
                    "controls": len(steps),
                    "median_new_step_s": _median([s["new_s"] for s in news]),
                    "worst_new_step_s": worst_new["new_s"] if worst_new else None,
                    "worst_new_control": worst_new["control"] if worst_new else None,
                    # of a new step, the server's run (posenc.ui.runclock); the rest is the browser's and the wire's
                    "median_new_server_s": _median([s.get("new_server_s") for s in news]),
                    "worst_new_server_s": worst_new.get("new_server_s") if worst_new else None,
                    "new_steps_timed": sum(len(s["new_tries"]) for s in news),
                    "median_repeat_step_s": _median([s.get("repeat_s") for s in timed]),
                    "median_step_s": _median([s["median_s"] for s in timed]),
                    "median_first_step_s": _median([s["first_s"] for s in timed]),
                    "worst_step_s": worst["median_s"] if worst else None,
                    "worst_control": worst["control"] if worst else None,
                    "driver_lead_s": statistics.median(LEADS[leads:]) if LEADS[leads:] else None,
                    # opening a box (its first new step), judged apart from the goals: see BOX
                    "worst_box_open_s": worst_box["new_s"] if worst_box else None,
                    "worst_box": worst_box["control"] if worst_box else None,
                    "worst_box_server_s": worst_box.get("new_server_s") if worst_box else None,
                    "page_wall_s": round(time.perf_counter() - t_page, 1),
                    "steps": steps,
                })
        finally:
            stop_server(proc)
        try:
            reading, waited = wait_for_idle(max_wait_s, bound=bound)  # the floor, too, on a calm host where it can be
            waits.append(waited)
            out["floor"] = {**floor(browser, repeats=2 * repeats), "cpu_probe_s": round(reading, 4), "waited_for_idle_s": waited}
        finally:
            browser.close()
    steal1, wall = stolen_seconds(), time.perf_counter() - t0
    probes.append(cpu_probe())
    steal = None if steal0 is None or steal1 is None else round((steal1 - steal0) / (wall * (os.cpu_count() or 1)), 4)
    busy = busy_pages(out["pages"], probes[-1], bound)
    out["wall_s"] = round(wall, 1)
    out["host"] = {"cpu": cpu, "cpu_identity": ident, "cpu_probe_s": [round(probe0, 4), round(probes[-1], 4)], "steal_fraction": steal,
                   **host_verdict(probes, steal, busy=len(busy), timed=len(out["pages"]), waited_s=sum(waits), wall_s=wall,
                                  bound=bound, cpu=cpu),
                   "busy_pages": busy, "waited_s": round(sum(waits), 1)}
    rows = out["pages"]
    out["median_new_step_over_pages_s"] = _median([r["median_new_step_s"] for r in rows])
    worst_page = max((r for r in rows if r["worst_new_step_s"] is not None), key=lambda r: r["worst_new_step_s"], default=None)
    out["worst_new_step_s"] = worst_page["worst_new_step_s"] if worst_page else None
    out["worst_new_step_at"] = f"{worst_page['page']}: {worst_page['worst_new_control']}" if worst_page else None
    out["worst_first_paint_s"] = max((r["first_paint_s"] for r in rows), default=None)
    opened = max((r for r in rows if r.get("worst_box_open_s") is not None), key=lambda r: r["worst_box_open_s"], default=None)
    out["worst_box_open_s"] = opened["worst_box_open_s"] if opened else None
    out["worst_box_open_at"] = f"{opened['page']}: {opened['worst_box']}" if opened else None
    out["goals"] = {  # judged on new values (issue 42): what a hand on a control mostly reaches
        "first_paint_within_1_5_s": all(r["first_paint_s"] <= 1.5 for r in rows),
        "median_new_step_within_0_25_s": all(r["median_new_step_s"] is None or r["median_new_step_s"] <= 0.25 for r in rows),
        "worst_new_step_within_0_5_s": all(r["worst_new_step_s"] is None or r["worst_new_step_s"] <= 0.5 for r in rows),
        "cold_within_3_s": out.get("cold_server_to_first_paint_s", 0) <= 3.0,
    }
    out["verdict"] = verdict(out["goals"], out["host"])
    return out


def busy_pages(pages: list[dict], last_probe: float, bound: float = IDLE_PROBE_S) -> list[str]:
    """Pages timed while the host was busy: the probe before them (after waiting) or the one after them (the next
    page's, or the run's last) above ``bound`` (the CPU's idle bound), or the run had to wait for the host to calm before them (a host
    busy enough to wait for is busy around the page too).  Their figures say more about the host than about the page."""
    after = [p["cpu_probe_s"] for p in pages[1:]] + [last_probe]
    return [p["page"] for p, a in zip(pages, after)
            if max(p["cpu_probe_s"], a) > bound or p.get("waited_for_idle_s", 0) > 0]


def verdict(goals: dict, host: dict) -> str:
    """The run in one line: which goals it met, and whether its host was the nearly idle one they are stated for."""
    missed = [name for name, ok in goals.items() if not ok]
    said = f"all {len(goals)} goals met" if not missed else "missed " + ", ".join(missed)
    if host.get("nearly_idle"):
        busy, cpu = host.get("busy_pages") or [], host.get("cpu")
        return (f"{said}, on a nearly idle host" + (f" ({cpu})" if cpu else "")
                + (f" (busy while timing: {', '.join(busy)})" if busy else ""))
    return f"{said}, on a busy host ({host.get('why_not')}): not a test of goals stated for a nearly idle one"
