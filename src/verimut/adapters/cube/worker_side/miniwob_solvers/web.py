"""Solvers for MiniWoB++ web-page tasks: a feed of posts, search results, tabs, a file tree, collapsible sections,
a table, a paragraph, a food menu, tickets, widgets and a scroll list.

Not here, on purpose: book-flight (the flight to book is known only once the search's results are on the page, and
a run's actions are planned from the page at the start), phone-book (the contact's page of the book is known only
by paging to it), stock-market (buying when the price dips is a matter of timing), click-menu (a submenu opens when
the pointer passes over its item, and a click on that item selects it and ends the episode; walking the menu with
the keyboard instead races the menu's own timer, which focuses a submenu's first item a moment after it opens).

Many of these tasks end at a click that leaves nothing in the page's inputs (a link followed, a post's button):
the element whose click ended the episode is in every task's end state (`episode.ended_by`, miniwob_page.WATCH_JS).
Their readers (`STATES`) show what else the page keeps: the flags a page sets as an effect (a post's active icons)
and which element has the keyboard focus (a link or button clicked keeps it). Not how the page is being looked at:
the tab shown, a section expanded, a folder open, a post's menu open are the way to a target, not an effect a task
asks for (a run that opens a section twice, closing it, and clicks the right link has done the task), so they are
not read. Not the element under the mouse: Playwright keeps the mouse where an earlier episode left it, so that
is no part of a run's end state (and an author would not call a pointer's resting place a side effect). A click
whose only trace was the pointer leaves no difference to see, so its faults are not confirmed: a lower bound,
never a claim.
"""

from __future__ import annotations

import re

from ._act import Action, Instruction, Solver, check, choose, click, fill, key, press, submit

# JS: the helpers every reader below starts with (verimut's own, reading only what the page shows).
_JS_HELPERS = r"""
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const text = (root, css) => { const e = root.querySelector(css); return e ? norm(e.textContent) : null; };
  const shown = (e) => Boolean(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const focused = (e) => e === document.activeElement;
"""


def _reader(body: str) -> str:
    """A STATES reader: a JS function expression that starts with the shared helpers."""
    return "() => {" + _JS_HELPERS + body + "}"


# --- social media ----------------------------------------------------------------------------------------------

# JS: the user of each post of the feed, once the feed's icons are loaded. The icons are images of the page's style
# sheet, and each has a second image for when the pointer is on it, which the browser fetches only then: until it
# is there the icon has no width, so the first click aimed at an icon in a fresh browser slips off it onto its
# post. So the page's style-sheet images are fetched first (into the browser's cache: the page is not changed), as
# they are once a person's pointer has passed over them.
_USERS_JS = r"""async () => {
  const urls = [];
  for (const sheet of Array.from(document.styleSheets)) {
    let rules = [];
    try { rules = Array.from(sheet.cssRules); } catch (e) { continue; }
    for (const rule of rules) {
      for (const m of (rule.cssText || '').matchAll(/url\("?([^")]+)"?\)/g)) urls.push(new URL(m[1], sheet.href || location.href).href);
    }
  }
  await Promise.all(urls.map((u) => new Promise((resolve) => {
    const img = new Image(); img.onload = img.onerror = resolve; img.src = u;
  })));
  return Array.from(document.querySelectorAll('#area .media .username')).map((e) => e.textContent.trim());
}"""
_ICONS = {"Reply": "reply", "Retweet": "retweet", "Like": "like", "Share": "share"}


def _posts_by(i: Instruction, user: str) -> list[str]:
    """The CSS of each post of the feed by `user`, in the feed's order."""
    posts = [f"#area > .media:nth-child({n + 1})" for n, u in enumerate(i.read(_USERS_JS, None)) if u == user]
    if not posts:
        raise ValueError(f"no post by {user} in the feed")
    return posts


def _social_media(i: Instruction) -> list[Action]:
    """Click the named button of the user's first post: an icon, or an item of the post's "more" menu."""
    user, button = i.fields["user"], i.fields["button"]
    post = _posts_by(i, user)[0]
    if button in _ICONS:
        return [click(f"{post} .{_ICONS[button]}")]
    # The other buttons are items of the post's "more" menu; its Mute and Block items name the user.
    item = f"{button} {user}" if button in ("Mute", "Block") else button
    return [click(f"{post} .more"), click(f"{post} li", item)]


