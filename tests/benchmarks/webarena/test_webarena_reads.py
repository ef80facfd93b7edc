"""WebArena-Verified's read recording (webarena/worker_side/webarena_reads.py): the evidence the evaluators take,
as reads of the end state. Pure: runs without the package (the worker side imports only the standard library);
the recording under the package's real evaluators is checked on the audit (test_webarena.py)."""

from __future__ import annotations

import sys
from types import MappingProxyType

from verimut.adapters.webarena import WORKER_SIDE

sys.path.insert(0, str(WORKER_SIDE))
import webarena_reads as reads  # (the worker side's folder, put on the path above)

sys.path.remove(str(WORKER_SIDE))

COMMENT = {"method": "POST", "url": "http://gitlab/p/-/issues/1/notes", "post_data": {"note": "hi"}, "status": 201}
STAR = {"method": "POST", "url": "http://gitlab/p/toggle_star.json", "post_data": None, "status": 200}
PAGE = {"method": "GET", "url": "http://gitlab/p", "status": 200}
REFUSED = {"method": "POST", "url": "http://gitlab/p/-/issues/1/notes", "post_data": {"note": "x"}, "status": 409}


def har(request: dict) -> dict:
    body = {"postData": {"mimeType": "application/json", "text": "{}"}} if request.get("post_data") else {}
    return {
        "request": {"method": request["method"], "url": request["url"], "headers": [], **body},
        "response": {"status": request["status"], "headers": []},
    }


def test_each_request_sits_where_the_end_state_puts_it():
    assert reads.places([PAGE, COMMENT, STAR, REFUSED, COMMENT]) == [
        None,
        ("creates", "0"),
        ("records", "http://gitlab/p/toggle_star%2Ejson"),
        None,
        ("creates", "1"),
    ]


def test_a_recording_copy_notes_what_is_taken_through_the_packages_own_wrapping():
    seen: reads.Seen = []
    entry = MappingProxyType(reads.recording(har(COMMENT), ("har", 0), seen))  # as NetworkEvent holds it
    assert entry["request"]["url"] == COMMENT["url"]
    assert entry["request"].get("postData")["text"] == "{}"
    response = reads.recording({"task_type": "mutate", "retrieved_data": [1, 2]}, ("response",), seen)
    assert "status" not in response
    assert [x for x in response["retrieved_data"]] == [1, 2]
    assert isinstance(response, dict) and response == {"task_type": "mutate", "retrieved_data": [1, 2]}
    assert (("har", 0, "request", "url"), "value") in seen
    assert (("har", 0, "request", "postData", "text"), "value") in seen
    assert (("response", "status"), "value") in seen
    assert (("response", "retrieved_data"), "keys") in seen
    assert (("har", 0, "request"), "value") not in seen  # a container taken to reach into it reads nothing


def test_reads_of_the_evidence_land_in_the_collections_of_the_end_state():
    requests = [PAGE, COMMENT, STAR]
    seen: reads.Seen = [
        (("har", 1, "request", "url"), "value"),
        (("har", 1, "request", "postData", "text"), "value"),
        (("har", 2, "request", "method"), "value"),
        (("har", 2, "response", "status"), "value"),
        (("har", 0, "request", "url"), "value"),  # a GET: in no collection
        (("har", 1, "request", "headers"), "keys"),  # headers are not state
        (("response", "task_type"), "value"),
    ]
    got = reads.to_state(seen, requests)
    star = "state.records.http://gitlab/p/toggle_star%2Ejson"
    assert got["value"] == ["state.creates.0.url", f"{star}.change", f"{star}.id", "state.response.final.task_type"]
    assert got["whole"] == ["state.creates.0.body"]
    assert got["keys"] == []  # the star's URL was never read: not every request was looked at


def test_reading_every_requests_url_lists_the_creates_and_the_records():
    seen: reads.Seen = [(("har", i, "request", "url"), "value") for i in range(3)]
    assert reads.to_state(seen, [PAGE, COMMENT, STAR])["keys"] == ["state.creates", "state.records"]
    assert reads.to_state([], [])["keys"] == []
