"""Symlinks that leave the ingested folder are listed as skipped (OUTSIDE_ROOT), never read."""

from __future__ import annotations

from pathlib import Path

from citebound.contracts.ingest import SkipReason
from citebound.ingest import ingest_paths
from citebound.ingest.discover import source_files
from citebound.store import SqliteStore

SECRET = "root:x:0:0:SECRET-PASSWD-LINE:/root:/bin/bash\n"


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "passwd.txt").write_text(SECRET, encoding="utf-8")
    (outside / "dir" / "notes.md").write_text("# Notes\n\n" + SECRET, encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.md").write_text("# Pump\n\nTorque the bolts to 45 Nm.\n", encoding="utf-8")
    (docs / "copy.md").symlink_to(docs / "manual.md")  # inside the folder: fine
    (docs / "passwd.txt").symlink_to(outside / "passwd.txt")
    (docs / "linked-dir").symlink_to(outside / "dir", target_is_directory=True)
    (docs / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    return docs, outside


def test_symlinks_out_of_the_folder_are_skipped_and_listed(
    tmp_path: Path, store: SqliteStore
) -> None:
    docs, _ = _folder(tmp_path)
    report = ingest_paths(store, [docs], collection="c", progress=False)
    outside = {s.source_path: s for s in report.skipped if s.reason is SkipReason.OUTSIDE_ROOT}
    assert set(outside) == {"docs/passwd.txt", "docs/linked-dir", "docs/dangling.txt"}
    assert "not followed" in outside["docs/passwd.txt"].message
    texts = [c.text for c in store.iter_chunks("c")]
    assert texts and not any("SECRET-PASSWD-LINE" in t for t in texts)
    assert any("45 Nm" in t for t in texts)
    assert {p.name for p in source_files([docs])} == {"manual.md", "copy.md"}


def test_a_symlink_swapped_in_later_is_dropped_on_reingest(
    tmp_path: Path, store: SqliteStore
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Alpha pumps run at 50 Hz.\n", encoding="utf-8")
    ingest_paths(store, [docs], collection="c", progress=False)
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    (docs / "a.txt").unlink()
    (docs / "a.txt").symlink_to(secret)
    report = ingest_paths(store, [docs], collection="c", progress=False)
    assert [s.reason for s in report.skipped] == [SkipReason.OUTSIDE_ROOT]
    assert not any("SECRET-PASSWD-LINE" in c.text for c in store.iter_chunks("c"))
