import os, sys, warnings; warnings.filterwarnings("ignore")
os.environ["APPWORLD_ROOT"] = "/tmp/aw-proto/root"; sys.dont_write_bytecode = True
from appworld import AppWorld, evaluate_task
tid = "venmosend_1"
print("disk-only eval of proto-duplicate (nothing open):", evaluate_task(tid, "proto-duplicate").pass_count)
AppWorld.close_all()
w = AppWorld(task_id=tid, experiment_name="cache-demo", ground_truth_mode="full")
w.execute(w.task.ground_truth.compiled_solution_code + "\nsolution(apis, requester)")
# world for experiment 'cache-demo' still open -> evaluating a DIFFERENT experiment of the same task id:
print("eval of proto-duplicate while cache-demo world is open:", evaluate_task(tid, "proto-duplicate").pass_count, "(wrong: in-memory ':memory:task_output-%s' is keyed by task id only)" % tid)
w.close(); AppWorld.close_all()
print("after close_all:", evaluate_task(tid, "proto-duplicate").pass_count)
AppWorld.close_all()
