"""`--include` / `--exclude` globs and `.citeboundignore` (read like `.gitignore`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.cli import main
from citebound.ingest.discover import source_files
from citebound.ingest.globs import FileFilter


def docs_folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    for rel in [
        "index.md",
        "mkdocs-requirements.txt",
        "guide/setup.md",
        "guide/notes.txt",
        "drafts/wip.md",
        "api/build/out.md",
        "api/ref.md",
    ]:
        path = docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n\nText of {rel}.\n", encoding="utf-8")
    return docs


def rels(docs: Path, **kw: tuple[str, ...]) -> list[str]:
    return [p.relative_to(docs).as_posix() for p in source_files([docs], **kw)]


@pytest.mark.parametrize(
    ("pattern", "rel", "is_dir", "expected"),
    [
        ("*.txt", "guide/notes.txt", False, True),
        ("notes.txt", "guide/notes.txt", False, True),
        ("guide/*.txt", "guide/notes.txt", False, True),
        ("/notes.txt", "guide/notes.txt", False, False),
        ("*.txt", "a/b.txt.md", False, False),
        ("guide/*", "guide/sub/x.md", False, False),  # * never crosses a /
        ("guide/**", "guide/sub/x.md", False, True),
        ("**/build", "api/build", True, True),
        ("build/", "api/build", True, True),
        ("build/", "build", False, False),  # a trailing / matches only folders
        ("a/**/b.md", "a/b.md", False, True),
        ("a/**/b.md", "a/x/y/b.md", False, True),
    ],
)
def test_pattern_rules(pattern: str, rel: str, is_dir: bool, expected: bool) -> None:
    assert (
        FileFilter.for_root(Path("/nonexistent"), exclude=[pattern]).excluded(rel, is_dir)
        is expected
    )


def test_exclude_and_include(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    assert rels(docs, exclude=("mkdocs-requirements.txt", "drafts/", "build")) == [
        "api/ref.md",
        "guide/notes.txt",
        "guide/setup.md",
        "index.md",
    ]
    assert rels(docs, include=("*.md",), exclude=("api/",)) == [
        "drafts/wip.md",
        "guide/setup.md",
        "index.md",
    ]
    assert rels(docs, include=("guide/*",)) == ["guide/notes.txt", "guide/setup.md"]


def test_citeboundignore_is_read_like_gitignore(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    (docs / ".citeboundignore").write_text(
        "# tooling, not documentation\n*.txt\n!guide/notes.txt\n\ndrafts/\n", encoding="utf-8"
    )
    assert rels(docs) == ["api/build/out.md", "api/ref.md", "guide/notes.txt", "guide/setup.md",
                          "index.md"]  # fmt: skip
    # --exclude comes after the file's lines; nothing under an excluded folder comes back
    assert "guide/notes.txt" not in rels(docs, exclude=("guide/",))


def test_ingest_cli_leaves_files_out_and_deletes_them_from_the_store(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    store = tmp_path / "store"
    runner = CliRunner()
    first = runner.invoke(main, ["ingest", str(docs), "--store", str(store), "--json"])
    assert json.loads(first.output)["files_seen"] == 7
    again = runner.invoke(
        main,
        ["ingest", str(docs), "--store", str(store), "--json",
         "--exclude", "mkdocs-requirements.txt", "--exclude", "drafts/"],
    )  # fmt: skip
    report = json.loads(again.output)
    assert (report["files_seen"], report["files_deleted"], report["files_ignored"]) == (5, 2, 0)
    only = runner.invoke(main, ["ingest", str(docs), "--store", str(store), "--json",
                                "--include", "index.md"])  # fmt: skip
    assert json.loads(only.output)["files_seen"] == 1
