"""The read map of an audit (findings/read_map.py) as figures and a table, for docs/read-sets.md.

    .venv/bin/python bench/read_map_figures.py AUDIT_DIR NAME [--out docs/read-sets] [--by-attribute] [--written-only]

Writes one PNG per suite (`NAME-SUITE.png`: verifiers x collections, read always / sometimes / never / blind
spot) and prints, per suite, the verifiers mapped, their blind spots, how many flipping confirmed, and how many it
showed read after all (the recording missed a read), as a markdown table. Everything from the ledger.

`--by-attribute` (BFCL, whose collections are named per turn and per record: `after_turn_3.TravelAPI.
credit_card_list.card_0064`, thousands of them over a category) draws one column per backend attribute
(`TravelAPI.credit_card_list`), the turns and records folded in, per verifier: a blind spot where any of its
collections there is one, else read always / never where all are, else sometimes. The table counts collections.
"""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path

from verimut.engine.store import Store
from verimut.findings import read_map
from verimut.oracle.state import NEW
from verimut.outputs import figures


def by_attribute(collection: str) -> str:
    """A BFCL collection's column: its class and attribute, the turn (`now`, `after_turn_N`) and records dropped."""
    return ".".join(collection.split(".")[1:3])


def fold(levels: dict[str, str]) -> str:
    """One column's level from its collections' levels (a blind spot wins; all alike keep theirs; else sometimes)."""
    found = set(levels.values())
    if "blind spot" in found:
        return "blind spot"
    return found.pop() if len(found) == 1 else "sometimes"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audit", type=Path)
    p.add_argument("name")
    p.add_argument("--out", type=Path, default=Path("docs/read-sets"))
    p.add_argument("--by-attribute", action="store_true", help="one column per class attribute (BFCL)")
    p.add_argument(
        "--written-only",
        action="store_true",
        help="draw only the collections some run of the suite writes (the blind-spot candidates): an AppWorld "
        "verifier that compares every model's write counter reads a hundred models",
    )
    args = p.parse_args()
    store = Store(args.audit)
    m, rows = store.read_manifest(), store.rows()
    rm = read_map.build(m, rows)
    if rm is None:
        print(f"{args.audit}: no cell recorded what its verifier read", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    print("| suite | verifiers mapped | collections written | blind spots | confirmed by flipping | read after all |")
    print("|---|---|---|---|---|---|")
    for suite, written in rm.reachable.items():
        vs = {t: v for t, v in rm.verifiers.items() if v.suite == suite}
        if not vs:
            continue
        levels: dict[tuple[str, str], str] = {}
        columns: list[str] = []
        for t, v in vs.items():
            spots = {b.collection for b in v.blind_spots if b.check != read_map.REFUTED}
            mine: dict[str, dict[str, str]] = {}  # column -> its collections' levels, for this verifier
            for c, level in v.collections.items():
                c = c.removesuffix(NEW)
                column = by_attribute(c) if args.by_attribute else c
                mine.setdefault(column, {})[c] = "blind spot" if c in spots else level
            for column, found in mine.items():
                levels[(t, column)] = fold(found)
                if column not in columns:
                    columns.append(column)
        written_columns = {by_attribute(c) for c in written} if args.by_attribute else set(written)
        if args.written_only:
            columns = [c for c in columns if c in written_columns]
        columns.sort(key=lambda c: (c not in written_columns, c))
        title = f"{args.name} {suite}".strip() + ": what each verifier read (measured)"
        uri = figures.read_map(title, list(vs), columns, levels)
        stem = f"{args.name}-{suite}" if suite else args.name  # one suite with no name (AppWorld): NAME.png
        (args.out / f"{stem}.png").write_bytes(base64.b64decode(uri.split(",", 1)[1]))
        spots_all = [b for v in vs.values() for b in v.blind_spots]
        confirmed = sum(b.check == read_map.CONFIRMED for b in spots_all)
        refuted = sum(b.check == read_map.REFUTED for b in spots_all)
        print(f"| {suite} | {len(vs)} | {len(written)} | {len(spots_all) - refuted} | {confirmed} | {refuted} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
