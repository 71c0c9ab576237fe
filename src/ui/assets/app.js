// retry-run ui: live updates of a task's timeline, and line comments on
// an attempt's diff. Hand-written, no dependencies, no build step. Served
// from the binary at /assets/app.js (src/ui/assets.rs says what it expects
// of the pages).
"use strict";

(function () {
  // Live: the server sends an event each time the task's record grows;
  // the timeline fragment is fetched again and put in place.
  function live(el) {
    var source = new EventSource(el.getAttribute("data-live"));
    var fetching = false;
    var again = false;
    function refresh() {
      if (fetching) {
        again = true;
        return;
      }
      fetching = true;
      fetch(el.getAttribute("data-fragment"), { credentials: "same-origin", cache: "no-store" })
        .then(function (r) {
          return r.ok ? r.text() : null;
        })
        .then(function (html) {
          if (html !== null) {
            // The server's own fragment, every byte from the record escaped.
            el.innerHTML = html;
            el.dispatchEvent(new CustomEvent("retry-run:updated", { bubbles: true }));
          }
        })
        .catch(function () {})
        .then(function () {
          fetching = false;
          if (again) {
            again = false;
            refresh();
          }
        });
    }
    source.addEventListener("changed", refresh);
  }

  // A comment row of the review form, filled with a place in the diff.
  function addComment(form, path, line) {
    var rows = form.querySelector(".comments") || form;
    var row = document.createElement("div");
    row.className = "comment";
    function field(name, value, label, tag) {
      var l = document.createElement("label");
      l.textContent = label + " ";
      var input = document.createElement(tag || "input");
      input.name = name;
      input.value = value;
      l.appendChild(input);
      row.appendChild(l);
      return input;
    }
    field("comment_path", path, "file");
    field("comment_lines", line, "lines");
    var text = field("comment_text", "", "comment", "textarea");
    var remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "remove";
    remove.addEventListener("click", function () {
      row.remove();
    });
    row.appendChild(remove);
    rows.appendChild(row);
    text.focus();
  }

  function comments(form) {
    document.addEventListener("click", function (e) {
      var target = e.target instanceof Element ? e.target.closest("[data-path][data-line]") : null;
      if (!target) {
        return;
      }
      addComment(form, target.getAttribute("data-path"), target.getAttribute("data-line"));
    });
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-live][data-fragment]"), live);
    var form = document.getElementById("review");
    if (form) {
      comments(form);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
