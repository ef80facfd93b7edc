"""The README's plug-in example runs, exactly as written there."""

from __future__ import annotations

import json
import re
import shlex

from conftest import ROOT, verimut


def test_the_readme_plugin_command_finds_the_duplicate(tmp_path):
    readme = (ROOT / "README.md").read_text()
    [line] = [m for m in re.findall(r"^\.venv/bin/verimut audit (examples\.\S+.*)$", readme, re.MULTILINE)]
    args = shlex.split(line)
    out = tmp_path / "todo"
    args[args.index("--out") + 1] = str(out)
    result = verimut("audit", *args)
    assert result.returncode == 1, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["control"] == {"control_pass": 2}
    # extra-ni's runs are extra's (the census marks the one write non-idempotent): one finding each, under extra
    assert {f["cell_id"] for f in summary["false_accepts"]} == {
        "todo/add_milk:extra",
        "todo/add_call:extra",
        "todo/add_milk:extra-oos:add_item@items",
        "todo/add_call:extra-oos:add_item@items",
    }
    assert summary["counts"]["extra-ni"] == {"same_run": 2}
    assert summary["counts"]["omit"] == {"same_run": 2}  # one write: omitting it is claim-only's run
    assert summary["counts"]["claim-only"] == {"rejected": 2}


def test_a_factory_is_called_with_the_version(tmp_path):
    (tmp_path / "mybench.py").write_text(
        "from examples.todo_bench import TodoBench\n"
        "def make(version):\n"
        "    b = TodoBench()\n"
        "    b.version = version or '1'\n"
        "    return b\n"
    )
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    run = subprocess.run(
        [sys.executable, "-m", "verimut.cli", "audit", "mybench:make", "--version", "2", "-o", "out", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["version"] == "2"
