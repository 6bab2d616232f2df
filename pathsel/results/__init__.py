"""Results: what runs measured, as DataFrames and JSON (:class:`Result` in :mod:`.result`, each policy's
:class:`RunResult` in :mod:`.run`), text tables (:mod:`.tables`), words (:mod:`.story`), figures (:mod:`.plots`) and
the HTML report (:mod:`.report`).

Importing this package does not import plotly: the figures and the report
load it when they are imported.
"""

from .result import Result
from .run import RunResult

__all__ = ["Result", "RunResult"]
