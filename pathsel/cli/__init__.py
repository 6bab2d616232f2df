"""The ``pathsel`` command line, by command family.

``entry`` builds the parser and holds :func:`main` (pyproject.toml's console
entry point, ``pathsel.cli:main``); ``run`` (simulate, predict, warm, report),
``validation`` (validate, calibrate), ``studies`` (sweep, league, recommend),
``watch`` (top), ``systems`` (import, ``--emit``) and ``listings`` (example,
policies, presets, schema) each add their commands' options and run them;
``arguments`` and ``common`` hold what several families share.
"""

from __future__ import annotations

from .entry import build_parser, main

__all__ = ["main", "build_parser"]
