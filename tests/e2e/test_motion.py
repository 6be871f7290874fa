"""The moving figures play in Debian's Chromium: frames advance with no script run on the server, and the frame
follows the scrub slider.  Frame rates are measured by ``python -m bench --only motion``, not asserted here."""

from __future__ import annotations

import json

import pytest
from browserchecks import load

from tools.liveserver import motion_frame

pytestmark = pytest.mark.e2e
MOTION_PAGES = ("single_sine", "sincos_pair", "sinusoid", "rope")
# (RoPE's spinning pair no longer waits for an exercise: its section-1 exercise asks about rounding, not the shift)


@pytest.mark.parametrize("path", MOTION_PAGES)
def test_moving_figures_play_in_the_browser(path, live_server, tab, artifacts):
    """Press play: frames advance with no script run on the server; scrub: the frame follows the slider."""
    page = tab
    load(page, f"{live_server['url']}/{path}")
    frame = motion_frame(page)
    total = frame.evaluate("() => window.posencMotion.frames")
    frame.locator("#play").click()
    page.wait_for_timeout(1500)
    state = frame.evaluate("() => window.posencMotion")
    assert state["playing"] and state["draws"] > 10, state
    assert page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").count() == 1  # no server round trip
    frame.locator("#play").click()  # pause
    frame.locator("#scrub").fill(str(total // 2))
    assert int(frame.evaluate("() => document.getElementById('scrub').value")) == total // 2
    assert frame.evaluate("() => document.getElementById('read').textContent")
    record = artifacts / "motion.json"
    seen = json.loads(record.read_text()) if record.exists() else {}
    seen[path] = {"fps_while_playing": round(state["fps"], 1), "frames": total}
    record.write_text(json.dumps(seen, indent=2))
