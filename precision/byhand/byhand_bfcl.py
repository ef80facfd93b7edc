"""By-hand reads (BFCL's own backends) for sampled false accepts that no ground-truth read shows."""

import importlib.util
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location("pb", str(Path(__file__).parents[1] / "bfcl.py"))
pb = importlib.util.module_from_spec(spec)
sys.path.insert(0, str(Path(__file__).parents[1]))
spec.loader.exec_module(pb)
audit = pb.load_audit(Path(sys.argv[1]))
entries = pb.entries("base")
checks = {
    "base/multi_turn_base_167:extra-oos:register_credit_card@now.TravelAPI.credit_card_list.307751534385": "get_all_credit_cards()",
    "base/multi_turn_base_52:extra-oos:activateParkingBrake@now.VehicleControlAPI._private": "displayCarStatus(option='parkingBrake')",
    "base/multi_turn_base_71:extra-oos:activateParkingBrake@now.VehicleControlAPI._private": "displayCarStatus(option='parkingBrake')",
    "base/multi_turn_base_94:extra-oos:activateParkingBrake@now.VehicleControlAPI._private": "displayCarStatus(option='parkingBrake')",
    "base/multi_turn_base_95:extra-oos:activateParkingBrake@now.VehicleControlAPI._private": "displayCarStatus(option='parkingBrake')",
}
for cid, call in checks.items():
    entry = entries[cid.split(":")[0].split("/")[1]]
    _, _, ref = pb.run(entry, entry["ground_truth"])
    _, _, ed = pb.run(entry, pb.turns_of(audit.run(cid)["actions"]))
    (a, _), (b, _) = pb.probe(ref, call), pb.probe(ed, call)
    print(f"{cid.split(':')[0]}: {call}\n  reference: {a[:250]}\n  edited:    {b[:250]}")
    ref.close()
    ed.close()
