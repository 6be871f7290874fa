"""The sinusoid as a clock, at the article's setting (d = 512, base 10000): the wavelengths said in words and numbers,
and a mixed-radix clock whose hands are three of the sinusoid's (sin, cos) channel pairs at one position."""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_float, check_int
from posenc.schemes.sinusoidal import sinusoid_frequencies, sinusoidal

ARTICLE_D = 512  # "With an embedding size of 512" (What are Positional Embeddings?)
ARTICLE_BASE = 10000.0
MAX_POSITION = 100_000
HAND_NAMES = ("seconds (fast)", "minutes (middle)", "hours (slowest)")
HAND_LENGTHS = (0.95, 0.75, 0.5)  # like a clock: the fast hand is the longest


class ClockView(TypedDict):
    frame: pd.DataFrame  # hand, pair, columns, wavelength, angle_deg, turns, sin, cos, x, y, length
    dial: pd.DataFrame  # x, y, order: the unit circle
    words: str  # the wavelengths in words, with the numbers
    caption: str
    wavelengths: dict  # {"early", "middle", "last"}: the three pairs' wavelengths in positions


def hand_pairs(d: int) -> tuple[int, int, int]:
    """The pairs the clock draws: the first, the middle (pair (h − 1) // 2 of 0 .. h − 1) and the last of h = d/2."""
    h = d // 2
    return 0, (h - 1) // 2, h - 1


def clock_view(position: int, d: int = ARTICLE_D, base: float = ARTICLE_BASE) -> ClockView:
    """Three (sin, cos) pairs of PE(position) as clock hands: hand i points at angle position·ω_i clockwise from
    12 o'clock, so its tip is (PE[2i], PE[2i+1]) (interleaved layout) scaled by the hand's length."""
    p = check_int("position", position, lo=0, hi=MAX_POSITION)
    d = check_int("d", d, lo=6, hi=4096)
    if d % 2:
        raise ValueError(f"d must be even (sin/cos pairs), got {d}")
    base = check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    omega = sinusoid_frequencies(d, base=base)  # (d/2,)
    pe = sinusoidal([p], d, base=base)[0]  # (d,)
    rows = []
    for name, length, i in zip(HAND_NAMES, HAND_LENGTHS, hand_pairs(d)):
        s, c = float(pe[2 * i]), float(pe[2 * i + 1])
        lam = 2 * math.pi / float(omega[i])
        rows.append({"hand": name, "pair": i, "columns": f"{2 * i}, {2 * i + 1}", "wavelength": lam,
                     "angle_deg": math.degrees(math.atan2(s, c)) % 360, "turns": p / lam, "sin": s, "cos": c,
                     "x": length * s, "y": length * c, "length": length})
    frame = pd.DataFrame(rows)
    t = np.linspace(0, 2 * math.pi, 73)
    dial = pd.DataFrame({"x": np.sin(t), "y": np.cos(t), "order": np.arange(t.size)})
    early, middle, last = (float(x) for x in frame["wavelength"])
    mid = int(frame["pair"].iloc[1])
    words = (f"At d = {d} and base {base:g}, the first pair (dimensions 0–1) repeats every **{early:.2f}** positions "
             f"(2π ≈ 6), the middle pair (dimensions {2 * mid}–{2 * mid + 1}) every **{middle:,.0f}**, and the last "
             f"pair (dimensions {d - 2}–{d - 1}) every **{last:,.0f}**: “early dimensions cycle every ~6 positions, middle "
             "ones every few hundred, the last tens of thousands”, computed.")
    fast, slow = frame.iloc[0], frame.iloc[2]
    caption = (f"Position {p:,} as a clock: each hand is one (sin, cos) pair of PE({p:,}), pointing at p·ω_i clockwise from "
               f"12 o'clock. The seconds hand has turned {fast['turns']:,.1f} times, the hours hand {slow['turns']:.4f} of "
               "a turn; reading all hands together (a mixed-radix clock) tells positions apart that one hand confuses.")
    return {"frame": frame, "dial": dial, "words": words, "caption": caption,
            "wavelengths": {"early": early, "middle": middle, "last": last}}
