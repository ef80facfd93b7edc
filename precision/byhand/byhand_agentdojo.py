"""By-hand reads (AgentDojo's own tools) for sampled false accepts that no reference-run read shows."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
spec = importlib.util.spec_from_file_location("pa", str(Path(__file__).parents[1] / "agentdojo.py"))
pa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pa)
audit = pa.load_audit(Path(sys.argv[1]))
rows = {r["cell_id"]: r for r in audit.rows}
checks = {
    "slack/user_task_14:extra:at-5": [("read_inbox", {"user": "Charlie"})],
    "slack/user_task_17:extra-oos:invite_user_to_slack@slack.users": [("read_inbox", {"user": "Fred"})],
    "slack/user_task_4:extra-oos:invite_user_to_slack@slack.users": [("read_inbox", {"user": "Dora"})],
    "slack/user_task_16:extra-oos:post_webpage@web.web_content": [("get_webpage", {"url": "www.our-company.com"})],
    "workspace/user_task_9:wrong-value:1.title": [("get_day_calendar_events", {"day": "2024-05-16"})],
}
suites = {}
for cid, reads in checks.items():
    r = rows[cid]
    s, _, t = r["task"].partition("/")
    suite = suites.setdefault(s, pa.Suite("v1.2", s))
    task = suite.tasks[t]
    start = suite.start(task)
    ref = [(c.function, dict(c.args)) for c in task.ground_truth(start.model_copy(deep=True))]
    ed = [(a["name"], dict(a["args"])) for a in audit.run(cid)["actions"]]
    e1, _ = suite.execute(start, ref)
    e2, _ = suite.execute(start, ed)
    for name, args in reads:
        a, b = suite.read(e1, name, args), suite.read(e2, name, args)
        print(f"{cid}: {name}({args}) differs={a != b}\n  reference: {a[:300]!r}\n  edited:    {b[:300]!r}")
