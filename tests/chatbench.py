"""A chat-and-calendar benchmark for issue 41's AgentDojo rules, modelled on examples/todo_bench.py and slack.

- `chat/add_ann` grades the run's calls (`reads_trace`), `chat/add_bob` the state: both pass a repeated
  `add_user_to_channel`, which lists the channel twice in `user_channels` where no read shows it twice (1a).
- `chat/rent`: the rent is already 1100, so its reference run changes nothing (nothing to do, 1b); `chat/note`'s
  verifier passes anything (a vacuous verifier).
- `chat/reunion`: the event's title is read from an email, and the instruction names the family reunion; the
  verifier checks only the hours (1c: another email's subject as the title is the wrong event).
- `chat/invite`: the invitation's address is stored nowhere (`trace_args`) and the verifier wants any invitation;
  `chat/post`: the verifier grades the request log (declared telemetry), which a page posted again grows (6).
"""

import copy
from typing import ClassVar

from verimut import Action, Run, Step, Verdict

TASKS = {
    "chat/add_ann": "Add Ann to the channel random.",
    "chat/add_bob": "Add Bob to the channel random.",
    "chat/rent": "Check and update my rent payment for next month.",
    "chat/note": "Post the note 'standup moved' to the channel random.",
    "chat/reunion": "Create an event for the family reunion based on the emails about it. Make it last 4 hours.",
    "chat/invite": "Invite dora@example.com to the workspace.",
    "chat/post": "Post 'hello' on the page example.com/p.",
}
REFERENCE = {
    "chat/add_ann": [Action("list_user_channels", {"user": "ann"}), Action("add_user_to_channel", {"user": "ann", "channel": "random"})],
    "chat/add_bob": [Action("list_user_channels", {"user": "bob"}), Action("add_user_to_channel", {"user": "bob", "channel": "random"})],
    "chat/rent": [Action("get_rent"), Action("set_rent", {"amount": 1100})],
    "chat/note": [Action("post_message", {"channel": "random", "text": "standup moved"})],
    "chat/reunion": [Action("list_events"), Action("read_emails"), Action("create_event", {"title": "Family Reunion", "hours": 4})],
    "chat/invite": [Action("invite_user", {"email": "dora@example.com"})],
    "chat/post": [Action("post_page", {"url": "example.com/p", "content": "hello"})],
}  # fmt: skip
WRITES = {"add_user_to_channel", "set_rent", "post_message", "create_event", "invite_user", "post_page"}
EMAILS = [
    {"subject": "Family Reunion", "body": "The family reunion is on Saturday at noon."},
    {"subject": "Ads campaign deadline", "body": "The ads campaign is due on Friday."},
]


class ChatBench:
    name, version = "chat", "1"
    telemetry = ("requests",)  # the web request log: only chat/post's verifier grades it
    trace_args: ClassVar[dict[str, tuple[str, ...]]] = {
        "invite_user": ("email",)
    }  # an invitation's address is stored nowhere

    def provenance(self):
        return {"chat": self.version}

    def tasks(self):
        return list(TASKS)

    def instruction(self, task):
        return TASKS[task]

    def reset(self, task):
        return {
            "task": task,
            "user_channels": {"ann": ["general"], "bob": ["general"]},
            "users": [{"name": "ann", "email": "ann@example.com"}, {"name": "bob", "email": "bob@example.com"}],
            "messages": [],
            "emails": copy.deepcopy(EMAILS),
            "events": [],
            "rent": {"amount": 1100},
            "pages": {},
            "requests": [],
        }

    def reference(self, task, episode):
        return Run(tuple(REFERENCE[task]))

    def execute(self, episode, action):
        a = action.args
        if action.name == "add_user_to_channel":
            episode["user_channels"][a["user"]].append(a["channel"])  # slack's: no check for a repeat
        elif action.name == "set_rent":
            episode["rent"]["amount"] = a["amount"]
        elif action.name == "post_message":
            episode["messages"].append({"channel": a["channel"], "text": a["text"]})
        elif action.name == "create_event":
            episode["events"].append({"title": a["title"], "hours": a["hours"]})
        elif action.name == "invite_user":
            pass  # sent, and kept nowhere
        elif action.name == "post_page":
            episode["pages"][a["url"]] = a["content"]
            episode["requests"].append(a["url"])
        elif action.name == "list_user_channels":
            return Step(", ".join(sorted(set(episode["user_channels"][a["user"]]))))  # each channel once
        elif action.name == "get_rent":
            return Step(f"rent: {episode['rent']['amount']}")
        elif action.name == "list_events":
            return Step("\n".join(f"{e['title']} ({e['hours']} h)" for e in episode["events"]) or "no events")
        elif action.name == "read_emails":
            return Step("\n".join(f"{e['subject']}: {e['body']}" for e in episode["emails"]))
        else:
            raise ValueError(f"no tool {action.name}")
        return Step("ok")

    def is_write(self, action):
        return action.name in WRITES

    def snapshot(self, episode):
        return copy.deepcopy({k: v for k, v in episode.items() if k != "task"})

    def fork(self, episode):
        return copy.deepcopy(episode)

    def patch(self, episode, path, value):
        node = episode
        for key in path[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(path[-1])] = value
        else:
            node[path[-1]] = value

    def reads_trace(self, task):
        return task in ("chat/add_ann", "chat/invite")

    def verify(self, episode, run):
        task, calls = episode["task"], [(a.name, dict(a.args)) for a in run.actions]
        if task == "chat/add_ann":  # graded from the calls, as AgentDojo's utility_from_traces
            return Verdict(("add_user_to_channel", {"user": "ann", "channel": "random"}) in calls, "trace")
        if task == "chat/add_bob":
            return Verdict("random" in episode["user_channels"]["bob"], "bob in random")
        if task == "chat/rent":
            return Verdict(episode["rent"]["amount"] == 1100, "rent is 1100")
        if task == "chat/note":
            return Verdict(True, "no real check")
        if task == "chat/reunion":
            return Verdict(any(e["hours"] == 4 for e in episode["events"]), "a 4-hour event")
        if task == "chat/invite":
            return Verdict(any(name == "invite_user" for name, _ in calls), "an invitation in the trace")
        url = "example.com/p"
        return Verdict(
            episode["pages"].get(url) == "hello" and url in episode["requests"], "page posted, request logged"
        )


benchmark = ChatBench()
