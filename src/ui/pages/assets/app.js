// retry-run ui: the pages' one script. It never puts record text into the
// page as HTML (textContent only); the timeline it swaps in is HTML the
// server rendered and escaped.
"use strict";

// Live updates: a task's page (root with data-live) refreshes its
// #timeline from /tasks/<id>/timeline when the server says the record grew.
function live() {
  const root = document.getElementById("root");
  const url = root && root.dataset.live;
  if (!url) return;
  const fragment = url.replace(/\/live$/, "/timeline");
  const refresh = () =>
    fetch(fragment, { credentials: "same-origin" })
      .then((r) => (r.ok ? r.text() : Promise.reject(r.status)))
      .then((html) => {
        const doc = new DOMParser().parseFromString(html, "text/html");
        const fresh = doc.getElementById("timeline");
        const old = document.getElementById("timeline");
        if (fresh && old) old.replaceWith(document.adoptNode(fresh));
      })
      .catch(() => {});
  if (window.EventSource) {
    const es = new EventSource(url);
    es.onmessage = refresh;
  } else {
    setInterval(refresh, 2000);
  }
}

// Line comments: click a diff line (shift-click to extend), write the
// comment; it becomes comment_path/comment_lines/comment_text fields of
// the review form.
function comments() {
  const form = document.getElementById("review-form");
  const box = document.getElementById("comments");
  if (!form || !box) return;
  let anchor = null;
  document.addEventListener("click", (ev) => {
    const row = ev.target.closest && ev.target.closest("tr[data-line]");
    if (!row || ev.target.closest("form")) return;
    const path = row.dataset.path;
    const line = Number(row.dataset.line);
    let start = line, end = line;
    if (ev.shiftKey && anchor && anchor.path === path) {
      start = Math.min(anchor.line, line);
      end = Math.max(anchor.line, line);
    } else {
      anchor = { path, line };
    }
    document.querySelectorAll("tr.selected").forEach((r) => r.classList.remove("selected"));
    document.querySelectorAll("tr[data-line]").forEach((r) => {
      const n = Number(r.dataset.line);
      if (r.dataset.path === path && n >= start && n <= end) r.classList.add("selected");
    });
    draft(form, box, path, start === end ? String(start) : start + "-" + end);
  });
}

function draft(form, box, path, lines) {
  const old = document.getElementById("comment-draft");
  if (old) old.remove();
  const d = document.createElement("div");
  d.id = "comment-draft";
  d.className = "comment-draft";
  const label = document.createElement("div");
  label.textContent = path + ":" + lines;
  const text = document.createElement("textarea");
  text.name = "draft_text";
  text.rows = 2;
  const add = document.createElement("button");
  add.type = "button";
  add.textContent = "Add comment";
  add.addEventListener("click", () => {
    if (!text.value.trim()) return;
    const item = document.createElement("div");
    item.className = "comment";
    for (const [name, value] of [["comment_path", path], ["comment_lines", lines], ["comment_text", text.value]]) {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      input.value = value;
      item.appendChild(input);
    }
    const shown = document.createElement("code");
    shown.textContent = path + ":" + lines + " ";
    const said = document.createElement("span");
    said.textContent = text.value;
    item.append(shown, said);
    box.appendChild(item);
    d.remove();
  });
  d.append(label, text, add);
  box.appendChild(d);
  text.focus();
}

document.addEventListener("DOMContentLoaded", () => {
  live();
  comments();
});
