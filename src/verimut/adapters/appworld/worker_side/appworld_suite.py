"""Generate verimut's SYNTHETIC AppWorld suite: a small world and 20 tasks in AppWorld's own on-disk
format, made with the real AppWorld engine (appworld==0.1.3.post1). It is not AppWorld's own task
data (which cannot be downloaded here); every task is written for the audit, in AppWorld's style.

    .venv-appworld/bin/python appworld_suite.py ROOT

writes ROOT/data (ROOT becomes an APPWORLD_ROOT) and ROOT/SYNTHETIC.md. Deterministic: two runs
write byte-identical files (frozen clock, fixed ids, no randomness). Imports only the standard
library and AppWorld, and must run in a fresh process: AppWorld caches paths derived from
APPWORLD_ROOT (functools.cache) and per-path database handles that are never invalidated.

Five generators, three variants each (ids `<generator>_<1..3>`: AppWorld's task ids need exactly
one underscore, so generator names have none):

- venmosplit:   payment requests split among dinner guests; checked by dict_of(receiver -> amount),
                never counted, so a duplicated request passes (the shape the paper found blind).
- spotifyqueue: songs queued; the queue is compared as a set, so a duplicated entry passes.
- venmosend:    payments; the test counts len(added) == N.
- phonetext:    text messages to contacts; the test counts len(added) == N.
- noteupdate:   replace a note's content; the one write (PATCH) is idempotent under AppWorld's
                frozen clock, so repeating it leaves the end state unchanged.

And five question tasks (`question_1..5`, one question each, of the shapes AppWorld's own questions take: a
count, a title, a phone number, a date): the solution reads, then submits its answer with
`complete_task(answer=...)`; the evaluator compares it as AppWorld's does (`test.answer`: both sides through
`answer_to_text`, then "==") and asserts no model changed. This is where the answer families act.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from textwrap import indent
from typing import Any

LABEL = "SYNTHETIC.md"
APPS = ("venmo", "spotify", "phone", "simple_note")  # the apps people have accounts in


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    phone: str
    birthday: str
    sex: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def email(self) -> str:
        return f"{self.first.lower()}.{self.last.lower()}@gmail.com"

    def password(self, app: str) -> str:
        return f"{self.first.lower()}-{app}-pw1"

    def core(self) -> dict[str, str]:
        return {"first_name": self.first, "last_name": self.last, "email": self.email}


SUPERVISOR = Person("Alice", "Smith", "2125550100", "1990-01-15", "female")
BOB, CAROL, DAN, EVE, FRANK, GRACE, HENRY, IRENE = PEOPLE = (
    Person("Bob", "Jones", "2125550101", "1988-03-02", "male"),
    Person("Carol", "White", "2125550102", "1992-07-21", "female"),
    Person("Dan", "Brown", "2125550103", "1985-11-30", "male"),
    Person("Eve", "Green", "2125550104", "1995-05-05", "female"),
    Person("Frank", "Miller", "2125550105", "1979-09-12", "male"),
    Person("Grace", "Lee", "2125550106", "1993-02-27", "female"),
    Person("Henry", "Clark", "2125550107", "1987-06-18", "male"),
    Person("Irene", "Davis", "2125550108", "1991-12-03", "female"),
)
# (title, duration s); a song's id is its 1-based position here (created in this order).
SONGS = (
    ("Midnight Rain", 201),
    ("Golden Hour", 189),
    ("Paper Planes", 224),
    ("Blue Lights", 240),
    ("Summer Echo", 198),
    ("Neon Skyline", 212),
    ("Quiet Harbor", 176),
    ("Velvet Morning", 233),
)
# The supervisor's notes in the base world; a note's id is its 1-based position here.
NOTES: tuple[tuple[str, str, list[str]], ...] = (
    ("Packing list", "passport, toothbrush", ["travel"]),
    ("Grocery list", "milk, bread", ["home"]),
    ("Book club picks", "May: Klara and the Sun", ["books"]),
    ("Gift ideas", "Bob: a board game", []),
)


@dataclass(frozen=True)
class Spec:
    instruction: str
    apps: list[str]
    private: dict[str, Any]
    solution: list[str]  # lines of solution(apis, requester) between the login (`token`) and complete_task
    tests: list[tuple[str, str]]  # (requirement text, test code)
    login: str = ""  # which app the solution signs in to
    public: dict[str, Any] = field(default_factory=dict)
    music_player: bool = False  # the supervisor needs a (empty) spotify MusicPlayer
    # A question task's ground-truth answer (answer.json); the solution leaves it in `answer` and submits it
    # with complete_task(answer=answer). None: the task asks for no answer (complete_task()).
    answer: Any = None


def lit(value: Any) -> str:
    """A Python literal for generated code, double-quoted as in AppWorld's own solutions."""
    return json.dumps(value)