def _social_media_all(i: Instruction) -> list[Action]:
    """Click the named icon on every post by the user, then Submit."""
    icon = _ICONS[i.fields["button"]]
    return [*(click(f"{post} .{icon}") for post in _posts_by(i, i.fields["user"])), submit("Submit")]


def _social_media_some(i: Instruction) -> list[Action]:
    """Click the named icon on the first N posts by the user, then Submit."""
    icon, amount = _ICONS[i.fields["button"]], int(i.fields["amount"])
    posts = _posts_by(i, i.fields["user"])[:amount]
    return [*(click(f"{post} .{icon}") for post in posts), submit("Submit")]


# Each post (id: its user and text, as shown). social-media-all and -some: the icons the page shows active (a
# click toggles them). social-media's click on a menu item ends the episode, and is its `episode.ended_by`.
_POSTS_JS = r"""
  const posts = Array.from(document.querySelectorAll('#area .media')).map((m, n) => {
    const post = {id: `${text(m, '.username')}: ${text(m, '.body')}`, position: n + 1,
                  user: text(m, '.username'), name: text(m, '.name'), text: text(m, '.body')};
    if (ICONS) {
      ['reply', 'retweet', 'like', 'share'].forEach((c) => { post[c] = m.querySelector('.' + c).classList.contains('active'); });
    } else {
      post.time = text(m, '.time');
    }
    return post;
  });
  return {posts: posts};
"""
_POSTS = _reader("const ICONS = false;" + _POSTS_JS)
_POSTS_ICONS = _reader("const ICONS = true;" + _POSTS_JS)


# --- search engine ---------------------------------------------------------------------------------------------

_RESULTS_PER_PAGE = 3  # the results page shows three results a page, and numbered page links


def _search_engine(i: Instruction) -> list[Action]:
    """Search the query, go to the results page that holds the N-th result, and click that result."""
    page, place = divmod(int(i.fields["rank"]) - 1, _RESULTS_PER_PAGE)
    actions = [fill("search-text", i.fields["query"]), press("Search")]
    if page:
        actions.append(click("#pagination a", str(page + 1)))
    return [*actions, click(f"#page-content > div:nth-child({place + 1}) a.search-title")]


# The results shown (id: rank, title and address, as the page numbers them), which one has the focus (a link
# clicked keeps it), and the results page shown.
_RESULTS = _reader(r"""
  const active = document.querySelector('#pagination li.active');
  const page = active ? Number(norm(active.textContent)) : null;
  const results = Array.from(document.querySelectorAll('#page-content > div')).map((d, n) => {
    const link = d.querySelector('a.search-title');
    const rank = page === null ? null : (page - 1) * 3 + n + 1;  // three results a page
    return {id: `${rank}: ${text(d, '.search-title')} ${text(d, '.search-url')}`, rank: rank,
            title: text(d, '.search-title'), url: text(d, '.search-url'), description: text(d, '.search-desc'),
            focused: focused(link)};
  });
  return {results: results, results_page: page === null ? [] : [{id: String(page), shown: true}]};
""")


# --- tabs, sections, tree --------------------------------------------------------------------------------------

# JS: where the link with a text is: its panel's id, the panel's number, its place among the panel's links, and
# how many links of the panel have that text.
_FIND_LINK_JS = r"""([panels, target]) => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const all = Array.from(document.querySelectorAll(panels));
  for (let p = 0; p < all.length; p++) {
    const links = Array.from(all[p].querySelectorAll('.alink'));
    const k = links.findIndex((l) => norm(l.textContent) === target);
    if (k >= 0) return {panel: all[p].id, number: p + 1, place: k + 1,
                        same: links.filter((l) => norm(l.textContent) === target).length};
  }
  return null;
}"""


def _find_link(i: Instruction, panels: str, target: str) -> dict:
    where = i.read(_FIND_LINK_JS, [panels, target])
    if where is None:
        raise ValueError(f"no link {target!r} in {panels}")
    return where


def _click_tab(i: Instruction) -> list[Action]:
    """Show the tab whose text holds the link (the first tab is shown at the start), and click the link."""
    target = i.fields["target"]
    where = _find_link(i, "#area > div[id^='tabs-']", target)
    actions = [] if where["number"] == 1 else [click("#area .ui-tabs-nav a", f"Tab #{where['number']}")]
    # The link by its text; by its place too when the tab shows the same word twice.
    link = (
        f"#{where['panel']} .alink"
        if where["same"] == 1
        else f"#{where['panel']} p > .alink:nth-of-type({where['place']})"
    )
    return [*actions, click(link, target)]


