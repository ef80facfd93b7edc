"""Solvers for MiniWoB++ email tasks: an inbox where one email, found by its sender, is deleted, starred, replied
to or forwarded.

Every run opens the email from the inbox list (`click .email-thread` by its sender), then acts in the opened
email: its trash or star icon, or Reply / Forward, the text or recipient typed, and the form's send icon. The
click that grades (trash, star, send) is the task's effect itself, so it is a write (`click`), not a `submit`.

Two emails of one sender: the task's reward names the email by its sender only for delete, important and reply
(any email of that sender passes), but a forward passes only with the body of the very email the task drew, which
nothing on the page tells apart. The run takes the first (topmost) one, by its subject (or its place, when the
subject is shared too): a forward can then fail, and that is the task's ambiguity.

The -nl tasks give no fields: their utterance is read with the phrasing of the task's own templates (the
generator's NL_TEMPLATES, and common/special/email-inbox-nl/templates.js for the -turk ones). The people it names
are the inbox's senders (the recipient of a forward, too, is drawn from them), so the names are found as the
senders the page lists, and which is the email's sender and which the recipient is read from the words around
them ("from NAME", "NAME's email", "to DEST", "DEST wants ..."). A few turk templates swap the two ("Find the email
from DEST and forward it to NAME."): the run does what the sentence says, which the reward then refuses.
"""

from __future__ import annotations

import re

from ._act import Action, Instruction, click, fill, fill_css

# JS: the inbox list as the page shows it, in its order: each email's sender, (shortened) subject and body.
_INBOX_JS = r"""() => Array.from(document.querySelectorAll('#main > .email-thread')).map((t) => ({
  sender: t.querySelector('.email-sender').textContent.trim(),
  subject: t.querySelector('.email-subject').textContent.trim(),
  body: t.querySelector('.email-body').textContent.trim(),
}))"""


def _inbox(i: Instruction) -> list[dict[str, str]]:
    """The inbox list at the start (sender, subject, body of each email, in order)."""
    return i.read(_INBOX_JS, None)


def _open(i: Instruction, sender: str) -> Action:
    """Open the sender's email from the inbox list (the first of theirs, when they sent two)."""
    inbox = _inbox(i)
    places = [n for n, e in enumerate(inbox) if e["sender"] == sender]
    if not places:
        raise ValueError(f"no email by {sender} in the inbox")
    if len(places) == 1:
        return click(".email-thread", sender)
    first = inbox[places[0]]["subject"]
    if sum(first in (e["sender"], e["subject"], e["body"]) for e in inbox) == 1:  # the click's text names one
        return click(".email-thread", first)
    return click(f"#main > .email-thread:nth-child({places[0] + 2})")  # the list's header is its first child


def _act(i: Instruction, task: str, sender: str, to: str = "", message: str = "") -> list[Action]:
    """The actions of one email task on the sender's email: delete, important (star), reply or forward."""
    opened = _open(i, sender)
    if task == "delete":
        return [opened, click("#email .trash")]
    if task == "important":
        return [opened, click("#email .star")]
    if task == "reply":
        return [opened, click("#email .email-reply"), fill("reply-text", message), click("#send-reply")]
    if task == "forward":
        # The forward's text comes filled with the email's body, which the reward wants unchanged.
        return [
            opened,
            click("#email .email-forward"),
            fill_css("#forward .forward-sender", to),
            click("#send-forward"),
        ]
    raise ValueError(f"not an email task: {task!r}")


def _fields_task(i: Instruction) -> str:
    """Which of the four tasks miniwob's extractor read (its `task` field is the instruction's verb)."""
    if "to" in i.fields:
        return "forward"
    if "message" in i.fields:
        return "reply"
    verb = i.fields["task"]
    return {"delete": "delete", "star": "important"}.get(verb, verb)


def _email(i: Instruction) -> list[Action]:
    """email-inbox(-delete/-forward/-reply/-important/-star-reply/-noscroll): do what the fields say to the email
    by the sender they name."""
    f = i.fields
    return _act(i, _fields_task(i), f["by"], f.get("to", ""), f.get("message", ""))


# --- the natural-language instructions -------------------------------------------------------------------------