def money(x: float) -> str:
    return f"${x:g}"


def names(people: tuple[Person, ...]) -> str:
    ns = [p.name for p in people]
    return ns[0] if len(ns) == 1 else ", ".join(ns[:-1]) + " and " + ns[-1]


def check(requirement: list[str], code: list[str]) -> tuple[str, str]:
    """One `with test(...)` block of an evaluation.py: its requirement text and its code, by lines."""
    return "\n".join(requirement), "\n".join(code)


def find_venmo_user() -> list[str]:
    return [
        "user = [u for u in apis.venmo.search_users(query=name, access_token=token)",
        '        if u["first_name"] + " " + u["last_name"] == name][0]',
    ]


def venmosplit(total: float, guests: tuple[Person, ...], what: str) -> Spec:
    share = round(total / (len(guests) + 1), 2)
    return Spec(
        instruction=(
            f"I paid {money(total)} for our {what} with {names(guests)}. Split it equally among the "
            f"{len(guests) + 1} of us and send each of them a Venmo payment request for their share."
        ),
        apps=["venmo"],
        login="venmo",
        private={"email_to_amount": {p.email: share for p in guests}},
        solution=[
            f"share = round({lit(total)} / {len(guests) + 1}, 2)",
            f"for name in {lit([p.name for p in guests])}:",
            *(f"    {line}" for line in find_venmo_user()),
            "    apis.venmo.create_payment_request(",
            f'        user_email=user["email"], amount=share, description={lit(what)}, access_token=token',
            "    )",
        ],
        # Values by receiver, never a count: a second request to a guest collapses into the same key.
        tests=[
            check(
                ["assert model changes match venmo.PaymentRequest, venmo.Notification."],
                ['test.case(models.changed_model_names(), "==", {"venmo.PaymentRequest", "venmo.Notification"})'],
            ),
            check(
                [
                    "obtain added, updated, removed venmo.PaymentRequest records using models.changed_records,",
                    "and assert 0 were updated or removed.",
                ],
                [
                    'added, updated, removed = models.changed_records("venmo.PaymentRequest")',
                    'test.case(len(updated), "==", 0)',
                    'test.case(len(removed), "==", 0)',
                ],
            ),
            check(
                [
                    "assert the added payment requests' receiver email -> amount map (dict_of)",
                    "matches private_data.email_to_amount.",
                ],
                ['test.case(dict_of(added, "receiver.email", "amount"), "==", dict(private_data.email_to_amount))'],
            ),
        ],
    )


def spotifyqueue(titles: tuple[str, ...]) -> Spec:
    ids = [[t for t, _ in SONGS].index(title) + 1 for title in titles]
    quoted = ", ".join(f'"{t}"' for t in titles[:-1]) + f' and "{titles[-1]}"'
    return Spec(
        instruction=f"Queue these songs on Spotify, in this order: {quoted}.",
        apps=["spotify"],
        login="spotify",
        public={"titles": list(titles)},
        private={"song_ids": ids},
        music_player=True,
        solution=[
            f"for title in {lit(list(titles))}:",
            '    song = [s for s in apis.spotify.search_songs(query=title, access_token=token) if s["title"] == title][0]',
            '    apis.spotify.add_to_queue(song_id=song["song_id"], access_token=token)',
        ],
        # The queue compared as a set: a song queued twice looks like a song queued once.
        tests=[
            check(
                ["assert model changes match spotify.MusicPlayer."],
                ['test.case(models.changed_model_names(), "==", {"spotify.MusicPlayer"})'],
            ),
            check(
                [
                    "obtain the updated spotify.MusicPlayer using models.changed_records and assert the",
                    "set of song ids in its queue equals set(private_data.song_ids).",
                ],
                [
                    'added, updated, removed = models.changed_records("spotify.MusicPlayer")',
                    "players = added + updated",
                    'test.case(len(players), "==", 1)',
                    'test.case(set(players[0].queue_song_ids), "==", set(private_data.song_ids))',
                ],
            ),
        ],
    )


