"""`report.html`: one self-contained page per audit or swap census, for people to look at.

At a glance: the family x outcome heat map per suite, the confirmed false accepts per task, the
swap census's i x j matrix per suite (rungs marked), a repair's before/after counts, and the
provenance; against an earlier audit (`--against`), the findings opened, closed and gone. Then the frame coverage and the answer channel (the answer families' outcomes per suite,
the null run's vacuous verifiers, each answer finding's edit), when the audit has them. One level down:
every confirmed false accept (and false reject) with its evidence (`cell_view.CellView`). Everything
is inline (CSS, one small script, the figures as PNG data URIs), so opening the file makes no request. Built from the directory's manifest, ledger,
rewards file, run log and repair summary alone (`store.Store`), so `verimut report DIR` rebuilds it.
"""

from __future__ import annotations

import functools
import re
import secrets
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2

from verimut.core.benchmark import USER
from verimut.core.cache import CACHE
from verimut.core.records import Cell, CellResult, Manifest, Outcome, RunRecord, natural
from verimut.engine import arms
from verimut.engine.manifest import Each, serially
from verimut.engine.store import REPORT, REPORT_PAGES, RUNS, Store
from verimut.findings import coverage, rewards
from verimut.findings import diff as diff_mod
from verimut.findings import summary as summary_mod
from verimut.findings import swap as swap_mod
from verimut.grammar.faults import CONTROL, spec_of
from verimut.outputs import cell_view, figures, swap_figure

FA, FR = Outcome.FALSE_ACCEPT.value, Outcome.FALSE_REJECT.value

Draw = Callable[..., str]  # how a context builder gets a figure: Draw(figures.some_figure, *its arguments)


def now(figure: Callable[..., str], *args: Any) -> str:
    """Draw the figure here and now."""
    return figure(*args)


class Later:
    """Figures drawn after the page is rendered, together: each is a placeholder in the page until `fill`
    puts its PNG in. The figures are most of the page's time, and drawn together they run on several cores."""

    def __init__(self) -> None:
        self.jobs: list[Callable[[], str]] = []
        # A random mark, so no text the benchmark put on the page can be taken for a placeholder.
        self.mark = f"verimut-figure-{secrets.token_hex(8)}-"

    def __call__(self, figure: Callable[..., str], *args: Any) -> str:
        self.jobs.append(functools.partial(figure, *args))
        return f"{self.mark}{len(self.jobs) - 1}."

    def fill(self, page: str, each: Each = serially) -> str:
        jobs = self.jobs
        if len(jobs) > 1:
            figures.load()  # once, here, not in each process that draws
        drawn = list(each(lambda k: jobs[k](), range(len(jobs))))
        return re.sub(re.escape(self.mark) + r"(\d+)\.", lambda found: drawn[int(found.group(1))], page)


def _compiled() -> jinja2.BytecodeCache | None:
    """Compiling the page's template takes longer than a small audit's scoring (a third of a second): keep the
    compiled code in the cache directory, keyed by the template's text (jinja's own check), so an edited template
    is compiled again. A cache that cannot be made (a read-only home) only costs the time."""
    where = CACHE / "templates"
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(where))


