"""Prototype: generate a tiny synthetic AppWorld data root in AppWorld's own on-disk format.

Usage:  /tmp/awenv/bin/python gen.py [ROOT]     (default ROOT=/tmp/aw-proto/root)

Layout produced (ROOT == APPWORLD_ROOT):
  ROOT/data/api_docs/standard/<app>.json        for all 11 non-admin apps (Task.load reads every one)
  ROOT/data/base_dbs/<app>.db                   full SQLite DB for all 12 apps (admin + 11), tables created by create_db
  ROOT/data/tasks/<gen>_<n>/specs.json
  ROOT/data/tasks/<gen>_<n>/dbs/<app>.jsonl     "changes" format: SQL statements replayed on top of base_dbs/<app>.db
  ROOT/data/tasks/<gen>_<n>/dbs/model_hashes.json  (optional; written for completeness)
  ROOT/data/tasks/<gen>_<n>/ground_truth/{metadata,public_data,private_data,test_data,required_apps,answer,api_calls}.json
                                            + evaluation.py, solution.py, compiled_solution.py
  ROOT/data/datasets/synthetic.txt              (only for load_task_ids / evaluate_dataset)

Must be run in its OWN process (several AppWorld caches are keyed by path and never invalidated).
"""

import json
import os
import re
import shutil
import sys
from textwrap import dedent

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "/tmp/aw-proto/root")
os.environ["APPWORLD_ROOT"] = ROOT  # must be set before appworld computes any (functools.cache'd) path
sys.dont_write_bytecode = True

from appworld import update_root  # noqa: E402

update_root(ROOT)

from appworld.apps import get_all_apps  # noqa: E402
from appworld.apps.api_lib import save_local_dbs, set_local_date_and_time  # noqa: E402
from appworld.apps.model_lib import CachedDBHandler, ModelHashHandler  # noqa: E402
from appworld.collections.api_docs import ApiDocCollection  # noqa: E402
from appworld.collections.models import ModelCollection  # noqa: E402
from appworld.common.constants import CANARY_STRING, DB_VERSION  # noqa: E402
from appworld.common.datetime import DateTime  # noqa: E402
from appworld.common.path_store import path_store  # noqa: E402

DATA = path_store.data
BASE = os.path.join(DATA, "base_dbs")
ALL_APPS = list(get_all_apps())  # ['admin', 'api_docs', 'supervisor', 'amazon', 'phone', ...]
NON_ADMIN_APPS = list(get_all_apps(skip_admin=True))
BASE_TIME = DateTime(2023, 5, 1, 9, 0, 0)
TASK_TIME = DateTime(2023, 5, 18, 12, 0, 0)

SUPERVISOR = dict(first_name="Alice", last_name="Smith", email="alice.smith@gmail.com",
                  phone_number="2125550100", birthday="1990-01-15", sex="female")
PEOPLE = [
    dict(first_name="Bob", last_name="Jones", email="bob.jones@gmail.com",
         phone_number="2125550101", birthday="1988-03-02", sex="male"),
    dict(first_name="Carol", last_name="White", email="carol.white@gmail.com",
         phone_number="2125550102", birthday="1992-07-21", sex="female"),
    dict(first_name="Dan", last_name="Brown", email="dan.brown@gmail.com",
         phone_number="2125550103", birthday="1985-11-30", sex="male"),
    dict(first_name="Eve", last_name="Green", email="eve.green@gmail.com",
         phone_number="2125550104", birthday="1995-05-05", sex="female"),
]
SONGS = [("Midnight Rain", 201), ("Golden Hour", 189), ("Paper Planes", 224), ("Blue Lights", 240),
         ("Summer Echo", 198)]


def password(person: dict, app: str) -> str:
    return f"{person['first_name'].lower()}-{app}-pw1"


def person_core(p: dict) -> dict:
    return {k: p[k] for k in ("first_name", "last_name", "email")}