def venmosend(amount: float, people: tuple[Person, ...], what: str) -> Spec:
    n = len(people)
    return Spec(
        instruction=f"Send {money(amount)} on Venmo to each of {names(people)} for the {what}.",
        apps=["venmo"],
        login="venmo",
        private={"email_to_amount": {p.email: amount for p in people}},
        solution=[
            f"for name in {lit([p.name for p in people])}:",
            *(f"    {line}" for line in find_venmo_user()),
            "    apis.venmo.create_transaction(",
            f'        receiver_email=user["email"], amount={lit(amount)}, description={lit(what)}, access_token=token',
            "    )",
        ],
        tests=[
            check(
                [
                    "obtain added venmo.Transaction records using models.changed_records",
                    f"and assert exactly {n} were added.",
                ],
                [
                    'added, updated, removed = models.changed_records("venmo.Transaction")',
                    f'test.case(len(added), "==", {n})',
                ],
            ),
            check(
                [
                    "assert the added transactions' receiver email -> amount map (dict_of)",
                    "matches private_data.email_to_amount.",
                ],
                ['test.case(dict_of(added, "receiver.email", "amount"), "==", dict(private_data.email_to_amount))'],
            ),
        ],
    )


def phonetext(people: tuple[Person, ...], message: str) -> Spec:
    n = len(people)
    return Spec(
        instruction=f'Text {names(people)} on my phone: "{message}"',
        apps=["phone"],
        login="phone",
        private={"phone_numbers": [p.phone for p in people], "message": message},
        solution=[
            f"for name in {lit([p.name for p in people])}:",
            "    contact = [c for c in apis.phone.search_contacts(query=name, access_token=token)",
            '               if c["first_name"] + " " + c["last_name"] == name][0]',
            "    apis.phone.send_text_message(",
            f'        phone_number=contact["phone_number"], message={lit(message)}, access_token=token',
            "    )",
        ],
        tests=[
            check(
                ["assert model changes match phone.GlobalTextMessage, phone.UserTextMessage."],
                ['test.case(models.changed_model_names(), "==", {"phone.GlobalTextMessage", "phone.UserTextMessage"})'],
            ),
            check(
                [
                    "obtain added, updated, removed phone.GlobalTextMessage records using models.changed_records,",
                    f"and assert exactly {n} were added and 0 updated or removed.",
                ],
                [
                    'added, updated, removed = models.changed_records("phone.GlobalTextMessage")',
                    f'test.case(len(added), "==", {n})',
                    'test.case(len(updated), "==", 0)',
                    'test.case(len(removed), "==", 0)',
                ],
            ),
            check(
                [
                    "assert the added messages' receiver phone numbers (set_of) equal private_data.phone_numbers,",
                    "and each message is private_data.message.",
                ],
                [
                    'test.case(set_of(added, "receiver.phone_number"), "==", set(private_data.phone_numbers))',
                    'test.case(set_of(added, "message"), "==", {private_data.message})',
                ],
            ),
        ],
    )


