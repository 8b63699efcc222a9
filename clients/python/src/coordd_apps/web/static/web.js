// coord web's only script (served from /static: the Content-Security-Policy allows no
// inline script). It ticks the lease countdowns and ages, and draws the board's
// server-sent events as they come: each message is a task's row (or nothing: it left
// the filter) and its "Waiting for you" line, rendered and escaped by the server.
"use strict";
(function () {
  // Ages under a minute are "<1m" (rows.py says the same): a fresh board of 10,000
  // rows would otherwise change every age cell every second.
  function fmt(seconds) {
    seconds = Math.max(0, Math.floor(seconds));
    if (seconds < 60) return "<1m";
    for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
      if (seconds >= size) return Math.floor(seconds / size) + unit;
    }
    return seconds + "s";
  }
  function lease(seconds) {
    if (seconds <= 0) return "lapsed";
    const m = Math.floor(seconds / 60), s = Math.floor(seconds % 60);
    return m < 100 ? m + ":" + String(s).padStart(2, "0") : Math.floor(m / 60) + "h";
  }
  // A cell is written only when its text changes (an age moves once a minute at most):
  // every write makes the browser lay the table out again, and a board has 10,000 rows.
  function set(el, text) {
    if (el.textContent !== text) el.textContent = text;
  }
  function tick() {
    const now = Date.now();
    for (const el of document.querySelectorAll("[data-until]")) {
      set(el, lease((Date.parse(el.dataset.until) - now) / 1000));
    }
    for (const el of document.querySelectorAll("[data-since]")) {
      set(el, fmt((now - Date.parse(el.dataset.since)) / 1000));
    }
  }
  setInterval(tick, 1000);

  const status = document.getElementById("status");
  function show(word) {
    status.textContent = word;
    status.dataset.state = word;
  }
  function follow(seq, query) {
    const source = new EventSource("/live?after=" + seq + (query ? "&" + query : ""));
    source.addEventListener("status", (e) => show(e.data));
    // The browser retries by itself (sending Last-Event-ID) unless the server refused the
    // stream: a `coord web` restarted since has a new token, so this page's cookie is void.
    source.addEventListener("error", () =>
      show(source.readyState === EventSource.CLOSED ? "stopped: open the new address" : "reconnecting"));
    return source;
  }

  // The messages, slots and landing pages: one part, read again (`?part=1`) when an
  // event of its types (`data-types`, a prefix such as "message.") comes. A refresh
  // asked while one is on its way runs once more after it, never twice at once.
  const part = document.getElementById("live-part");
  if (part) {
    let busy = false, again = false;
    // What the human is typing (a reply, a reason) outlives the part read again: each
    // field with text or the focus, found again by the ids around it (a question is
    // `#m5` in the inbox and in the open questions alike) and its name.
    function where(el) {
      const ids = [];
      for (let up = el.parentElement; up && up !== part; up = up.parentElement) {
        if (up.id) ids.unshift("#" + CSS.escape(up.id));
      }
      return ids.concat('[name="' + CSS.escape(el.name) + '"]').join(" ");
    }
    function typed() {
      const fields = [];
      for (const el of part.querySelectorAll("input[name], textarea[name]")) {
        if (el.type === "hidden" || el.type === "submit") continue;
        const focused = el === document.activeElement;
        if (el.value || focused) fields.push([where(el), el.value, focused]);
      }
      return fields;
    }
    function retype(fields) {
      for (const [selector, value, focused] of fields) {
        const el = part.querySelector(selector);
        if (!el) continue;  // its item left the page (answered, expired)
        el.value = value;
        if (focused) el.focus();
      }
    }
    async function reread() {
      if (busy) { again = true; return; }
      busy = true;
      try {
        const answer = await fetch(location.pathname + "?part=1", { credentials: "same-origin" });
        if (answer.ok) {
          const fields = typed(), html = await answer.text();
          part.innerHTML = html;
          retype(fields);
        }
      } finally {
        busy = false;
        if (again) { again = false; reread(); }
      }
    }
    const source = follow(part.dataset.seq, "");
    source.addEventListener("other", (e) => {
      if (JSON.parse(e.data).type.startsWith(part.dataset.types)) reread();
      part.dataset.seq = e.lastEventId;
    });
    return;
  }

  const board = document.getElementById("board");
  if (!board) return;
  const rows = document.getElementById("rows");
  const gates = document.getElementById("gates");
  const view = board.dataset.view;

  function element(html, wrapper) {
    const holder = document.createElement(wrapper);
    holder.innerHTML = html;
    return holder.firstElementChild;
  }
  function place(list, id, html, prefix, wrapper) {
    const old = document.getElementById(prefix + id);
    const fresh = html ? element(html, wrapper) : null;
    if (old && fresh) {
      // A live event's row does not carry the cost (issue 48): keep the one shown.
      const keep = fresh.querySelector("td.cost[data-keep]"), shown = old.querySelector("td.cost");
      if (keep && shown) keep.replaceWith(shown);
      old.replaceWith(fresh);
      return;
    }
    if (old) { old.remove(); return; }
    if (!fresh) return;
    let after = list.lastElementChild;  // rows are in id order; new ids come last
    while (after && Number(after.id.slice(prefix.length)) > id) after = after.previousElementSibling;
    if (after) after.after(fresh); else list.prepend(fresh);
  }
  // A capped board (coord web --rows) shows the newest tasks only: no older row is added.
  const floor = Number(board.dataset.floor || 0);
  function count() {
    const shown = document.getElementById("count");
    shown.textContent = rows.children.length + " tasks shown" + (shown.dataset.more || "");
    const waiting = document.getElementById("waiting");
    waiting.querySelector("h2").textContent = "Waiting for you (" + gates.children.length + ")";
    waiting.classList.toggle("empty", gates.children.length === 0);
  }
  async function refresh(id) {
    const answer = await fetch("/row/" + id + "?" + view, { credentials: "same-origin" });
    if (answer.ok) { place(rows, id, await answer.text(), "t", "tbody"); count(); }
  }

  const source = follow(board.dataset.seq, view);
  // A message, slot or landing event: nothing on the board, but its seq is seen. Usage
  // reported (issue 48): the rows of the tasks it charged are read again, with their cost.
  source.addEventListener("other", (e) => {
    for (const id of JSON.parse(e.data).tasks || []) {
      if (document.getElementById("t" + id)) refresh(id);
    }
    board.dataset.seq = e.lastEventId;
  });
  source.addEventListener("task", (e) => {
    const m = JSON.parse(e.data);
    if (m.id >= floor || document.getElementById("t" + m.id)) place(rows, m.id, m.row, "t", "tbody");
    place(gates, m.id, m.gate, "g", "ul");
    if (m.done_changed) {
      for (const row of rows.querySelectorAll("tr[data-deps]")) {
        if (row.dataset.deps.split(" ").includes(String(m.id))) refresh(Number(row.id.slice(1)));
      }
    }
    count();
    board.dataset.seq = e.lastEventId;
  });
})();
