"""The package's shape: imports flow one way, no module imports another in a circle, no private name crosses a module.

The layers, lowest first (a module may import its own layer and the ones below):

    leaves     version, errors, units, limits, textread (the one capped reader), outputs (atomic writes), stats,
               metrics, jit (numba plumbing), timing (delay distributions, their kinds and files, arrivals:
               rate schedules and traces; what a scenario's times mean, read where it is validated),
               measured (fio, esxtop, iostat files read as figures), data (the installed examples' files)
    policy framework  what a policy is and how an engine runs it (define, kernel, base, adapter)
    policies   the built-in families, their shared selectors, the registry listing them, specs, presets
    scenario   reading and validating scenario files; scenario.systems (hosts' listings in, settings out)
    model      a scenario compiled for one run
    engine     the reference (SimPy) and fast (numba) engines
    results    what runs measured: tables, JSON, figures, the report
    api        pathsel.simulate
    studies    sweeps, recommendations, validation, analytic predictions; the installed examples
    top        pathsel top's live view and esxtop's batch CSV (below the command line, which runs it)
    cli        the command line and the package's front door; inside pathsel.cli, what the commands share
               (argument types, common helpers, systems: --emit) below the command families, which import no
               other family, below the entry that gathers them

Every import counts, function-level and typing-only ones (under ``if
TYPE_CHECKING:``) included: a lazy import is still a dependency, and a type
named in a signature is one a reader must open.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "pathsel"

LAYERS = [
    (
        "leaves",
        (
            "pathsel.version",
            "pathsel.errors",
            "pathsel.units",
            "pathsel.limits",
            "pathsel.textread",
            "pathsel.outputs",
            "pathsel.stats",
            "pathsel.metrics",
            "pathsel.jit",
            "pathsel.timing",
            "pathsel.data",
            "pathsel.measured",
        ),
    ),
    ("policy framework", ("pathsel.policies.framework",)),
    ("policies", ("pathsel.policies",)),
    ("scenario", ("pathsel.scenario",)),
    ("model", ("pathsel.model",)),
    ("engine", ("pathsel.engine",)),
    ("results", ("pathsel.results",)),
    ("api", ("pathsel.api",)),
    ("studies", ("pathsel.studies", "pathsel.examples")),
    ("top", ("pathsel.top",)),
    ("cli: shared", ("pathsel.cli.arguments", "pathsel.cli.common", "pathsel.cli.systems")),
    ("cli: commands", ("pathsel.cli.run", "pathsel.cli.validation", "pathsel.cli.studies", "pathsel.cli.watch", "pathsel.cli.listings")),
    ("cli", ("pathsel.cli", "pathsel")),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def layer(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank is not None, f"{module} is in no layer: add it to LAYERS"
    return rank


def resolve(module: str, node: ast.ImportFrom) -> list[tuple[str, list[str]]]:
    """The pathsel modules an import names, with the names it takes from each."""
    is_package = MODULES[module].name == "__init__.py"
    if node.level:
        base = module.split(".")
        base = base if is_package else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not (target == "pathsel" or target.startswith("pathsel.")):
        return []
    out = []
    plain = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        if sub in MODULES:  # `from . import plots`: the module itself
            out.append((sub, []))
        else:
            plain.append(alias.name)
    if plain:
        out.append((target, plain))
    return out


def imports() -> dict[str, list[tuple[str, list[str], int]]]:
    graph: dict[str, list[tuple[str, list[str], int]]] = {}
    for module, path in MODULES.items():
        edges = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                for target, names in resolve(module, node):
                    edges.append((target, names, node.lineno))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("pathsel."):
                        edges.append((alias.name, [], node.lineno))
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
                pass  # pathsel.__getattr__'s lazy plots/report: the front door may import anything
        graph[module] = edges
    return graph


GRAPH = imports()


def test_every_module_is_in_a_layer():
    for module in MODULES:
        layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_flow_one_way(module):
    mine = layer(module)
    for target, _, line in GRAPH[module]:
        if target not in MODULES:
            continue
        assert layer(target) <= mine, f"{module} (layer {LAYERS[mine][0]}) imports {target} (layer {LAYERS[layer(target)][0]}) at line {line}"


def test_command_families_import_no_other_family():
    """A command family of pathsel.cli imports none of the others (their layer allows it): what two share goes below."""
    families = dict(LAYERS)["cli: commands"]
    assert all(f in MODULES for f in families)
    for module in families:
        for target, _, line in GRAPH[module]:
            assert target == module or target not in families, (
                f"{module} line {line} imports the command family {target}: move what they share into pathsel.cli.common"
            )


def test_no_import_cycles():
    # an import under `if TYPE_CHECKING:` counts too: a reader (and the type checker) still needs one module to read the other
    edges = {m: {t for t, _, _ in GRAPH[m] if t in MODULES and t != m} for m in MODULES}
    # a package's __init__ re-exporting its own modules is not a cycle with them
    for m in edges:
        edges[m] = {t for t in edges[m] if not (MODULES[t].name == "__init__.py" and m.startswith(t + "."))}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                cycle = path[path.index(t) :] + [t]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_no_private_name_crosses_a_module():
    for module in MODULES:
        for target, names, line in GRAPH[module]:
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private, f"{module} line {line} imports private {private} from {target}"


MAX_MODULE_LINES = 800  # issue 49: a module a newcomer reads in one sitting, one idea each


def test_no_module_over_800_lines():
    """Every module of pathsel/ (generated data aside) holds at most 800 lines: a bigger one is several ideas."""
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in ROOT.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}
