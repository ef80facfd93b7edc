"""The read map of an audit (findings/read_map.py) as figures and a table, for docs/read-sets.md.

    .venv/bin/python bench/read_map_figures.py AUDIT_DIR NAME [--out docs/read-sets] [--written-only]

Writes one PNG per suite (`NAME-SUITE.png`: verifiers x collections, read always / sometimes / never / blind
spot) and prints, per suite, the verifiers mapped, their blind spots, how many flipping confirmed, and how many it
showed read after all (the recording missed a read), as a markdown table. Everything from the ledger.
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audit", type=Path)
    p.add_argument("name")
    p.add_argument("--out", type=Path, default=Path("docs/read-sets"))
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
            for c, level in v.collections.items():
                c = c.removesuffix(NEW)
                levels[(t, c)] = "blind spot" if c in spots else level
                if c not in columns:
                    columns.append(c)
        if args.written_only:
            columns = [c for c in columns if c in written]
        columns.sort(key=lambda c: (c not in written, c))
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