# The links of every tab (id: tab and place); the link clicked is the episode's `ended_by` (it leaves no other
# trace on the page), and which tab is shown is the way to it, not an effect.
_TABS = _reader(r"""
  const links = [];
  document.querySelectorAll("#area > div[id^='tabs-']").forEach((panel, p) => {
    panel.querySelectorAll('.alink').forEach((l, k) => links.push({
      id: `Tab #${p + 1} link ${k + 1}: ${norm(l.textContent)}`, tab: `Tab #${p + 1}`, text: norm(l.textContent)}));
  });
  return {links: links};
""")


def _click_collapsible(i: Instruction) -> list[Action]:
    """Expand the section whose text holds the link (all are collapsed at the start), and click the link."""
    target = i.fields["target"]
    where = _find_link(i, "#area > div", target)
    section = f"#area > div:nth-of-type({where['number']})"
    link = f"{section} .alink" if where["same"] == 1 else f"{section} > .alink:nth-of-type({where['place']})"
    return [click("#area > h3", f"Section #{where['number']}"), click(link, target)]


# The sections' links (id: section and place); which sections are expanded is the way to the link, not an effect.
_SECTIONS = _reader(r"""
  const links = [];
  document.querySelectorAll('#area > h3').forEach((h, s) => {
    const panel = h.nextElementSibling;
    panel.querySelectorAll('.alink').forEach((l, k) => links.push({
      id: `Section #${s + 1} link ${k + 1}: ${norm(l.textContent)}`, section: norm(h.textContent),
      text: norm(l.textContent)}));
  });
  return {links: links};
""")


# JS: the places (1-based, among the siblings at each level) of the tree's first item named `target`, from the top
# level down, with the names of the folders that hold it.
_TREE_PATH_JS = r"""(target) => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const span = Array.from(document.querySelectorAll('#tree span')).find((s) => norm(s.textContent) === target);
  if (!span) return null;
  const path = [];
  for (let li = span.parentElement; li && li.id !== 'tree'; li = li.parentElement.parentElement) {
    const items = Array.from(li.parentElement.children).filter((c) => c.tagName === 'LI');
    path.unshift({place: items.indexOf(li) + 1, name: norm(li.querySelector(':scope > span').textContent)});
    if (li.parentElement.id === 'tree') break;
  }
  return path;
}"""


def _navigate_tree(i: Instruction) -> list[Action]:
    """Open each folder that holds the item (the tree starts collapsed), then click the item."""
    path = i.read(_TREE_PATH_JS, i.fields["target"])
    if not path:
        raise ValueError(f"no item {i.fields['target']!r} in the tree")
    actions, css = [], "#tree"
    for n, step in enumerate(path):
        css += ("" if n == 0 else " > ul") + f" > li:nth-child({step['place']})"
        actions.append(click(f"{css} > span", step["name"]))
    return actions


# Every item of the tree (id: its place from the top and its name), folder or file; which folders are open is the
# way to the file, not an effect (the file clicked is the episode's `ended_by`).
_TREE = _reader(r"""
  const items = [];
  const walk = (ul, prefix) => Array.from(ul.children).filter((c) => c.tagName === 'LI').forEach((li, k) => {
    const span = li.querySelector(':scope > span'), sub = li.querySelector(':scope > ul');
    const place = prefix + String(k + 1);
    const item = {id: `${place}: ${norm(span.textContent)}`, name: norm(span.textContent),
                  kind: span.classList.contains('folder') ? 'folder' : 'file'};
    items.push(item);
    if (sub) walk(sub, place + '/');
  });
  walk(document.getElementById('tree'), '');
  return {tree: items};
""")


# --- a table, a paragraph ----------------------------------------------------------------------------------------

_TABLE_JS = r"""() => Array.from(document.querySelectorAll('#tab tr')).map((tr) =>
  Array.from(tr.querySelectorAll('td')).map((td) => td.textContent.replace(/\s+/g, ' ').trim()))"""


def _read_table(i: Instruction) -> list[Action]:
    """Type the table's value for the key, then Submit."""
    values = {k: v for k, v in i.read(_TABLE_JS, None)}
    return [fill("tt", values[i.fields["target"]]), submit("Submit")]


