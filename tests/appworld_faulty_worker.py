"""Test-only, AppWorld's side of appworld_faulty.py: the real AppWorldBench, with one injected fault."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from appworld_world import AppWorldBench


class FaultyAppWorldBench(AppWorldBench):
    def execute(self, episode: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
        arm = Path(os.environ["VERIMUT_TEST_ARM"])
        fired = arm.with_suffix(".fired")
        if arm.exists() and not fired.exists():
            fired.write_text(f"{action['name']}\n")
            if os.environ["VERIMUT_TEST_FAULT"] == "crash":
                os._exit(3)
            time.sleep(3600)
        return dict(super().execute(episode, action))