# The turk templates' verbs, by task ("Throw away NAME's email.", "Flag email from NAME as important."). A reply's
# templates, and only they, quote its text. Delete is asked first: "Delete the emails from NAME that are not marked
# as important."
_DELETE = re.compile(
    r"delet|trash|\brid of\b|\bremove\b|throw away|recycling|out of my inbox|don't want", re.IGNORECASE
)
_IMPORTANT = re.compile(r"import|imiportant|\bstar\b|\bflag\b|\bmark\b", re.IGNORECASE)

# Words around a name that make it the email's sender or the forward's recipient, with a weight: the templates'
# "from NAME", "by NAME", "NAME's email", "NAME sent", "NAME wrote", "NAME wants his or her message ..." and "to
# DEST", "DEST wants ...", "DEST needs ...", "DEST's inbox"; weaker: "the NAME email", "Forward DEST ..." (the verb
# right before the recipient, as in "Send DEST the email from NAME").
_SENDER_BEFORE = ((re.compile(r"\b(?:from|by)\s+$", re.IGNORECASE), 2),)
_SENDER_AFTER = (
    (re.compile(r"^(?:'s|s)\s+(?:\w+\s+)?(?:e-?mail|message|mail|appontment)", re.IGNORECASE), 2),
    (re.compile(r"^\s+(?:sent|wrote|wants his)\b", re.IGNORECASE), 2),
    (re.compile(r"^\s+(?:e-?mail|message|mail)\b", re.IGNORECASE), 1),
)
_RECIPIENT_BEFORE = (
    (re.compile(r"\bto\s+$", re.IGNORECASE), 2),
    (re.compile(r"\b(?:forward|send|give|email|let|sure)\s+$", re.IGNORECASE), 1),
)
_RECIPIENT_AFTER = (
    (re.compile(r"^\s+(?:wants (?!his)|needs|must|is waiting|on the list)", re.IGNORECASE), 2),
    (re.compile(r"^'s inbox", re.IGNORECASE), 2),
)


def _named(goal: str, senders: list[str]) -> list[tuple[str, int, int]]:
    """The inbox's senders the sentence names, as (name, start, end), in the sentence's order. A longer name
    wins over one inside it ("Jo Ann" over "Jo"); "NAMEs last email" and "AnswerNAME's email" (templates') name
    NAME."""
    found = []
    for name in set(senders):
        for m in re.finditer(rf"(?<![A-Z0-9_'-]){re.escape(name)}(?:(?![\w-])|(?=s\b))", goal):
            found.append((name, m.start(), m.end()))
    kept: list[tuple[str, int, int]] = []
    for hit in sorted(found, key=lambda h: h[1] - h[2]):  # longest first
        if all(hit[2] <= k[1] or hit[1] >= k[2] for k in kept):
            kept.append(hit)
    return sorted(kept, key=lambda h: h[1])


def _score(goal: str, hits: list[tuple[str, int, int]], before: tuple, after: tuple) -> int:
    """How strongly the words before and after these mentions of a name give it one role."""
    return sum(w for _, s, e in hits for rx, w in before if rx.search(goal[:s])) + sum(
        w for _, s, e in hits for rx, w in after if rx.search(goal[e:])
    )


def _verb(goal: str, hits: list[tuple[str, int, int]]) -> str:
    """delete, important or forward, by the sentence's words other than its names (a sender may be called Star)."""
    for _, start, end in hits:
        goal = goal[:start] + " " * (end - start) + goal[end:]
    return "delete" if _DELETE.search(goal) else "important" if _IMPORTANT.search(goal) else "forward"


