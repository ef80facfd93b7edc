"""A generated, seedable plug-in benchmark for measuring how verimut scales (issue 18): N tasks, S records,
verifiers of about C ms of CPU each.

    verimut audit bench.scalebench:create -O tasks=1000 -O records=300 -O verify_ms=1 -O seed=0
    verimut swap bench.scalebench:create -O tasks=100 -O records=300 -O verify_ms=1 -O seed=0

(from the repository root: `bench` is found from the current directory, by the command line and by Ray's actors.)

The state is S plain dict records in three keyed collections (accounts, orders, notes), one start state shared by
every task. Task k (`scale/task_0000k`, all in one suite) reads a record or two and writes one or two of its own:
set an order's status, add a note to an account, pay an order (its status, then a debit), or, for one task in ten,
only look a balance up. Its verifier is one of three styles, drawn per task:

- exact: the whole end state equals the start with the task's writes applied (postcondition and frame): it rejects
  every fault;
- own: the task's own records hold the requested values (postcondition only): another record changed, or a note
  added twice, passes (false accepts: extra-oos, extra);
- loose: only that the kind of change happened (the order's status moved, some note was added, the order is paid):
  a wrong value or a missing debit passes, and in the swap census another note task's run passes.

Every verifier then burns CPU until it has cost `verify_ms` of this thread's CPU time (`time.thread_time`, not
sleep: a sleeping verifier would let workers overlap on one core and hide the cost being measured). Everything is
drawn from `random.Random` seeded with strings (`"{seed}:state"`, `"{seed}:task:{k}"`), which Python hashes with
SHA-512, not the per-process string hash: the same seed gives the same benchmark in every process (pool workers,
Ray actors), and task k is the same whatever N is (for the same S).

With the environment variable SCALEBENCH_TRACE set to a file, every reset appends a line `reset <unix time>` to it
(one write, O_APPEND, from every process): bench/bench_scaling.py counts replays that way without touching verimut.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verimut import Action, AuditError, Run, Step, Verdict

VERSION = "1"  # of the generator: bump it when the same options would generate another benchmark
SUITE = "scale"
STATUSES = ("pending", "paid", "shipped", "cancelled")
TIERS = ("basic", "plus", "gold")
OWNERS = ("ada", "grace", "alan", "edsger", "barbara", "donald", "frances", "ken", "margaret", "tony")
PHRASES = ("call back on monday", "prefers email", "asked for a refund", "address changed", "vip since 2019")
KINDS = {"status": 3, "note": 3, "pay": 3, "lookup": 1}  # relative weights
STYLES = {"exact": 4, "own": 4, "loose": 2}
WRITES = frozenset({"set_status", "add_note", "debit"})

State = dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class Spec:
    """One task: what it asks, the run that does it, and how its verifier checks."""

    kind: str
    style: str
    instruction: str
    run: Run
    account: str  # the record the task reads or writes ("" when none)
    order: str
    value: Any  # the status set, the note's text, the amount debited, the balance looked up


def _index(record_id: str) -> int:
    # Ids are a letter and the record's position ("o00042"): a lookup is O(1), as in a real key-value store.
    return int(record_id[1:])


def generate_state(records: int, seed: int) -> State:
    rng = random.Random(f"{seed}:state")
    n_acc = max(1, records // 3)
    n_ord = max(1, records // 3)
    n_notes = max(0, records - n_acc - n_ord)
    accounts = [
        {
            "id": f"a{k:05d}",
            "owner": rng.choice(OWNERS),
            "balance": rng.randrange(100, 10_000),
            "tier": rng.choice(TIERS),
        }
        for k in range(n_acc)
    ]
    orders = [
        {
            "id": f"o{k:05d}",
            "account": f"a{rng.randrange(n_acc):05d}",
            "status": rng.choice(("pending", "pending", "shipped", "paid")),
            "total": rng.randrange(5, 500),
        }
        for k in range(n_ord)
    ]
    notes = [
        {"id": f"n{k:05d}", "account": f"a{rng.randrange(n_acc):05d}", "text": rng.choice(PHRASES)}
        for k in range(n_notes)
    ]
    return {"accounts": accounts, "orders": orders, "notes": notes}


def _pick(rng: random.Random, weights: Mapping[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def generate_task(k: int, state: State, seed: int) -> Spec:
    rng = random.Random(f"{seed}:task:{k}")
    kind, style = _pick(rng, KINDS), _pick(rng, STYLES)
    orders, accounts = state["orders"], state["accounts"]
    order = orders[rng.randrange(len(orders))]
    account = accounts[_index(order["account"])]
    o, a = order["id"], account["id"]
    get_order, get_account = Action("get_order", {"order": o}), Action("get_account", {"account": a})
    if kind == "pay" and order["status"] == "paid":
        kind = "status"  # a paid order cannot be paid again: this task sets another status instead
    if kind == "status":
        value: Any = rng.choice([s for s in STATUSES if s != order["status"]])
        text = f"Mark order {o} as {value}."
        run = Run((get_order, Action("set_status", {"order": o, "status": value})), f"Order {o} is now {value}.")
    elif kind == "note":
        value = f"{rng.choice(PHRASES)} re {o}"
        text = f"Add the note '{value}' to account {a}."
        run = Run((get_account, Action("add_note", {"account": a, "text": value})), "Noted.")
    elif kind == "pay":
        value = order["total"]
        text = f"Pay order {o} from account {a}: mark it paid and debit {value} from the account."
        writes = (
            Action("set_status", {"order": o, "status": "paid"}),
            Action("debit", {"account": a, "amount": value}),
        )
        run = Run((get_order, get_account, *writes), f"Paid {value} for {o}.")
    else:
        value = account["balance"]
        text = f"What is the balance of account {a}?"
        run = Run((get_account,), f"The balance of {a} is {value}.")
    return Spec(kind, style, text, run, a, o, value)


def apply(state: State, action: Action) -> str:
    """Execute one action on a state in place; raises ValueError on a call the app refuses."""
    args = action.args
    if action.name in ("get_order", "set_status"):
        order = _record(state["orders"], args.get("order"))
        if action.name == "get_order":
            return f"{order['id']}: account {order['account']}, status {order['status']}, total {order['total']}"
        if args.get("status") not in STATUSES:
            raise ValueError(f"unknown status {args.get('status')!r}")
        order["status"] = args["status"]
        return "ok"
    if action.name in ("get_account", "debit"):
        account = _record(state["accounts"], args.get("account"))
        if action.name == "get_account":
            return f"{account['id']}: owner {account['owner']}, balance {account['balance']}, tier {account['tier']}"
        amount = args.get("amount")
        if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
            raise ValueError(f"bad amount {amount!r}")
        account["balance"] -= amount
        return "ok"
    if action.name == "add_note":
        _record(state["accounts"], args.get("account"))
        notes = state["notes"]
        notes.append({"id": f"n{len(notes):05d}", "account": args["account"], "text": str(args.get("text", ""))})
        return "ok"
    raise ValueError(f"unknown tool {action.name!r}")


def _record(records: list[dict[str, Any]], record_id: Any) -> dict[str, Any]:
    if isinstance(record_id, str) and len(record_id) > 1 and record_id[1:].isdigit():
        k = _index(record_id)
        if k < len(records) and records[k]["id"] == record_id:
            return records[k]
    raise ValueError(f"no record {record_id!r}")


def copy_state(state: State) -> State:
    # Records are flat dicts of scalars, so copying each is a deep copy, at a tenth of copy.deepcopy's cost.
    return {name: [dict(r) for r in records] for name, records in state.items()}


def burn_until(began: float, ms: float) -> None:
    """Spin until this thread has used `ms` of CPU since `began` (a `time.thread_time()`)."""
    deadline = began + ms / 1000
    x = 1
    while time.thread_time() < deadline:
        for _ in range(200):  # a little work between clock reads, which are system calls
            x = (x * 1_103_515_245 + 12_345) & 0xFFFFFFFF


class ScaleBench:
    name = "scalebench"
    telemetry: tuple[str, ...] = ()

    def __init__(self, tasks: int, records: int, verify_ms: float, seed: int) -> None:
        self.version = VERSION
        self.options = {"tasks": tasks, "records": records, "verify_ms": verify_ms, "seed": seed}
        self.verify_ms = verify_ms
        self.start = generate_state(records, seed)
        self.ids = [f"{SUITE}/task_{k:05d}" for k in range(tasks)]
        self.specs = {t: generate_task(k, self.start, seed) for k, t in enumerate(self.ids)}
        self._trace = os.environ.get("SCALEBENCH_TRACE")

    def provenance(self) -> dict[str, str]:
        return {"scalebench": VERSION, **{k: str(v) for k, v in self.options.items()}}

    def tasks(self) -> list[str]:
        return list(self.ids)

    def instruction(self, task: str) -> str:
        return self.specs[task].instruction

    def reset(self, task: str) -> dict[str, Any]:
        if self._trace:
            fd = os.open(self._trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, f"reset {time.time():.6f}\n".encode())
            finally:
                os.close(fd)
        return {"task": task, "state": copy_state(self.start)}

    def fork(self, episode: dict[str, Any]) -> dict[str, Any]:
        return {"task": episode["task"], "state": copy_state(episode["state"])}

    def reference(self, task: str, episode: Any) -> Run:
        return self.specs[task].run

    def execute(self, episode: dict[str, Any], action: Action) -> Step:
        try:
            return Step(apply(episode["state"], action))
        except (ValueError, KeyError, TypeError) as e:
            return Step("", error=str(e))

    def is_write(self, action: Action) -> bool:
        return action.name in WRITES

    def snapshot(self, episode: dict[str, Any]) -> State:
        return copy_state(episode["state"])

    def verify(self, episode: dict[str, Any], run: Run) -> Verdict:
        return self.verify_as(episode["task"], episode, run)

    def verify_as(self, task: str, episode: dict[str, Any], run: Run) -> Verdict:
        began = time.thread_time()
        verdict = self._check(self.specs[task], episode["state"], run)
        burn_until(began, self.verify_ms)
        return verdict

    def _expected(self, spec: Spec) -> State:
        state = copy_state(self.start)
        for action in spec.run.actions:
            apply(state, action)
        return state

    def _check(self, spec: Spec, state: State, run: Run) -> Verdict:
        if spec.style == "exact":
            same = state == self._expected(spec)
            answered = spec.kind != "lookup" or str(spec.value) in run.answer
            return Verdict(same and answered, "the whole end state is the expected one", {"state": same})
        if spec.kind == "lookup":
            return Verdict(str(spec.value) in run.answer, "the answer gives the balance")
        order = _record(state["orders"], spec.order)
        account = _record(state["accounts"], spec.account)
        start_order = _record(self.start["orders"], spec.order)
        start_account = _record(self.start["accounts"], spec.account)
        if spec.kind == "status":
            if spec.style == "own":
                return Verdict(order["status"] == spec.value, f"order {spec.order} is {spec.value}")
            return Verdict(order["status"] != start_order["status"], f"order {spec.order}'s status changed")
        if spec.kind == "note":
            if spec.style == "own":
                found = any(n["account"] == spec.account and n["text"] == spec.value for n in state["notes"])
                return Verdict(found, f"account {spec.account} has the note")
            return Verdict(len(state["notes"]) > len(self.start["notes"]), "a note was added")
        paid = order["status"] == "paid"
        if spec.style == "own":
            debited = account["balance"] == start_account["balance"] - spec.value
            return Verdict(paid and debited, "order paid and account debited", {"paid": paid, "debited": debited})
        return Verdict(paid, f"order {spec.order} is paid")


def _number(options: Mapping[str, Any], key: str, default: float, kind: type, least: float) -> Any:
    raw = options.get(key, default)
    try:
        value = kind(raw)
    except (TypeError, ValueError):
        raise AuditError(
            f"scalebench: --option {key}={raw} is not {'a whole number' if kind is int else 'a number'}"
        ) from None
    if not (math.isfinite(value) and value >= least):
        raise AuditError(f"scalebench: --option {key} must be at least {least:g}, not {raw!r}")
    return value


OPTIONS: Sequence[str] = ("tasks", "records", "verify_ms", "seed")


def create(version: str | None = None, **options: Any) -> ScaleBench:
    """The factory `verimut` calls with `--option KEY=VALUE`s (values arrive as strings)."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise AuditError(f"scalebench: unknown option(s) {', '.join(unknown)} (known: {', '.join(OPTIONS)})")
    if version not in (None, VERSION):
        raise AuditError(f"scalebench: version {version!r} is not {VERSION!r}")
    return ScaleBench(
        tasks=_number(options, "tasks", 100, int, 1),
        records=_number(options, "records", 300, int, 3),
        verify_ms=_number(options, "verify_ms", 1.0, float, 0),
        seed=_number(options, "seed", 0, int, 0),
    )
