"""Which files an ingest reads, and the source path each is stored under.

Source paths: a folder root `R` gives `f"{R.name}/{relative posix path}"`; a file argument
`F` gives `f"{F.parent.name}/{F.name}"`, so ingesting `docs/` or `docs/a.md` names the file
the same way. Hidden files and folders (leading `.`), `*.meta.json` sidecars and the store
directory are never ingested; symlinks that leave a folder are listed as skipped and never
followed. Candidates come back in sorted source_path order, so any input order gives the
same store (`ingest.pipeline`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from citebound.contracts.ingest import SkippedFile, SkipReason
from citebound.ingest.globs import FileFilter
from citebound.ingest.loaders import SIDECAR_SUFFIX, is_supported

__all__ = ["Candidate", "discover", "source_files"]


@dataclass(frozen=True)
class Candidate:
    path: Path
    source_path: str
    root: Path  # the resolved folder (or file) given to ingest: reads never leave it


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _escapes(link: Path, root: Path) -> SkippedFile | None:
    """A skip entry when the symlink `link` resolves outside `root` (or dangles): files
    outside an ingested folder are never read, whatever links point at them."""
    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling or a loop
        target = None
    if target is not None and target.is_relative_to(root):
        return None
    return SkippedFile(
        source_path=f"{root.name or 'root'}/{link.relative_to(root).as_posix()}",
        reason=SkipReason.OUTSIDE_ROOT,
        message=f"{link} is a symlink to {os.readlink(link)!r}, "
        + ("which does not exist" if target is None else f"outside {root}")
        + ": not followed (copy the file into the folder to ingest it)",
    )


def discover(
    roots: list[Path],
    store_root: Path | None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> tuple[list[Candidate], list[str], int, list[SkippedFile]]:
    """Candidates sorted by source_path, folder prefixes (deletion scopes), ignored count.
    `include` / `exclude` are globs (`ingest.globs`) applied under every folder root."""
    found: dict[str, Candidate] = {}
    prefixes: list[str] = []
    ignored = 0
    dupes: list[SkippedFile] = []

    def add(path: Path, source_path: str, root: Path) -> None:
        if source_path in found and found[source_path].path != path:
            dupes.append(
                SkippedFile(
                    source_path=source_path,
                    reason=SkipReason.DUPLICATE_ID,
                    message=f"{path} has the same source path as {found[source_path].path}",
                )
            )
            return
        found[source_path] = Candidate(path, source_path, root)

    for root in roots:
        if root.is_file():
            add(root, f"{root.parent.name}/{root.name}" if root.parent.name else root.name, root)
            continue
        prefix = root.name or "root"
        prefixes.append(prefix + "/")
        keep = FileFilter.for_root(root, include, exclude)
        for dirpath, dirnames, filenames in os.walk(root):  # never follows directory links
            here = Path(dirpath)
            for d in sorted(dirnames):
                if not _hidden(d) and (here / d).is_symlink():
                    escaped = _escapes(here / d, root)
                    if escaped is not None:
                        dupes.append(escaped)
            rel_dir = here.relative_to(root).as_posix()
            rel_dir = "" if rel_dir == "." else rel_dir + "/"
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not _hidden(d)
                and (here / d).resolve() != store_root
                and not keep.excluded(rel_dir + d, is_dir=True)
            )
            for name in sorted(filenames):
                path = here / name
                if name.endswith(SIDECAR_SUFFIX):
                    continue
                if _hidden(name):
                    # Never read, but listed: a document named `.notes.md` is not lost without
                    # a word (#34). Hidden files of other types (.DS_Store, .citeboundignore)
                    # are not documents and stay unlisted, like hidden folders.
                    if is_supported(path) and keep.keeps_file(rel_dir + name):
                        dupes.append(
                            SkippedFile(
                                source_path=f"{root.name or 'root'}/{rel_dir}{name}",
                                reason=SkipReason.HIDDEN,
                                message="its name starts with '.', and hidden files are never "
                                "ingested: rename it to ingest it",
                            )
                        )
                    continue
                if not keep.keeps_file(rel_dir + name):
                    continue
                if path.is_symlink() and (escaped := _escapes(path, root)) is not None:
                    dupes.append(escaped)  # listed, never read
                    continue
                if not is_supported(path):
                    ignored += 1
                    continue
                add(path, f"{prefix}/{path.relative_to(root).as_posix()}", root)
    ordered = [found[k] for k in sorted(found)]
    return ordered, sorted(set(prefixes)), ignored, dupes


def source_files(
    paths: Sequence[Path],
    store_root: Path | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> list[Path]:
    """The files `ingest_paths(store, paths)` would load, in its order (by source path):
    supported, not hidden, not a sidecar, not inside `store_root`, not left out by globs."""
    roots = sorted({Path(p).resolve() for p in paths})
    store = store_root and store_root.resolve()
    return [c.path for c in discover(roots, store, include, exclude)[0]]
