"""The ``pathsel`` command.

``pathsel simulate [FILE]`` compares the scenario's policies (the embedded seed
004 test drive when no file is given). Bad input prints one located message
on stderr and exits with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .cli_site import add_emit_options, add_site_commands, check_emit_only, emit_recommended, emit_simulate, presets_text
from .errors import ScenarioError
from .outputs import check_output, same_file, scenario_files, write_atomic
from .units import MAX_DURATION as _MAX_SECONDS
from .units import parse_seconds
from .version import __version__

# Heavy modules (the engines and numba, pandas, the scenario schema) are imported in the commands that use them,
# so --version, --help and the listing commands answer at once (tests/test_startup.py).
if TYPE_CHECKING:
    from concurrent.futures import Executor

    from distributed import Client

    from .scenario import Scenario
    from .studies.sweep import SweepResult
    from .studies.validate import Case

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, status 2, as for scenario errors
        self.exit(2, f"pathsel: error: command line: {message}\n")


def _duration(text: str) -> float:
    """A bare number is seconds (fio's runtime=20); a unit works too (500ms, 2min)."""
    try:
        seconds = parse_seconds(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return seconds


# Options whose value may look like an option ("--duration -1s"): argparse would take the
# value for an unknown option and say "expected one argument"; joined as --duration=-1s,
# the value reaches its check and gets a proper message.
_VALUE_OPTIONS = ("--duration", "--seed", "--replications", "--workers", "--top", "--speed", "--delay", "-d", "-n", "--iterations", "--timeout-scale")
_NEGATIVE = re.compile(r"-(?:[0-9.]|inf|nan)", re.IGNORECASE)


def _join_negative_values(argv: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in _VALUE_OPTIONS and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def _seed(text: str) -> int:
    try:
        if not text.isascii():  # int() reads other scripts' digits ('\u0663' as 3): ASCII only, one message
            raise ValueError(text)
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def _positive_float(text: str) -> float:
    try:
        if not text.isascii():  # as _seed: ASCII digits only
            raise ValueError(text)
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be > 0 and finite, got {text!r}")
    return value


def _speed(text: str) -> float:
    """top's --speed: a number of simulated seconds per wall-clock second, within what pacing can wait for."""
    from .top import SPEED_MAX, SPEED_MIN

    value = _positive_float(text)
    if not SPEED_MIN <= value <= SPEED_MAX:
        raise argparse.ArgumentTypeError(f"must be between {SPEED_MIN:g} and {SPEED_MAX:g} simulated seconds per wall-clock second, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        if not text.isascii():  # as _seed: ASCII digits only
            raise ValueError(text)
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def _json(doc: Any) -> str:
    """Strict JSON (RFC 8259): infinities and NaN, which JSON has no word for, are null."""
    from .results.document import jsonable

    return json.dumps(jsonable(doc), indent=2, allow_nan=False, default=str)


@contextlib.contextmanager
def _writing(path: str, what: str = "") -> Iterator[None]:
    """An OSError while writing ``path`` (a full disk, a folder gone read-only) as one located line."""
    try:
        yield
    except OSError as e:
        raise ScenarioError(path, "", f"cannot write{' ' + what if what else ''}: {e.strerror or e}") from None


def _scenario(args: argparse.Namespace) -> tuple[Scenario, Case | None]:
    """The scenario FILE holds (a validation case's too), with --policy's policies; and the case, if it is one."""
    from .api import resolve_scenario
    from .studies.validate import case_of

    case = case_of(args.file)
    scenario = case.runnable_scenario if case is not None else resolve_scenario(args.file)
    if args.policy:
        scenario = scenario.with_policies(args.policy)
    return scenario, case


def _engine(scenario: Scenario, engine: str) -> str:
    """auto takes the reference engine, without a warning, for a validation case's random split (a Python policy)."""
    from .engine import supports

    python = [r.label for r in scenario.runs if not supports(r.policy)]
    if not python:
        return engine
    if engine == "fast":
        raise ScenarioError(
            "command line",
            "--engine fast",
            f"the fast engine runs built-in and compiled-style policies only, and {python[0]!r} is a Python policy: use --engine reference",
        )
    return "reference"


def _notice(args: argparse.Namespace) -> Callable[[str], None] | None:
    """One line on stderr when the fast engine compiles first (none with -q)."""
    if getattr(args, "quiet", False):
        return None
    return lambda line: print(line, file=sys.stderr, flush=True)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .api import simulate

    check_emit_only(args)
    scenario, case = _scenario(args)
    if args.emit:
        return emit_simulate(args, scenario)
    progress = not args.json and not args.quiet and sys.stderr.isatty()
    result = simulate(
        scenario,
        duration=args.duration,
        seed=args.seed,
        engine=_engine(scenario, args.engine),
        progress=progress,
        notify=_notice(args),
    )
    preds = None
    if args.predict:
        from .studies.analytic import predict_scenario

        preds = predict_scenario(scenario, duration=args.duration, seed=args.seed)
    if args.json:
        if preds is None:
            sys.stdout.write(result.to_json() + "\n")
            return 0
        doc = json.loads(result.to_json())
        for run, p in zip(doc["runs"], preds):
            run["predicted"] = p.to_dict()
        sys.stdout.write(_json(doc) + "\n")
        return 0
    out = [result.table()]
    if preds is not None:
        from .studies.analytic import format_beside

        out.append(format_beside(result, preds))
    from .results.story import text as story_text

    out.append(story_text(result))
    for by in dict.fromkeys(args.by or ()):
        out.append(result.breakdown_table(by))
    if args.paths:
        out.append(result.paths_table())
    for r in result.runs:
        acc = r.accounting
        if acc["issued"] != acc["completed"] + acc["failed"] + acc["in_flight"]:  # pragma: no cover - a bug
            out.append(f"ACCOUNTING ERROR in {r.label}: {acc}\n")
    if case is not None:
        out.append(
            f"validation case {case.name} ({case.source}): pathsel validate {args.file} compares it with its {len(case.checks)} expected figure(s)\n"
        )
    sys.stdout.write("\n".join(out))
    return 0


def _cmd_policies(args: argparse.Namespace) -> int:
    if args.presets:
        sys.stdout.write(presets_text(args.markdown))
        return 0
    if args.markdown:
        from .policies.registry import markdown_table

        sys.stdout.write(markdown_table())
        return 0
    from .policies.listing import text  # the shipped listing: no numba unless the policy sources changed

    sys.stdout.write(text())
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from .scenario.schema import ScenarioModel

    print(json.dumps(ScenarioModel.model_json_schema(), indent=2))
    return 0


def _cmd_warm(args: argparse.Namespace) -> int:
    """Compile the fast engine and policies now, so that later runs (and every worker of a sweep) start at once."""
    import time

    from .engine.fast.warm import prepare
    from .policies.registry import BUILTIN

    started = time.perf_counter()
    python: list[str] = []
    if args.all:
        if args.file or args.policy:
            what = "FILE" if args.file else "--policy"
            raise ScenarioError("command line", "--all", f"compiles every built-in policy: drop {what}, or drop --all")
        defs = list(BUILTIN)
    else:
        from .engine import resolve, supports

        scenario, _ = _scenario(args)
        own = [spec for run in scenario.runs for _, spec in run.devices]
        specs = [*(run.policy for run in scenario.runs), *own]
        # a Python policy (a class of the user's, a validation case's random split) runs on the reference engine:
        # nothing of it is compiled; the engine still is, for the file's other policies and later runs
        python = sorted({getattr(spec, "name", type(spec).__name__) for spec in specs if not supports(spec)})
        defs = [resolve(spec)[0] for spec in specs if supports(spec)]
    quiet = args.quiet
    prepare(defs, notify=None if quiet else _notice(args), progress=not quiet and sys.stderr.isatty())
    if not quiet:
        from .jit import cache_dir

        names = sorted({d.name for d in defs})
        shown = (" and " + (", ".join(names) if len(names) <= 6 else f"{len(names)} policies")) if names else ""
        verb = "are" if names else "is"
        print(f"pathsel warm: the fast engine{shown} {verb} compiled in {cache_dir()} ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
        if python:
            print(f"pathsel warm: {', '.join(python)}: Python, run on the reference engine (nothing to compile)", file=sys.stderr)
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    from .studies.analytic import format_predictions, predict_scenario, predictions_json

    scenario, _ = _scenario(args)  # a validation case file works too
    preds = predict_scenario(scenario)
    if args.json:
        print(_json(predictions_json(scenario.name, scenario.source, preds)))
    else:
        sys.stdout.write(format_predictions(scenario.name, preds, paths=args.paths))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .studies.validate import Row, case_line, format_table, validate

    # None: the length's own engines (fast for the default and --quick, both for --full)
    engines = {None: None, "both": ("fast", "reference")}.get(args.engine, (args.engine,))
    progress = done = None
    if not args.quiet:
        # a line per case on stderr, tty or not (a log of a long run shows where it is); on a terminal the
        # case's name shows while it runs and its line replaces it
        tty = sys.stderr.isatty()

        def progress(name: str) -> None:
            if tty:
                print(f"pathsel validate: {name} ...", end="", file=sys.stderr, flush=True)

        def done(name: str, rows: list[Row], seconds: float) -> None:
            print(("\r\x1b[K" if tty else "") + f"pathsel validate: {case_line(name, rows, seconds)}", file=sys.stderr, flush=True)

    # One process by default: on this project's busy 2-core machine, spawning workers (each imports pathsel)
    # did not pay, paired; --workers helps with idle cores and --full.
    workers = 1 if args.serial else args.workers or 1
    rows = validate(args.cases or None, quick=args.quick, full=args.full, engines=engines, progress=progress, done=done, workers=workers)
    if args.json:
        print(_json({"cases": [r.to_dict() for r in rows]}))
    else:
        sys.stdout.write(format_table(rows))
    return 0 if all(r.passed for r in rows) else 1


def _cmd_example(args: argparse.Namespace) -> int:
    from . import examples

    if args.name is None and args.output is None:
        every = examples.names()
        width = max(map(len, every))
        heads = {
            False: "Example scenarios (pathsel example NAME prints one; add -o DIR to write it and the files it reads):",
            True: "Validation cases (pathsel validate runs them all):",
        }
        shown = None
        for example in every:
            kind = example.startswith("validation/")
            if kind != shown:
                print(heads[kind])
                shown = kind
            print(f"  {example:{width}s}  {examples.title(example)}")
        return 0
    name: str | None = None
    if args.name is not None:
        name = examples._name(args.name)
        examples.path(args.name, _source="command line", _place="example ", _hint="`pathsel example` lists them")
    if args.output is not None:
        for f in examples.copy(name, args.output):
            print(f"pathsel: wrote {f}")
        return 0
    assert name is not None  # no NAME is given only with -o (the branch above)
    sys.stdout.write(examples.text(name))
    home = examples.path(name).parent
    reads = [os.path.relpath(f, home) for f in examples.files(name)[1:]]
    if reads:
        print(f"pathsel example: {name} reads {', '.join(reads)}: pathsel example {name} -o DIR writes them too", file=sys.stderr)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .api import simulate
    from .results.report import write  # plotly only when a report is asked for

    scenario, _ = _scenario(args)  # a validation case file works too
    check_output(args.output, scenario_files(args.file), what="report", option="-o")  # before the run, not after it
    progress = not args.quiet and sys.stderr.isatty()
    result = simulate(
        scenario, duration=args.duration, seed=args.seed, engine=_engine(scenario, args.engine), progress=progress, notify=_notice(args)
    )
    with _writing(args.output, "the report"):
        path = write(result, args.output)  # atomic: a failure leaves the old report, never half a new one
    if not args.quiet:
        print(f"pathsel: wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {len(result.runs)} policies)")
    return 0


_ERASE_LINE = "\r\x1b[2K"  # to the line's start, then erase it (ECMA-48 CR and EL 2)


def _cmd_top(args: argparse.Namespace) -> int:
    batch = args.batch or args.text
    if not batch and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise ScenarioError("command line", "pathsel top", "needs a terminal for its live view: add -b for esxtop's CSV or --text")
    if args.iterations is not None and args.iterations * args.delay > _MAX_SECONDS:
        raise ScenarioError(
            "command line",
            "argument -n",
            f"{args.iterations} samples every {args.delay:g} s is {args.iterations * args.delay:g} simulated seconds, "
            f"more than {_MAX_SECONDS:g}: fewer samples or a shorter -d",
        )
    # at once, before numba and the scenario load (a second or more; the first compile ~30 s, which says so)
    if not batch:
        # on the terminal's own screen, without a newline, and erased however top ends (q, the run's end, an error):
        # the terminal is left as it was, not at a "starting..." that is no longer true
        print("pathsel top: starting... (loading the scenario and the engine)", end="", flush=True)
    elif sys.stderr.isatty():
        print("pathsel top: starting... (loading the scenario and the engine)", file=sys.stderr, flush=True)
    try:
        from .top import VIEWS, pick_run, run_top

        scenario, _ = _scenario(argparse.Namespace(file=args.file, policy=None))
        run = pick_run(scenario, args.policy)
        speed = None if batch and args.speed is None else (args.speed or 1.0)
        view = VIEWS.get(args.view, args.view)
        return run_top(
            scenario,
            run,
            speed=speed,
            refresh=args.delay,
            view=view,
            batch=batch,
            text=args.text,
            iterations=args.iterations,
            duration=args.duration,
            seed=args.seed,
            notify=_notice(args),
        )
    finally:
        if not batch:
            sys.stdout.write(_ERASE_LINE)
            sys.stdout.flush()


def _summary_text(res: SweepResult) -> str:
    """The sweep's summary as a person reads it: per scenario, point and policy, mean ± 95 % CI."""
    import math

    import pandas as pd

    s = res.summary()
    if s.empty:
        return ""
    # KAVG (esxtop: time queued in the host) where the scenario models host queues, QFULL (QUEUE FULL statuses in the
    # measured window) where a target port has a queue depth; each column is left out otherwise.
    show = {
        "iops": ("IOPS", 1.0, "{:,.0f}"),
        "p99_us": ("p99 (ms)", 1e-3, "{:,.3f}"),
        "kavg_us": ("KAVG (ms)", 1e-3, "{:,.3f}"),
        "qfull": ("QFULL", 1.0, "{:,.0f}"),
        "convergence_s": ("convergence (s)", 1.0, "{:,.2f}"),
    }
    keys = ["scenario", "point", "policy"]
    rows: dict[tuple[Any, ...], dict[str, str]] = {}
    for r in s[s.metric.isin(list(show))].itertuples(index=False):
        name, scale, fmt = show[r.metric]
        half = "" if not math.isfinite(r.ci95) else " ± " + fmt.format(r.ci95 * scale)
        rows.setdefault(tuple(getattr(r, k) for k in keys), {})[name] = fmt.format(r.mean * scale) + half
    table = pd.DataFrame([{**dict(zip(keys, k)), **v} for k, v in rows.items()]).fillna("")
    return str(table.to_string(index=False)) + "\n"


def _dask_executor(address: str) -> tuple[Client, Executor]:
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - a dependency
        raise ScenarioError("command line", "--dask", "needs Dask's distributed package: pip install 'pathsel[dask]'") from None
    try:
        client = Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as e:
        raise ScenarioError("command line", f"--dask {address}", f"cannot connect: {e}") from None
    return client, client.get_executor()


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .studies.sweep import parse_param, sweep

    params: dict[str, list[Any]] = {}
    for text in args.param or []:
        name, values = parse_param(text)
        if name in params:
            raise ScenarioError("command line", f"--param {name}", "is given twice: list all its values in one --param")
        params[name] = values
    if args.out:  # the table is appended to on purpose (a resume), but never over a scenario it runs
        inputs = [i for f in args.files or () for i in scenario_files(f, "a scenario file")]
        check_output(args.out, inputs, what="results table", option="--out")
    executor: Executor | str | None = "serial" if args.serial else None
    client = None
    if args.dask:
        client, executor = _dask_executor(args.dask)
    progress = not args.json and not args.quiet
    try:
        res = sweep(
            args.files or None,
            params,
            replications=args.replications,
            seed=args.seed,
            policies=args.policy,
            duration=args.duration,
            engine=args.engine,
            out=args.out,
            executor=executor,
            workers=args.workers,
            progress=progress,
            _origin="command line",
            _notify=lambda note: print(f"pathsel sweep: {note}", file=sys.stderr),
        )
    except KeyboardInterrupt:
        if args.out:
            print(f"pathsel: interrupted; finished runs are saved in {args.out}: run the same command to resume", file=sys.stderr)
        raise
    finally:
        if client is not None:
            client.close()
    if args.json:
        doc = {
            "out": str(res.out) if res.out else None,
            "points": res.points,
            "runs": res.ran + res.reused,
            "ran": res.ran,
            "reused": res.reused,
            "rows": len(res.table),
            "params": res.params,
            "skipped": res.skipped,
            "summary": json.loads(res.summary().to_json(orient="records")),
        }
        sys.stdout.write(_json(doc) + "\n")
        return 0
    sys.stdout.write(_summary_text(res))
    where = f"; table in {res.out}" if res.out else " (no --out: nothing saved)"
    print(
        f"pathsel sweep: {res.points} point(s), {res.ran + res.reused} run(s) ({res.ran} run now, {res.reused} already saved), "
        f"{len(res.table)} row(s) in {res.wall_s:.1f} s{where}"
    )
    return 0


def _check_league_outputs(args: argparse.Namespace) -> None:
    """None of league's outputs (--out, --html, --markdown) over an input (its files, --table) or over another output."""
    inputs: list[tuple[str, Path]] = [("--table", Path(args.table))] if args.table else []
    for name in args.files or ():
        if Path(name).is_dir():
            inputs += [i for f in sorted(Path(name).glob("*.toml")) for i in scenario_files(f, f"a scenario file in {name}")]
        else:
            inputs += scenario_files(name, "a scenario file")
    outputs = [
        (opt, path, what)
        for opt, path, what in (
            ("--out", args.out, "results table"),
            ("--html", args.html, "HTML file"),
            ("--markdown", args.markdown, "Markdown file"),
        )
        if path
    ]
    for k, (opt, path, what) in enumerate(outputs):
        if opt == "--out" and args.table and same_file(path, args.table):
            continue  # ranking a table and naming it --out too reads it, writes nothing over it (league resumes into --out)
        named = Path(path).name
        if args.write_fresh and named.startswith("fresh-") and named.endswith(".toml") and same_file(Path(path).parent, args.write_fresh):
            raise ScenarioError(path, "", f"is where --write-fresh writes a generated scenario (fresh-NN-*.toml): give {opt} another name")
        check_output(path, inputs, what=what, option=opt)
        for other, there, _ in outputs[:k]:
            if same_file(path, there):
                raise ScenarioError(path, "", f"is given to both {other} and {opt}: one would overwrite the other; give each its own file")


def _cmd_league(args: argparse.Namespace) -> int:
    import tempfile

    from .studies.fresh import write_fresh
    from .studies.league import TIMEOUT_SCALE, League, check_timeout_scale, league, library_files, standings, table_extra
    from .studies.table import read_table

    _check_league_outputs(args)
    if args.write_fresh and not args.fresh:
        raise ScenarioError("command line", "--write-fresh", "keeps the scenarios --fresh N generates: give --fresh N with it")
    if args.table and (args.files or args.fresh or args.sensitivity):
        raise ScenarioError("command line", "--table", "ranks a saved table without running: give no FILE, --fresh or --sensitivity with it")
    if args.table and args.timeout_scale is not None:
        raise ScenarioError("command line", "--timeout-scale", "applies to runs; --table ranks a saved table (its own scale is in it)")
    scale = check_timeout_scale(args.timeout_scale, "command line", "--timeout-scale") if args.timeout_scale is not None else TIMEOUT_SCALE
    files = None
    tmp = None
    client = None
    sens = None
    try:
        if args.table:
            scores, st = standings(args.table)
            saved = read_table(args.table)
            res = League(saved, scores, st, extra=table_extra(saved, str(args.table)))  # its timeout_scale column: the legend's note
        else:
            if args.fresh:
                if args.files:
                    raise ScenarioError("command line", "--fresh", "generates its own scenarios: give no FILE with it")
                folder = Path(args.write_fresh) if args.write_fresh else Path(tempfile.mkdtemp(prefix="pathsel-fresh-"))
                tmp = folder if not args.write_fresh else None
                write_fresh(folder, args.fresh, seed=args.fresh_seed)
                files = library_files(folder)
            else:
                files = [f for name in args.files for f in (library_files(name) if Path(name).is_dir() else [Path(name)])] or None
            executor: Executor | str | None = "serial" if args.serial else None
            if args.dask:
                client, executor = _dask_executor(args.dask)
            try:
                res = league(
                    files,
                    policies=args.policy,
                    replications=args.replications,
                    seed=args.seed,
                    duration=args.duration,
                    engine=args.engine,
                    out=args.out,
                    executor=executor,
                    workers=args.workers,
                    progress=not args.json and not args.quiet,
                    timeout_scale=scale,
                    _origin="command line",
                )
            except KeyboardInterrupt:
                if args.out:
                    print(f"pathsel: interrupted; finished runs are saved in {args.out}: run the same command to resume", file=sys.stderr)
                raise
            if args.sensitivity:
                from .studies.league import sensitivity

                sens = sensitivity(
                    res,
                    scenarios=files,
                    replications=args.replications,
                    seed=args.seed,
                    duration=args.duration,
                    executor=executor,
                    workers=args.workers,
                    progress=not args.json and not args.quiet,
                )
    finally:
        if client is not None:
            client.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.html:
        with _writing(args.html):
            res.write_html(args.html)
    if args.markdown:
        from .studies.league import sensitivity_markdown

        text = res.markdown() + ("\n" + sensitivity_markdown(sens) if sens is not None else "")
        with _writing(args.markdown):
            write_atomic(args.markdown, text)
    if args.json:
        doc = {
            "standings": json.loads(res.standings.to_json(orient="records")),
            "scores": json.loads(res.scores.to_json(orient="records")),
            "verdict": res.verdict(),
            "sensitivity": json.loads(sens.to_json(orient="records")) if sens is not None else None,
            "out": str(res.out) if res.out else None,
        }
        sys.stdout.write(_json(doc) + "\n")
        return 0
    sys.stdout.write(res.text(top=args.top))
    if sens is not None:
        print("\nguard's sensitivity (regret against the best shipped policy per scenario, one parameter at a time):")
        for r in sens.itertuples():
            mark = " (default)" if r.default else ""
            print(
                f"  {r.parameter}={r.value:g}{mark}: worst IOPS regret {r.worst_iops_regret * 100:.1f} % ({r.worst_iops_scenario}), "
                f"worst p99 regret {r.worst_p99_regret * 100:.1f} % ({r.worst_p99_scenario}), {r.behind_5pct} scenario(s) > 5 % behind"
            )
    if not args.table:
        where = f"; table in {res.out}" if res.out else ""
        print(f"pathsel league: {res.ran + res.reused} run(s) ({res.ran} run now, {res.reused} already saved) in {res.wall_s:.1f} s{where}")
    for path in (args.html, args.markdown):
        if path:
            print(f"pathsel: wrote {path}")
    return 0


def _cmd_recommend(args: argparse.Namespace) -> int:
    from .studies.recommend import recommend, write_html

    check_emit_only(args)
    if args.html:
        check_output(args.html, [("the results table", args.results)], what="HTML file", option="--html")
    rec = recommend(args.results, metrics=args.metric, policies=args.policy)
    if args.emit:
        return emit_recommended(args, rec)
    if args.html:
        with _writing(args.html):
            write_html(rec, args.html)
    if args.json:
        sys.stdout.write(_json(rec.to_dict()) + "\n")  # NaN (an interval of one replication) becomes null
        return 0
    sys.stdout.write(rec.text(top=args.top))
    if args.html:
        print(f"\npathsel: wrote {args.html} (a regret heatmap per metric)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pathsel", description="Simulate multipath path-selection policies and compare IOPS and latency.")
    parser.add_argument("--version", action="version", version=f"pathsel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sim = sub.add_parser("simulate", help="run a scenario's policies and print the comparison")
    sim.add_argument("file", nargs="?", help="scenario TOML file, or a validation case file (default: the embedded Hosterman 2018 test drive)")
    sim.add_argument(
        "--policy",
        action="append",
        metavar="SPEC",
        help="policy to run instead of the file's, e.g. rr:iops=1, latency:num_sampling_cycles=32 (repeatable); it runs on "
        "every device, in place of the volumes' own policies too ([[volumes]] policy)",
    )
    sim.add_argument("--duration", type=_duration, help="measured time after the ramp: seconds (20) or with a unit (500ms, 2min)")
    sim.add_argument("--seed", type=_seed, help="random seed (same seed, same results)")
    sim.add_argument(
        "--engine",
        default="auto",
        choices=["auto", "fast", "reference"],
        help="fast (numba), reference (SimPy), or auto: fast when every policy is built in (default)",
    )
    sim.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    sim.add_argument("--paths", action="store_true", help="also print per-path I/Os, shares, IOPS, I/Os in flight and latencies")
    sim.add_argument(
        "--by",
        action="append",
        choices=["host", "device", "op", "workload"],
        help="also print the figures per host, per device (a host's view of a volume), per op (read, write) or per "
        "workload (a VM or fio job: esxtop's VM view) (repeatable)",
    )
    sim.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    sim.add_argument("--predict", action="store_true", help="also show the analytic figures (pathsel predict) beside the simulated ones")
    add_emit_options(sim, "the chosen policy (--policy SPEC) without running it")
    sim.set_defaults(func=_cmd_simulate)

    pre = sub.add_parser("predict", help="print the analytic figures: throughput bounds, and Mean Value Analysis where a policy has a fixed split")
    pre.add_argument("file", nargs="?", help="scenario TOML file (default: the embedded Hosterman 2018 test drive)")
    pre.add_argument("--policy", action="append", metavar="SPEC", help="policy to analyse instead of the file's (repeatable)")
    pre.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    pre.add_argument("--paths", action="store_true", help="also print each policy's path shares and MVA latency per path")
    pre.set_defaults(func=_cmd_predict)

    val = sub.add_parser("validate", help="run the validation cases (sims/validation) and compare with published and exact figures")
    val.add_argument(
        "cases",
        nargs="*",
        metavar="CASE",
        help="case files or directories (default: ./sims/validation if there is one, else the cases installed with pathsel)",
    )
    length = val.add_mutually_exclusive_group()
    length.add_argument("--quick", action="store_true", help="each case at its quick_duration, short lengths at which its checks hold")
    length.add_argument("--full", action="store_true", help="each case at its full_duration on both engines (tens of minutes)")
    val.add_argument(
        "--engine",
        default=None,
        choices=["both", "fast", "reference"],
        help="engines to run built-in policies on (default: fast; both with --full; Python policies always run on reference)",
    )
    val.add_argument("--json", action="store_true", help='print {"cases": [...]} on stdout')
    where = val.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=_positive_int, metavar="N", help="N > 1: the reference engine's cases in N worker processes beside this one (default: 1)"
    )
    where.add_argument("--serial", action="store_true", help="run every case in this process, one after another (the default)")
    val.add_argument("-q", "--quiet", action="store_true", help="no line per case on stderr")
    val.set_defaults(func=_cmd_validate)

    exa = sub.add_parser(
        "example", help="list the example scenarios and validation cases installed with pathsel (a checkout's sims/), print one or write them out"
    )
    exa.add_argument(
        "name", nargs="?", metavar="NAME", help="an example, as listed (fast-failover, validation/failover): print it, or write it with -o"
    )
    exa.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="write NAME and the files it reads into DIR, laid out as in sims/ (without NAME: every example); never overwrites a different file",
    )
    exa.set_defaults(func=_cmd_example)

    pol = sub.add_parser("policies", help="list the built-in policies, their parameters and defaults")
    pol.add_argument("--markdown", action="store_true", help="print docs/policies.md's table instead (generated from the policies' definitions)")
    pol.add_argument("--presets", action="store_true", help="list the shipped defaults usable as preset:NAME (as pathsel presets)")
    pol.set_defaults(func=_cmd_policies)

    sch = sub.add_parser("schema", help="print the JSON Schema of scenario files (for editors)")
    sch.set_defaults(func=_cmd_schema)

    wrm = sub.add_parser(
        "warm",
        help="compile the fast engine and a scenario's policies now (once per machine), so that the first run starts at once",
    )
    wrm.add_argument("file", nargs="?", metavar="FILE", help="scenario whose policies to compile (default: the embedded default)")
    wrm.add_argument("--policy", action="append", metavar="SPEC", help="compile this policy instead of the file's (repeatable)")
    wrm.add_argument("--all", action="store_true", help="compile every built-in policy (what a sweep or a league may run)")
    wrm.add_argument("-q", "--quiet", action="store_true", help="no notice, no progress bar, no summary")
    wrm.set_defaults(func=_cmd_warm)

    rep = sub.add_parser("report", help="run a scenario's policies and write a self-contained HTML report with figures")
    rep.add_argument("file", nargs="?", help="scenario TOML file, or a validation case file (default: the embedded Hosterman 2018 test drive)")
    rep.add_argument("-o", "--output", default="report.html", metavar="HTML", help="where to write the report (default: report.html)")
    rep.add_argument("--policy", action="append", metavar="SPEC", help="policy to run instead of the file's (repeatable)")
    rep.add_argument("--duration", type=_duration, help="measured time after the ramp: seconds (20) or with a unit (500ms, 2min)")
    rep.add_argument("--seed", type=_seed, help="random seed (same seed, same results)")
    rep.add_argument("--engine", default="auto", choices=["auto", "fast", "reference"], help="as for simulate")
    rep.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no closing line")
    rep.set_defaults(func=_cmd_report)

    top = sub.add_parser(
        "top",
        help="watch one policy's run live as esxtop shows a host: per device, adapter, path, host and VM; -b writes esxtop's CSV",
    )
    top.add_argument("file", nargs="?", help="scenario TOML file (default: the embedded Hosterman 2018 test drive)")
    top.add_argument("--policy", metavar="SPEC", help="the file's policy with this label or spec, or any policy spec (default: the file's first)")
    top.add_argument(
        "--speed",
        type=_speed,
        metavar="X",
        help="simulated seconds per wall-clock second: paces the frames (default 1: real time; -b and --text: as fast as it runs)",
    )
    top.add_argument(
        "-d",
        "--delay",
        type=_duration,
        default=1.0,
        metavar="S",
        help="seconds between samples on the simulated host's clock, as esxtop's -d on the host's (default 1); "
        "on screen a frame every S/speed wall seconds",
    )
    top.add_argument(
        "-n",
        "--iterations",
        type=_positive_int,
        metavar="N",
        help="stop after N samples, as esxtop's -n (without --duration the run lasts long enough for them)",
    )
    top.add_argument(
        "--view",
        default="devices",
        choices=["devices", "adapters", "paths", "hosts", "vms", "u", "d", "p", "h", "v"],
        help="first view, by name or esxtop's key: u devices, d adapters, v VMs (esxtop's screens); p paths, h hosts (pathsel's)",
    )
    top.add_argument("--duration", type=_duration, help="measured time after the ramp: seconds (20) or with a unit (500ms)")
    top.add_argument("--seed", type=_seed, help="random seed (same seed, same results)")
    top.add_argument(
        "-b", "--batch", action="store_true", help="write esxtop -b's perfmon CSV (PDH-CSV 4.0), a line per sample, to stdout (no terminal needed)"
    )
    top.add_argument("--text", action="store_true", help="print plain-text snapshots of the view instead, one per sample (no terminal needed)")
    top.set_defaults(func=_cmd_top)

    swp = sub.add_parser("sweep", help="run a grid of policy and scenario parameters x replications; save a tidy table")
    swp.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="scenario files (default: the embedded Hosterman 2018 test drive); a [sweep] table in a file gives its grid",
    )
    swp.add_argument(
        "--param",
        action="append",
        metavar="NAME=V1,V2,...",
        help="a parameter and its values: FAMILY.key for a policy parameter (latency.num_sampling_cycles=16,32,64) or a scenario key (replication.one_way_latency=0.5ms,1ms; workloads[0].iodepth=8,32) (repeatable)",
    )
    swp.add_argument(
        "--replications", type=_positive_int, metavar="N", help="runs per point on seeds spawned from --seed (default: the file's [sweep], else 3)"
    )
    swp.add_argument("--seed", type=_seed, help="root seed of the replications (default: the file's [sweep] seed, else its seed)")
    swp.add_argument("--policy", action="append", metavar="SPEC", help="policy to run instead of the files' (repeatable)")
    swp.add_argument("--duration", type=_duration, help="measured time after the ramp: seconds (20) or with a unit (500ms) (default: each file's)")
    swp.add_argument("--engine", default="auto", choices=["auto", "fast", "reference"], help="as for simulate")
    swp.add_argument("--out", metavar="FILE", help="results table, .parquet or .csv, written as runs finish; the same command again resumes")
    where = swp.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_positive_int, metavar="N", help="local worker processes (default: every core)")
    where.add_argument("--serial", action="store_true", help="run in this process, one run after another")
    where.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster, e.g. tcp://scheduler:8786")
    swp.add_argument("--json", action="store_true", help="print the summary as one JSON document; no progress bar")
    swp.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    swp.set_defaults(func=_cmd_sweep)

    rec = sub.add_parser("recommend", help="from a sweep's results: per metric, the setting with the best worst-case regret")
    rec.add_argument("results", metavar="RESULTS", help="a results table written by pathsel sweep --out (.parquet or .csv)")
    rec.add_argument(
        "--metric",
        action="append",
        choices=["iops", "p99", "convergence"],
        help="metric to recommend for (repeatable; default: all, convergence when there are faults)",
    )
    rec.add_argument(
        "--policy",
        action="append",
        metavar="NAME",
        help="policy label or family (latency, rr) to choose among (repeatable; default: the ones the swept policy parameters apply to)",
    )
    rec.add_argument("--html", metavar="FILE", help="also write the regret heatmaps to this HTML file")
    rec.add_argument("--top", type=_positive_int, default=10, metavar="N", help="settings shown per metric (default: 10)")
    rec.add_argument("--json", action="store_true", help="print one JSON document")
    add_emit_options(rec, "the recommended setting")
    rec.set_defaults(func=_cmd_recommend)
    lea = sub.add_parser("league", help="every built-in policy at its defaults over the scenario library: regret, league table, heatmaps")
    lea.add_argument(
        "files", nargs="*", metavar="FILE", help="scenario files or folders (default: the library, sims/library); their own policies are replaced"
    )
    lea.add_argument("--policy", action="append", metavar="SPEC", help="policies to rank instead of every built-in one (repeatable)")
    lea.add_argument("--replications", type=_positive_int, default=3, metavar="N", help="runs per scenario and policy (default: 3)")
    lea.add_argument("--seed", type=_seed, help="root seed of the replications (default: each file's seed)")
    lea.add_argument("--duration", type=_duration, help="measured time after the ramp (default: each file's)")
    lea.add_argument("--engine", default="fast", choices=["auto", "fast", "reference"], help="as for simulate (default: fast)")
    lea.add_argument("--out", metavar="FILE", help="results table, .parquet or .csv, written as runs finish; the same command again resumes")
    lea.add_argument("--table", metavar="FILE", help="rank a results table already written by --out, without running")
    lea.add_argument(
        "--timeout-scale",
        type=_positive_float,
        metavar="X",
        help="multiply each host's io_timeout and apd_timeout by X, in (0, 1], so faults that outlast them fail I/Os "
        "within the short runs (default: 0.01, 30 s -> 300 ms; 1: as the files give them; never below 10 us)",
    )
    lea.add_argument(
        "--fresh", type=_positive_int, metavar="N", help="instead of the library: N scenarios generated from --fresh-seed (a held-out set)"
    )
    lea.add_argument("--fresh-seed", type=_seed, default=20261123, help="seed of the generated scenarios (default: 20261123)")
    lea.add_argument("--write-fresh", metavar="DIR", help="keep the generated scenarios in DIR")
    lea.add_argument("--html", metavar="FILE", help="also write the league table and regret heatmaps to this HTML file")
    lea.add_argument("--markdown", metavar="FILE", help="also write the league table as Markdown")
    lea.add_argument("--top", type=_positive_int, metavar="N", help="rows shown (default: all)")
    lea.add_argument("--sensitivity", action="store_true", help="also sweep guard's parameters one at a time over the same scenarios and seeds")
    where = lea.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_positive_int, metavar="N", help="local worker processes (default: every core)")
    where.add_argument("--serial", action="store_true", help="run in this process, one run after another")
    where.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster, e.g. tcp://scheduler:8786")
    lea.add_argument("--json", action="store_true", help="print standings, scores and verdict as one JSON document")
    lea.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    lea.set_defaults(func=_cmd_league)

    add_site_commands(sub, _duration, _seed, _positive_int)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_join_negative_values(list(sys.argv[1:] if argv is None else argv)))
    try:
        return int(args.func(args))
    except ScenarioError as e:
        for line in e.lines():  # every problem of the file, one located line each
            print(f"pathsel: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pathsel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `pathsel schema | head`: the reader left; not an error of ours
        sys.stderr = open(os.devnull, "w")
        return 0


if __name__ == "__main__":
    sys.exit(main())