def noteupdate(title: str, content: str) -> Spec:
    note_id = [t for t, _, _ in NOTES].index(title) + 1
    return Spec(
        instruction=f'Replace the content of my "{title}" note in Simple Note with: {content}',
        apps=["simple_note"],
        login="simple_note",
        private={"note_id": note_id, "title": title, "content": content},
        # One write, a PATCH that sets the content (and updated_at to the frozen clock): repeating it
        # changes nothing, so a duplicate is harmless and the idempotence census finds no extra-ni.
        solution=[
            f"note = [n for n in apis.simple_note.search_notes(query={lit(title)}, access_token=token)",
            f'        if n["title"] == {lit(title)}][0]',
            f'apis.simple_note.update_note(note_id=note["note_id"], content={lit(content)}, access_token=token)',
        ],
        tests=[
            check(
                ["assert model changes match simple_note.Note."],
                ['test.case(models.changed_model_names(), "==", {"simple_note.Note"})'],
            ),
            check(
                [
                    "obtain added, updated, removed simple_note.Note records using models.changed_records,",
                    "and assert 0 were added or removed and exactly 1 was updated.",
                ],
                [
                    'added, updated, removed = models.changed_records("simple_note.Note")',
                    'test.case(len(added), "==", 0)',
                    'test.case(len(removed), "==", 0)',
                    'test.case(len(updated), "==", 1)',
                ],
            ),
            check(
                [
                    "assert the updated note is private_data.note_id, keeps its title,",
                    "and its content is private_data.content.",
                ],
                [
                    'test.case(updated[0].id, "==", private_data.note_id)',
                    'test.case(updated[0].title, "==", private_data.title)',
                    'test.case(updated[0].content, "==", private_data.content)',
                ],
            ),
        ],
    )


# AppWorld's question tasks ("How many songs are in my Spotify queue?") are graded by the answer they submit,
# `test.answer(predicted_answer, ground_truth_answer)`: both sides through appworld.common.utils.answer_to_text
# (stripped, lower-cased, a number as its value), then compared with "==". And by "no model changes": a
# question is answered by reading, so a run that also writes fails. A no-op run passes that one ("no_op_pass").
NO_CHANGES = "assert no model changes."


def paged(api: str, into: str, args: str = "") -> list[str]:
    """Every page of a paginated AppWorld read, as AppWorld's own solutions loop over them."""
    return [
        f"{into} = []",
        "page_index = 0",
        "while True:",
        f"    page = apis.{api}({args}page_index=page_index, page_limit=20, access_token=token)",
        "    if not page:",
        "        break",
        f"    {into}.extend(page)",
        "    page_index += 1",
    ]


def question(instruction: str, app: str, solution: list[str], answer: Any) -> Spec:
    """A question task: the solution reads, leaves its answer in `answer`, and changes nothing."""
    return Spec(
        instruction=instruction,
        apps=[app],
        login=app,
        private={},
        solution=solution,
        answer=answer,
        tests=[check([NO_CHANGES], ['test.case(models.changed_model_names(), "==", set())'])],
    )


def contact_field(person: Person, asked: str, field_name: str, value: Any) -> Spec:
    """What one of the supervisor's phone contacts' fields holds ("What is Grace Lee's phone number ...?")."""
    return question(
        asked,
        "phone",
        [
            *paged("phone.search_contacts", "contacts", f"query={lit(person.name)}, "),
            "contact = [c for c in contacts",
            f'           if c["first_name"] + " " + c["last_name"] == {lit(person.name)}][0]',
            f'answer = contact["{field_name}"]',
        ],
        value,
    )


QUESTIONS: dict[str, Spec] = {
    "question_1": question(
        "How many notes do I have in Simple Note?",
        "simple_note",
        [*paged("simple_note.search_notes", "notes"), "answer = len(notes)"],
        len(NOTES),
    ),
    "question_2": question(
        "What is the title of the longest song on Spotify?",
        "spotify",
        [*paged("spotify.search_songs", "songs"), 'answer = max(songs, key=lambda s: s["duration"])["title"]'],
        max(SONGS, key=lambda s: s[1])[0],
    ),
    "question_3": contact_field(
        GRACE, "What is Grace Lee's phone number in my phone contacts?", "phone_number", GRACE.phone
    ),
    "question_4": contact_field(
        CAROL, "When is Carol White's birthday, according to my phone contacts?", "birthday", CAROL.birthday
    ),
    "question_5": question(
        "How many of my phone contacts were born in the 1980s?",
        "phone",
        [
            *paged("phone.search_contacts", "contacts"),
            'answer = len([c for c in contacts if c["birthday"].startswith("198")])',
        ],
        sum(1 for p in PEOPLE if p.birthday.startswith("198")),
    ),
}

