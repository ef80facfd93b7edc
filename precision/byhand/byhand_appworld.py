"""By-hand GETs (AppWorld's own APIs) for sampled false accepts that no reference-run GET shows.
Run in AppWorld's interpreter: .venv-appworld/bin/python precision/byhand/byhand_appworld.py AUDIT_DIR"""

import importlib.util
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
spec = importlib.util.spec_from_file_location("pw", str(Path(__file__).parents[1] / "appworld.py"))
pw = importlib.util.module_from_spec(spec)
sys.modules["pw"] = pw
spec.loader.exec_module(pw)
audit = pw.load_audit(Path(sys.argv[1]))
checks = {
    "spotifyqueue_2:extra": ("spotify.show_song_queue", "spotify", {}),
    "venmosplit_2:extra": ("venmo.show_sent_payment_requests", "venmo", {}),
    "venmosend_2:extra-oos:phone.send_text_message@phone.GlobalTextMessage": (
        "phone.search_text_messages",
        "phone",
        {},
    ),
    "venmosend_1:wrong-value:4.description": ("venmo.show_transactions", "venmo", {}),
}
work = pw.data_root(None, audit.provenance, sys.executable)
try:
    worlds = pw.Worlds(work)
    for cid, (api, app, extra) in checks.items():
        actions = audit.run(cid)["actions"]
        token = next(
            a["args"]["access_token"]
            for a in actions
            if a["name"].startswith(app + ".") and "access_token" in a["args"]
        )
        args = {"access_token": token, **extra}
        task = cid.split(":")[0]
        w, _, _ = worlds.reference(task)
        ref = pw.call(w, api, args)
        w, _, _ = worlds.edited(task, actions)
        new = pw.call(w, api, args)
        worlds.close()
        print(f"{cid}: {api} differs={ref != new}\n  reference: {ref[:400]}\n  edited:    {new[:400]}")
finally:
    shutil.rmtree(work, ignore_errors=True)
