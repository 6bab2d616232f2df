"""Run the notebooks and store their outputs, every plotly figure with a PNG beside it.

    python tools/execute_notebooks.py                      # every notebook in notebooks/
    python tools/execute_notebooks.py notebooks/07-explore.ipynb

GitHub, nbviewer and the documentation site show a notebook as it is stored,
without running it, and none of them runs plotly's JavaScript: a figure
stored only as ``application/vnd.plotly.v1+json`` shows as a blank. So each
notebook runs top to bottom in a fresh kernel (nbclient, from its own folder)
whose plotly renderer is ``plotly_mimetype+png``: every figure is stored
once, as one output holding both the interactive figure (JupyterLab, VS Code)
and a static ``image/png`` drawn by kaleido (which drives Chromium; kaleido
and Chromium must be installed: ``pip install -e '.[docs]'``, Debian's
``chromium`` package). tests/test_docs_and_notebooks.py checks every stored
figure has its PNG. The kernel is the one this interpreter runs
(``python3``), so pathsel must be importable from it.

The renderer is set for the run only (``PLOTLY_RENDERER``, read when the
kernel imports plotly), not in the notebooks: run in Jupyter, they draw with
your own settings. Run this after changing a notebook or what it shows, and
commit the notebooks with their outputs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RENDERER = "plotly_mimetype+png"
TIMEOUT_S = 600  # per cell


def execute(path: Path, timeout: int = TIMEOUT_S) -> int:
    """Run one notebook in place; returns the number of figures stored."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    client = nbclient.NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,  # no timestamps in the stored notebook: a rerun changes only what it shows
    )
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return sum(1 for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs if "application/vnd.plotly.v1+json" in out.get("data", {}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to run (default: every one in notebooks/)")
    parser.add_argument("--timeout", type=int, default=TIMEOUT_S, help=f"seconds per cell (default {TIMEOUT_S})")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    os.environ["PLOTLY_RENDERER"] = RENDERER  # the kernel inherits this process's environment
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiet the debugger's frozen-modules note
    for path in paths:
        start = time.perf_counter()
        figures = execute(path.resolve(), args.timeout)
        print(f"{path}: {figures} figures, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
