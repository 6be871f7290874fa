"""Figures that move, played in the browser: a small self-contained HTML/JS figure (no CDN, no
network) in an ``st.iframe``, with a play button, a scrub slider and a speed choice.

The frames come from ``posenc.views.motion`` (every number computed by posenc, sent once);
the script only steps through them and draws them on a canvas at the display's refresh rate
(requestAnimationFrame), so scrubbing and playing never wait for the server.  While it plays,
the figure measures its own frame rate (``window.posencMotion.fps`` over the last second and
``mean_fps`` since play was pressed; ``python -m bench --only motion`` reads them).  Colours
follow the app's light or dark theme (read from the page, checked every second).
"""

from __future__ import annotations

import json

import streamlit as st

HEIGHTS = {"clock": 270, "circle": 320, "sweep": 330, "spin": 320}  # canvas height, px
CONTROLS = 46  # px under the canvas: the button, the slider, the readout

_SCRIPT = r"""
const F = __DATA__;
const cv = document.getElementById("c"), ctx = cv.getContext("2d");
const btn = document.getElementById("play"), scrub = document.getElementById("scrub");
const speed = document.getElementById("speed"), read = document.getElementById("read");
const OI = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9"];
const N = F.kind === "sweep" ? F.rows.length : F.kind === "spin" ? F.s.length : F.t.length;
const RATE = {clock: 24, circle: 24, sweep: 8, spin: 30}[F.kind];  // frames of data per second at x1
scrub.max = N - 1;
let pos = 0, playing = false, last = null, draws = [], C = colours();
window.posencMotion = {fps: 0, mean_fps: 0, draws: 0, playing: false, frames: N};
let started = null, startDraws = 0;

function colours() {
  let dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  try {
    const app = window.parent.document.querySelector("[data-testid='stApp']") || window.parent.document.body;
    const m = getComputedStyle(app).backgroundColor.match(/\d+(\.\d+)?/g);
    if (m) dark = (0.299 * m[0] + 0.587 * m[1] + 0.114 * m[2]) < 128;
  } catch (e) { /* not same-origin: keep the media query */ }
  return dark ? {fg: "#FAFAFA", mute: "#9A9A9A", grid: "#3A3F4B", ring: "#6B6F7A"}
              : {fg: "#31333F", mute: "#6B6B6B", grid: "#E2E2E2", ring: "#BBBBBB"};
}
function retheme() {
  C = colours();
  document.body.style.color = C.fg;
  for (const el of [btn, speed]) { el.style.color = C.fg; el.style.borderColor = C.mute; }
  draw();
}
setInterval(retheme, 1000);

function size() {
  const r = window.devicePixelRatio || 1, w = cv.clientWidth, h = cv.clientHeight;
  if (cv.width !== Math.round(w * r) || cv.height !== Math.round(h * r)) { cv.width = Math.round(w * r); cv.height = Math.round(h * r); }
  ctx.setTransform(r, 0, 0, r, 0, 0);
  return [w, h];
}
function text(s, x, y, align, color, px) {
  ctx.fillStyle = color || C.fg; ctx.font = (px || 13) + "px sans-serif"; ctx.textAlign = align || "left"; ctx.fillText(s, x, y);
}
function dot(x, y, r, color) { ctx.fillStyle = color; ctx.beginPath(); ctx.arc(x, y, r, 0, 2 * Math.PI); ctx.fill(); }
function ring(cx, cy, R) { ctx.strokeStyle = C.ring; ctx.lineWidth = 1.5; ctx.beginPath(); ctx.arc(cx, cy, R, 0, 2 * Math.PI); ctx.stroke(); }
function arrow(cx, cy, x, y, color) {
  ctx.strokeStyle = color; ctx.fillStyle = color; ctx.lineWidth = 3;
  ctx.beginPath(); ctx.moveTo(cx, cy); ctx.lineTo(x, y); ctx.stroke();
  const a = Math.atan2(y - cy, x - cx);
  ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x - 10 * Math.cos(a - 0.4), y - 10 * Math.sin(a - 0.4));
  ctx.lineTo(x - 10 * Math.cos(a + 0.4), y - 10 * Math.sin(a + 0.4)); ctx.closePath(); ctx.fill();
}
function fmt(v, d) { return Number(v).toFixed(d); }

function drawClock(i, w, h) {
  const R = Math.min(h / 2 - 18, w * 0.2), cx = R + 14, cy = h / 2;
  ring(cx, cy, R);
  const hx = cx + R * F.x[i], hy = cy - R * F.y[i];
  arrow(cx, cy, hx, hy, OI[0]);
  const left = cx + R + 40, right = w - 10, top = cy - R, bot = cy + R;
  const X = t => left + (right - left) * t / Math.max(F.positions.length - 1, 1), Y = v => cy - R * v;
  ctx.strokeStyle = C.grid; ctx.lineWidth = 1; ctx.beginPath(); ctx.moveTo(left, cy); ctx.lineTo(right, cy); ctx.stroke();
  ctx.setLineDash([4, 4]); ctx.strokeStyle = C.mute;
  ctx.beginPath(); ctx.moveTo(hx, hy); ctx.lineTo(X(F.t[i]), hy); ctx.stroke(); ctx.setLineDash([]);
  ctx.strokeStyle = C.ring; ctx.lineWidth = 1.5; ctx.beginPath();
  for (let k = 0; k <= i; k++) { const px = X(F.t[k]), py = Y(F.y[k]); k ? ctx.lineTo(px, py) : ctx.moveTo(px, py); }
  ctx.stroke();
  for (let p = 0; p <= F.t[i] + 1e-9 && p < F.positions.length; p++) dot(X(p), Y(F.values[p]), 3.5, OI[0]);
  dot(X(F.t[i]), hy, 5.5, OI[3]);
  text("position t", (left + right) / 2, h - 4, "center", C.mute, 12);
  text("0", left, cy + R + 16, "center", C.mute, 12); text(String(F.positions.length - 1), right, cy + R + 16, "right", C.mute, 12);
  text("+1", left - 6, top + 4, "right", C.mute, 12); text("−1", left - 6, bot + 4, "right", C.mute, 12);
  read.textContent = "t = " + fmt(F.t[i], 3) + "  ·  reading sin(ωt) = " + fmt(F.y[i], 4);
}
function drawCircle(i, w, h) {
  const R = Math.min(w, h) / 2 - 24, cx = w / 2, cy = h / 2;
  ring(cx, cy, R);
  for (let p = 0; p <= F.t[i] + 1e-9 && p < F.px.length; p++) dot(cx + R * F.px[p], cy - R * F.py[p], 4.5, OI[F.turn[p] % OI.length]);
  const x = cx + R * F.x[i], y = cy - R * F.y[i];
  ctx.strokeStyle = C.mute; ctx.lineWidth = 1; ctx.beginPath(); ctx.moveTo(cx, cy); ctx.lineTo(x, y); ctx.stroke();
  dot(x, y, 7, OI[3]);
  read.textContent = "t = " + fmt(F.t[i], 3) + "  ·  turn " + fmt(F.turn_at[i], 2) + "  ·  colour = which turn a dot is on";
}
let heat = null;
function drawSweep(i, w, h) {
  const r = F.rows.length, c = F.cols.length, mapH = h - 70;
  if (!heat) {
    heat = document.createElement("canvas"); heat.width = c; heat.height = r;
    const g = heat.getContext("2d"), img = g.createImageData(c, r);
    for (let a = 0; a < r; a++) for (let b = 0; b < c; b++) {
      const v = Math.max(-1, Math.min(1, F.values[a][b])), k = 4 * (a * c + b);
      const t = (v + 1) / 2;  // red (-1) .. white (0) .. blue (+1)
      const col = t < 0.5 ? [178 + (255 - 178) * (t / 0.5), 24 + (255 - 24) * (t / 0.5), 43 + (255 - 43) * (t / 0.5)]
                          : [255 - (255 - 33) * ((t - 0.5) / 0.5), 255 - (255 - 102) * ((t - 0.5) / 0.5), 255 - (255 - 172) * ((t - 0.5) / 0.5)];
      img.data[k] = col[0]; img.data[k + 1] = col[1]; img.data[k + 2] = col[2]; img.data[k + 3] = 255;
    }
    g.putImageData(img, 0, 0);
  }
  ctx.imageSmoothingEnabled = false; ctx.drawImage(heat, 0, 0, w, mapH);
  const y = mapH * i / r;
  ctx.strokeStyle = C.fg; ctx.lineWidth = 2; ctx.strokeRect(1, y, w - 2, Math.max(mapH / r, 2));
  const top = mapH + 8, mid = top + 28, bw = w / c;
  for (let b = 0; b < c; b++) {
    const v = F.values[i][b];
    ctx.fillStyle = v >= 0 ? OI[0] : OI[3];
    ctx.fillRect(b * bw, mid - 26 * Math.max(v, 0), Math.max(bw - 0.5, 0.5), 26 * Math.abs(v));
  }
  read.textContent = "position p = " + F.rows[i] + "  ·  bars: PE(p), one per column (blue > 0, vermillion < 0)";
}
function drawSpin(i, w, h) {
  const R = Math.min(h / 2 - 24, w / 2 - 84), cx = w / 2, cy = h / 2, s = R / F.radius;  // 84 px: a label beside a tip (390 px)
  ring(cx, cy, R);
  arrow(cx, cy, cx + s * F.qx[i], cy - s * F.qy[i], OI[0]);
  arrow(cx, cy, cx + s * F.kx[i], cy - s * F.ky[i], OI[1]);
  const label = (t, x, y, c) => {  // beyond the arrow's tip, aligned away from the centre
    const r = Math.hypot(x, y) || 1, ux = x / r, uy = y / r;
    text(t, cx + s * x + 14 * ux, cy - s * y - 14 * uy + 4, ux > 0.3 ? "left" : ux < -0.3 ? "right" : "center", c, 13);
  };
  label("q at m + s", F.qx[i], F.qy[i], OI[0]);
  label("k at n + s", F.kx[i], F.ky[i], OI[1]);
  read.textContent = "s = " + fmt(F.s[i], 2) + "  ·  score ⟨R(m+s) q, R(n+s) k⟩ = " + F.score[i];
}
function draw() {
  const i = Math.min(N - 1, Math.floor(pos)), [w, h] = size();
  ctx.clearRect(0, 0, w, h);
  ({clock: drawClock, circle: drawCircle, sweep: drawSweep, spin: drawSpin})[F.kind](i, w, h);
  scrub.value = i;
}
function tick(now) {
  if (!playing) return;
  if (last !== null) pos = (pos + (now - last) / 1000 * RATE * Number(speed.value)) % N;
  last = now; draw();
  draws.push(now); while (draws.length && now - draws[0] > 1000) draws.shift();
  window.posencMotion.fps = draws.length > 1 ? 1000 * (draws.length - 1) / (draws[draws.length - 1] - draws[0]) : 0;
  window.posencMotion.draws += 1;
  if (started === null) { started = now; startDraws = window.posencMotion.draws; }
  else if (now > started) window.posencMotion.mean_fps = 1000 * (window.posencMotion.draws - startDraws) / (now - started);
  requestAnimationFrame(tick);
}
btn.onclick = () => {
  playing = !playing; window.posencMotion.playing = playing; last = null; draws = []; started = null;
  btn.textContent = playing ? "❚❚ Pause" : "▶ Play";
  if (playing) requestAnimationFrame(tick);
};
scrub.oninput = () => { pos = Number(scrub.value); draw(); };
window.onresize = draw;
retheme();
"""

