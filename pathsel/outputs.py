"""Writing what a command makes (scenarios, reports, tables): never over one of its own inputs, never half a file.

:func:`check_not_input` compares an output with every input of the same
command by resolved path and by inode (a hard link or a symlink is the same
file); :func:`write_atomic` writes a temporary file beside the target and
renames it over, so a killed process or a full disk leaves the old file or
the new one, never a torn one.

How a file is replaced (:func:`atomic_path`, which :func:`write_atomic` uses):

* the temporary file is created in the target's own folder (a rename is
  atomic only within one file system), named ``.NAME.XXXXXXXX.pathsel-tmp``,
  flushed to disk (``fsync``) and renamed over the target with
  :func:`os.replace`; the folder is then synced so the rename itself
  survives a power cut (POSIX rename(2); "Ensuring data reaches disk",
  Jeff Moyer, LWN.net, 2011, https://lwn.net/Articles/457667/);
* on any failure (an exception while rendering, a full disk) the temporary
  file is removed and the old file is left as it was;
* an existing file keeps its permission bits (``chmod`` of the old mode); a
  new file gets ``0o666`` less the umask, as ``open(path, "w")`` would give
  it. Owner and group are not copied (only root could);
* a symlink is followed: the file it names is replaced and the link stays;
  a hard link is not (the rename gives this name a new inode, the other
  names keep the old contents), as with any editor that saves by renaming;
* an existing target that is not a regular file (``/dev/null``,
  ``/dev/stdout``, a named pipe) is written in place: renaming over a device
  node would replace the device, and a stream has no half to fear.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .errors import ScenarioError, check_writable
from .textread import read_capped

__all__ = ["check_output", "check_not_input", "same_file", "scenario_files", "write_atomic", "atomic_path", "atomic_open", "TMP_SUFFIX"]

TMP_SUFFIX = ".pathsel-tmp"
Pathish = str | os.PathLike[str]


def _stat(path: Pathish) -> os.stat_result | None:
    try:
        return os.stat(path)  # follows symlinks: a link and its target are one file
    except (OSError, ValueError):  # missing, a NUL in the name, a loop of links
        return None


def same_file(a: Pathish, b: Pathish) -> bool:
    """Whether ``a`` and ``b`` name one file: the same resolved path, or the same device and inode (hard links)."""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
    except (OSError, ValueError):
        pass
    sa, sb = _stat(a), _stat(b)
    return sa is not None and sb is not None and (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_not_input(
    output: Pathish | None,
    inputs: Iterable[tuple[str, Pathish | None]],
    *,
    option: str = "",
) -> None:
    """Refuse, before any work, an ``output`` that is one of the command's ``inputs`` ((role, path) pairs; None skipped).

    Raises ScenarioError(output, "", "is one of this command's inputs (ROLE): ...") naming the option that gave it.
    """
    if output is None:
        return
    for role, path in inputs:
        if path is None:
            continue
        if same_file(output, path):
            via = "" if os.fspath(path) == os.fspath(output) else f" {os.fspath(path)!r}"
            writer = option or "the output"
            raise ScenarioError(
                os.fspath(output), "", f"is one of this command's inputs ({role}{via}): {writer} would overwrite it; write the output to another file"
            )


def check_output(
    output: Pathish | None,
    inputs: Iterable[tuple[str, Pathish | None]] = (),
    *,
    what: str = "file",
    option: str = "",
) -> None:
    """Every check of an output named on a command line, before any work: not one of ``inputs``
    (:func:`check_not_input`), a name the system takes, and writable (:func:`pathsel.errors.check_writable`)."""
    if output is None:
        return
    check_not_input(output, inputs, option=option)
    try:
        os.stat(output)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as e:  # a name too long, a NUL, a loop of links, a folder on the way not searchable
        problem = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ScenarioError(os.fspath(output), "", f"cannot write the {what} there: {problem}") from None
    check_writable(output, what)
    real = os.path.realpath(output)
    if real != os.path.abspath(output):  # a symlink: the file it names is the one written (its folder must take it)
        try:
            check_writable(real, what)
        except ScenarioError as e:
            raise ScenarioError(os.fspath(output), "", f"is a link to {real!r}: {e.problem}") from None


def scenario_files(file: str | Path | None, role: str = "the scenario") -> list[tuple[str, Path]]:
    """``file`` and every file it reads (empirical delay files, a replayed trace, a validation case's scenario),
    as (role, path) pairs for :func:`pathsel.outputs.check_not_input`; none for the embedded scenario.

    Called after the scenario has loaded (its errors are the loader's to report): a file that cannot be read
    again here counts as itself only.
    """
    out: list[tuple[str, Path]] = []
    todo = [(Path(file), role)] if file is not None else []
    while todo and len(out) < 1000:  # a case naming itself would loop: each file once
        path, what = todo.pop()
        if any(p == path for _, p in out):
            continue
        out.append((what, path))
        try:
            data: Any = tomllib.loads(read_capped(path, what="scenario file"))
        except (ValueError, OSError, RecursionError):  # RecursionError: tomllib on thousands of nested tables
            continue
        stack = [data]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for key, value in node.items():
                    if key in ("file", "read_iolog") and isinstance(value, str):
                        out.append((f"a file {path.name} reads", path.parent / value))
                    else:
                        stack.append(value)
            elif isinstance(node, list):
                stack.extend(node)
        meta = data.get("validation") if isinstance(data, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("scenario"), str):
            todo.append((path.parent / meta["scenario"], f"the scenario case {path.name} runs"))
    return out


def _mode_for(target: Path) -> int | None:
    """The permission bits to give the new file: the old file's, or None (a new file: the umask decides)."""
    st = _stat(target)
    return None if st is None else stat.S_IMODE(st.st_mode)


def _create_temp(folder: Path, name: str) -> tuple[int, Path]:
    for _ in range(100):
        tmp = folder / f".{name[:100]}.{secrets.token_hex(4)}{TMP_SUFFIX}"
        try:
            # 0o666 less the umask, as a plain open() would create the output
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")  # pragma: no cover - 100 collisions of 32 random bits


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - some systems cannot open a folder
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - a file system without folder sync
        pass
    finally:
        os.close(fd)


def _is_stream(target: Path) -> bool:
    st = _stat(target)
    return st is not None and not stat.S_ISREG(st.st_mode)


@contextlib.contextmanager
def atomic_path(path: Pathish) -> Iterator[Path]:
    """A temporary path beside ``path`` to write (a writer that wants a file name: pandas, pyarrow, plotly); on
    leaving the block without an exception it is synced and renamed over ``path``, else removed.

    For a target that exists and is not a regular file (``/dev/stdout``) the target itself is yielded.
    """
    target = Path(os.path.realpath(path))  # a symlink: replace the file it names, keep the link
    if _is_stream(target):
        yield target
        return
    mode = _mode_for(target)
    fd, tmp = _create_temp(target.parent, target.name)
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as f:  # the writer may not have synced: make the data durable before the rename
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:  # KeyboardInterrupt too: no temporary file left behind
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _sync_folder(target.parent)


@contextlib.contextmanager
def atomic_open(path: Pathish, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None) -> Iterator[IO[Any]]:
    """``open(path, mode)`` for writing ("w" or "wb") into a temporary file renamed over ``path`` on success."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes a whole file: mode 'w' or 'wb', not {mode!r}")
    binary = mode == "wb"
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding=None if binary else encoding, newline=None if binary else newline) as f:
            yield f
            f.flush()


def write_atomic(path: Pathish, data: str | bytes, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` (text as ``encoding``) to ``path`` all at once: the old file or the new one, never half.

    Returns ``path`` as a Path. An OSError (no space, read-only) propagates, the old file untouched.
    """
    if isinstance(data, str):
        data = data.encode(encoding)
    with atomic_open(path, "wb") as f:
        f.write(data)
    return Path(path)
