"""Side check (outside the seeded sample): replay every AgentDojo false accept whose end state equals the
reference's (a trace-only finding), with precision/agentdojo.py's own replay."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
import importlib.util

spec = importlib.util.spec_from_file_location("pa", str(Path(__file__).parents[1] / "agentdojo.py"))
pa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pa)
audit = pa.load_audit(Path(sys.argv[1]))
rows = [r for r in audit.rows if r["outcome"] == "false_accept" and not r["evidence"].get("differs_from_reference")]
suites = {n: pa.Suite("v1.2", n) for n in sorted({r["task"].partition("/")[0] for r in rows})}
findings = [pa.replay(audit, suites, r, audit.run(r["cell_id"])) for r in sorted(rows, key=lambda r: r["cell_id"])]
meta = {
    "benchmark": "agentdojo v1.2 (trace-only false accepts, all of them, outside the sample)",
    "audit": sys.argv[1],
    "seed": "-",
    "false_accepts": 225,
    "false_rejects": 2,
    "sampled_false_accepts": len(findings),
    "outcomes": {},
    "replayed_with": "agentdojo 0.1.35's own suites, FunctionsRuntime and task verifiers",
}
md = pa.write_report(Path(sys.argv[2]), meta, findings)
for f in findings:
    print(
        f["cell_id"],
        f["verdict_verimut"],
        f["verdict_replayed"],
        f["verifier_detail"],
        len(f["state_diff"]),
        f["trace_difference"],
    )
