"""Charts as inline SVG text, for report pages that must open with no network and no script.

Two kinds, enough for the evaluation reports: grouped bars (a value per group and series) and an
empirical distribution (each value a point at the share of values at or below it). Every bar is a
`rect.bar` and every point a `circle.point`, each with `data-series` and a `<title>` tooltip, so a
reader (or a browser test) can find them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ("#2f6db5", "#e07b28", "#3a9a5b", "#8b55b5", "#c8423b", "#6f7b85", "#b59a2f")
FONT = 'font-family="system-ui, sans-serif"'
LEFT, RIGHT, TOP = 58, 16, 34


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k at or above `value` (1 for nothing): a clean axis end."""
    if value <= 0:
        return 1.0
    base = 10 ** math.floor(math.log10(value))
    return next(step * base for step in (1, 2, 2.5, 5, 10) if step * base >= value * (1 - 1e-9))


def _tick(value: float) -> str:
    return f"{value:g}" if abs(value) < 10_000 else f"{value:,.0f}"


def _legend(names: Sequence[str]) -> list[str]:
    parts, x = [], LEFT
    for i, name in enumerate(names):
        parts.append(f'<rect x="{x}" y="8" width="12" height="12" fill="{PALETTE[i % len(PALETTE)]}"/>'
                     f'<text x="{x + 17}" y="18" font-size="12" {FONT}>{escape(name)}</text>')
        x += 30 + 7 * len(name)
    return parts


def _y_axis(top: float, bottom: float, right: float, y_max: float, label: str) -> list[str]:
    parts = []
    for i in range(6):
        value = y_max * i / 5
        y = bottom - (bottom - top) * i / 5
        parts.append(f'<line x1="{LEFT}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e6ea"/>'
                     f'<text x="{LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" {FONT}>'
                     f'{_tick(value)}</text>')
    parts.append(f'<text transform="translate(14 {(top + bottom) / 2:.0f}) rotate(-90)" font-size="12" '
                 f'text-anchor="middle" {FONT}>{escape(label)}</text>')
    return parts


def _svg(width: float, height: float, title: str, parts: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}"><title>{escape(title)}</title>' + "".join(parts) + "</svg>")


def bar_chart(title: str, groups: Sequence[str], series: Mapping[str, Sequence[float | None]], *, y_label: str,
              y_max: float | None = None, value_format: str = "{:.3f}", height: int = 320) -> str:
    """Grouped bars: along x one group per label, in each one bar per series (in the series' colour);
    a None value (no data for that group) draws no bar, a zero a flat one marked "0". `y_max` fixes the
    axis (1 for a share)."""
    values = [v for vs in series.values() for v in vs if v is not None]
    top_value = y_max if y_max is not None else nice_ceiling(max(values, default=0))
    slot = max(16, min(36, 320 // max(1, len(series))))
    group_width = slot * len(series) + 18
    longest = max((len(g) for g in groups), default=0)
    bottom_margin = 26 + (min(longest, 28) * 4 if longest * 7 > group_width else 0)
    width = max(420, LEFT + RIGHT + group_width * len(groups))
    bottom = height - bottom_margin
    parts = _y_axis(TOP, bottom, width - RIGHT, top_value, y_label) + _legend(list(series))
    for g, group in enumerate(groups):
        x0 = LEFT + g * group_width + 9
        for s, (name, vs) in enumerate(series.items()):
            value = vs[g]
            if value is None:
                continue
            h = (bottom - TOP) * min(value, top_value) / top_value
            parts.append(f'<rect class="bar" data-series="{escape(name)}" data-group="{escape(group)}" '
                         f'data-value="{value}" x="{x0 + s * slot:.1f}" y="{bottom - h:.1f}" width="{slot - 3}" '
                         f'height="{h:.1f}" fill="{PALETTE[s % len(PALETTE)]}"><title>{escape(name)} · '
                         f'{escape(group)}: {value_format.format(value)}</title></rect>')
            if h == 0:  # a zero is a value, unlike a missing one: say so where the bar would stand
                parts.append(f'<text x="{x0 + s * slot + (slot - 3) / 2:.1f}" y="{bottom - 3}" font-size="9" '
                             f'text-anchor="middle" fill="{PALETTE[s % len(PALETTE)]}" {FONT}>0</text>')
        centre = x0 + slot * len(series) / 2
        if bottom_margin > 26:
            parts.append(f'<text transform="translate({centre:.1f} {bottom + 14}) rotate(-35)" font-size="11" '
                         f'text-anchor="end" {FONT}>{escape(group[:28])}</text>')
        else:
            parts.append(f'<text x="{centre:.1f}" y="{bottom + 16}" font-size="11" text-anchor="middle" {FONT}>'
                         f'{escape(group)}</text>')
    parts.append(f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{bottom}" y2="{bottom}" stroke="#555"/>')
    return _svg(width, height, title, parts)


def distribution_chart(title: str, series: Mapping[str, Sequence[float]], *, x_label: str,
                       width: int = 520, height: int = 320) -> str:
    """The empirical distribution of each series: every value is a point at (value, share of the series'
    values at or below it), joined by a line; p50 and p95 can be read off the y axis."""
    x_max = nice_ceiling(max((v for vs in series.values() for v in vs), default=0))
    bottom, right = height - 44, width - RIGHT
    parts = _y_axis(TOP, bottom, right, 1.0, "share of questions") + _legend(list(series))
    for i in range(6):
        x = LEFT + (right - LEFT) * i / 5
        parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" font-size="11" text-anchor="middle" {FONT}>'
                     f'{_tick(x_max * i / 5)}</text>')
    parts.append(f'<text x="{(LEFT + right) / 2:.0f}" y="{height - 8}" font-size="12" text-anchor="middle" '
                 f'{FONT}>{escape(x_label)}</text>')
    for s, (name, vs) in enumerate(series.items()):
        colour = PALETTE[s % len(PALETTE)]
        ordered = sorted(vs)
        points = [(LEFT + (right - LEFT) * v / x_max, bottom - (bottom - TOP) * (i + 1) / len(ordered), v)
                  for i, v in enumerate(ordered)]
        if points:
            line = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
            parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        parts += [f'<circle class="point" data-series="{escape(name)}" cx="{x:.1f}" cy="{y:.1f}" r="2.2" '
                  f'fill="{colour}"><title>{escape(name)}: {v:.1f}</title></circle>' for x, y, v in points]
    parts.append(f'<line x1="{LEFT}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#555"/>')
    return _svg(width, height, title, parts)
