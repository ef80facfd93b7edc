"""A test benchmark whose verifier grades the calls' outputs, as BFCL's multi_turn_checker does: a login that
changes nothing.

`login/post` asks to post "hello" on an account the user is already logged in to ("my password is pw", said only
as the means). The reference logs in again, which changes nothing and answers a status, then posts. The
verifier wants the state right and every reference call's output among the run's outputs, so a run that
leaves the redundant login out fails only for lacking `{"login_status": true}`. `idle_writes` names that login:
the omitted run is a false reject; a login with a wrong password (another call, which errs) stays rejected, and
so does a run that leaves the post out. `login/fresh` starts logged out: its login changes the state, is not
idle, and leaving it out is rejected. `benchmark_strict` is the same benchmark without `idle_writes`: there any
run whose calls differ is rejected (the trace rule), the redundant login's omission included.
"""

from verimut import Action, Run, Step, Verdict

TASKS = {
    "login/post": "I am logged in already (my password is pw): post 'hello'.",
    "login/fresh": "Log in with password pw and post 'hello'.",
}


class LoginBench:
    name, version, telemetry = "login", "1", ()

    def provenance(self):
        return {"login": self.version}

    def tasks(self):
        return list(TASKS)

    def instruction(self, task):
        return TASKS[task]

    def reset(self, task):
        return {"task": task, "logged_in": task == "login/post", "posts": [], "outputs": []}

    def reference(self, task, episode):
        return Run((Action("login", {"password": "pw"}), Action("post", {"text": "hello"})), answer="")

    def execute(self, episode, action):
        if action.name == "login":
            ok = action.args.get("password") == "pw"
            episode["logged_in"] = episode["logged_in"] or ok
            out = '{"login_status": true}' if ok else '{"error": "wrong password"}'
        elif action.name == "post":
            if episode["logged_in"]:
                episode["posts"].append(action.args["text"])
                out = f'{{"posted": "{action.args["text"]}"}}'
            else:
                out = '{"error": "not logged in"}'
        else:
            out = str(episode["posts"])
        episode["outputs"].append(out)
        return Step(out)

    def is_write(self, action):
        return action.name in ("login", "post")

    def snapshot(self, episode):
        return {"account": {"logged_in": episode["logged_in"]}, "posts": list(episode["posts"])}

    def verify(self, episode, run):
        wanted = ['{"login_status": true}', '{"posted": "hello"}']
        state = episode["logged_in"] and episode["posts"] == ["hello"]
        missing = [w for w in wanted if w not in episode["outputs"]]
        checks = {"state": state, "every reference output among the run's": not missing}
        return Verdict(state and not missing, f"missing outputs: {missing}" if missing else "ok", checks)

    def reads_trace(self, task):
        return True


class LoginBenchIdle(LoginBench):
    def idle_writes(self, task):
        return [0] if task == "login/post" else []


benchmark = LoginBenchIdle()
benchmark_strict = LoginBench()
