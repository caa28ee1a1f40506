"""What a broadcast page's layout must hold, measured in the browser: ``LAYOUT_JS`` evaluates (Chrome DevTools
Protocol ``Runtime.evaluate``) to ``{problems, texts}``: every element that draws text of its own is inside its
panel and inside the frame (a scrolled list: inside its scroller, across), never cut (``scrollWidth`` ≤
``clientWidth`` where its overflow is hidden), never over another text (line box by line box), and every panel
of a page that does not scroll is inside the frame. ``problems`` is ``[]`` when all hold.
"""

LAYOUT_JS = r"""
(() => {
  // Every element that draws text of its own (a non-blank text node child), visible.
  const problems = [], boxes = [];
  const visible = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === "none" || cs.visibility === "hidden" || Number(cs.opacity) === 0) return false;
    }
    return true;
  };
  const at = (q) => `${Math.round(q.left)},${Math.round(q.top)}-${Math.round(q.right)},${Math.round(q.bottom)}`;
  const name = (el) => el.id ? "#" + el.id : el.tagName.toLowerCase() + "." + [...el.classList].join(".") +
    (el.closest("[id]") ? " in #" + el.closest("[id]").id : "");
  const scroller = (el) => {
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const o = getComputedStyle(e).overflowY;
      if (o === "auto" || o === "scroll") return e;
    }
    return null;
  };
  const all = [...document.body.querySelectorAll("*")].filter((el) => !el.closest("cg-container, svg, script, style, title"));
  for (const el of all) {
    const own = [...el.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own.length || !visible(el)) continue;
    const range = document.createRange();
    range.setStartBefore(own[0]); range.setEndAfter(own[own.length - 1]);
    const r = range.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const text = own.map((n) => n.textContent.trim()).join(" ");
    const sc = scroller(el);
    // inside the frame (a scrolled list: inside its scroller, across)
    const frame = sc ? sc.getBoundingClientRect() : { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
    if (r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || (!sc && (r.top < -0.5 || r.bottom > innerHeight + 0.5)))
      problems.push(`${name(el)} "${text}" out of the frame: ${at(r)}`);
    // inside its panel
    const panel = el.closest(".panel, .card, .evalbar, .plate, td, th, .badge, .title");
    const holder = el.closest(".panel, .card");
    for (const p of [panel, holder]) {
      if (!p || p === el) continue;
      const q = p.getBoundingClientRect();
      const clipY = sc && p.contains(sc);
      if (r.left < q.left - 0.5 || r.right > q.right + 0.5 || (!clipY && (r.top < q.top - 0.5 || r.bottom > q.bottom + 0.5)))
        problems.push(`${name(el)} "${text}" out of ${name(p)}: text ${at(r)}, panel ${at(q)}`);
    }
    // never cut: what would overflow its box is not hidden
    for (const e of [el, el.parentElement]) {
      if (e && e !== document.body && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible" && e.clientWidth > 0)
        problems.push(`${name(e)} "${text}" cut: scrollWidth ${e.scrollWidth} > clientWidth ${e.clientWidth}`);
    }
    boxes.push({ el, rs: [...range.getClientRects()].filter((q) => q.width > 0 && q.height > 0), text, sc });
  }
  // every panel inside the frame (a page that scrolls: its panels are laid out in the page, not the frame)
  if (document.documentElement.scrollHeight <= innerHeight + 1) {
    for (const p of document.querySelectorAll(".panel")) {
      const q = p.getBoundingClientRect();
      if (!visible(p) || q.width === 0) continue;
      if (q.left < -0.5 || q.top < -0.5 || q.right > innerWidth + 0.5 || q.bottom > innerHeight + 0.5)
        problems.push(`panel ${name(p)} out of the frame: ${at(q)}`);
    }
  }
  // none over another, line box by line box (texts in different scrollers are not compared)
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.el.contains(b.el) || b.el.contains(a.el) || a.sc !== b.sc) continue;
    const over = a.rs.some((p) => b.rs.some((q) => Math.min(p.right, q.right) - Math.max(p.left, q.left) > 1 &&
                                                   Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 1));
    if (over) problems.push(`"${a.text}" (${name(a.el)}) over "${b.text}" (${name(b.el)})`);
  }
  return { problems: [...new Set(problems)], texts: boxes.length };
})()
"""