def _nl(i: Instruction, task: str | None) -> list[Action]:
    """Read the task (unless given), the sender, and the recipient or the text from the sentence, then act."""
    goal, message = i.goal, ""
    senders = [e["sender"] for e in _inbox(i)]
    if task is None:
        task = "reply" if '"' in goal else _verb(goal, _named(goal, senders))
    if task == "reply":
        # Between the first and last quote ("please send a reply email to NAME with ""MSG" "": the quotes doubled).
        m = re.search(r'"(.*)"', goal)
        if m is None:
            raise ValueError(f"no quoted reply in {goal!r}")
        message = m.group(1).strip(' "')
        goal = goal[: m.start()] + " " * (m.end() - m.start()) + goal[m.end() :]  # the text names no one
    hits = _named(goal, senders)
    names = sorted({h[0] for h in hits})
    if task != "forward":
        if len(names) != 1:
            raise ValueError(f"not one sender named in {i.goal!r}: {names}")
        return _act(i, task, names[0], message=message)
    if len(names) == 1:  # the email's sender and the recipient share the name
        return _act(i, task, names[0], names[0])
    if len(names) != 2:
        raise ValueError(f"not two people named in {i.goal!r}: {names}")

    def fit(by: str, to: str) -> int:
        mine = [h for h in hits if h[0] == by]
        theirs = [h for h in hits if h[0] == to]
        return _score(goal, mine, _SENDER_BEFORE, _SENDER_AFTER) + _score(
            goal, theirs, _RECIPIENT_BEFORE, _RECIPIENT_AFTER
        )

    a, b = names
    if fit(a, b) == fit(b, a):
        raise ValueError(f"cannot tell the sender from the recipient in {i.goal!r}")
    by, to = (a, b) if fit(a, b) > fit(b, a) else (b, a)
    return _act(i, task, by, to)


def _forward_nl(i: Instruction) -> list[Action]:
    """email-inbox-forward-nl(-turk): forward the email the sentence names to the person it names."""
    return _nl(i, "forward")


def _any_nl(i: Instruction) -> list[Action]:
    """email-inbox-nl-turk: read which of the four tasks the sentence asks, then do it."""
    return _nl(i, None)


# --- the end state ---------------------------------------------------------------------------------------------

# The inbox as the page shows it. `inbox`: each email of the list, in its order (id: sender and shortened subject,
# the place added only if two share both), with whether its star is on. The trash icon removes nothing from the
# page in these tasks (its click only ends the episode), so every email stays listed. `email`: the email open, if
# any, with its own star. `forms`: the reply or forward form open, with what STATE_JS's fields do not show: the
# reply's recipient (a text, no input) and either form's subject. The texts (reply-text, forward-text) and the
# forward's recipient (an input, `input#<n>` in fields) are STATE_JS's. The search list's emails are not the inbox.
_STATE_JS = r"""() => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const text = (root, css) => { const e = root.querySelector(css); return e ? norm(e.textContent) : null; };
  const shown = (e) => Boolean(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const starred = (root) => Boolean(root.querySelector('.star') && root.querySelector('.star').classList.contains('clicked'));
  const inbox = Array.from(document.querySelectorAll('#main > .email-thread')).map((t, n) => ({
    id: `${text(t, '.email-sender')}: ${text(t, '.email-subject')}`, position: n + 1,
    sender: text(t, '.email-sender'), subject: text(t, '.email-subject'), starred: starred(t),
  }));
  inbox.forEach((r) => { if (inbox.filter((o) => o.id === r.id).length > 1) r.id += ` (#${r.position})`; });
  const email = Array.from(document.querySelectorAll('#email')).map((e) => ({
    id: 'open email', sender: text(e, '.email-sender'), subject: text(e, '.email-subject'), starred: starred(e),
    shown: shown(e),
  }));
  const subject = (e) => { const s = e.querySelector('.reply-subject, .forward-subject');
    const l = s && s.querySelector('label'); return s ? norm(s.textContent.slice(l ? l.textContent.length : 0)) : null; };
  const forms = [];
  const reply = document.getElementById('reply');
  if (reply) forms.push({id: 'reply', to: text(reply, '.reply-sender'), subject: subject(reply), shown: shown(reply)});
  const forward = document.getElementById('forward');
  if (forward) forms.push({id: 'forward', subject: subject(forward), shown: shown(forward)});
  return {inbox: inbox, email: email, forms: forms};
}"""

SOLVERS = {
    "email-inbox": _email,
    "email-inbox-delete": _email,
    "email-inbox-forward": _email,
    "email-inbox-reply": _email,
    "email-inbox-important": _email,
    "email-inbox-star-reply": _email,
    "email-inbox-noscroll": _email,
    "email-inbox-forward-nl": _forward_nl,
    "email-inbox-forward-nl-turk": _forward_nl,
    "email-inbox-nl-turk": _any_nl,
}
STATES = dict.fromkeys(SOLVERS, _STATE_JS)
