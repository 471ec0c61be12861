/* irdiff HTML report: folds, raw/normalized toggle, IR <-> Python source lighting, evidence links.
   Diff rows have four cells: [a line number, a code, b line number, b code]; line numbers are raw line numbers
   of the stage text, the keys of the maps in #irdiff-maps ({maps: {stage: {a: {raw: py}, b: {...}}},
   src: {a: key, b: key}}) and of the raw texts in #irdiff-raw ({stage: {a: {raw: text}, b: {...}}}). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("irdiff-maps").textContent);
  var rawData = null;
  var rawOn = false;
  var aside = document.getElementById("source");
  var status = document.createElement("p");
  status.id = "srcstatus";
  status.className = "muted";
  var hint = aside.querySelector(".hint");
  if (hint) hint.after(status); else aside.prepend(status);

  /* Large stage tables and the raw texts are stored gzip+base64 (see irdiff/render/html.py); the browser's
     DecompressionStream inflates them, no network involved. */
  function inflate(id) {
    var el = document.getElementById(id);
    var bin = atob(el.textContent.trim());
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }
  function loadTables() {
    var tables = Array.prototype.slice.call(document.querySelectorAll("table.diff[data-z]"));
    return Promise.all(tables.map(function (t) {
      return inflate(t.dataset.z).then(function (html) {
        var pending = t.querySelector("tbody.pending");
        if (pending) pending.remove();
        t.insertAdjacentHTML("beforeend", html);
        t.removeAttribute("data-z");
      });
    }));
  }
  var rawReady = null;
  function loadRaw() {
    if (!rawReady) rawReady = inflate("irdiff-raw").then(function (text) { rawData = JSON.parse(text); });
    return rawReady;
  }
  function rawTexts() { return rawData || {}; }
  function lineNo(cell) { return cell ? cell.textContent : ""; }
  function stageOf(el) { var t = el.closest("table.diff"); return t ? t.dataset.stage : null; }

  /* ---- folds ---- */
  function unfold(tbody) {
    var tpl = tbody.querySelector("template");
    if (!tpl) return null;
    var open = document.createElement("tbody");
    open.className = "unfolded";
    open.appendChild(tpl.content.cloneNode(true));
    open.irdiffFold = tbody;
    tbody.replaceWith(open);
    if (rawOn) setRaw(open, stageOf(open), true);
    return open;
  }
  function collapseAll() {
    document.querySelectorAll("tbody.unfolded").forEach(function (tb) {
      if (tb.irdiffFold) tb.replaceWith(tb.irdiffFold);
    });
  }
  function expandAll() {
    document.querySelectorAll("table.diff tbody.fold").forEach(unfold);
  }

  /* ---- raw / normalized ---- */
  function setRaw(scope, stage, on) {
    var texts = on ? (rawTexts()[stage] || {}) : null;
    var last = { 1: null, 3: null };
    var rows = scope.rows || scope.querySelectorAll("tr");
    for (var k = 0; k < rows.length; k++) {
      var tr = rows[k];
      if (tr.cells.length !== 4) continue;
      [1, 3].forEach(function (ci) {
        var cell = tr.cells[ci];
        if (on) {
          if (cell.irdiffHtml === undefined) cell.irdiffHtml = cell.innerHTML;
          var n = lineNo(tr.cells[ci - 1]);
          var side = ci === 1 ? "a" : "b";
          var t = n && n !== last[ci] ? (texts[side] || {})[n] : "";
          last[ci] = n || last[ci];
          cell.textContent = t === undefined ? "" : t;
        } else if (cell.irdiffHtml !== undefined) {
          cell.innerHTML = cell.irdiffHtml;
        }
      });
    }
  }
  function toggleRaw(on) {
    if (on && !rawData) { loadRaw().then(function () { toggleRaw(rawOn); }); rawOn = on; return; }
    rawOn = on;
    document.body.classList.toggle("raw", on);
    document.querySelectorAll("table.diff").forEach(function (t) {
      t.querySelectorAll("tbody").forEach(function (tb) {
        if (!tb.classList.contains("fold")) setRaw(tb, t.dataset.stage, on);
      });
    });
  }

  /* ---- IR <-> source ---- */
  function clearMarks() {
    document.querySelectorAll(".hit, .rel").forEach(function (el) { el.classList.remove("hit", "rel"); });
  }
  function scrollAsideTo(row) {
    if (getComputedStyle(aside).position === "sticky") {
      var r = row.getBoundingClientRect(), a = aside.getBoundingClientRect();
      aside.scrollTop += r.top - a.top - aside.clientHeight / 2;
    }
  }
  function srcRow(side, py) {
    var key = data.src[side];
    return key ? document.getElementById("py-" + key + "-" + py) : null;
  }
  function selectIR(cell) {
    var tr = cell.parentElement, stage = stageOf(cell);
    var side = cell.cellIndex === 1 ? "a" : "b";
    var n = lineNo(tr.cells[cell.cellIndex - 1]);
    clearMarks();
    cell.classList.add("hit");
    var m = ((data.maps[stage] || {})[side]) || {};
    var py = m[n];
    if (!py) {
      status.textContent = stage + " " + side + ":" + n + " has no source location";
      return;
    }
    var row = srcRow(side, py);
    if (row) { row.classList.add("hit"); scrollAsideTo(row); }
    var same = 0;
    cell.closest("table").querySelectorAll("tr").forEach(function (r) {
      if (r.cells.length !== 4) return;
      [0, 2].forEach(function (ci) {
        var s = ci === 0 ? "a" : "b", k = lineNo(r.cells[ci]);
        if (k && ((data.maps[stage] || {})[s] || {})[k] === py && r.cells[ci + 1] !== cell) {
          r.cells[ci + 1].classList.add("rel");
          same++;
        }
      });
    });
    status.textContent = stage + " " + side + ":" + n + " \u2192 line " + py + " (" + same + " more " + stage +
      " lines from it shown)";
  }
  function selectSrc(row) {
    var key = row.closest("table.src").dataset.src;
    var py = Number(row.cells[0].textContent);
    clearMarks();
    row.classList.add("hit");
    var counts = [];
    document.querySelectorAll("table.diff").forEach(function (t) {
      var stage = t.dataset.stage, maps = data.maps[stage] || {}, n = 0;
      t.querySelectorAll("tr").forEach(function (r) {
        if (r.cells.length !== 4) return;
        [0, 2].forEach(function (ci) {
          var s = ci === 0 ? "a" : "b";
          if (data.src[s] !== key) return;
          var k = lineNo(r.cells[ci]);
          if (k && (maps[s] || {})[k] === py) { r.cells[ci + 1].classList.add("rel"); n++; }
        });
      });
      if (n) counts.push(stage + " " + n);
    });
    status.textContent = "line " + py + " \u2192 " + (counts.length ? counts.join(", ") : "no IR line shown");
  }
  function markMapped() {
    var seen = {};
    Object.keys(data.maps).forEach(function (stage) {
      ["a", "b"].forEach(function (s) {
        var m = data.maps[stage][s] || {}, key = data.src[s];
        if (!key) return;
        Object.keys(m).forEach(function (k) { seen[key + "-" + m[k]] = 1; });
      });
    });
    Object.keys(seen).forEach(function (id) {
      var r = document.getElementById("py-" + id);
      if (r) r.classList.add("mapped");
    });
  }

  /* ---- evidence links ---- */
  function findRow(table, side, line, nth) {
    var ci = side === "a" ? 0 : 2, seen = 0, first = null;
    for (var k = 0; k < table.rows.length; k++) {
      var r = table.rows[k];
      if (r.cells.length === 4 && lineNo(r.cells[ci]) === line) {
        if (seen === nth) return r;
        first = first || r;
        seen++;
      }
    }
    return first;
  }
  function goEvidence(link) {
    var stage = link.dataset.stage, side = link.dataset.side, line = link.dataset.line;
    var nth = Number(link.dataset.nth || 0);
    var table = document.querySelector('table.diff[data-stage="' + stage + '"]');
    if (!table) return false;
    var details = table.closest("details");
    if (details) details.open = true;
    var ci = side === "a" ? 0 : 2;
    table.querySelectorAll("tbody.fold").forEach(function (fold) {
      var hit = false;
      fold.querySelector("template").content.querySelectorAll("tr").forEach(function (r) {
        if (r.cells.length === 4 && lineNo(r.cells[ci]) === line) hit = true;
      });
      if (hit) unfold(fold);
    });
    var row = findRow(table, side, line, nth);
    if (!row) return false;
    row.scrollIntoView({ block: "center" });
    row.classList.add("flash");
    setTimeout(function () { row.classList.remove("flash"); }, 2000);
    selectIR(row.cells[side === "a" ? 1 : 3]);
    return true;
  }

  var ready = loadTables();
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var btn = t.closest("button.unfold");
    if (btn) { unfold(btn.closest("tbody")); return; }
    var link = t.closest("a.ev[data-line]");
    if (link) {
      ev.preventDefault();
      ready.then(function () { if (!goEvidence(link)) location.hash = link.getAttribute("href"); });
      return;
    }
    var cell = t.closest("table.diff td");
    if (cell && cell.parentElement.cells.length === 4 && cell.cellIndex % 2 === 1) { selectIR(cell); return; }
    var row = t.closest("table.src tr");
    if (row && !row.classList.contains("gap")) selectSrc(row);
  });
  document.getElementById("rawtoggle").addEventListener("change", function (ev) { toggleRaw(ev.target.checked); });
  document.getElementById("expandall").addEventListener("click", expandAll);
  document.getElementById("collapseall").addEventListener("click", collapseAll);
  ready.then(markMapped).then(function () {
    if (document.getElementById("rawtoggle").checked) toggleRaw(true);
    document.documentElement.dataset.irdiffReady = "1";
  }, function (err) {
    document.documentElement.dataset.irdiffReady = "error";
    status.textContent = "could not unpack the compressed sections: " + err;
  });
})();
