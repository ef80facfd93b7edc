"""Probe minimal-file requirements on a scratch copy of the root. Each probe in a fresh process."""
import os, shutil, subprocess, sys, json
SRC = "/tmp/aw-proto/root"
PY = "/tmp/awenv/bin/python"
CHILD = r'''
import os, sys, warnings; warnings.filterwarnings("ignore")
root = sys.argv[1]; os.environ["APPWORLD_ROOT"] = root; sys.dont_write_bytecode = True
from appworld import AppWorld, evaluate_task
tid = sys.argv[2]; mode = sys.argv[3]
try:
    w = AppWorld(task_id=tid, experiment_name="probe", ground_truth_mode=mode)
    code = (w.task.ground_truth.compiled_solution_code or open(os.path.join(root, "data/tasks", tid, "ground_truth/solution.py")).read()) + "\nsolution(apis, requester)"
    out = w.execute(code)
    t = evaluate_task(tid, "probe"); w.close(); AppWorld.close_all()
    t2 = evaluate_task(tid, "probe")
    print("OK", t.pass_count, t.num_tests, "| from disk:", t2.pass_count, t2.num_tests, "|", out[:150].replace("\n"," "))
except BaseException as e:
    print("ERR", type(e).__name__, str(e)[:300].replace("\n", " "))
'''
def probe(name, mutate, tid="venmosplit_1", mode="full"):
    dst = f"/tmp/aw-proto/checks/root-{name}"
    shutil.rmtree(dst, ignore_errors=True); shutil.copytree(SRC, dst, ignore=shutil.ignore_patterns("experiments"))
    tid = mutate(dst, tid) or tid
    r = subprocess.run([PY, "-c", CHILD, dst, tid, mode], capture_output=True, text=True)
    print(f"{name:38s}", (r.stdout.strip() or r.stderr.strip()[-300:]))
    shutil.rmtree(dst, ignore_errors=True)
T = lambda d, t="venmosplit_1": os.path.join(d, "data/tasks", t)
def rm(*parts):
    def f(d, t):
        p = os.path.join(T(d, t), *parts) if not parts[0].startswith("/") else d + parts[0]
        (shutil.rmtree if os.path.isdir(p) else os.remove)(p)
    return f
def meta_drop(key):
    def f(d, t):
        p = os.path.join(T(d, t), "ground_truth/metadata.json"); m = json.load(open(p)); m.pop(key, None); json.dump(m, open(p, "w"))
    return f
def rename_task(new):
    def f(d, t):
        os.rename(T(d, t), T(d, new)); return new
    return f
probe("baseline", lambda d, t: None)
probe("no model_hashes.json", rm("dbs/model_hashes.json"))
probe("no compiled_solution.py", rm("ground_truth/compiled_solution.py"))
probe("no solution.py (full)", rm("ground_truth/solution.py"))
probe("no solution.py+required_apps (minimal)", lambda d, t: (rm("ground_truth/solution.py")(d, t), rm("ground_truth/required_apps.json")(d, t), rm("ground_truth/compiled_solution.py")(d, t), shutil.copy("/tmp/aw-proto/root/data/tasks/venmosplit_1/ground_truth/solution.py", "/tmp/aw-proto/checks/sol.py")) and None, mode="minimal")
probe("metadata w/o num_solution_code_lines", meta_drop("num_solution_code_lines"))
probe("metadata w/o num_solution_code_lines (minimal)", meta_drop("num_solution_code_lines"), mode="minimal")
probe("metadata w/o difficulty", meta_drop("difficulty"))
probe("no dbs/gmail.jsonl (unused app)", rm("dbs/gmail.jsonl"))
probe("no base_dbs/gmail.db (unused app)", rm("/data/base_dbs/gmail.db"))
probe("no api_docs/standard/gmail.json", rm("/data/api_docs/standard/gmail.json"))
probe("no datasets/", rm("/data/datasets"))
probe("no test_data.json", rm("ground_truth/test_data.json"))
probe("task id with 2 underscores", rename_task("venmo_split_1"))
probe("task id without underscore", rename_task("venmosplit"))
