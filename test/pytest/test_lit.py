"""Runs the lit suite (IR-shape and diagnostic tests under test/) as part of pytest."""

import os
import subprocess
import sys

TEST_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_lit_suite():
    r = subprocess.run([sys.executable, "-c", "from lit.main import main; main()", "-q", "-j2", TEST_DIR],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"lit failed:\n{r.stdout}\n{r.stderr}"
