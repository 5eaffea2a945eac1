"""The worked example of docs/auth.md (examples/rbac_test/) runs as written, and the doc shows it as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rbac_test"


def test_the_doc_shows_the_example_as_it_is():
    assert (EXAMPLE / "test_controller_rbac.py").read_text() in (ROOT / "docs" / "auth.md").read_text()


def test_the_worked_example_passes_as_written():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("MOCKAPI_URL", None)
    env.pop("MOCKAPI_RBAC_URL", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
