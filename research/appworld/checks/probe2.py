import subprocess
exec(open("probe.py").read().split("probe(\"baseline\"")[0].replace('or open(os.path.join(root, "data/tasks", tid, "ground_truth/solution.py")).read()', 'or open("/tmp/aw-proto/checks/sol.py").read()'))
import shutil
shutil.copy("/tmp/aw-proto/root/data/tasks/venmosplit_1/ground_truth/solution.py", "/tmp/aw-proto/checks/sol.py")
def minimal(d, t):
    for f in ("solution.py", "compiled_solution.py", "required_apps.json"):
        os.remove(os.path.join(T(d, t), "ground_truth", f))
    p = os.path.join(T(d, t), "ground_truth/metadata.json"); m = json.load(open(p)); m["mode"] = "minimal"; json.dump(m, open(p, "w"))
probe("minimal GT (6 files) + mode=minimal", minimal, mode="minimal")
probe("minimal GT loaded with mode=full", minimal, mode="full")
