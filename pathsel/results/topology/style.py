"""How the set-up drawing looks and reads: ALUA colours, a line's width, a link's heat, the short words written on
the figure, and a column of nodes as one plotly trace."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

__all__ = ["ALUA_COLORS"]

#: path colours by ALUA state (the heatmap's state colours)
ALUA_COLORS = {"AO": "#2ca02c", "ANO": "#ff7f0e", "standby": "#9467bd", "unavailable": "#7f7f7f"}
_LABELS_UP_TO = 40  # nodes per column named on the figure; hover names every one


def _in_order(states: set[str]) -> list[str]:
    order = list(ALUA_COLORS)
    return sorted(states, key=lambda s: order.index(s) if s in order else len(order))


def _width(share: float) -> float:
    # area reads as amount: the square root keeps 20 equal paths visible beside one busy one; a path that carried
    # nothing is a thin dotted line (it exists, it carried none)
    return 0.8 + 11.0 * math.sqrt(share) if share > 0 else 0.8


def _heat(busy: float) -> str:
    """A link's colour by how busy (or held) it is: grey when idle, to red at 100 %."""
    b = min(max(busy, 0.0), 1.0)
    r, g, bl = (int(170 + (214 - 170) * b), int(170 - (170 - 39) * b), int(170 - (170 - 40) * b))
    return f"rgb({r},{g},{bl})"


def _names(items: Sequence[str], up_to: int = 3) -> str:
    """``lun0, lun1, lun2`` or ``lun0 … lun7`` (the first and last of more than ``up_to``)."""
    items = list(items)
    return ", ".join(items) if len(items) <= up_to else f"{items[0]}, {items[1]} … {items[-1]}" if up_to >= 2 else f"{items[0]} … {items[-1]}"


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %" if x >= 0.01 or x == 0 else "<1 %"


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _bandwidth(bytes_per_s: float | None) -> str:
    if not bytes_per_s:
        return "no serialisation"
    bits = bytes_per_s * 8
    return f"{bits / 1e9:g} Gbit/s" if bits >= 1e9 else f"{bits / 1e6:g} Mbit/s"


def _nodes(
    fig: go.Figure,
    name: str,
    xs: float,
    ys: dict[tuple[str, ...], float],
    labels: list[str],
    symbol: str,
    size: int,
    color: str,
    position: str,
    show_text: bool,
    hover: list[str] | None = None,
) -> None:
    """One column of nodes (hosts, adapters, target ports, arrays) as one trace, at ``xs`` and the column's ``ys``."""
    fig.add_trace(
        go.Scatter(
            x=[xs] * len(ys),
            y=list(ys.values()),
            mode="markers+text" if show_text else "markers",
            name=name,
            text=labels,
            textposition=position,
            textfont=dict(size=12),
            marker=dict(symbol=symbol, size=size, color=color, line=dict(width=1, color="#333")),
            hovertext=hover or labels,
            hoverinfo="text",
            showlegend=False,
        )
    )
