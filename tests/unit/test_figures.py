"""The report's figures show benchmark text as text: a `$` in a task id is a dollar sign, not mathtext."""

from __future__ import annotations

import pytest

from verimut.outputs import figures, swap_figure

DOLLARS = ["shop/refund_$5_or_$10", "pay $5 and $10", "a$_x$"]


@pytest.fixture
def drawn(monkeypatch) -> list[object]:
    """The figures given to `data_uri`, kept so their texts can be inspected after drawing."""
    kept: list[object] = []
    real = figures.data_uri

    def keep(fig):  # type: ignore[no-untyped-def]
        kept.append(fig)
        return real(fig)

    monkeypatch.setattr(figures, "data_uri", keep)
    return kept


def _texts(fig) -> list:  # type: ignore[no-untyped-def]
    from matplotlib.text import Text

    return [t for t in fig.findobj(Text) if t.get_text()]


@pytest.mark.parametrize("name", DOLLARS)
def test_a_dollar_in_a_task_id_draws_as_text(name, drawn):
    assert figures.false_accepts_per_task({name: {"extra": 1}}, ["extra"]).startswith("data:image/png;base64,")
    assert figures.outcome_heatmaps({name: {"extra": {"false_accept": 1}}}, ["false_accept"], ["extra"])
    svg = _svg(swap_figure.swap_matrix(name, [name, "other"], {(name, "other"): ("1", "accepted_effect_absent")}))
    assert svg.findall(f".//{{{SVG}}}text")[0].text.startswith(name)  # the title, as written
    assert figures.frame_coverage(
        name, [name, "other"], [name, "mail"], {(name, name): (1, 2), ("other", "mail"): (0, 1)}
    )
    shown = [t for fig in drawn for t in _texts(fig) if "$" in t.get_text()]
    assert shown, "the dollar-sign names should appear on the figures"
    assert not any(t.get_parse_math() for t in shown)


# At scale: a figure's size must not grow with the audit (tasks, verifiers, suites).
N = 2000
MAX_PX = 1800  # the bar chart and the coverage map at `figures.TOP` rows are about 1,300-1,500 px tall


def _png_size(uri: str) -> tuple[int, int]:
    import base64
    import struct

    png = base64.b64decode(uri.split(",", 1)[1])
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def _said(fig) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(t.get_text() for t in _texts(fig))


def test_the_false_accepts_chart_of_2000_tasks_draws_the_top_ones(drawn):
    per_task = {f"scale/task_{k:05d}": {"extra": k % 7, "omit": 1} for k in range(N)}
    width, height = _png_size(figures.false_accepts_per_task(per_task, ["omit", "extra"]))
    assert height <= MAX_PX and width <= MAX_PX
    said = _said(drawn[-1])
    assert f"top {figures.TOP} of 2,000 tasks" in said and "summary.json" in said
    labels = [t.get_text() for t in drawn[-1].axes[0].get_yticklabels()]
    assert len(labels) == figures.TOP
    assert all(per_task[t]["extra"] == 6 for t in labels)  # the most false accepts, most first
    assert labels[:2] == ["scale/task_00006", "scale/task_00013"]  # equals keep the given order


def test_the_coverage_map_of_2000_verifiers_draws_the_top_ones(drawn):
    verifiers = [f"scale/task_{k:05d}" for k in range(N)]
    cells = {(v, c): (k % 4, 3) for k, v in enumerate(verifiers) for c in ("accounts", "notes")}
    misses = {v: 6 - 2 * (k % 4) for k, v in enumerate(verifiers)}
    width, height = _png_size(figures.frame_coverage("scale", verifiers, ["accounts", "notes"], cells, misses))
    assert height <= MAX_PX and width <= MAX_PX
    assert f"top {figures.TOP} of 2,000 verifiers" in _said(drawn[-1])
    rows = [t.get_text() for t in drawn[-1].axes[0].get_yticklabels()]
    assert len(rows) == figures.TOP and all(int(r) % 4 == 0 for r in rows)  # coverage 0: the most false accepts
    # Without the counts it ranks by the unrejected side effects in `cells`: the same rows here.
    figures.frame_coverage("scale", verifiers, ["accounts", "notes"], cells)
    assert [t.get_text() for t in drawn[-1].axes[0].get_yticklabels()] == rows


def test_the_heat_maps_of_many_suites_draw_the_top_ones(drawn):
    counts = {f"suite_{s}": {"extra": {"false_accept": s % 5, "rejected": 3}} for s in range(60)}
    width, height = _png_size(figures.outcome_heatmaps(counts, ["rejected", "false_accept"], ["extra"]))
    assert height <= 2500 and width <= MAX_PX
    fig = drawn[-1]
    assert f"top {figures.TOP_SUITES} of 60 suites" in _said(fig)
    titles = [ax.get_title(loc="left") for ax in fig.axes if ax.get_title(loc="left")]
    assert len(titles) == figures.TOP_SUITES and all(int(t.split("_")[1]) % 5 == 4 for t in titles)