def _find_word(i: Instruction) -> list[Action]:
    """Type the paragraph's N-th word (without its punctuation), then Submit."""
    words = i.read("() => document.querySelector('#area p').textContent", None).split()
    word = re.sub(r"[^a-zA-Z]", "", words[int(i.fields["target"]) - 1])
    return [fill("answer-input", word), submit("Submit")]


# --- food, tickets -----------------------------------------------------------------------------------------------

# JS: each dish of the menu: its name as the page has it, and the kinds its icons show.
_DISHES_JS = r"""() => Array.from(document.querySelectorAll('#area .food-item')).map((d) => ({
  item: d.getAttribute('data-item'), name: d.querySelector('.item-name').textContent.replace(/\s+/g, ' ').trim(),
  kinds: Array.from(d.querySelectorAll('.types img')).map((img) => img.getAttribute('alt'))}))"""


def _order_food(i: Instruction) -> list[Action]:
    """Add one of each named dish, or N dishes of the named kind (one of each, the first ones), then Order."""
    dishes = i.read(_DISHES_JS, None)
    if i.fields["criterion"] == "name":
        wanted = [" ".join(v.split()) for k, v in sorted(i.fields.items()) if k.startswith("target ")]
        picks = [next(d for d in dishes if d["name"] == name) for name in wanted]
    else:
        kind = [d for d in dishes if i.fields["type"] in d["kinds"]]
        picks = [kind[n % len(kind)] for n in range(int(i.fields["amount"]))]
    return [*(click(f'.food-item[data-item="{d["item"]}"] .add') for d in picks), submit("Order!")]


# Each dish (id: its name), the quantity the page shows, and whether it shows as ordered.
_DISHES = _reader(r"""
  const dishes = Array.from(document.querySelectorAll('#area .food-item')).map((d) => ({
    id: text(d, '.item-name'), quantity: Number(text(d, '.quantity') || 0),
    ordered: d.classList.contains('selected')}));
  return {dishes: dishes};
""")

# JS: each ticket: the duration and the price it shows.
_TICKETS_JS = r"""() => Array.from(document.querySelectorAll('#area .flight')).map((f) => ({
  duration: f.querySelector('.time-duration').textContent.trim(),
  price: f.querySelector('.buy-ticket').textContent.replace(/\s+/g, ' ').trim()}))"""


def _buy_ticket(i: Instruction) -> list[Action]:
    """Click the Book button of the ticket with the cheapest/most expensive price or shortest/longest duration."""
    tickets = i.read(_TICKETS_JS, None)

    def minutes(t: dict) -> int:
        shown = re.fullmatch(r"(\d+)h (\d+)m", t["duration"])
        if shown is None:
            raise ValueError(f"a ticket's duration is not shown as hours and minutes: {t['duration']!r}")
        return int(shown.group(1)) * 60 + int(shown.group(2))

    def price(t: dict) -> int:
        return int(t["price"].rpartition("$")[2])

    rank = {
        "cheapest cost": lambda t: price(t),
        "most expensive cost": lambda t: -price(t),
        "shortest duration": lambda t: minutes(t),
        "longest duration": lambda t: -minutes(t),
    }[i.fields["target"]]
    best = min(range(len(tickets)), key=lambda n: rank(tickets[n]))
    return [click(f"#area > .flight:nth-child({best + 1}) .buy-ticket", tickets[best]["price"])]


# Each ticket (id: its place), what it shows, and whether its Book button has the focus (a button clicked keeps
# it).
_TICKETS = _reader(r"""
  const tickets = Array.from(document.querySelectorAll('#area .flight')).map((f, n) => {
    const button = f.querySelector('.buy-ticket');
    return {id: `ticket ${n + 1}`, duration: text(f, '.time-duration'), price: norm(button.textContent),
            focused: focused(button)};
  });
  return {tickets: tickets};
""")


# --- widgets, a scroll list --------------------------------------------------------------------------------------

