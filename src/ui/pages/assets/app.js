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
    // The server names its events `changed`.
    es.addEventListener("changed", refresh);
    es.onmessage = refresh;
  } else {
    setInterval(refresh, 2000);
  }
}

// Line comments: a click on a diff line (a row with data-path and
// data-line) adds a comment row to the review form's #comments box: the
// file and lines as fields, and a textarea for the comment; each becomes
// the form's comment_path/comment_lines/comment_text fields.
function comments() {
  const form = document.getElementById("review-form");
  const box = document.getElementById("comments");
  if (!form || !box) return;
  document.addEventListener("click", (ev) => {
    const row = ev.target instanceof Element ? ev.target.closest("[data-path][data-line]") : null;
    if (!row || ev.target.closest("form")) return;
    addComment(box, row.dataset.path, row.dataset.line);
  });
}

function addComment(box, path, line) {
  const item = document.createElement("div");
  item.className = "comment";
  const field = (name, value, label, tag) => {
    const l = document.createElement("label");
    l.textContent = label + " ";
    const input = document.createElement(tag || "input");
    input.name = name;
    input.value = value;
    l.appendChild(input);
    item.appendChild(l);
    return input;
  };
  field("comment_path", path, "file");
  field("comment_lines", line, "lines");
  const text = field("comment_text", "", "comment", "textarea");
  const remove = document.createElement("button");
  remove.type = "button";
  remove.textContent = "remove";
  remove.addEventListener("click", () => item.remove());
  item.appendChild(remove);
  box.appendChild(item);
  text.focus();
}

document.addEventListener("DOMContentLoaded", () => {
  live();
  comments();
});