def test_a_large_swap_matrix_labels_at_most_top_tasks():
    tasks = [f"s/t{k}" for k in range(150)]
    svg = _svg(swap_figure.swap_matrix("s", tasks, {(tasks[0], tasks[1]): ("1", "accepted_effect_absent")}))
    assert float(svg.get("height")) <= MAX_PX and float(svg.get("width")) <= MAX_PX
    texts = [t.text for t in svg.findall(f".//{{{SVG}}}text")]
    assert "one task in 4 labelled" in texts[0]
    labelled = [t for t in texts if t and t.isdigit()]  # the ids less their shared prefix "s/t"
    assert len(labelled) == 2 * 38 <= 2 * figures.TOP  # rows and columns: 0, 4, ..., 148
    marks = svg.findall(f".//{{{SVG}}}path")  # one confirmed false accept, and the legend's two crosses
    assert len(marks) == 3


def test_the_swap_matrix_grid_is_one_pixel_a_cell_in_its_rung_colour():
    import base64
    import struct
    import zlib

    tasks = ["a", "b", "c"]
    cells = {(i, j): ("control" if i == j else "3", "rejected") for i in tasks for j in tasks}
    cells[("a", "b")] = ("1", "accepted_effect_present")
    svg = _svg(swap_figure.swap_matrix("s", tasks, cells))
    image = svg.find(f"{{{SVG}}}image")
    assert image is not None
    data = base64.b64decode(image.get("href").split(",", 1)[1])
    assert struct.unpack(">II", data[16:24]) == (3, 3)
    idat = data.index(b"IDAT")
    rows = zlib.decompress(data[idat + 4 : idat + 4 + struct.unpack(">I", data[idat - 4 : idat])[0]])
    order = swap_figure.RUNG_ORDER
    assert [list(rows[k * 4 + 1 : k * 4 + 4]) for k in range(3)] == [
        [order.index("control"), order.index("1"), order.index("3")],
        [order.index("3"), order.index("control"), order.index("3")],
        [order.index("3"), order.index("3"), order.index("control")],
    ]
    assert len(svg.findall(f".//{{{SVG}}}circle")) == 2  # the acceptance, and the legend's dot


SVG = "http://www.w3.org/2000/svg"


def _svg(uri: str):  # type: ignore[no-untyped-def]
    import base64
    import xml.etree.ElementTree as ET

    assert uri.startswith("data:image/svg+xml;base64,")
    return ET.fromstring(base64.b64decode(uri.split(",", 1)[1]))


def test_a_small_audit_draws_every_task_in_its_order_with_no_top_k_title(drawn):
    per_task = {f"t{k}": {"extra": k % 3 + 1} for k in range(figures.TOP)}
    figures.false_accepts_per_task(per_task, ["extra"])
    fig = drawn[-1]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == list(per_task)
    assert " of " not in _said(fig)


def test_a_long_task_id_is_cut_in_the_middle_and_kept_apart_from_the_others():
    from verimut.outputs.figures import LABEL, short_names

    kinds = (("mms_issue", "None"), ("service_issue", "Easy"), ("mobile_data_issue", "Hard"))
    long = [f"telecom/[{k}]{'airplane_mode_on|' * 8}[PERSONA:{p}]" for k, p in kinds]
    names = short_names(long)
    assert all(len(n) <= LABEL for n in names) and len(set(names)) == 3
    assert names[1].startswith("service_issue]") and names[1].endswith("[PERSONA:Easy]")
    assert short_names(["banking/user_task_3", "banking/user_task_10"]) == ["3", "10"]
    # cut names that would collide are left whole
    same_ends = [f"{'a' * 60}{i}{'b' * 30}" for i in range(2)]
    assert len(set(short_names(same_ends))) == 2


def test_past_most_marks_the_swap_matrix_paints_them_and_its_size_stays_bounded():
    n = 300
    tasks = [f"s/t{k}" for k in range(n)]
    rows = (
        (i, j, "1", "accepted_effect_absent" if (a + b) % 7 == 0 else "rejected")
        for a, i in enumerate(tasks)
        for b, j in enumerate(tasks)
    )
    cells = swap_figure.swap_cells(tasks, rows)
    marks = len(cells.marks["absent"][0])
    assert marks > swap_figure.MOST_MARKS
    uri = swap_figure.swap_matrix("s", tasks, cells)
    svg = _svg(uri)
    assert not svg.findall(f".//{{{SVG}}}path") and not svg.findall(f".//{{{SVG}}}circle")  # no shape a mark
    assert len(uri) < 200_000  # 12,857 marks as shapes would be over a megabyte
    import base64
    import struct
    import zlib

    data = base64.b64decode(svg.find(f"{{{SVG}}}image").get("href").split(",", 1)[1])
    idat = data.index(b"IDAT")
    raw = zlib.decompress(data[idat + 4 : idat + 4 + struct.unpack(">I", data[idat - 4 : idat])[0]])
    absent = len(swap_figure.RUNG_COLOURS) + list(swap_figure.MARK_COLOURS).index("absent")
    painted = sum(raw[r * (n + 1) + 1 + c] == absent for r in range(n) for c in range(n))
    assert painted == marks
