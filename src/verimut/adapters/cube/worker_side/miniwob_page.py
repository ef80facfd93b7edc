"""verimut's side of a MiniWoB++ page, shared by every way the page is driven (the cube's Playwright tool, the
plain `miniwob` gymnasium environment's Selenium): the action vocabulary, how an action finds its element, and
verimut's own reader of the end state. Standard library only: it runs in CUBE's interpreter.

Actions are verimut's, in the page's own terms (what a person reading the evidence can find on the page):
- `check {label}`: click the checkbox or radio button so labelled;
- `fill {field, text}`: type `text` into the input with id `field` (appending, as keys do); `fill {css, text}`
  for an input with no id;
- `choose {field, option}`: pick the option of the select with id `field` that has that text;
- `press {button}`: click the button with that text;
- `click {css, text?}`: click the one visible element of the task's area that matches the CSS selector and, when
  `text` is given, whose text is `text` or holds a part whose text is `text`;
- `key {key}`: press a key (Playwright's names: "Enter", "ArrowDown") in the focused element;
- `submit {button}` or `submit {css, text}`: click the task's own submit control (a button by its text, or another
  element as `click` finds it). This is the run's claim that it is done, not a write: MiniWoB++ grades there.
Every action first finds its one element with verimut's own script (`TARGET_JS`); a missing or ambiguous one is
the action's error (and never a 30 s wait in the driver). The element found is marked with `data-verimut-target`
for the driver's click, and unmarked after it.
"""

from __future__ import annotations

from typing import Any

ACTIONS = ("check", "fill", "choose", "press", "click", "key", "submit")
MARK = "data-verimut-target"
TARGET = f"[{MARK}]"

# Find an action's one element in the task's area; mark it and return null, or return why it cannot be found.
TARGET_JS = r"""(a) => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  document.querySelectorAll('[data-verimut-target]').forEach((e) => e.removeAttribute('data-verimut-target'));
  const area = document.getElementById('area') || document.body;
  const visible = (e) => Boolean(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const all = (css) => Array.from(area.querySelectorAll(css));
  let found, what;
  if (a.name === 'check') {
    what = `a checkbox or radio button labelled ${JSON.stringify(a.args.label)}`;
    found = all('label').filter((l) => norm(l.textContent) === a.args.label && l.querySelector('input'))
      .map((l) => l.querySelector('input'));
  } else if (a.name === 'fill' || a.name === 'choose') {
    const key = a.args.field !== undefined ? a.args.field : a.args.css;
    what = a.args.field !== undefined ? `a field with id ${JSON.stringify(key)}` : `a field ${key}`;
    found = a.args.field !== undefined ? [document.getElementById(key)].filter(Boolean) : all(key).filter(visible);
    if (a.name === 'choose' && found.length === 1) {
      const options = found[0].options ? Array.from(found[0].options).map((o) => o.text) : [];
      if (!options.includes(a.args.option)) return `no option ${JSON.stringify(a.args.option)} in ${what}`;
    }
  } else if (a.name === 'press' || (a.name === 'submit' && a.args.button !== undefined)) {
    what = `a button ${JSON.stringify(a.args.button)}`;
    found = all('button').filter((b) => norm(b.textContent) === a.args.button && visible(b));
  } else if (a.name === 'click' || a.name === 'submit') {
    what = `a visible ${a.args.css}` + (a.args.text !== undefined ? ` with text ${JSON.stringify(a.args.text)}` : '');
    found = all(a.args.css).filter(visible);
    if (a.args.text !== undefined) {
      found = found.filter((e) => norm(e.textContent) === a.args.text
        || Array.from(e.querySelectorAll('*')).some((d) => norm(d.textContent) === a.args.text));
    }
  } else {
    return `unknown action ${JSON.stringify(a.name)}`;
  }
  if (found.length !== 1) return `${found.length ? 'more than one' : 'no'} ${what} (${found.length} found)`;
  found[0].setAttribute('data-verimut-target', '1');
  return null;
}"""

