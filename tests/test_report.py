"""The HTML report: one self-contained file, and it renders in a real browser.

The browser test opens the report in headless Chromium (Debian's ``chromium``
package; ``.ci/run`` installs it), lets its scripts run, and checks that
every figure rendered (plotly draws SVG into the DOM, so the dumped DOM has
one plot per figure, and the heatmap images and bars are there) and that no
script error or ``console.error`` happened. It is skipped where no Chromium
is installed, except under CI, where that is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pytest

import pathsel
from pathsel.cli import main
from pathsel.results import report

from .test_plots import LATENCY, faulty_scenario

FIGURES = ["setup", "timeline", "percentiles", "cdf", "paths"]


@pytest.fixture(scope="module")
def result() -> pathsel.Result:
    return pathsel.simulate(faulty_scenario(), duration=1.0)


@pytest.fixture(scope="module")
def report_file(result, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    assert report.write(result, path) == path
    assert path.read_text(encoding="utf-8") == report.render(result)
    return path


# -- the file ------------------------------------------------------------------


def test_report_is_one_self_contained_file(report_file: Path, result):
    text = report_file.read_text(encoding="utf-8")
    assert list(report_file.parent.iterdir()) == [report_file]  # nothing written beside it
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    # nothing fetched from anywhere: no external scripts, styles, fonts or images
    assert not re.search(r"<script[^>]*\bsrc=", text, re.I)
    assert not re.search(r"<link[^>]*\bhref=", text, re.I)
    assert not re.search(r"<img[^>]*\bsrc=", text, re.I)
    assert "@import" not in text and "url(http" not in text
    # plotly.js is inlined exactly once (its bundle defines the Plotly global once), one plot per figure
    assert len(text) > 1_000_000  # the bundle is several MB
    assert len(re.findall(r"plotly\.js v\d+\.\d+\.\d+", text)) == 1
    assert text.count("Plotly.newPlot(") == len(FIGURES)
    assert re.findall(r'data-figure="([\w-]+)"', text) == FIGURES
    # the tables
    assert result.scenario in text and "testdrive+faults" in text
    for r in result.runs:
        assert r.label in text
        assert f"{r.iops:,.0f}" in text
    assert "vmhba2:C0:T9:L1" in text  # per-path table
    assert "path_down" in text and "evaluation" in text  # events


def test_render_only_returns_the_document(result, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = report.render(result)
    assert text.startswith("<!DOCTYPE html>")
    assert list(tmp_path.iterdir()) == []
    assert "<title>Custom · pathsel report</title>" in report.render(result, title="Custom")


def test_report_escapes_names():
    res = pathsel.simulate(policies=["rr:iops=1"], duration=0.2)
    res.scenario = "<b>&'\"</b>"
    text = report.render(res, figures=[])
    assert "<h1>&lt;b&gt;&amp;&#x27;&quot;&lt;/b&gt;</h1>" in text
    assert "<script" not in text  # no figures, no plotly.js


# -- the command -----------------------------------------------------------------


def test_report_command_writes_the_file_and_is_silent_off_a_terminal(tmp_path, testdrive_path, capsys):
    out = tmp_path / "r.html"
    code = main(["report", str(testdrive_path), "-o", str(out), "--duration", "0.5s", "--seed", "3", "--policy", "rr:iops=1", "--policy", "latency"])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert stderr == ""  # no progress bar when stderr is not a terminal
    assert stdout.startswith(f"pathsel: wrote {out} (") and "2 policies" in stdout
    text = out.read_text(encoding="utf-8")
    assert "seed 3" in text and "measured 0.5 s" in text and text.count("Plotly.newPlot(") == len(FIGURES)

    code = main(["report", "-o", str(tmp_path / "q.html"), "--duration", "0.2s", "-q"])  # embedded default
    assert (code, *capsys.readouterr()) == (0, "", "")
    assert "test drive (Hosterman 2018)" in (tmp_path / "q.html").read_text(encoding="utf-8")


def test_report_command_errors_are_one_line_and_status_2(tmp_path, capsys):
    code = main(["report", "-o", str(tmp_path / "no" / "such" / "dir.html"), "--duration", "0.1s"])
    stderr = capsys.readouterr().err
    assert code == 2
    # refused before the run, naming the missing folder
    assert stderr.count("\n") == 1 and "no such folder" in stderr and "write the report elsewhere" in stderr
    code = main(["report", str(tmp_path / "missing.toml")])
    assert (code, capsys.readouterr().err.strip()) == (2, f"pathsel: error: {tmp_path / 'missing.toml'}: no such file")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_bar_only_on_a_terminal_and_never_with_json(tmp_path):
    import fcntl
    import termios

    def on_tty(*args: str) -> tuple[int, str, str]:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # a 0-column tty gets an empty bar
        try:
            proc = subprocess.run([sys.executable, "-m", "pathsel.cli", *args], stdout=subprocess.PIPE, stderr=slave, text=True, timeout=300)
        finally:
            os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        return proc.returncode, proc.stdout, b"".join(chunks).decode(errors="replace")

    code, stdout, tty = on_tty("report", "-o", str(tmp_path / "r.html"), "--duration", "1s")
    assert code == 0 and "sim s" in tty  # tqdm's bar, in simulated seconds
    code, stdout, tty = on_tty("simulate", "--json", "--duration", "1s")
    assert code == 0 and stdout.startswith("{") and tty == ""
    code, stdout, tty = on_tty("report", "-q", "-o", str(tmp_path / "q.html"), "--duration", "1s")
    assert code == 0 and tty == ""


# -- in a browser -----------------------------------------------------------------

# Logged through console.log, which Chromium prints on stderr with --enable-logging=stderr,
# whatever the level of the original message.
CONSOLE_HOOK = """<script>
(function () {
  var log = console.log.bind(console);
  function join(args) { return Array.prototype.map.call(args, String).join(" "); }
  console.error = function () { log("PATHSEL-CONSOLE-ERROR " + join(arguments)); };
  window.addEventListener("error", function (e) { log("PATHSEL-UNCAUGHT " + e.message); }, true);
  window.addEventListener("unhandledrejection", function (e) { log("PATHSEL-UNHANDLED " + e.reason); });
})();
</script>"""
PROBLEMS = re.compile(r"PATHSEL-(?:CONSOLE-ERROR|UNCAUGHT|UNHANDLED)[^\n]*|Uncaught[^\n]*|Failed to load resource[^\n]*")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("no chromium on PATH under CI: .ci/run should have installed Debian's chromium package")
    pytest.skip("no chromium on PATH: `apt-get install chromium` to run the browser test (.ci/run does)")


def open_in_chromium(page: Path, screenshot: Path | None = None, size: tuple[int, int] = (1280, 3000)) -> tuple[str, str]:
    """(DOM after the page's scripts ran, Chromium's stderr) for a page opened headless, offline."""
    browser = chromium()
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            browser,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            f"--window-size={size[0]},{size[1]}",
            "--hide-scrollbars",
        ]
        if screenshot is not None:
            cmd.append(f"--screenshot={screenshot}")
        cmd += ["--dump-dom", page.resolve().as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, proc.stderr


def instrumented(src: Path, dst: Path) -> Path:
    """A copy of ``src`` with :data:`CONSOLE_HOOK` first in its head."""
    text = src.read_text(encoding="utf-8")
    head = text.index("<head>") + len("<head>")
    dst.write_text(text[:head] + CONSOLE_HOOK + text[head:], encoding="utf-8")
    return dst


def test_report_renders_in_chromium_with_no_console_errors(report_file: Path, tmp_path: Path):
    chromium()
    page = instrumented(report_file, tmp_path / "instrumented.html")
    png = tmp_path / "report.png"
    dom, log = open_in_chromium(page, screenshot=png)

    assert not PROBLEMS.findall(log), PROBLEMS.findall(log)
    # every figure rendered: one plotly plot with its SVG per figure div, in order
    assert dom.count('class="plot-container plotly"') == len(FIGURES)
    parts = re.split(r'data-figure="([\w-]+)"', dom)[1:]
    assert parts[0::2] == FIGURES
    for fid, html in zip(parts[0::2], parts[1::2]):
        assert html.count('class="plot-container plotly"') == 1, fid
        assert 'class="main-svg"' in html, fid
    figure = dict(zip(parts[0::2], parts[1::2]))
    assert figure["timeline"].count('class="js-line"') >= 6  # IOPS and latency lines of three policies
    assert figure["percentiles"].count('class="trace bars"') == 3  # p50, p99, p99.9
    assert figure["cdf"].count('class="js-line"') >= 3
    assert figure["paths"].count('class="hm"') == 6  # share and state heatmaps of three policies
    assert LATENCY in dom and "Comparison" in dom

    # a screenshot was taken of the rendered page (look at it when this fails)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 3000) and len(data) > 50_000


def test_the_browser_check_catches_a_broken_page(result, tmp_path: Path):
    """The same check on a figure whose plotly.js is missing: a script error and no plot."""
    chromium()
    fig_only = report.render(result, figures=report.default_figures(result)[:1]).replace("Plotly.newPlot(", "NoSuchPlotly.newPlot(")
    broken = tmp_path / "broken.html"
    broken.write_text(fig_only, encoding="utf-8")
    dom, log = open_in_chromium(instrumented(broken, tmp_path / "broken-instrumented.html"))
    problems = PROBLEMS.findall(log)
    assert any("NoSuchPlotly is not defined" in p for p in problems), log[-3000:]
    assert 'class="plot-container plotly"' not in dom


# -- each figure at a laptop's width ----------------------------------------------------

LAPTOP = 1366


def png_rgb(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB bytes) of an 8-bit RGB or RGBA non-interlaced PNG, as Chromium writes them."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, bpp = 8, [], 0, 0, 3
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride) if f else ():
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            else:  # Paeth
                q = a + b - c
                pa, pb, pc = abs(q - a), abs(q - b), abs(q - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line) if bpp == 3 else bytes(line[k] for k in range(stride) if k % 4 != 3))
        prev = line
    return width, height, rows


def test_png_reader_reads_what_it_is_given():
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    # 2 x 2 RGB: rows filtered with None and Sub
    raw = b"\x00" + bytes([255, 0, 0, 0, 255, 0]) + b"\x01" + bytes([10, 20, 30, 5, 5, 5])
    png = (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    )
    assert png_rgb(png) == (2, 2, [bytes([255, 0, 0, 0, 255, 0]), bytes([10, 20, 30, 15, 25, 35])])


def test_every_figure_draws_at_a_laptops_width(result, tmp_path: Path):
    """Each figure alone, in a 1,366 px wide window: no script error, a plot in the DOM, and a screenshot with
    something drawn (not a blank page). ``PATHSEL_SCREENSHOTS=DIR`` keeps the screenshots to look at."""
    chromium()
    keep = os.environ.get("PATHSEL_SCREENSHOTS")
    figures = report.default_figures(result)
    assert [f[0] for f in figures] == FIGURES
    for fid, _, fig in figures:
        height = int(fig.layout.height or 450) + 20
        page = tmp_path / f"{fid}.html"
        page.write_text(fig.to_html(full_html=True, include_plotlyjs=True, config={"responsive": True}), encoding="utf-8")
        png = Path(keep) / f"{fid}.png" if keep else tmp_path / f"{fid}.png"
        dom, log = open_in_chromium(instrumented(page, tmp_path / f"{fid}-i.html"), screenshot=png, size=(LAPTOP, height))
        assert not PROBLEMS.findall(log), (fid, PROBLEMS.findall(log))
        assert 'class="main-svg"' in dom, fid
        width, h, rows = png_rgb(png.read_bytes())
        assert (width, h) == (LAPTOP, height), fid
        # drawn: a good part of the page is not white, in many colours (a blank or broken page is one colour)
        pixels = [row[i : i + 3] for row in rows[::3] for i in range(0, len(row), 9)]
        inked = sum(1 for p in pixels if sum(p) < 700) / len(pixels)
        assert inked > 0.03, (fid, inked)
        assert len(set(pixels)) > 40, fid


def test_the_set_up_drawing_shows_the_fabric_and_controllers_in_a_browser(tmp_path: Path):
    """Issue 48: in a real browser, the set-up of a switched, dual-controller SAN shows the switches, the ISL with
    its busy share, the links and the controllers by name, and a nexus that carried no I/O as a thin dotted line.
    ``PATHSEL_SCREENSHOTS=DIR`` keeps the screenshot to look at."""
    chromium()
    from .test_topology import switched_san

    res = pathsel.simulate(pathsel.loads_scenario(switched_san(), "san"), duration=0.3)
    page = tmp_path / "setup.html"
    page.write_text(report.render(res, figures=report.default_figures(res)[:1]), encoding="utf-8")
    keep = os.environ.get("PATHSEL_SCREENSHOTS")
    png = Path(keep) / "setup-switched.png" if keep else tmp_path / "setup.png"
    dom, log = open_in_chromium(instrumented(page, tmp_path / "setup-i.html"), screenshot=png, size=(LAPTOP, 1400))
    assert not PROBLEMS.findall(log), PROBLEMS.findall(log)
    setup = dom[dom.index('data-figure="setup"') :]
    # plotly writes each label as an SVG <text>: the switches, the ISL and its share, a link, the controllers
    svg = "".join(re.findall(r"<svg.*?</svg>", setup, re.S))
    texts = [t.strip() for t in re.findall(r">([^<>]+)<", svg) if t.strip()]  # a label's lines are <tspan>s of its <text>
    for label in ("sw1", "sw2", "isl1", "esxi01-hba1", "array-B-fc1", "A-fc0", "B-fc1", "esxi01", "array"):
        assert label in texts, (label, texts)
    assert any(re.fullmatch(r"\d+ % busy(, \d+ % held)?", t) for t in texts), texts
    assert any(t.startswith("controller A") for t in texts) and any(t.startswith("controller B") for t in texts), texts
    # the lines: solid ones that carried I/O and, for esxi01's nexuses to B (none), thin dotted ones
    lines = re.findall(r'<path class="js-line"[^>]*style="([^"]*)"', setup)
    dotted = [s for s in lines if "stroke-dasharray" in s and re.search(r"stroke-width: 0\.8px", s)]
    assert len(dotted) == 4, lines  # the four nexuses (the legend draws its sample 1 px wide)


def test_the_set_up_drawings_policy_buttons_change_the_link_labels_in_a_browser(tmp_path: Path):
    """The policy buttons restyle the lines and the links' labels: pressed (Plotly.restyle with the button's own
    arguments, as a click does), the ISL's label reads the second policy's busy share."""
    chromium()
    from .test_topology import switched_san

    res = pathsel.simulate(pathsel.loads_scenario(switched_san(policies='["rr:iops=1", "rr:iops=1,use_ano=1"]'), "san"), duration=0.3)
    busy = [max(w["utilisation"] for w in r.links() if w["name"] == "isl1") for r in res.runs]
    assert f"{100 * busy[0]:.0f}" != f"{100 * busy[1]:.0f}"  # using the ANO paths crosses the ISL more
    press = """<script>
    setTimeout(function () {
      var gd = document.querySelector('[data-figure="setup"] .js-plotly-plot');
      var b = gd.layout.updatemenus[0].buttons[1];
      Plotly.restyle(gd, b.args[0], b.args[1]).then(
        function () { document.body.setAttribute("data-pressed", "yes"); },
        function (e) { console.error("restyle failed: " + e); });
    }, 500);
    </script>"""
    page = tmp_path / "setup.html"
    page.write_text(report.render(res, figures=report.default_figures(res)[:1]).replace("</body>", press + "</body>"), encoding="utf-8")
    dom, log = open_in_chromium(instrumented(page, tmp_path / "setup-i.html"), size=(LAPTOP, 1400))
    assert not PROBLEMS.findall(log), PROBLEMS.findall(log)
    assert 'data-pressed="yes"' in dom
    label = re.search(r">isl1</tspan><tspan[^>]*>([^<]*)<", dom)
    assert label is not None and label[1].startswith(f"{100 * busy[1]:.0f} % busy"), label
