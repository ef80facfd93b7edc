"""The skeptical check of a WorkArena audit's false accepts, with WorkArena's own code (never verimut's).

    .venv/bin/python precision/workarena_standin.py AUDIT [--seed 41] [--sample 12]

No ServiceNow instance is reachable here, so the instance is the **stand-in** the audit ran on (verimut's offline
stand-in that reproduces WorkArena's navigation mechanism, not ServiceNow): started as a separate server process,
as a user would point at an instance, and talked to only over HTTP through WorkArena's own `SNowInstance` and
`table_api_call`. This script imports nothing of verimut.

For each sampled false accept (seeded, stratified by form template) it builds the task with WorkArena's own class
and shipped configuration, sets the unique values the run names (WorkArena draws them per task object; the run's
own values are the ones its validator must expect), runs `setup()`, does the run's steps with Playwright on
WorkArena's form (a field by its label, through WorkArena's own `fill_text`; the insert button), calls the
unmodified `validate()`, and reads back through WorkArena's Table API the record the run created: the requested
fields and the out-of-scope field the edit set. A person judges each against the instruction. Writes
AUDIT/precision-workarena.json.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import browsergym.workarena as wa
from browsergym.workarena.api.utils import table_api_call
from browsergym.workarena.instance import SNowInstance
from browsergym.workarena.tasks.utils.form import fill_text
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
# The stand-in server, in its own process: the one piece that is not WorkArena's (there is no instance here).
STAND_IN = (
    "import sys, time\n"
    "from verimut.adapters.workarena.servicenow_standin import ADMIN, StandIn\n"
    "s = StandIn().start()\n"
    "print(s.url, *ADMIN, flush=True)\n"
    "sys.stdin.read()\n"
)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def form_classes() -> dict[str, Any]:
    """WorkArena's form templates by name ("incident"), from its registry: `create-<name>` L1 tasks."""
    l1 = set(wa.workarena_tasks_l1)
    found = {}
    for cls in wa.ATOMIC_TASKS:
        tid = cls.get_task_id()
        if tid in l1 and ".create-" in tid and hasattr(cls, "all_configs"):
            found[tid.split(".create-")[1].replace("-", "_")] = cls
    return found


def do(task: Any, page: Any, action: dict[str, Any]) -> str | None:
    """One step on WorkArena's form: set a field by its label (a choice by select, a box by check, else WorkArena's
    fill_text), or click the insert button. The error, or None."""
    iframe = page.frame_locator(f'iframe[name="{task.js_prefix}"]')
    try:
        if action["name"] in ("set_field", "set_field_then_submit"):
            name, value = action["args"]["field"], action["args"]["value"]
            label = page.evaluate(f"{task.form_js_selector}.getLabelOf({json.dumps(name)})")
            control = iframe.get_by_label(label, exact=True)
            if control.count() > 1:
                control = control.nth(0)
            kind = task.table_metadata[name]["type"]
            if kind == "choice":
                control.select_option(str(value))
            elif kind == "boolean":
                control.set_checked(str(value) == "true")
            else:
                fill_text(page=page, iframe=iframe, input_field=control, value=str(value))
            control.evaluate("e => e.blur()")
        if action["name"] in ("submit", "set_field_then_submit"):
            iframe.locator("#sysverb_insert").click()
            page.wait_for_timeout(1500)
    except Exception as e:  # noqa: BLE001  (reported for the person judging)
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("audit", type=Path)
    p.add_argument("--seed", type=int, default=41)
    p.add_argument("--sample", type=int, default=3, help="false accepts sampled per form template (default 3)")
    a = p.parse_args()
    manifest = json.loads((a.audit / "manifest.json").read_text())
    cells = {c["cell_id"]: c for c in manifest["cells"]}
    rows = {r["cell_id"]: r for r in map(json.loads, (a.audit / "cells.jsonl").read_text().splitlines())}
    fas = sorted(c for c, r in rows.items() if r["outcome"] == "false_accept")
    by_form: dict[str, list[str]] = {}
    for c in fas:
        by_form.setdefault(cells[c]["task"].split("/")[1].rsplit("-", 1)[0], []).append(c)
    rng = random.Random(a.seed)
    sample = sorted(c for group in by_form.values() for c in rng.sample(group, min(a.sample, len(group))))
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "python"), "-c", STAND_IN],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    url, user, password = server.stdout.readline().split()
    instance = SNowInstance(snow_url=url, snow_credentials=(user, password))
    classes = form_classes()
    out = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
            for cell_id in sample:
                cell = cells[cell_id]
                protocol, rest = cell["task"].split("/")
                form, index = rest.rsplit("-", 1)
                cls = classes[form]
                config = cls.all_configs()[int(index)]
                task = cls(seed=7001, instance=instance, fixed_config=config)
                actions = cell["run"]["actions"]
                given = {x["args"]["field"]: x["args"]["value"] for x in actions if "field" in x.get("args", {})}
                for name in task.unique_valued_fields or {}:  # the run's own unique values are the ones asked for
                    if name in given:
                        task.template_record[name] = given[name]
                context = browser.new_context(viewport={"width": 1280, "height": 720})
                page = context.new_page()
                goal, _ = task.setup(page=page)
                page.wait_for_timeout(2000)  # WorkArena's page scripts (submit hook, field monitor) settle
                task._get_fields(page)  # as its cheat() does first: validate() names fields by these labels
                errors, verdicts = [], []
                for x in actions:
                    e = do(task, page, x)
                    if e:
                        errors.append(e)
                    if protocol == "per-step":
                        verdicts.append(task.validate(page, [])[:2])
                reward, _, _, info = task.validate(page, [{"role": "user", "message": goal}])
                fields = sorted(set(task.expected_fields))
                records = table_api_call(
                    instance=instance,
                    table=task.table_name,
                    params={
                        "sysparm_query": f"sys_created_by={task._base_user_name}",
                        "sysparm_display_value": "false",
                        "sysparm_fields": ",".join(fields),
                    },
                )["result"]
                out.append(
                    {
                        "cell_id": cell_id,
                        "instruction": goal,
                        "edit": rows[cell_id]["evidence"].get("edit"),
                        "actions": actions,
                        "errors": errors,
                        "per_step": verdicts,
                        "reward": reward,
                        "message": info.get("message", ""),
                        "task_fields": list(task.task_fields),
                        "records": records,
                        "verdict": None,  # a person's: holds / disputed / wrong, with the reason
                    }
                )
                print(f"{cell_id}: reward {reward}; {info.get('message', '')}; errors {errors}")
                try:
                    task.teardown()
                except Exception as e:  # noqa: BLE001
                    print(f"  teardown: {e}", file=sys.stderr)
                context.close()
            browser.close()
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    report = {"audit": str(a.audit), "seed": a.seed, "false_accepts": len(fas), "sampled": out}
    (a.audit / "precision-workarena.json").write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
