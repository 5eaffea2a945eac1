"""docs/fault-injection.md's worked example, tested as written: the doc shows the files of
examples/fault_injection/ verbatim, and their tests pass when a user runs them with pytest."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "fault_injection"
DOC = ROOT / "docs" / "fault-injection.md"


@pytest.mark.parametrize("name", ["controller.py", "test_controller.py"])
def test_the_doc_shows_each_example_file_verbatim(name):
    assert f"`examples/fault_injection/{name}`" in DOC.read_text()
    assert f"```python\n{(EXAMPLE / name).read_text()}```\n" in DOC.read_text()


def test_the_example_tests_pass_when_run_with_pytest():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("MOCKAPI_URL", None)  # the plugin starts a server of its own
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "mockapi", str(EXAMPLE)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b5 passed\b", result.stdout), result.stdout