# Every image the page's style sheets name, fetched and decoded before the run: a `:hover` rule's image is otherwise
# fetched only when the pointer first passes over its element, which has no width until it arrives, so a click
# aimed at it can slip onto its parent (social-media's icons). Nothing of the page is changed.
PRELOAD_JS = r"""async () => {
  const urls = new Set();
  for (const sheet of Array.from(document.styleSheets)) {
    let rules = [];
    try { rules = Array.from(sheet.cssRules); } catch (e) { continue; }
    for (const rule of rules) {
      for (const m of (rule.cssText || '').matchAll(/url\("?([^")]+)"?\)/g)) urls.add(new URL(m[1], sheet.href || location.href).href);
    }
  }
  await Promise.all(Array.from(urls).map((u) => { const img = new Image(); img.src = u; return img.decode().catch(() => null); }));
  return urls.size;
}"""

# What ended the episode, kept for the end state: many tasks end at a click that changes nothing the page keeps
# (a link in a tab, a search result, a tree node), so a run that clicked another link would otherwise end where
# the reference does. A listener at the window records each click's and key's element before the task's own
# handlers run (capture) and, after them (bubble), the one during which the episode ended; a task that ends its
# episode later (a timer) has the last one before the end. Installed at each reset (the gymnasium environment
# reuses its page), before any action. Nothing of the page is changed.
WATCH_JS = r"""() => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const describe = (e) => {
    if (!(e instanceof Element)) return null;
    const d = {tag: e.tagName.toLowerCase(), text: norm(e.textContent).slice(0, 80)};
    if (e.id) d.id = e.id;
    const cls = norm(Array.from(e.classList).filter((c) => !c.startsWith('ui-state-')).join(' '));
    if (cls) d.class = cls;
    return d;
  };
  window.__verimut = {ended_by: null, last: null, was_done: false};
  if (window.__verimut_watching) return;
  window.__verimut_watching = true;
  const before = (ev) => {
    window.__verimut.was_done = Boolean(WOB_DONE_GLOBAL);
    window.__verimut.last = {event: ev.type, ...(describe(ev.target) || {})};
  };
  const after = () => {
    const w = window.__verimut;
    if (!w.was_done && WOB_DONE_GLOBAL && w.ended_by === null) w.ended_by = w.last;
  };
  for (const type of ['click', 'keydown']) {
    window.addEventListener(type, before, true);
    window.addEventListener(type, after, false);
  }
}"""

UNMARK_JS = (
    "() => document.querySelectorAll('[data-verimut-target]').forEach((e) => e.removeAttribute('data-verimut-target'))"
)

# verimut's own reader of the page (not the task's reward code): every input, textarea and select of the task's
# area, keyed by id (else name and position), whether the episode ended and at which element (WATCH_JS); the
# task's reward variables are telemetry (`wob`). A task's own structures (an inbox, a feed) are added by its
# solver module's STATE readers.
STATE_JS = r"""() => {
  const labelOf = (el) => {
    const l = el.closest('label') || (el.id && document.querySelector(`label[for="${el.id}"]`));
    return l ? l.textContent.replace(/\s+/g, ' ').trim() : null;
  };
  const area = document.getElementById('area') || document.body;
  const fields = {};
  Array.from(area.querySelectorAll('input, textarea, select')).forEach((el, i) => {
    const f = {tag: el.tagName.toLowerCase(), type: el.type || null};
    const label = labelOf(el);
    if (label !== null) f.label = label;
    if (el.type === 'checkbox' || el.type === 'radio') f.checked = el.checked;
    else if (el.tagName === 'SELECT') f.value = el.options[el.selectedIndex] ? el.options[el.selectedIndex].text : null;
    else f.value = el.value;
    fields[el.id || `${el.name || el.tagName.toLowerCase()}#${i}`] = f;
  });
  const w = window.__verimut || {};
  const ended_by = WOB_DONE_GLOBAL ? (w.ended_by || w.last || null) : null;
  return {fields: fields, episode: {submitted: Boolean(WOB_DONE_GLOBAL), ended_by: ended_by},
          wob: {reward: WOB_REWARD_GLOBAL, raw_reward: WOB_RAW_REWARD_GLOBAL, reason: WOB_REWARD_REASON}};
}"""


