"""mkdocs hooks (mkdocs.yml's ``hooks:``): the notebooks in the site, and links written for GitHub.

The repository keeps its notebooks in ``notebooks/``, beside ``docs/``, and
links between the two as they resolve on GitHub (``../docs/model.md`` from a
notebook, ``../notebooks/01-quickstart.ipynb`` from a page). In the site both
live under one root (``notebooks/01-quickstart/`` beside ``model/``), so:

* ``on_files`` adds ``notebooks/*.ipynb`` to the site's files, before
  mkdocs-jupyter turns them into pages (it renders them as they are stored,
  outputs included, without running them);
* ``on_page_markdown`` rewrites a page's links into ``../notebooks/`` to the
  notebook's page, which mkdocs then checks like any other link;
* ``on_page_content`` rewrites a notebook's links into ``../docs/`` to the
  page's URL; a link to a page or heading that does not exist is a warning,
  which ``mkdocs build --strict`` turns into a failure, as it does for pages.
  On the API pages it drops the Sphinx roles the docstrings use
  (``:class:`~pathsel.Scenario``` shows as ``Scenario``).
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url

log = logging.getLogger("mkdocs.hooks.pathsel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = "notebooks"

_MD_LINK = re.compile(r"\]\((?P<target>[^)\s#]*)(?P<anchor>#[^)\s]*)?\)")
_HREF = re.compile(r'href="(?P<target>[^"#:]*)(?P<anchor>#[^"]*)?"')
_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(?:~(?:[\w.]*\.)?)?")
_pending: list[tuple[str, File, str]] = []  # (notebook, linked page, anchor): checked after the build


@event_priority(100)  # before mkdocs-jupyter's on_files, which wraps the notebooks as pages
def on_files(files: Files, config) -> Files:
    for nb in sorted((ROOT / NOTEBOOKS).glob("*.ipynb")):
        files.append(File(f"{NOTEBOOKS}/{nb.name}", str(ROOT), config["site_dir"], config["use_directory_urls"]))
    return files


def on_pre_build(config) -> None:
    _pending.clear()


def on_page_markdown(markdown: str, page, config, files: Files) -> str:
    """``../notebooks/X.ipynb`` from ``docs/`` is ``notebooks/X.ipynb`` in the site."""
    here = posixpath.dirname(page.file.src_uri)

    def rewrite(m: re.Match) -> str:
        target = m.group("target")
        repo_path = posixpath.normpath(posixpath.join("docs", here, target)) if target else ""
        if not repo_path.startswith(NOTEBOOKS + "/"):
            return m.group(0)
        return f"]({posixpath.relpath(repo_path, here or '.')}{m.group('anchor') or ''})"

    return _MD_LINK.sub(rewrite, markdown)


def on_page_content(html: str, page, config, files: Files) -> str:
    """A notebook's ``../docs/X.md#anchor`` links: to X's page in the site."""
    if page.file.src_uri.startswith("api/"):
        return _ROLE.sub("<code>", html)
    if not page.file.src_uri.startswith(NOTEBOOKS + "/"):
        return html
    here = posixpath.dirname(page.file.src_uri)

    def rewrite(m: re.Match) -> str:
        target, anchor = m.group("target"), m.group("anchor") or ""
        if not target.endswith((".md", ".ipynb")):
            return m.group(0)
        repo_path = posixpath.normpath(posixpath.join(here, target))
        site_path = repo_path.removeprefix("docs/")
        linked = files.get_file_from_path(site_path)
        if linked is None:
            log.warning("%s links to %s, which is not a page of the site", page.file.src_uri, target)
            return m.group(0)
        if anchor:
            _pending.append((page.file.src_uri, linked, anchor[1:]))
        return f'href="{get_relative_url(linked.url, page.url)}{anchor}"'

    return _HREF.sub(rewrite, html)


def on_post_build(config) -> None:
    for notebook, linked, anchor in _pending:
        anchors = getattr(linked.page, "present_anchor_ids", None) or set()
        if anchor not in anchors:
            log.warning("%s links to %s#%s, a heading that page does not have", notebook, linked.src_uri, anchor)
