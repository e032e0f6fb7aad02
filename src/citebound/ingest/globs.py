"""Which files of a folder an ingest leaves out: `--include` / `--exclude` globs and a
`.citeboundignore` file, read like `.gitignore`.

Pattern rules (those of `.gitignore`, the common part):

- a pattern without a `/` (other than a trailing one) matches a name at any depth:
  `*.txt`, `mkdocs-requirements.txt`, `build`;
- a pattern with a `/` matches the path relative to the ingested folder: `drafts/*.md`,
  `/old` (a leading `/` only anchors);
- `*` and `?` never cross a `/`; `**` does (`**/tmp`, `a/**/b`, `logs/**`);
- a trailing `/` matches only folders; a matching folder leaves out everything under it;
- in `.citeboundignore`: blank lines and `#` comments are skipped, `!pattern` takes a file
  back in, and the last matching line wins.

`.citeboundignore` is read from the top of each folder given to `ingest` (not from subfolders).
`--exclude` adds patterns after the file's lines; `--include`, when given, keeps only files
matching one of its patterns. A file named on the command line is always read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

IGNORE_FILE = ".citeboundignore"

__all__ = ["IGNORE_FILE", "FileFilter", "Pattern"]


@lru_cache(maxsize=256)
def _regex(glob: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


@dataclass(frozen=True)
class Pattern:
    """One glob line: what it matches and whether it takes files back in (`!`)."""

    glob: str
    negated: bool = False
    dir_only: bool = False
    anchored: bool = False

    @classmethod
    def parse(cls, line: str) -> Pattern | None:
        """A pattern from one `.gitignore`-style line; None for blanks and comments."""
        line = line.rstrip("\n").rstrip()
        if not line or line.startswith("#"):
            return None
        negated = line.startswith("!")
        line = line[1:] if negated else line
        if line.startswith("\\"):  # `\#name`, `\!name`: a literal first character
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            return None
        anchored = "/" in line
        return cls(line.lstrip("/"), negated, dir_only, anchored)

    def matches(self, rel: str, is_dir: bool) -> bool:
        """True when the path `rel` (posix, relative to the folder) is matched."""
        if self.dir_only and not is_dir:
            return False
        regex = _regex(self.glob)
        if self.anchored:
            return regex.fullmatch(rel) is not None
        return regex.fullmatch(rel.rsplit("/", 1)[-1]) is not None


def _patterns(lines: Sequence[str]) -> tuple[Pattern, ...]:
    return tuple(p for p in (Pattern.parse(line) for line in lines) if p is not None)


@dataclass(frozen=True)
class FileFilter:
    """The include/exclude decision for the files under one ingested folder."""

    exclude: tuple[Pattern, ...] = ()
    include: tuple[Pattern, ...] = ()

    @classmethod
    def for_root(
        cls, root: Path, include: Sequence[str] = (), exclude: Sequence[str] = ()
    ) -> FileFilter:
        """The filter for folder `root`: its `.citeboundignore`, then `exclude`, `include`."""
        lines: list[str] = []
        ignore = root / IGNORE_FILE
        if ignore.is_file():
            lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
        return cls(_patterns([*lines, *exclude]), _patterns(include))

    def excluded(self, rel: str, is_dir: bool) -> bool:
        """True when `rel` is left out by the ignore lines (the last matching line wins)."""
        out = False
        for pattern in self.exclude:
            if pattern.matches(rel, is_dir):
                out = not pattern.negated
        return out

    def keeps_file(self, rel: str) -> bool:
        """True when the file `rel` is ingested: no excluded folder above it, not excluded
        itself, and matching `include` when that is given."""
        if self.exclude:
            parts = rel.split("/")
            for depth in range(1, len(parts)):
                if self.excluded("/".join(parts[:depth]), is_dir=True):
                    return False  # like git: nothing under an excluded folder comes back
            if self.excluded(rel, is_dir=False):
                return False
        return not self.include or any(p.matches(rel, False) != p.negated for p in self.include)