def _env() -> jinja2.Environment:
    # Autoescape: every string on the page (records, verifier messages, task text) comes from the
    # benchmark under audit and is shown as text, never interpreted as HTML.
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: files("verimut.outputs").joinpath("templates", name).read_text()),
        bytecode_cache=_compiled(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def when(runs: list[RunRecord]) -> dict[str, str]:
    """Date and wall time from the run log (pure)."""
    if not runs:
        return {"date": "not recorded", "wall time": "not recorded (this output predates " + RUNS + ")"}
    first = datetime.fromisoformat(runs[0].started)
    last = runs[-1]
    ended = datetime.fromisoformat(last.started) + timedelta(seconds=last.wall_seconds)
    wall = sum(r.wall_seconds for r in runs)
    resumed = f" over {len(runs)} invocations" if len(runs) > 1 else ""
    return {
        "date": f"{first:%Y-%m-%d %H:%M:%S} UTC to {ended:%Y-%m-%d %H:%M:%S} UTC",
        "wall time": f"{wall:.1f} s{resumed} (manifest build and scoring; a resumed run adds its own)",
    }


def provenance(m: Manifest, result: Any, runs: list[RunRecord]) -> list[tuple[str, str]]:
    rows = [
        ("benchmark", f"{m.benchmark} {m.version}"),
        *((f"{k}", v) for k, v in sorted(m.provenance.items())),
        ("verimut", m.verimut),
        ("arm", arms.of(m).title),
        ("manifest hash", m.content_hash),
        ("cells", f"{result.scored} of {result.cells} scored"),
        *when(runs).items(),
        ("scoring time", f"{result.seconds:.1f} s summed over cells (all workers)"),
        ("masked fields", ", ".join(m.masks) or "none"),
        ("telemetry (left out)", ", ".join(m.telemetry) or "none"),
    ]
    return rows


def fault_counts(m: Manifest, rows: Mapping[str, CellResult]) -> dict[str, dict[str, dict[str, int]]]:
    """suite -> family -> outcome -> cells (pure); a kind of task other than user tasks is a panel of its own."""
    out: dict[str, dict[str, Counter[str]]] = {}
    for cell in m.cells:
        kind = summary_mod.kind_of(m, cell.task)
        panel = swap_mod.suite_of(cell.task) + ("" if kind == USER else f" ({summary_mod.kind_title(kind)})")
        fam = out.setdefault(panel, {}).setdefault(cell.family, Counter())
        row = rows.get(cell.cell_id)
        fam[row.outcome if row else cell_view.NOT_SCORED] += 1
    return {s: {f: dict(c) for f, c in fams.items()} for s, fams in out.items()}


def per_task(rows: Mapping[str, CellResult], outcome: str) -> dict[str, dict[str, list[str]]]:
    """task -> family -> the ids of its cells with `outcome` (pure)."""
    # Filtered first, then sorted (a stable sort: the same order): only the matching rows' ids are held.
    found = [(r.cell_id, r.task, r.family) for r in rows.values() if r.outcome == outcome]
    out: dict[str, dict[str, list[str]]] = {}
    for cid, task, family in sorted(found, key=lambda f: natural(f[0])):
        out.setdefault(task, {}).setdefault(family, []).append(cid)
    return out


def split_rows(counts: Mapping[str, int], limit: int = figures.TOP) -> tuple[list[str], list[str]]:
    """A per-task table's rows: those it shows open and those it folds away (pure).

    Up to `limit` rows, every one open, in the given order (a small audit's page is unchanged); past
    that, the `limit` with the highest count open, highest first (the bar chart's tasks, in its order),
    and the rest folded, in the given order."""
    if len(counts) <= limit:
        return list(counts), []
    top = figures.ranked(counts, limit)
    shown = set(top)
    return top, [k for k in counts if k not in shown]


def _fault_context(
    m: Manifest, rows: Mapping[str, CellResult], s: summary_mod.Summary, draw: Draw = now
) -> dict[str, Any]:
    alternatives = [f for f in m.families if spec_of(f).is_alternative]
    # The heat map and the first tables are the planted faults'; alternative runs get a table of their own.
    counts = {
        suite: {f: c for f, c in fams.items() if f not in alternatives} for suite, fams in fault_counts(m, rows).items()
    }
    families = [CONTROL, *(f for f in m.families if f not in alternatives)]
    present = [
        o
        for o in [*summary_mod.OUTCOMES, cell_view.NOT_SCORED]
        if any(c.get(o) for fams in counts.values() for c in fams.values())
    ]
    fas = per_task(rows, FA)
    fa_open, fa_folded = split_rows({t: sum(len(ids) for ids in v.values()) for t, v in fas.items()})
    # One table per task kind (AgentDojo's user and injection tasks are reported apart).
    kinds: dict[str, dict[str, Counter[str]]] = {}
    for cell in m.cells:
        row = rows.get(cell.cell_id)
        fam = kinds.setdefault(summary_mod.kind_of(m, cell.task), {}).setdefault(cell.family, Counter())
        fam[row.outcome if row else cell_view.NOT_SCORED] += 1
    tables = [
        {"title": "all suites" if list(kinds) == [USER] else summary_mod.kind_title(k) + ", all suites", "totals": t}
        for k, t in sorted(kinds.items(), key=lambda kt: kt[0] != USER)
    ]
    every = [c for t in kinds.values() for f, c in t.items() if f not in alternatives]
    alt_every = [c for t in kinds.values() for f, c in t.items() if f in alternatives]
    alt_columns = [*summary_mod.ALT_OUTCOMES] + (
        [cell_view.NOT_SCORED] if any(c[cell_view.NOT_SCORED] for c in alt_every) else []
    )
    return {
        "families": families,
        "outcomes": present,
        "tables": tables,
        "col_max": {o: max([c[o] for c in every] + [1]) for o in present},
        "alternatives": alternatives,
        "alt_title": summary_mod.ALT_TITLE,
        "alt_note": summary_mod.ALT_NOTE,
        "alt_outcomes": alt_columns,
        "alt_col_max": {o: max([c[o] for c in alt_every] + [1]) for o in alt_columns},
        "heatmap": draw(figures.outcome_heatmaps, counts, present, families) if counts else None,
        "fa_per_task": fas,
        "fa_open": fa_open,
        "fa_folded": fa_folded,
        "fa_figure": (
            draw(
                figures.false_accepts_per_task,
                {t: {f: len(ids) for f, ids in v.items()} for t, v in fas.items()},
                m.families,
            )
            if fas
            else None
        ),
        "rewards_line": s.rewards.get("conclusion", ""),
        "coverage": _coverage_context(s.frame_coverage, draw),
        "answer": answer_context(s),
    }


def answer_context(s: summary_mod.Summary) -> dict[str, Any] | None:
    """The answer channel's section (pure), or None when the audit had no answer family and no null run."""
    if not s.answer_counts and s.null_runs is None:
        return None
    outcomes = summary_mod.ANSWER_OUTCOMES
    every = summary_mod.ALL_SUITES
    # Shaded against the suites' rows: the all-suites row would otherwise pale every other.
    top = {
        o: max([n.get(o, 0) for t in s.answer_counts.values() for k, n in t.items() if k != every] + [1])
        for o in outcomes
    }
    rows = [
        {
            "family": fam,
            "suite": suite,
            "all": suite == every,
            "cells": [(o, n.get(o, 0), min(1.0, n.get(o, 0) / top[o])) for o in outcomes],
        }
        for fam, suites in s.answer_counts.items()
        for suite, n in sorted(suites.items(), key=lambda sn: sn[0] == every)  # every suite's row last
    ]
    # Each finding's answer edit, so a person can check the value and what pins it without opening the cell.
    edits = [(f.cell_id, FA, f.answer) for f in s.false_accepts if f.answer is not None]
    edits += [(f.cell_id, FR, f.answer) for f in s.false_rejects if f.answer is not None]
    by_suite = s.null_runs_by_suite if len(s.null_runs_by_suite) > 1 else {}
    return {
        "outcomes": outcomes,
        "rows": rows,
        "null_sentence": s.null_runs.sentence if s.null_runs is not None else None,
        "null_by_suite": by_suite,
        "vacuous": s.vacuous,
        "vacuous_rewards": s.rewards.get("vacuous", ""),
        "edits": [{"cell_id": cid, "outcome": o, "a": a} for cid, o, a in edits],
        "numbers": s.reward_numbers if isinstance(s.reward_numbers, dict) else {},
    }


def coverage_figures(
    fc: coverage.FrameCoverage,
) -> dict[str, tuple[list[str], list[str], dict[tuple[str, str], tuple[int, int]]]]:
    """suite -> (its verifiers with a confirmed side effect, the collections those touch, the cells) (pure)."""
    out: dict[str, tuple[list[str], list[str], dict[tuple[str, str], tuple[int, int]]]] = {}
    for task, v in fc.verifiers.items():
        if not v.collections:
            continue
        verifiers, collections, cells = out.setdefault(v.suite, ([], [], {}))
        verifiers.append(task)
        for c, t in v.collections.items():
            cells[(task, c)] = (t.rejected, t.side_effects)
            if c not in collections:
                collections.append(c)
    return {suite: (vs, sorted(cs), cells) for suite, (vs, cs, cells) in out.items()}


def _coverage_context(fc: coverage.FrameCoverage | None, draw: Draw = now) -> dict[str, Any] | None:
    if fc is None:
        return None
    groups = [(s or "(no suite)", g) for s, g in fc.suites.items()]
    if len(fc.kinds) > 1:
        groups += [(f"kind: {k}", g) for k, g in fc.kinds.items()]
    missed = {t: v.false_accepts for t, v in fc.verifiers.items()}
    heatmaps = []
    for suite, (vs, cs, cells) in coverage_figures(fc).items():
        # A figure past `figures.TOP` verifiers draws the top ones and the collections those touch.
        drawn = set(figures.ranked({v: missed[v] for v in vs}, figures.TOP))
        wide = len({c for v, c in cells if v in drawn}) > 6
        heatmaps.append(
            {"suite": suite, "figure": draw(figures.frame_coverage, suite, vs, cs, cells, missed), "wide": wide}
        )
    listed = [t for t, v in fc.verifiers.items() if v.side_effects]
    # The table beside the figures: every verifier up to `figures.TOP`, past that the top ones by false accepts.
    shown, _ = split_rows({t: missed[t] for t in listed})
    return {
        "note": fc.note,
        "families": fc.families,
        "groups": [{"name": name, "g": g, "median": coverage.fmt(g.median)} for name, g in groups],
        "heatmaps": heatmaps,
        "verifiers": [
            {"task": t, "v": fc.verifiers[t], "coverage": coverage.fmt(fc.verifiers[t].coverage)} for t in shown
        ],
        "listed": len(listed),
        "without": sum(not v.side_effects for v in fc.verifiers.values()),
    }


def _swap_context(m: Manifest, rows: Mapping[str, CellResult], c: swap_mod.Census) -> dict[str, Any]:
    suites: dict[str, list[str]] = {suite: [] for suite in c.table}  # the order of Table 1
    for task in sorted(m.tasks, key=natural):
        suites.setdefault(swap_mod.suite_of(task), []).append(task)
    matrices = []
    for suite, tasks in suites.items():
        # The matrix's data, not a dict of its cells: a rung index per cell and the marks' places (a million
        # cells in one suite are 1 MB this way).
        cells = swap_figure.swap_cells(
            tasks,
            (
                (
                    cell.task,
                    cell.run_task,
                    CONTROL if cell.is_control else str(cell.detail["rung"]),
                    _outcome(rows, cell),
                )
                for cell in m.cells
                if swap_mod.suite_of(cell.task) == suite
            ),
        )
        # A large suite gets the page's whole width, or its labels and marks are too small to read.
        wide = len(tasks) > 25
        title = swap_mod.suite_title(suite)
        # An SVG written in milliseconds: drawn here, not among the matplotlib figures (swap_figure.py).
        matrices.append({"suite": title, "figure": swap_figure.swap_matrix(title, tasks, cells), "wide": wide})
    by_verifier: dict[str, list[str]] = {}
    for a in c.false_accepts:
        by_verifier.setdefault(a.verifier_task, []).append(a.cell_id)
    fa_open, fa_folded = split_rows({t: len(ids) for t, ids in by_verifier.items()})
    present = [a for a in c.acceptances if a.outcome == Outcome.ACCEPTED_EFFECT_PRESENT.value]
    return {
        "fa_per_task": by_verifier,
        "fa_open": fa_open,
        "fa_folded": fa_folded,
        "table": {swap_mod.suite_title(s): rows_ for s, rows_ in c.table.items()},
        "rung_names": swap_mod.RUNGS,
        "matrices": matrices,
        # Not findings, and one per acceptance: the page lists the first `figures.TOP`, summary.md/json every one.
        "present": present[: figures.TOP],
        "present_count": len(present),
    }


def _outcome(rows: Mapping[str, CellResult], cell: Cell) -> str:
    row = rows.get(cell.cell_id)
    return row.outcome if row else cell_view.NOT_SCORED


def _repair(store: Store) -> dict[str, Any] | None:
    r = store.repair_summary()
    if not isinstance(r, dict) or "now_rejected" not in r:
        return None
    return r


def repair_verdicts(repair: Mapping[str, Any] | None) -> dict[str, str]:
    """false accept -> what the repair does to it, from repair/summary.json (pure)."""
    said: dict[str, str] = {}
    for t in (repair or {}).get("tasks", []):
        said |= {cid: "rejected by the repair: " + "; ".join(why) for cid, why in t.get("caught", {}).items()}
        said |= {cid: "not repaired: " + why for cid, why in t.get("unrepaired", {}).items()}
    return said


def against_context(d: diff_mod.Diff | None, linked: set[str]) -> dict[str, Any] | None:
    """The section on an earlier audit (`--against`), or None (pure). `linked`: the cells this page shows one by
    one, which the section's cell ids link to."""
    if d is None:
        return None
    return {
        "title": diff_mod.title(d),
        "before": d.before,
        "note": d.note,
        "kinds": list(d.counts["opened"]),
        "statuses": diff_mod.STATUSES,
        "found": d.found,
        "counts": d.counts,
        "tasks_added": d.tasks_added,
        "tasks_removed": d.tasks_removed,
        "verifiers": {
            t: {st: diff_mod.kinds_text(s.get(st, {})) for st in diff_mod.STATUSES}
            for t, s in diff_mod.moved(d).items()
        },
        "changes": [{"c": c, "linked": c.cell_id in linked} for c in d.changes if c.status in diff_mod.SHOWN][
            : figures.TOP
        ],
        "shown": sum(c.status in diff_mod.SHOWN for c in d.changes),
        "coverage": [
            {"task": mv.task, "before": coverage.fmt(mv.before), "after": coverage.fmt(mv.after), "mv": mv}
            for mv in d.coverage
        ],
    }


# Findings shown one by one on report.html, per list (confirmed false accepts, false rejects); past it, each further
# PAGE on a page of its own under report/ (plain linked HTML: a file opened from disk may fetch nothing). At 16,712
# confirmed false accepts the page inlining every evidence block was 47 MB.
PAGE = 200


@dataclass(frozen=True)
class Pages:
    """One list of findings, paged: page 1 is report.html's section `anchor`, page k > 1 `report/{stem}-000k.html`."""

    title: str
    stem: str  # "findings" or "rejects"
    anchor: str  # the section of report.html holding page 1
    outcome: str  # for the `verimut ls --outcome` line
    ids: list[str]
    per: int

    @property
    def total(self) -> int:
        return len(self.ids)

    @property
    def count(self) -> int:
        return max(1, -(-len(self.ids) // self.per))

    def first(self, k: int) -> int:
        return min(len(self.ids), (k - 1) * self.per + 1)

    def last(self, k: int) -> int:
        return min(len(self.ids), k * self.per)

    def chunk(self, k: int) -> list[str]:
        return self.ids[(k - 1) * self.per : k * self.per]

    def name(self, k: int) -> str:
        """Page k's path in the output directory (k > 1)."""
        return f"{REPORT_PAGES}/{self.stem}-{k:04d}.html"

    def href(self, k: int, here: int) -> str:
        """A link to page k from page `here` (report.html is page 1, in the directory above the others)."""
        if k == 1:
            return f"../{REPORT}#{self.anchor}" if here > 1 else f"#{self.anchor}"
        return self.name(k) if here == 1 else Path(self.name(k)).name

    def links(self) -> dict[str, str]:
        """cell id -> its link from report.html, for the findings not on report.html itself."""
        return {cid: f"{self.name(1 + n // self.per)}#cell-{cid}" for n, cid in enumerate(self.ids) if n >= self.per}


def paged(swap: bool, shown: list[str], rejects: list[str]) -> dict[str, Pages]:
    """The page's finding lists, paged (pure)."""
    fa = Outcome.ACCEPTED_EFFECT_ABSENT.value if swap else FA
    title = "Acceptances with the requested effect absent" if swap else "Confirmed false accepts"
    return {
        "findings": Pages(title, "findings", "findings", fa, shown, PAGE),
        "rejects": Pages("False rejects", "rejects", "false-rejects", FR, rejects, PAGE),
    }


def context(
    store: Store,
    m: Manifest,
    rows: Mapping[str, CellResult],
    result: Any,
    draw: Draw = now,
    diff: diff_mod.Diff | None = None,
) -> dict[str, Any]:
    """Everything the page shows, as plain data (its figures as `draw` gives them); `pages` and `cells` (the finding
    lists and their cells by id) are for the finding pages beyond it (`finding_pages`)."""
    rewards = store.rewards()
    swap = not arms.of(m).edits
    repair = None if swap else _repair(store)
    if swap:
        shown = [a.cell_id for a in result.false_accepts]
        rejects: list[str] = []
        alt_rejects = 0
    else:
        shown = [f.cell_id for f in result.false_accepts]
        rejects = [f.cell_id for f in result.false_rejects]
        alt_rejects = sum(f.alternative for f in result.false_rejects)
    wanted = {*shown, *rejects}  # the cells the page shows one by one: only those are held, not every cell by id
    by_id = {c.cell_id: c for c in m.cells if c.cell_id in wanted}
    pages = paged(swap, shown, rejects)
    links = {**pages["findings"].links(), **pages["rejects"].links()}

    def views(ids: list[str]) -> list[cell_view.CellView]:
        return [cell_view.view(m, by_id[cid], rows.get(cid), rewards) for cid in ids]

    return {
        "title": f"verimut {'intent-swap census' if swap else 'audit'}: {m.benchmark} {m.version}",
        "swap": swap,
        "directory": str(store.directory),
        "note": result.note,
        "unscored": result.cells - result.scored,
        "findings": views(pages["findings"].chunk(1)),
        "rejects": views(pages["rejects"].chunk(1)),
        "finding_count": len(shown),
        "reject_count": len(rejects),
        "alt_reject_count": alt_rejects,
        "pages": pages,
        "views": views,
        "link": lambda cid: links.get(cid) or f"#cell-{cid}",
        "acceptances": len(result.acceptances) if swap else None,
        "control_failures": result.control_failures[: figures.TOP],
        "control_failure_count": len(result.control_failures),
        "provenance": provenance(m, result, store.runs()),
        "repair": repair,
        "repaired": repair_verdicts(repair),
        "fault": None if swap else _fault_context(m, rows, result, draw),
        "census": _swap_context(m, rows, result) if swap else None,
        "against": against_context(diff, {*shown, *rejects}),
    }


def render(ctx: Mapping[str, Any]) -> str:
    return _env().get_template("report.html.j2").render(**ctx)


def finding_pages(ctx: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """The finding pages beyond report.html, (path in the directory, HTML) each, made one at a time: only one page's
    evidence is held."""
    template = _env().get_template("findings.html.j2")
    for p in ctx["pages"].values():
        for k in range(2, p.count + 1):
            page = {
                "title": f"{p.title} {p.first(k)}-{p.last(k)}: {ctx['title']}",
                "report_title": ctx["title"],
                "directory": ctx["directory"],
                "repaired": ctx["repaired"],
                "pages": p,
                "here": k,
                "findings": ctx["views"](p.chunk(k)),
            }
            yield p.name(k), cell_view.inert(template.render(**page))


def rebuild(store: Store) -> Path:
    """Rebuild the page from what DIR holds (after `verimut repair`, which adds its counts)."""
    m = store.read_manifest()
    rows = store.rows()
    prior = store.summary()
    c = prior.get("rewards", {}).get("procredit_c", rewards.DEFAULT_C) if isinstance(prior, dict) else rewards.DEFAULT_C
    result = arms.of(m).result(m, rows, c)
    return write(store, m, rows, result)


def write(
    store: Store,
    m: Manifest,
    rows: Mapping[str, CellResult],
    result: Any,
    each: Each = serially,
    diff: diff_mod.Diff | None = None,
) -> Path:
    """Write DIR/report.html (atomically: a reader never sees half a page); `each` draws its figures. With `diff`
    (this run against an earlier audit), the page has a section on it."""
    later = Later()

    def draw(figure: Callable[..., str], *args: Any) -> str:
        # A figure's labels are the benchmark's task ids: drawn inert, as the page shows them (a control
        # character would only be a missing glyph, warned about on stderr with the raw byte).
        return later(figure, *cell_view.inert_tree(args))

    # Autoescaping stops markup, not control characters: a raw ESC or bidi override in a task id would
    # still reach whoever views the source or copies a cell id into a terminal. Inert, as `ls` prints it
    # (ids and their anchors alike, so the page's links still match); before the figures, which are base64.
    ctx = context(store, m, rows, result, draw, diff)
    page = cell_view.inert(render(ctx))
    # The finding pages first, so report.html's links lead to pages already there; then pages of an earlier,
    # longer report are removed.
    written = [store.write(name, html).name for name, html in finding_pages(ctx)]
    path = store.write_report(later.fill(page, each))
    store.prune_report_pages(written)
    return path
