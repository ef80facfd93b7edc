"""The skeptical check of a MiniWoB++ audit's false accepts, with CUBE's own API (never verimut's code).

Run in CUBE's interpreter: `.venv-cube/bin/python precision/cube_miniwob.py AUDIT [--seed 30] [--sample 8]`.
For each sampled false accept it opens the task's page with the cube's own `MiniWobTask` (its reset, the seed in
place of the cube's fixed 42, as miniwob's gymnasium environment seeds), reads the instruction the page shows,
acts with Playwright's own locators on the cube's page (a checkbox by its label, an input by its id, a button by
its role and name, an element by its CSS and text: never verimut's element finder), calls `Task.evaluate()` and
reads MiniWoB++'s raw reward, and dumps what the page shows (each input's value or check, the area's text) for a
person to judge against the instruction. Sampling is stratified by task family (the MiniWoB++ task name without
its seed) so every kind of task with findings is looked at. It writes AUDIT/precision-miniwob.json.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import socket
from pathlib import Path
from typing import Any

from cube.core import Observation
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


def act(task: MiniWobTask, action: dict[str, Any]) -> str | None:
    """One of verimut's recorded actions done with Playwright's own locators on the cube's page (never verimut's
    element finder): the error, or None."""
    page, args, name = task.tool.page, action["args"], action["name"]
    area = page.locator("#area")
    if name == "key":
        page.keyboard.press(args["key"])
        return None
    if name == "check":
        loc = (
            area.locator("label").filter(has_text=re.compile(f"^\\s*{re.escape(args['label'])}\\s*$")).locator("input")
        )
    elif name in ("fill", "choose"):
        loc = (
            page.locator(f"#{args['field']}") if "field" in args else area.locator(args["css"]).locator("visible=true")
        )
    elif name in ("press", "submit") and "button" in args:
        loc = area.get_by_role("button", name=args["button"], exact=True)
    else:
        loc = area.locator(args["css"]).locator("visible=true")
        if "text" in args:
            exact = re.compile(f"^\\s*{re.escape(args['text'])}\\s*$")
            loc = loc.filter(has=page.get_by_text(exact)).or_(loc.filter(has_text=exact))
    if loc.count() != 1:
        return f"{loc.count()} elements for {action}"
    if name == "fill":
        loc.press_sequentially(args["text"])
    elif name == "choose":
        loc.select_option(label=args["option"])
    else:
        loc.click(timeout=5000)
    return None


PAGE_JS = """() => {
  const area = document.getElementById('area');
  const inputs = Array.from(area.querySelectorAll('input, textarea, select')).map((e) => {
    const l = e.closest('label');
    return [l ? l.textContent.trim() : (e.id || e.className || e.tagName), e.type === 'checkbox' || e.type === 'radio'
      ? e.checked : e.value];
  });
  const starred = Array.from(document.querySelectorAll('#main > .email-thread')).filter((t) => {
    const s = t.querySelector('.star'); return s && s.classList.contains('clicked');
  }).map((t) => t.querySelector('.email-sender').textContent.trim());
  return {inputs: inputs, starred: starred, text: area.innerText.replace(/\\s+/g, ' ').slice(0, 600)};
}"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("audit", type=Path)
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--sample", type=int, default=4, help="false accepts sampled per MiniWoB++ task (default 4)")
    p.add_argument("--family", default=None, help="only this family's false accepts (extra-oos); default: all")
    p.add_argument("--out", type=Path, default=None, help="default AUDIT/precision-miniwob.json")
    a = p.parse_args()
    manifest = json.loads((a.audit / "manifest.json").read_text())
    cells = {c["cell_id"]: c for c in manifest["cells"]}
    rows = [json.loads(line) for line in (a.audit / "cells.jsonl").read_text().splitlines()]
    fas = sorted(
        r["cell_id"]
        for r in rows
        if r["outcome"] == "false_accept" and (a.family is None or f":{a.family}:" in r["cell_id"] + ":")
    )
    by_task: dict[str, list[str]] = {}
    for f in fas:
        by_task.setdefault(f.split("/")[0], []).append(f)
    rng = random.Random(a.seed)
    sample = sorted(c for group in by_task.values() for c in rng.sample(group, min(a.sample, len(group))))
    session = PlaywrightSessionConfig(headless=True, pw_extra_kwargs={"executable_path": "/usr/bin/chromium"})
    tool = PlaywrightConfig(browser=session, use_html=False, use_axtree=False, use_screenshot=False)
    config = MiniWobBenchmarkConfig(tool_config=tool, port=port())
    out = []
    with config.make():
        configs = {c.task_id: c for c in config.get_task_configs()}
        page: Seeded | None = None
        for cell_id in sample:
            cell = cells[cell_id]
            name, seed = cell["task"].split("/")[:2]
            c = configs[name]
            if page is None:
                page = Seeded(metadata=c.metadata, tool_config=c.tool_config, base_url=c.base_url)
            page.metadata, page.seed = c.metadata, int(seed)
            # The task's reference run first (the run every cell is an edit of), for what its page shows at the end.
            page.reset()
            for x in manifest["tasks"][cell["task"]]["reference"]["actions"]:
                act(page, x)
            reference_reward, _ = page.evaluate()
            reference_page = page.tool.page.evaluate(PAGE_JS)
            _, info = page.reset()
            errors = [e for e in (act(page, x) for x in cell["run"]["actions"]) if e is not None]
            reward, wob = page.evaluate()
            row = next(r for r in rows if r["cell_id"] == cell_id)
            out.append(
                {
                    "cell_id": cell_id,
                    "instruction": info["goal"],
                    "edit": row["evidence"].get("edit"),
                    "actions": cell["run"]["actions"],
                    "errors": errors,
                    "reward": reward,
                    "raw_reward": wob.get("raw_reward"),
                    "page": page.tool.page.evaluate(PAGE_JS),
                    "reference_reward": reference_reward,
                    "reference_page": reference_page,
                    "verdict": None,  # a person's: "holds" or "disputed", with the reason, written by hand
                }
            )
            print(f"{cell_id}: reward {reward} (raw {wob.get('raw_reward')}); {row['evidence'].get('edit')}")
        if page is not None:
            page.tool.close()
    report = {"audit": str(a.audit), "seed": a.seed, "false_accepts": len(fas), "sampled": out}
    (a.out or a.audit / "precision-miniwob.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