TASKS: dict[str, Spec] = {
    "venmosplit_1": venmosplit(180.0, (BOB, CAROL, DAN), "work dinner"),
    "venmosplit_2": venmosplit(150.0, (EVE, FRANK), "team lunch"),
    "venmosplit_3": venmosplit(260.0, (CAROL, GRACE, HENRY, BOB), "offsite dinner"),
    "spotifyqueue_1": spotifyqueue(("Midnight Rain", "Paper Planes", "Summer Echo")),
    "spotifyqueue_2": spotifyqueue(("Golden Hour", "Blue Lights")),
    "spotifyqueue_3": spotifyqueue(("Neon Skyline", "Quiet Harbor", "Velvet Morning", "Midnight Rain")),
    "venmosend_1": venmosend(20.0, (BOB, EVE), "concert tickets"),
    "venmosend_2": venmosend(35.0, (CAROL, DAN, FRANK), "cabin weekend"),
    "venmosend_3": venmosend(12.5, (GRACE, HENRY), "birthday cake"),
    "phonetext_1": phonetext((BOB, CAROL), "Running 10 minutes late, start without me."),
    "phonetext_2": phonetext((DAN, EVE, FRANK), "Drinks at 6 at the usual place?"),
    "phonetext_3": phonetext((GRACE, IRENE), "The package arrived, thank you so much!"),
    "noteupdate_1": noteupdate("Packing list", "passport, phone charger, sunscreen, hiking boots"),
    "noteupdate_2": noteupdate("Grocery list", "eggs, spinach, oat milk, coffee beans"),
    "noteupdate_3": noteupdate("Book club picks", "June: Piranesi; July: The Overstory"),
    **QUESTIONS,
}

_EVALUATION_HEAD = """\
# Canary String: {canary}
import json

from appworld.common.utils import dict_of, list_of, set_of


def evaluate(test, public_data, private_data, main_user, models, ground_truth_answer):
    active_tasks = models.end.supervisor.Task.all()
    try:
        predicted_answer = json.loads(active_tasks[0].answer)
    except json.JSONDecodeError:
        predicted_answer = active_tasks[0].answer
"""

_SOLUTION_HEAD = """\
# Canary String: {canary}


def solution(apis, requester):
    passwords = {{x["account_name"]: x["password"] for x in apis.supervisor.show_account_passwords()}}
    profile = apis.supervisor.show_profile()
"""

# Phone accounts sign in with the phone number, the others with the email.
_LOGIN = 'token = apis.{app}.login(username=profile["{key}"], password=passwords["{app}"])["access_token"]\n'

_LABEL_TEXT = """\
# SYNTHETIC AppWorld suite (verimut)

This data root is a SYNTHETIC suite made by verimut with the real AppWorld engine
(appworld {version}), in AppWorld's own on-disk format: base databases for all 12 apps,
API docs generated from the installed apps, and {n} tasks written for the audit
({generators}: the writing generators three variants each, then five question tasks).

It is NOT AppWorld's own task data, and results on it are not results on AppWorld's
benchmark. Generated by verimut/adapters/appworld/worker_side/appworld_suite.py.
"""


def render_evaluation(tests: list[tuple[str, str]], canary: str) -> str:
    """The evaluator: AppWorld's answer check, then one `with test(...)` block per requirement."""
    blocks = [("assert answers match.", "test.answer(predicted_answer, ground_truth_answer)"), *tests]
    code = _EVALUATION_HEAD.format(canary=canary)
    for requirement, body in blocks:
        code += f'    with test(\n        """\n{indent(requirement, " " * 8)}\n        """\n    ):\n'
        code += indent(body, " " * 8) + "\n"
    return code


def render_solution(spec: Spec, canary: str) -> str:
    key = "phone_number" if spec.login == "phone" else "email"
    submit = (
        "apis.supervisor.complete_task()" if spec.answer is None else "apis.supervisor.complete_task(answer=answer)"
    )
    body = _LOGIN.format(app=spec.login, key=key) + "\n".join(spec.solution) + f"\n{submit}\n"
    return _SOLUTION_HEAD.format(canary=canary) + indent(body, " " * 4)


def write_json(obj: Any, path: str) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=4)