_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
html, body {{ margin: 0; padding: 0; background: transparent; font: 14px "Source Sans Pro", sans-serif; }}
canvas {{ width: 100%; height: {h}px; display: block; }}
.bar {{ display: flex; align-items: center; gap: 8px; flex-wrap: wrap; margin-top: 6px; }}
button, select {{ background: transparent; border: 1px solid; border-radius: 6px; padding: 3px 10px; font: inherit; cursor: pointer; }}
input[type=range] {{ flex: 1; min-width: 120px; }}
#read {{ font-variant-numeric: tabular-nums; overflow-wrap: anywhere; max-width: 100%; min-height: 2.6em; }}
</style></head><body>
<canvas id="c" role="img" aria-label="{label}"></canvas>
<div class="bar"><button id="play">▶ Play</button>
<input id="scrub" type="range" min="0" value="0" step="1" aria-label="scrub through the frames">
<select id="speed" aria-label="speed"><option value="0.5">×½</option><option value="1" selected>×1</option>
<option value="2">×2</option><option value="4">×4</option></select></div>
<div id="read"></div>
<script>{script}</script></body></html>"""


def figure_html(fig: dict, label: str) -> str:
    """The self-contained page of one moving figure (``fig`` from posenc.views.motion)."""
    h = HEIGHTS[fig["kind"]]
    data = json.dumps(fig, separators=(",", ":"), allow_nan=False)
    return _PAGE.format(h=h, label=label.replace('"', "'"), script=_SCRIPT.replace("__DATA__", data))


def play(fig: dict, *, label: str, caption: str | None = None) -> None:
    """Draw a moving figure: scrub it with the slider, or press play (all in the browser)."""
    st.iframe(figure_html(fig, label), height=HEIGHTS[fig["kind"]] + CONTROLS + 22)
    if caption:
        st.caption(caption)
