"""docs/extenders.md is tested as written: its "from zero to a passing test" file runs as the
reader would run it (pytest in a fresh process)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
def test_the_docs_test_file_passes_as_written(tmp_path):
    text = (ROOT / "docs" / "extenders.md").read_text()
    source = re.search(r"```python test_my_extender\.py\n(.*?)```", text, re.S).group(1)
    (tmp_path / "test_my_extender.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_extender.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout
