import os, sys, warnings; warnings.filterwarnings("ignore")
os.environ["APPWORLD_ROOT"] = "/tmp/aw-proto/root"; sys.dont_write_bytecode = True
from appworld import AppWorld, evaluate_task
tid = "venmosend_1"
a = evaluate_task(tid, "proto-duplicate").pass_count
b = evaluate_task(tid, "proto-reference").pass_count
print("back-to-back evaluate_task, no reset: duplicate=%d reference=%d (reference should be 3)" % (a, b))
AppWorld.close_all()
print("reference after close_all:", evaluate_task(tid, "proto-reference").pass_count)