# --------------------------------------------------------------------------------------------
# 1. API docs (generated from the installed app code, same as AppWorld's own ApiDocCollection.save)
# --------------------------------------------------------------------------------------------
def build_api_docs() -> ApiDocCollection:
    docs = ApiDocCollection.build(load_apps=tuple(NON_ADMIN_APPS), include_response_schemas=True)
    # ApiDocCollection.save() always writes all 3 formats and the openapi one needs the extra
    # package openapi_spec_validator, so write the only format the loader reads ("standard") directly.
    out = os.path.join(DATA, "api_docs", "standard")
    os.makedirs(out, exist_ok=True)
    for app_name, name_to_doc in docs.items():
        payload = {api: dict(doc, canary_string=CANARY_STRING) for api, doc in name_to_doc.items()}
        write_json(payload, os.path.join(out, app_name + ".json"))
    return docs


# --------------------------------------------------------------------------------------------
# 2. Base DBs: full SQLite per app, built with AppWorld's models under a frozen clock
# --------------------------------------------------------------------------------------------
def build_base_dbs(docs: ApiDocCollection) -> None:
    shutil.rmtree(BASE, ignore_errors=True)
    os.makedirs(BASE)
    freezer = set_local_date_and_time(BASE_TIME)  # freezegun.freeze_time(...).start()
    m = ModelCollection.load(to_db_home_path=BASE, from_db_home_path=BASE, load_apps=ALL_APPS,
                             create_db=True)
    everyone = [SUPERVISOR, *PEOPLE]
    for p in everyone:
        mu = m.admin.MainUser.create(**p)
        mu.save()
        for app in ("venmo", "spotify"):
            m.admin.AccountPassword.create(main_user_id=mu.id, account_name=app,
                                           password=password(p, app)).save()
        m.venmo.User.create(**person_core(p), password=password(p, "venmo"), verified=True,
                            venmo_balance=500.0).save()
        m.spotify.User.create(**person_core(p), password=password(p, "spotify"), verified=True).save()
    artist = m.spotify.Artist.create(name="The Synthetics", genre="pop")
    artist.save()
    for title, duration in SONGS:
        m.spotify.Song.create(title=title, artist_ids=[artist.id], duration=duration,
                              release_date=DateTime(2020, 1, 1), genre="pop").save()
    # api_docs app is DB-backed too (show_api_doc etc. read ApiDoc rows).
    for app_name, name_to_doc in docs.items():
        for api_name, doc in name_to_doc.items():
            m.api_docs.ApiDoc.create(app_name_=app_name, api_name=api_name, path=doc["path"],
                                     method=doc["method"], description=doc["description"],
                                     parameters=doc["parameters"],
                                     response_schemas=doc["response_schemas"]).save()
    CachedDBHandler.reset()  # dispose engines / close sqlite connections on the base files
    ModelHashHandler.reset()
    freezer.stop()


# --------------------------------------------------------------------------------------------
# 3. Tasks
# --------------------------------------------------------------------------------------------
EVAL_HEADER = '''\
# Canary String: {canary}
import json

from appworld.common.utils import dict_of, list_of, set_of


def evaluate(test, public_data, private_data, main_user, models, ground_truth_answer):
    active_tasks = models.end.supervisor.Task.all()
    try:
        predicted_answer = json.loads(active_tasks[0].answer)
    except json.JSONDecodeError:
        predicted_answer = active_tasks[0].answer
    with test(
        """
        assert answers match.
        """
    ):
        test.answer(predicted_answer, ground_truth_answer)
'''

SOLUTION_HEADER = '''\
# Canary String: {canary}


def solution(apis, requester):
    passwords = {{x["account_name"]: x["password"] for x in apis.supervisor.show_account_passwords()}}
    profile = apis.supervisor.show_profile()
'''

TASKS = {}