def generate(root: str) -> None:
    root = os.path.abspath(root)
    if os.path.isdir(root) and os.listdir(root) and not os.path.exists(os.path.join(root, LABEL)):
        raise SystemExit(f"{root} is not empty and is not a synthetic suite: refusing to write into it")
    shutil.rmtree(os.path.join(root, "data"), ignore_errors=True)
    os.environ["APPWORLD_ROOT"] = root  # before AppWorld computes (and caches) any path
    sys.dont_write_bytecode = True

    import appworld
    from appworld.apps import get_all_apps
    from appworld.apps.api_lib import save_local_dbs, set_local_date_and_time
    from appworld.apps.model_lib import CachedDBHandler, ModelHashHandler
    from appworld.collections.api_docs import ApiDocCollection
    from appworld.collections.models import ModelCollection
    from appworld.common.constants import CANARY_STRING, DB_VERSION
    from appworld.common.datetime import DateTime
    from appworld.common.path_store import path_store

    appworld.update_root(root)
    data = path_store.data
    base = os.path.join(data, "base_dbs")
    all_apps = list(get_all_apps())  # admin, api_docs, supervisor and the 9 user apps
    base_time, task_time = DateTime(2023, 5, 1, 9, 0, 0), DateTime(2023, 5, 18, 12, 0, 0)

    # API docs, generated from the installed apps. ApiDocCollection.save() also writes an openapi
    # format that needs an extra package; Task.load reads only "standard", for every non-admin app.
    docs = ApiDocCollection.build(load_apps=tuple(get_all_apps(skip_admin=True)), include_response_schemas=True)
    os.makedirs(os.path.join(data, "api_docs", "standard"))
    for app_name, name_to_doc in docs.items():
        payload = {api: dict(doc, canary_string=CANARY_STRING) for api, doc in name_to_doc.items()}
        write_json(payload, os.path.join(data, "api_docs", "standard", app_name + ".json"))

    # Base databases: one SQLite file per app (all 12, even empty ones), made with AppWorld's own
    # models under a frozen clock, so every timestamp and record hash is the same on every run.
    os.makedirs(base)
    freezer = set_local_date_and_time(base_time)
    m = ModelCollection.load(to_db_home_path=base, from_db_home_path=base, load_apps=all_apps, create_db=True)
    for p in (SUPERVISOR, *PEOPLE):
        main_user = m.admin.MainUser.create(**p.core(), phone_number=p.phone, birthday=p.birthday, sex=p.sex)
        main_user.save()
        for app in APPS:
            m.admin.AccountPassword.create(main_user_id=main_user.id, account_name=app, password=p.password(app)).save()
        m.venmo.User.create(**p.core(), password=p.password("venmo"), verified=True, venmo_balance=500.0).save()
        m.spotify.User.create(**p.core(), password=p.password("spotify"), verified=True).save()
        m.simple_note.User.create(**p.core(), password=p.password("simple_note"), verified=True).save()
        m.phone.User.create(
            first_name=p.first, last_name=p.last, phone_number=p.phone, password=p.password("phone")
        ).save()
    phone_user = m.phone.User.find_one(phone_number=SUPERVISOR.phone)
    for p in PEOPLE:  # the supervisor's contact book
        m.phone.Contact.create(
            user_id=phone_user.id, **p.core(), phone_number=p.phone, birthday=p.birthday, relationships=["friend"]
        ).save()
    note_user = m.simple_note.User.find_one(email=SUPERVISOR.email)
    for title, content, tags in NOTES:  # the supervisor's notes
        m.simple_note.Note.create(user_id=note_user.id, title=title, content=content, tags=tags, pinned=False).save()
    artist = m.spotify.Artist.create(name="The Synthetics", genre="pop")
    artist.save()
    for title, duration in SONGS:
        m.spotify.Song.create(
            title=title, artist_ids=[artist.id], duration=duration, release_date=DateTime(2020, 1, 1), genre="pop"
        ).save()
    for app_name, name_to_doc in docs.items():  # the api_docs app serves these rows
        for api_name, doc in name_to_doc.items():
            m.api_docs.ApiDoc.create(
                app_name_=app_name,
                api_name=api_name,
                path=doc["path"],
                method=doc["method"],
                description=doc["description"],
                parameters=doc["parameters"],
                response_schemas=doc["response_schemas"],
            ).save()
    CachedDBHandler.reset()  # close the engines on the base files before tasks read them
    ModelHashHandler.reset()
    freezer.stop()

    for task_id, spec in TASKS.items():
        task_dir = os.path.join(data, "tasks", task_id)
        gt = os.path.join(task_dir, "ground_truth")
        os.makedirs(gt)
        # Task databases: the base, plus the supervisor and the task row (and any setup), saved in
        # AppWorld's "changes" format (the SQL statements replayed on top of base_dbs/<app>.db).
        scratch = f":memory:generate-{task_id}"  # an in-memory home; its name must not contain "/"
        freezer = set_local_date_and_time(task_time.subtract(hours=1))
        m = ModelCollection.load(to_db_home_path=scratch, from_db_home_path=base, load_apps=all_apps)
        sup = m.supervisor.Supervisor.create(
            **SUPERVISOR.core(), phone_number=SUPERVISOR.phone, birthday=SUPERVISOR.birthday, sex=SUPERVISOR.sex
        )
        sup.save()
        for app in APPS:
            m.supervisor.AccountPassword.create(
                supervisor_id=sup.id, account_name=app, password=SUPERVISOR.password(app)
            ).save()
        m.supervisor.Task.create(supervisor_id=sup.id, instruction=spec.instruction).save()
        if spec.music_player:
            user = m.spotify.User.find_one(email=SUPERVISOR.email)
            m.spotify.MusicPlayer.create(user_id=user.id, queue_song_ids=[], cursor_position=None).save()
        save_local_dbs(
            from_db_home_path=scratch,
            to_db_home_path=os.path.join(task_dir, "dbs"),
            format="changes",
            app_names=all_apps,
            delete_if_exists=True,
            save_model_hashes=True,
        )
        CachedDBHandler.reset(scratch)
        ModelHashHandler.reset(scratch)
        freezer.stop()

        supervisor = {**SUPERVISOR.core(), "phone_number": SUPERVISOR.phone}
        write_json(
            {
                "instruction": spec.instruction,
                "supervisor": supervisor,
                "datetime": task_time.isoformat(),
                "db_version": DB_VERSION,
                "canary_string": CANARY_STRING,
            },
            os.path.join(task_dir, "specs.json"),
        )
        solution = render_solution(spec, CANARY_STRING)
        for name in ("solution.py", "compiled_solution.py"):
            with open(os.path.join(gt, name), "w") as f:
                f.write(solution)
        with open(os.path.join(gt, "evaluation.py"), "w") as f:
            f.write(render_evaluation(spec.tests, CANARY_STRING))
        write_json(spec.public, os.path.join(gt, "public_data.json"))
        write_json(spec.private, os.path.join(gt, "private_data.json"))
        with open(os.path.join(gt, "answer.json"), "w") as f:
            f.write(json.dumps(spec.answer))
        write_json(spec.apps, os.path.join(gt, "required_apps.json"))
        # The evaluator matches each `with test("""...""")` text against these requirements.
        requirements = ["assert answers match.", *(r for r, _ in spec.tests)]
        labels = [{"requirement": r, "label": "no_op_pass" if r == NO_CHANGES else "no_op_fail"} for r in requirements]
        write_json(labels, os.path.join(gt, "test_data.json"))
        # num_solution_code_lines must be given: without it AppWorld computes it with `black`, which
        # it does not install, and AppWorld(...) crashes.
        body = solution.split("def solution(apis, requester):", 1)[1].splitlines()
        write_json(
            {
                "mode": "full",
                "difficulty": 1,
                "num_apps": len(spec.apps),
                "num_apis": len(set(re.findall(r"apis\.(\w+\.\w+)", solution))),
                "num_solution_code_lines": sum(1 for ln in body if ln.strip() and not ln.strip().startswith("#")),
            },
            os.path.join(gt, "metadata.json"),
        )

    os.makedirs(os.path.join(data, "datasets"))
    generators = ", ".join(dict.fromkeys(t.split("_")[0] for t in TASKS))
    with open(os.path.join(root, LABEL), "w") as f:
        f.write(_LABEL_TEXT.format(version=appworld.__version__, n=len(TASKS), generators=generators))
    # Written last: its presence is what says the suite is complete.
    with open(os.path.join(data, "datasets", "synthetic.txt"), "w") as f:
        f.write("\n".join(TASKS) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python appworld_suite.py ROOT")
    generate(sys.argv[1])
