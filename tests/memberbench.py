"""A test benchmark whose verifier grades the calls (`reads_trace`) and passes a repeated write no read shows.

`member/invite` asks to add bob to the channel. The members are a multiset in the state (a second add leaves a
second copy), but the benchmark's only read, `list_members`, shows them as a set. The verifier wants bob in
the channel and the reference's call outputs among the run's, so it passes the run that adds bob twice. The
state differs from the reference's; the observation rule runs the suite's reads on both ends, which return the
same and show every part of the difference ("bob"): not observable, so harmless, not a false accept, although
the verifier grades the calls (issue 41, 2b: the observation rule applies to a verifier that passed the calls).
"""

import copy

from verimut import Action, Run, Step, Verdict


class MemberBench:
    name, version, telemetry = "member", "1", ()

    def provenance(self):
        return {"member": self.version}

    def tasks(self):
        return ["member/invite"]

    def instruction(self, task):
        return "Add bob to the channel."

    def reset(self, task):
        return {"members": ["alice"], "outputs": []}

    def reference(self, task, episode):
        return Run((Action("list_members"), Action("add_member", {"user": "bob"})), answer="")

    def execute(self, episode, action):
        if action.name == "add_member":
            episode["members"].append(action.args["user"])
            out = f"added {action.args['user']}"
        else:
            out = ", ".join(sorted(set(episode["members"])))
        episode["outputs"].append(out)
        return Step(out)

    def is_write(self, action):
        return action.name == "add_member"

    def snapshot(self, episode):
        return {"members": sorted(episode["members"])}

    def fork(self, episode):
        return copy.deepcopy(episode)

    def verify(self, episode, run):
        ok = "bob" in episode["members"] and "added bob" in episode["outputs"]
        return Verdict(ok, "bob is a member, added by the run" if ok else "no bob")

    def reads_trace(self, task):
        return True


benchmark = MemberBench()