# (a) venmo payment requests, split among work-dinner guests. Checks values by receiver, NOT counts.
TASKS["venmosplit_1"] = dict(
    instruction=("I paid $180 for our work dinner with Bob Jones, Carol White and Dan Brown. "
                 "Split it equally among the four of us and send each of them a Venmo payment "
                 "request for their share."),
    required_apps=["venmo"],
    public_data={},
    private_data={"email_to_amount": {p["email"]: 45.0 for p in PEOPLE[:3]}},
    answer=None,
    solution_body='''
    token = apis.venmo.login(username=profile["email"], password=passwords["venmo"])["access_token"]
    guests = ["Bob Jones", "Carol White", "Dan Brown"]
    share = round(180 / (len(guests) + 1), 2)
    for guest in guests:
        user = [u for u in apis.venmo.search_users(query=guest, access_token=token)
                if u["first_name"] + " " + u["last_name"] == guest][0]
        apis.venmo.create_payment_request(user_email=user["email"], amount=share,
                                          description="work dinner", access_token=token)
    apis.supervisor.complete_task()
''',
    tests=[
        ("assert model changes match venmo.PaymentRequest, venmo.Notification.",
         'test.case(models.changed_model_names(), "==", {"venmo.PaymentRequest", "venmo.Notification"})'),
        ("obtain added, updated, removed venmo.PaymentRequest records using models.changed_records,\n"
         "and assert 0 were updated or removed.",
         'added, updated, removed = models.changed_records("venmo.PaymentRequest")\n'
         'test.case(len(updated), "==", 0)\ntest.case(len(removed), "==", 0)'),
        ("assert the added payment requests' receiver email -> amount map (dict_of)\n"
         "matches private_data.email_to_amount.",
         'test.case(dict_of(added, "receiver.email", "amount"), "==", dict(private_data.email_to_amount))'),
    ],
)

# (b) spotify: queue songs. Compares the queue as a SET.
TASKS["spotifyqueue_1"] = dict(
    instruction='Queue these songs on Spotify: "Midnight Rain", "Paper Planes" and "Summer Echo".',
    required_apps=["spotify"],
    public_data={"titles": ["Midnight Rain", "Paper Planes", "Summer Echo"]},
    private_data={"song_ids": [1, 3, 5]},
    answer=None,
    solution_body='''
    token = apis.spotify.login(username=profile["email"], password=passwords["spotify"])["access_token"]
    for title in ["Midnight Rain", "Paper Planes", "Summer Echo"]:
        song = [s for s in apis.spotify.search_songs(query=title, access_token=token)
                if s["title"] == title][0]
        apis.spotify.add_to_queue(song_id=song["song_id"], access_token=token)
    apis.supervisor.complete_task()
''',
    tests=[
        ("assert model changes match spotify.MusicPlayer.",
         'test.case(models.changed_model_names(), "==", {"spotify.MusicPlayer"})'),
        ("obtain the updated spotify.MusicPlayer using models.changed_records and assert the\n"
         "set of song ids in its queue equals set(private_data.song_ids).",
         'added, updated, removed = models.changed_records("spotify.MusicPlayer")\n'
         'players = added + updated\n'
         'test.case(len(players), "==", 1)\n'
         'test.case(set(players[0].queue_song_ids), "==", set(private_data.song_ids))'),
    ],
    setup="music_player",
)

# (c) venmo send money to guests: this one COUNTS the added records.
TASKS["venmosend_1"] = dict(
    instruction="Send $20 on Venmo to each of Bob Jones and Eve Green for the concert tickets.",
    required_apps=["venmo"],
    public_data={},
    private_data={"email_to_amount": {PEOPLE[0]["email"]: 20.0, PEOPLE[3]["email"]: 20.0}},
    answer=None,
    solution_body='''
    token = apis.venmo.login(username=profile["email"], password=passwords["venmo"])["access_token"]
    for email in ["bob.jones@gmail.com", "eve.green@gmail.com"]:
        apis.venmo.create_transaction(receiver_email=email, amount=20, description="concert tickets",
                                      access_token=token)
    apis.supervisor.complete_task()
''',
    tests=[
        ("obtain added venmo.Transaction records using models.changed_records\n"
         "and assert exactly 2 were added.",
         'added, updated, removed = models.changed_records("venmo.Transaction")\n'
         'test.case(len(added), "==", 2)'),
        ("assert the added transactions' receiver email -> amount map (dict_of)\n"
         "matches private_data.email_to_amount.",
         'test.case(dict_of(added, "receiver.email", "amount"), "==", dict(private_data.email_to_amount))'),
    ],
)


def render_evaluation(tests) -> str:
    code = EVAL_HEADER.format(canary=CANARY_STRING)
    for requirement, body in tests:
        req = "\n".join("        " + line for line in requirement.splitlines())
        code += f'    with test(\n        """\n{req}\n        """\n    ):\n'
        code += "\n".join("        " + line for line in body.splitlines()) + "\n"
    return code


def write_json(obj, path):
    with open(path, "w") as f:
        json.dump(obj, f, indent=4)


