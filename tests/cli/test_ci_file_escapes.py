"""CI files that any reader can read, whatever the benchmark's names hold (issue 43, item 7).

A task id holding ESC and BEL (tests/escbench.py) made junit.xml unparseable (XML 1.0 has no such characters, even
escaped); a verifier file whose name holds a space, "%" or "#" gave SARIF an artifact URI that is not one.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from junitparser import JUnitXml

from conftest import verimut
from escbench import TASK
from verimut.outputs import sarif


def test_junit_with_escapes_in_a_task_id_parses(tmp_path: Path):
    out, junit = tmp_path / "esc", tmp_path / "junit.xml"
    done = verimut("audit", "tests.escbench:benchmark", "-q", "--executor", "inprocess", "-o", str(out))
    assert done.returncode in (0, 1), done.stderr
    written = verimut("report", str(out), "--junit", str(junit))
    assert written.returncode in (0, 1), written.stderr
    root = ET.parse(junit).getroot()  # 0.4: "not well-formed (invalid token)"
    suites = [s.get("name") for s in root.iter("testsuite")]
    assert suites == [TASK.replace("\x1b", "\N{REPLACEMENT CHARACTER}").replace("\x07", "\N{REPLACEMENT CHARACTER}")]
    assert len(list(JUnitXml.fromfile(str(junit)))) == 1


def test_sarif_artifact_uris_are_percent_encoded(tmp_path: Path):
    odd = tmp_path / "my verifiers" / "100% #1.py"
    assert sarif._uri(str(odd), tmp_path) == {"uri": "my%20verifiers/100%25%20%231.py", "uriBaseId": sarif.SRCROOT}
    elsewhere = Path("/opt/x y/v#.py")
    assert sarif._uri(str(elsewhere), tmp_path) == {"uri": "file:///opt/x%20y/v%23.py"}
