"""A test benchmark for the report: verifiers that report several checks, and one false reject.

AgentDojo's verifiers say one boolean and its audit has no false reject, so the report's
per-check table and its false-reject section are exercised here, on a real (tiny) benchmark:

- `notes/rename` asks to rename a note. Its verifier checks the title AND that `set_title` was
  called exactly once (a trace check). Repeating the (idempotent) rename leaves the same end
  state, so `extra` is a false reject: the oracle sees no difference, the verifier fails.
- `notes/tag` asks to tag the note. Its verifier checks that the tag is there, not how many
  times: `extra` adds it twice, a confirmed false accept.
"""

from verimut import Action, Run, Step, Verdict

TASKS = {"notes/rename": "Rename my note to 'Q3 plan'.", "notes/tag": "Tag my note 'urgent'."}


class NotesBench:
    name, version, telemetry = "notes", "1", ()

    def provenance(self):
        return {"notes": self.version}

    def tasks(self):
        return list(TASKS)

    def instruction(self, task):
        return TASKS[task]

    def reset(self, task):
        return {"task": task, "note": {"title": "draft", "tags": ["work"]}}

    def reference(self, task, episode):
        if task == "notes/rename":
            return Run((Action("get_note"), Action("set_title", {"title": "Q3 plan"})), answer="Renamed.")
        return Run((Action("get_note"), Action("add_tag", {"tag": "urgent"})), answer="Tagged.")

    def execute(self, episode, action):
        note = episode["note"]
        if action.name == "set_title":
            note["title"] = action.args["title"]
        elif action.name == "add_tag":
            note["tags"].append(action.args["tag"])
        return Step(f"title={note['title']}; tags={','.join(note['tags'])}")

    def is_write(self, action):
        return action.name != "get_note"

    def snapshot(self, episode):
        return {"note": {"title": episode["note"]["title"], "tags": list(episode["note"]["tags"])}}

    def verify(self, episode, run):
        note = episode["note"]
        if episode["task"] == "notes/rename":
            calls = sum(a.name == "set_title" for a in run.actions)
            checks = {"title is 'Q3 plan'": note["title"] == "Q3 plan", "set_title called once": calls == 1}
        else:
            checks = {"tag 'urgent' present": "urgent" in note["tags"]}
        return Verdict(all(checks.values()), "notes checks", checks)


benchmark = NotesBench()