def build_task(task_id: str, spec: dict) -> None:
    task_dir = os.path.join(DATA, "tasks", task_id)
    shutil.rmtree(task_dir, ignore_errors=True)
    os.makedirs(os.path.join(task_dir, "ground_truth"))
    # --- dbs: load base into a scratch in-memory home, apply task-specific changes, save as "changes"
    scratch = f":memory:generate-{task_id}"  # any ':memory:<name>' without '/' works
    freezer = set_local_date_and_time(TASK_TIME.subtract(hours=1))
    m = ModelCollection.load(to_db_home_path=scratch, from_db_home_path=BASE, load_apps=ALL_APPS)
    sup = m.supervisor.Supervisor.create(**SUPERVISOR)
    sup.save()
    for app in ("venmo", "spotify"):
        m.supervisor.AccountPassword.create(supervisor_id=sup.id, account_name=app,
                                            password=password(SUPERVISOR, app)).save()
    m.supervisor.Task.create(supervisor_id=sup.id, instruction=spec["instruction"]).save()
    if spec.get("setup") == "music_player":
        sp_user = m.spotify.User.find_one(email=SUPERVISOR["email"])
        m.spotify.MusicPlayer.create(user_id=sp_user.id, queue_song_ids=[], cursor_position=None).save()
    save_local_dbs(from_db_home_path=scratch, to_db_home_path=os.path.join(task_dir, "dbs"),
                   format="changes", app_names=list(ALL_APPS), delete_if_exists=True,
                   save_model_hashes=True)
    CachedDBHandler.reset(scratch)
    ModelHashHandler.reset(scratch)
    freezer.stop()
    # --- specs
    write_json({"instruction": spec["instruction"],
                "supervisor": {k: SUPERVISOR[k] for k in ("first_name", "last_name", "email", "phone_number")},
                "datetime": TASK_TIME.isoformat(), "db_version": DB_VERSION,
                "canary_string": CANARY_STRING}, os.path.join(task_dir, "specs.json"))
    # --- ground truth
    gt = os.path.join(task_dir, "ground_truth")
    solution = SOLUTION_HEADER.format(canary=CANARY_STRING) + dedent(spec["solution_body"]).replace(
        "\n", "\n    ").rstrip() + "\n"
    for name in ("solution.py", "compiled_solution.py"):
        with open(os.path.join(gt, name), "w") as f:
            f.write(solution)
    with open(os.path.join(gt, "evaluation.py"), "w") as f:
        f.write(render_evaluation(spec["tests"]))
    write_json(spec["public_data"], os.path.join(gt, "public_data.json"))
    write_json(spec["private_data"], os.path.join(gt, "private_data.json"))
    with open(os.path.join(gt, "answer.json"), "w") as f:
        f.write(json.dumps(spec["answer"]))
    write_json(spec["required_apps"], os.path.join(gt, "required_apps.json"))
    requirements = ["assert answers match."] + [r for r, _ in spec["tests"]]
    write_json([{"requirement": r, "label": "no_op_fail"} for r in requirements],
               os.path.join(gt, "test_data.json"))
    # NOTE: num_solution_code_lines MUST be present: if missing, GroundTruth.__init__ computes it with
    # `black` (not installed by appworld) and AppWorld(...) crashes. difficulty is the only other required key.
    body_lines = [ln for ln in solution.split("def solution(apis, requester):", 1)[1].splitlines()
                  if ln.strip() and not ln.strip().startswith("#")]
    write_json({"mode": "full", "difficulty": 1, "num_apps": len(spec["required_apps"]),
                "num_apis": len(set(re.findall(r"apis\.(\w+\.\w+)", solution))),
                "num_solution_code_lines": len(body_lines)},
               os.path.join(gt, "metadata.json"))


def main() -> None:
    docs = build_api_docs()
    build_base_dbs(docs)
    for task_id, spec in TASKS.items():
        build_task(task_id, spec)
    os.makedirs(os.path.join(DATA, "datasets"), exist_ok=True)
    with open(os.path.join(DATA, "datasets", "synthetic.txt"), "w") as f:
        f.write("\n".join(TASKS) + "\n")
    print("generated", ROOT, list(TASKS))


if __name__ == "__main__":
    main()