# The page's own writes the task never mentions (`page_writes`, for the `extra-oos` family), read off the task's
# area at its start, in this order: each checkbox (or unchecked radio button) whose label the instruction does not
# name and the run does not check; each visible, editable text field the run does not fill (typed: OTHER_TEXT); each
# select the run does not choose in (an option the instruction does not name, other than the one shown); and, in an
# inbox, the star and the trash icon of every listed email whose sender the instruction does not name. A search box
# is left out: text typed there and never searched is no write. Only elements an action can find (a unique label).
OTHER_TEXT = "verimut"
PAGE_WRITES_JS = r"""(a) => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const goal = norm(a.goal).toLowerCase();
  const named = (t) => { const x = norm(t).toLowerCase(); return !x || goal.includes(x); };
  const area = document.getElementById('area') || document.body;
  const visible = (e) => Boolean(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const used = (name, key) => a.run.some((x) => x.name === name && Object.values(x.args || {}).includes(key));
  const out = [];
  const labels = Array.from(area.querySelectorAll('label')).filter((l) => l.querySelector('input') && visible(l));
  for (const l of labels) {
    const t = norm(l.textContent);
    const box = l.querySelector('input');
    if (!['checkbox', 'radio'].includes(box.type) || box.disabled || (box.type === 'radio' && box.checked)) continue;
    if (named(t) || used('check', t) || labels.filter((o) => norm(o.textContent) === t).length !== 1) continue;
    out.push({name: 'check', args: {label: t}});
  }
  const search = (e) => e.type === 'search' || /search/i.test(`${e.id} ${e.className} ${e.placeholder || ''}`);
  const texts = ['text', 'password', 'email', 'number', 'tel', 'url', 'textarea'];
  for (const e of Array.from(area.querySelectorAll('input[id], textarea[id]'))) {
    if (!texts.includes(e.type) || !visible(e) || e.disabled || e.readOnly || search(e)) continue;
    if (used('fill', e.id) || used('choose', e.id) || goal.includes(a.text)) continue;
    out.push({name: 'fill', args: {field: e.id, text: a.text}});
  }
  for (const e of Array.from(area.querySelectorAll('select[id]'))) {
    if (!visible(e) || e.disabled || used('choose', e.id)) continue;
    const other = Array.from(e.options).find((o, i) => i !== e.selectedIndex && norm(o.text) && !named(o.text));
    if (other) out.push({name: 'choose', args: {field: e.id, option: other.text}});
  }
  Array.from(document.querySelectorAll('#main > .email-thread')).forEach((t, n) => {
    const sender = t.querySelector('.email-sender');
    if (!sender || named(sender.textContent) || !visible(t)) return;
    for (const icon of ['star', 'trash']) {
      if (t.querySelector(`.${icon}`)) out.push({name: 'click', args: {css: `#main > .email-thread:nth-child(${n + 2}) .${icon}`}});
    }
  });
  return out;
}"""


def problem(action: dict[str, Any]) -> str | None:
    """What is wrong with an action's shape before the page is asked, or None."""
    name, args = action.get("name"), action.get("args", {})
    need = {
        "check": ("label",),
        "fill": ("text",),
        "choose": ("option",),
        "press": ("button",),
        "click": ("css",),
        "key": ("key",),
        "submit": (),
    }
    if name not in need:
        return f"unknown action {name!r} ({', '.join(ACTIONS)})"
    missing = [k for k in need[name] if not isinstance(args.get(k), str)]
    if name in ("fill", "choose") and not (isinstance(args.get("field"), str) or isinstance(args.get("css"), str)):
        missing.append("field")
    if name == "submit" and not (isinstance(args.get("button"), str) or isinstance(args.get("css"), str)):
        missing.append("button")
    return f"{name} needs {', '.join(missing)}" if missing else None


def is_claim(action: dict[str, Any]) -> bool:
    """The task's submit control clicked: the run says it is done (MiniWoB++ grades at that click)."""
    return action.get("name") == "submit"
