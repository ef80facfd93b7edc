"""The skeptical check of a MiniWoB++ audit's false accepts, with CUBE's own API (never verimut's code).

Run in CUBE's interpreter: `.venv-cube/bin/python precision/cube_miniwob.py AUDIT [--seed 30] [--sample 8]`.
For each sampled false accept it opens the task's page with the cube's own `MiniWobTask` (its reset, the seed in
place of the cube's fixed 42, as miniwob's gymnasium environment seeds), reads the instruction the page shows,
acts through the cube's own Playwright tool (a click on the checkbox whose label the action names, typing into
the input, a click on the button), calls `Task.evaluate()` and reads MiniWoB++'s raw reward, and lists which boxes
end checked against the ones the instruction asks for. It writes AUDIT/precision-miniwob.json.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import socket
from pathlib import Path
from typing import Any

from cube.core import Action, Observation
from cube_browser_playwright import PlaywrightSessionConfig
from cube_browser_tool import PlaywrightConfig
from miniwob_cube import MiniWobBenchmarkConfig, MiniWobTask
from miniwob_cube.task import _build_setup_js, _parse_setup_result


class Seeded(MiniWobTask):
    seed: int = 42

    def reset(self) -> tuple[Observation, dict[str, Any]]:
        self.tool.goto(self.url)
        js = _build_setup_js(self.remove_human_display, self.episode_max_time)
        js = js.replace("Math.seedrandom(42);", f"Math.seedrandom({int(self.seed)});")
        goal, info = _parse_setup_result(self.tool.evaluate_js(js))
        return Observation.from_text(goal), {**info, "goal": goal}


def port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cube_action(task: MiniWobTask, action: dict[str, Any]) -> Action:
    args = action["args"]
    if action["name"] == "check":
        ident = task.tool.page.evaluate(
            "(t) => { const l = Array.from(document.querySelectorAll('#area label'))"
            ".find(l => l.textContent.trim() === t); return l ? l.querySelector('input').id : null; }",
            args["label"],
        )
        return Action(name="browser_click", arguments={"selector": f"#{ident}"})
    if action["name"] == "fill":
        return Action(name="browser_type", arguments={"selector": f"#{args['field']}", "text": args["text"]})
    if action["name"] == "choose":
        return Action(
            name="browser_select_option", arguments={"selector": f"#{args['field']}", "value": args["option"]}
        )
    return Action(name="browser_click", arguments={"selector": f"#area button:text-is({json.dumps(args['button'])})"})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("audit", type=Path)
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--sample", type=int, default=8)
    a = p.parse_args()
    manifest = json.loads((a.audit / "manifest.json").read_text())
    cells = {c["cell_id"]: c for c in manifest["cells"]}
    rows = [json.loads(line) for line in (a.audit / "cells.jsonl").read_text().splitlines()]
    fas = sorted(r["cell_id"] for r in rows if r["outcome"] == "false_accept")
    sample = sorted(random.Random(a.seed).sample(fas, min(a.sample, len(fas))))
    session = PlaywrightSessionConfig(headless=True, pw_extra_kwargs={"executable_path": "/usr/bin/chromium"})
    tool = PlaywrightConfig(browser=session, use_html=False, use_axtree=False, use_screenshot=False)
    config = MiniWobBenchmarkConfig(tool_config=tool, port=port())
    out = []
    with config.make():
        configs = {c.task_id: c for c in config.get_task_configs()}
        page: Seeded | None = None
        for cell_id in sample:
            cell = cells[cell_id]
            name, seed = cell["task"].rsplit("/", 1)
            c = configs[name]
            if page is None:
                page = Seeded(metadata=c.metadata, tool_config=c.tool_config, base_url=c.base_url)
            page.metadata, page.seed = c.metadata, int(seed)
            _, info = page.reset()
            for action in cell["run"]["actions"]:
                page.tool.execute_action(cube_action(page, action))
            reward, wob = page.evaluate()
            boxes = page.tool.page.evaluate(
                "() => Array.from(document.querySelectorAll('#area label')).filter(l => l.querySelector('input'))"
                ".map(l => [l.textContent.trim(), l.querySelector('input').checked])"
            )
            m = re.fullmatch(r"Select (.*) and click Submit\.", info["goal"])
            asked = sorted(w.strip() for w in m.group(1).split(",")) if m and m.group(1) != "nothing" else []
            checked = sorted(label for label, on in boxes if on)
            out.append(
                {
                    "cell_id": cell_id,
                    "instruction": info["goal"],
                    "actions": cell["run"]["actions"],
                    "reward": reward,
                    "raw_reward": wob.get("raw_reward"),
                    "asked": asked,
                    "checked": checked,
                    "missing": sorted(set(asked) - set(checked)),
                    "extra": sorted(set(checked) - set(asked)),
                }
            )
            print(f"{cell_id}: reward {reward} (raw {wob.get('raw_reward')}); asked {asked}; checked {checked}")
        if page is not None:
            page.tool.close()
    report = {"audit": str(a.audit), "seed": a.seed, "false_accepts": len(fas), "sampled": out}
    (a.audit / "precision-miniwob.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