# JS: each widget's kind, as a person sees it (a radio button, a checkbox, a text box, a text area, a button), and
# its text.
_WIDGETS_JS = r"""() => Array.from(document.querySelectorAll('#area > .widget')).map((w) => {
  const e = w.querySelector('input, textarea, button');
  const kind = e.tagName === 'INPUT' ? (e.type === 'radio' || e.type === 'checkbox' ? e.type : 'text')
    : e.tagName.toLowerCase();
  return {kind: kind, text: (e.tagName === 'INPUT' && kind === 'text' ? e.value : w.textContent).trim()};
})"""
_WIDGET_TAGS = {"radio": "input", "checkbox": "input", "text": "input", "textarea": "textarea", "button": "button"}


def _click_widget(i: Instruction) -> list[Action]:
    """Click the first widget of the named kind: by its label or text where that is unique, else by its place."""
    target = i.fields["target"]
    widgets = i.read(_WIDGETS_JS, None)
    n = next(n for n, w in enumerate(widgets) if w["kind"] == target)
    unique = bool(widgets[n]["text"]) and sum(w["text"] == widgets[n]["text"] for w in widgets) == 1
    if unique and target in ("radio", "checkbox"):
        return [check(widgets[n]["text"])]
    if unique and target == "button":
        return [press(widgets[n]["text"])]
    return [click(f"#area > .widget:nth-child({n + 1}) {_WIDGET_TAGS[target]}")]


# Each widget (id: its place, kind and text), and whether it has the focus (a text box or button clicked);
# whether a radio button or checkbox is checked is in `fields`.
_WIDGETS = _reader(r"""
  const widgets = Array.from(document.querySelectorAll('#area > .widget')).map((w, n) => {
    const e = w.querySelector('input, textarea, button');
    const kind = e.tagName === 'INPUT' ? (e.type === 'radio' || e.type === 'checkbox' ? e.type : 'text')
      : e.tagName.toLowerCase();
    const shownText = e.tagName === 'INPUT' && kind === 'text' ? e.getAttribute('value') : norm(w.textContent);
    return {id: `${n + 1}: ${kind} ${shownText}`, kind: kind, focused: focused(e)};
  });
  return {widgets: widgets};
""")


def _click_scroll_list(i: Instruction) -> list[Action]:
    """Select the named option(s) of the list, then Submit: one by choosing it; two by clicking the first, moving
    the list's focus to the second with Ctrl+arrows (which leaves the selection alone) and adding it with
    Ctrl+Space."""
    options = i.read("() => Array.from(document.getElementById('options').options).map((o) => o.text)", None)
    target = i.fields["target"]
    # The instruction joins two names with ", ": split where both halves are options of the list.
    if target in options:
        names = [target]
    else:
        cuts = [m.start() for m in re.finditer(", ", target)]
        names = next([target[:c], target[c + 2 :]] for c in cuts if {target[:c], target[c + 2 :]} <= set(options))
    if len(names) == 1:
        return [choose("options", names[0]), submit("Submit")]
    first, second = (options.index(name) for name in names)
    move = "Control+ArrowDown" if second > first else "Control+ArrowUp"
    return [
        click(f"#options > option:nth-child({first + 1})", names[0]),
        *[key(move)] * abs(second - first),
        key("Control+Space"),
        submit("Submit"),
    ]


# Every option of the list (id: its place and text) and whether it is selected (`fields` shows the first only).
_OPTIONS = _reader(r"""
  const options = Array.from(document.querySelectorAll('#options option')).map((o, n) => ({
    id: `${n + 1}: ${norm(o.text)}`, selected: o.selected}));
  return {options: options};
""")


SOLVERS: dict[str, Solver] = {
    "social-media": _social_media,
    "social-media-all": _social_media_all,
    "social-media-some": _social_media_some,
    "search-engine": _search_engine,
    "click-tab-2": _click_tab,
    "click-collapsible-2": _click_collapsible,
    "navigate-tree": _navigate_tree,
    "read-table": _read_table,
    "find-word": _find_word,
    "order-food": _order_food,
    "buy-ticket": _buy_ticket,
    "click-widget": _click_widget,
    "click-scroll-list": _click_scroll_list,
}
STATES: dict[str, str] = {
    "social-media": _POSTS,
    "social-media-all": _POSTS_ICONS,
    "social-media-some": _POSTS_ICONS,
    "search-engine": _RESULTS,
    "click-tab-2": _TABS,
    "click-collapsible-2": _SECTIONS,
    "navigate-tree": _TREE,
    "order-food": _DISHES,
    "buy-ticket": _TICKETS,
    "click-widget": _WIDGETS,
    "click-scroll-list": _OPTIONS,
}
