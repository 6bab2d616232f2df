"""How the set-up drawing looks and reads: ALUA colours, a line's width, a link's heat, the short words written on
the figure, and a column of nodes as one plotly trace."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

__all__ = [
    "ALUA_COLORS",
    "LABELS_UP_TO",
    "alua_order",
    "line_width",
    "heat_color",
    "name_list",
    "pct",
    "shorten",
    "bandwidth_words",
    "node_column",
]

#: path colours by ALUA state (the heatmap's state colours)
ALUA_COLORS = {"AO": "#2ca02c", "ANO": "#ff7f0e", "standby": "#9467bd", "unavailable": "#7f7f7f"}
LABELS_UP_TO = 40  # nodes per column named on the figure; hover names every one


def alua_order(states: set[str]) -> list[str]:
    """ALUA states in the order of :data:`ALUA_COLORS` (AO first), others last."""
    order = list(ALUA_COLORS)
    return sorted(states, key=lambda s: order.index(s) if s in order else len(order))


def line_width(share: float) -> float:
    # area reads as amount: the square root keeps 20 equal paths visible beside one busy one; a path that carried
    # nothing is a thin dotted line (it exists, it carried none)
    return 0.8 + 11.0 * math.sqrt(share) if share > 0 else 0.8


def heat_color(busy: float) -> str:
    """A link's colour by how busy (or held) it is: grey when idle, to red at 100 %."""
    b = min(max(busy, 0.0), 1.0)
    r, g, bl = (int(170 + (214 - 170) * b), int(170 - (170 - 39) * b), int(170 - (170 - 40) * b))
    return f"rgb({r},{g},{bl})"


def name_list(items: Sequence[str], up_to: int = 3) -> str:
    """``lun0, lun1, lun2`` or ``lun0 … lun7`` (the first and last of more than ``up_to``)."""
    items = list(items)
    return ", ".join(items) if len(items) <= up_to else f"{items[0]}, {items[1]} … {items[-1]}" if up_to >= 2 else f"{items[0]} … {items[-1]}"


def pct(x: float) -> str:
    """A share as a whole percentage, ``<1 %`` for a small one that is not zero."""
    return f"{100 * x:.0f} %" if x >= 0.01 or x == 0 else "<1 %"


def shorten(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters, an ellipsis last."""
    return text if len(text) <= n else text[: n - 1] + "…"


def bandwidth_words(bytes_per_s: float | None) -> str:
    """A link's bandwidth in bits per second, as its speed is said: ``16 Gbit/s``."""
    if not bytes_per_s:
        return "no serialisation"
    bits = bytes_per_s * 8
    return f"{bits / 1e9:g} Gbit/s" if bits >= 1e9 else f"{bits / 1e6:g} Mbit/s"


def node_column(
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
