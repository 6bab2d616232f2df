"""Results: what runs measured, as DataFrames and JSON (:mod:`.result`), figures (:mod:`.plots`) and the HTML report (:mod:`.report`).

Importing this package does not import plotly: the figures and the report
load it when they are imported.
"""

from .result import Result, RunResult

__all__ = ["Result", "RunResult"]
