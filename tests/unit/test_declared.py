"""Flipping a declared telemetry field or mask on a snapshot (declared.flips): what the check sets, where."""

from __future__ import annotations

from verimut.engine.declared import flips, varied

SNAP = {
    "inbox": {
        "emails": {
            "1": {"id_": "1", "read": False, "timestamp": "2024-05-14T10:00:00"},
            "2": {"id_": "2", "read": True, "timestamp": "2024-05-14 11:00:00"},
        }
    },
    "web": {"web_requests": ["www.a.com"], "visits": 3},
}


def test_a_field_of_every_record_is_flipped_in_each_record():
    got = {f.path: f.value for f in flips(SNAP, "inbox.emails[*].read")}
    assert got == {("inbox", "emails", "1", "read"): True, ("inbox", "emails", "2", "read"): False}


def test_a_timestamp_moves_a_day_and_keeps_its_separator():
    got = {f.path[2]: f.value for f in flips(SNAP, "inbox.emails[*].timestamp")}
    assert got == {"1": "2024-05-15T10:00:00", "2": "2024-05-15 11:00:00"}


def test_a_whole_list_is_emptied_and_a_dict_of_fields_has_each_field_flipped():
    assert [(f.path, f.value) for f in flips(SNAP, "web.web_requests")] == [(("web", "web_requests"), [])]
    assert [(f.path, f.value) for f in flips(SNAP, "web")] == [(("web", "visits"), 4)]


def test_keys_are_not_values_and_an_empty_log_has_nothing_to_flip():
    assert flips(SNAP, "inbox.emails[#]") == [] and flips(SNAP, "inbox.emails[+]") == []
    assert flips({"web": {"web_requests": []}}, "web.web_requests") == []


def test_a_mask_is_flipped_only_where_two_replays_differ():
    again = {
        **SNAP,
        "inbox": {"emails": {**SNAP["inbox"]["emails"], "2": {**SNAP["inbox"]["emails"]["2"], "timestamp": "x"}}},
    }
    kept = varied(flips(SNAP, "inbox.emails[*].timestamp"), SNAP, again)
    assert [f.path[2] for f in kept] == ["2"]
