"""AppWorld's read recording (appworld/worker_side/appworld_reads.py): SQL statements as reads of the end state.

The statements are the ones AppWorld's evaluator runs (SQLAlchemy's, as the engine event sees them); the pure
part runs here without AppWorld, and the recording on the real engine is checked on the audit
(test_appworld.py's read-map tests).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from verimut.adapters.appworld import WORKER_SIDE


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("appworld_reads", Path(WORKER_SIDE) / "appworld_reads.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reads = _module()
COLUMNS = ["record_hash", "id", "sender_id", "receiver_id", "amount", "description"]
MODELS = {
    ("venmo", "transactions"): ("venmo.Transaction", COLUMNS),
    ("venmo", "users"): ("venmo.User", ["record_hash", "id", "email"]),
}
T = ("state", "venmo", "Transaction")


def of(statement: str, params: tuple = ()) -> list:
    return reads.reads_of(statement, params, "venmo", MODELS)


def test_a_count_lists_the_records():
    q = "SELECT count(*) AS count_1 FROM (SELECT transactions.id AS transactions_id FROM transactions) AS anon_1"
    assert of(q) == [(T, "keys")]


def test_the_record_digests_of_every_record_read_the_model_whole():
    assert of("SELECT transactions.id, transactions.record_hash FROM transactions") == [(T, "whole")]
    assert of("SELECT transactions.id FROM transactions") == [(T, "keys")]


def test_records_by_id_are_read_whole_with_their_digest_and_by_column_without():
    everything = "SELECT " + ", ".join(f"transactions.{c}" for c in COLUMNS) + " FROM transactions"
    assert of(everything + " WHERE transactions.id IN (?, ?)", (1, 2)) == [((*T, "1"), "whole"), ((*T, "2"), "whole")]
    some = of("SELECT transactions.id, transactions.amount FROM transactions WHERE transactions.id = ?", (7,))
    assert sorted(some) == [((*T, "7", "amount"), "value"), ((*T, "7", "id"), "value")]


def test_an_empty_in_takes_no_record_and_a_search_by_another_column_reads_it_all():
    empty = "SELECT transactions.id FROM transactions WHERE transactions.id IN (SELECT 1 FROM (SELECT 1) WHERE 1!=1)"
    assert of(empty) == []
    search = "SELECT users.id, users.email FROM users WHERE users.email = ?"
    assert of(search, ("bob@x",)) == [(("state", "venmo", "User"), "whole")]


def test_writes_and_unknown_tables_read_nothing():
    assert of("UPDATE transactions SET amount=? WHERE transactions.id = ?", (1, 2)) == []
    assert of("SELECT sqlite_master.name FROM sqlite_master") == []


def test_reads_are_grouped_as_verimuts_reads_are():
    rec = reads.Recorded()
    rec.seen += [(T, "whole"), ((*T, "1", "amount"), "value"), (("state", "venmo", "User"), "keys")]
    assert rec.reads() == {
        "value": ["state.venmo.Transaction.1.amount"],
        "keys": ["state.venmo.User"],
        "whole": ["state.venmo.Transaction"],
    }
