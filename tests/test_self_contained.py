"""The repository needs nothing beside it: no tracked file (documentation aside) reads ``../shared``."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A path into the directory of that name beside the repository, however it is spelt: a relative
# path up and into it, a pathlib join, os.path.join, or its upstream-testdata folder (the last test
# spells each out). This file, which names them, is the one file not searched.
SHARED = "shar" + "ed"
OUTSIDE = re.compile(rf"\.\./{SHARED}\b|/\s*[\"']{SHARED}[\"']|join\([^)]*[\"']{SHARED}[\"']|\b{SHARED}/upstream")


def tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
        return [ROOT / name for name in listed if name]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an unpacked sdist): every file
        return [p for p in ROOT.rglob("*") if p.is_file() and not {".git", "__pycache__", ".venv"} & set(p.parts)]


def test_no_tracked_file_outside_the_documentation_reads_beside_the_repository():
    offenders = []
    for path in tracked_files():
        if path.suffix == ".md" or path == Path(__file__).resolve() or not path.is_file():
            continue
        text = path.read_bytes().decode(errors="replace")
        offenders += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()}" for m in OUTSIDE.finditer(text)]
    assert not offenders, "files reading beside the repository:\n" + "\n".join(offenders)


def test_the_pattern_catches_each_way_of_spelling_it():
    spelt = ["../" + SHARED + "/x.yaml", 'ROOT.parent / "' + SHARED + '" / "x"', "os.path.join(root, '" + SHARED + "')", SHARED + "/upstream-testdata"]
    assert all(OUTSIDE.search(s) for s in spelt)
    assert not OUTSIDE.search('{"' + SHARED + '": None}') and not OUTSIDE.search("patch/_" + SHARED + ".py")
