//! The timeline of the flame graph page: samples per interval above the flame graphs (one
//! strip per thread on demand); dragging across it draws the flame graph of that range, in
//! the page, from the samples of its intervals. Only for profiles with a [`Timeline`].
//!
//! The page gets the data as JSON: the intervals' (sample, value) pairs and per-thread
//! values, and the samples' stacks as a prefix tree (each node its parent and name, each
//! sample its leaf node), so a range's flame graph is a sum over its intervals and one pass up
//! the tree.

use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use crate::folded;
use crate::model::{FrameKind, Profile};
use crate::timed::Timeline;

/// Appends `s` as a JSON string.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("\\u003c"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `values` as a JSON array of numbers.
fn json_numbers(out: &mut String, values: impl IntoIterator<Item = i64>) {
    out.push('[');
    for (i, v) in values.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{v}");
    }
    out.push(']');
}

/// The samples' stacks as a prefix tree: `(parents, names, kinds, leaves, texts)`: node `i`
/// (from 1; 0 is the root above every stack) has parent `parents[i]` and name
/// `texts[names[i]]`; sample `s` ends at node `leaves[s]`. A sample with a thread has it as
/// its first frame.
struct Tree {
    parents: Vec<u32>,
    names: Vec<u32>,
    leaves: Vec<u32>,
    texts: Vec<String>,
    kinds: Vec<u8>,
}

/// A frame kind's code in the page: its index in the flame graph's kinds (and colours).
fn kind_code(kind: FrameKind) -> u8 {
    crate::flame::kind_index(kind)
}

fn tree(profile: &Profile) -> Tree {
    let mut texts: Vec<String> = Vec::new();
    let mut kinds: Vec<u8> = Vec::new();
    let mut text_ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut intern = |text: String, kind: u8| -> u32 {
        *text_ids.entry(text.clone()).or_insert_with(|| {
            texts.push(text);
            kinds.push(kind);
            texts.len() as u32 - 1
        })
    };
    let frame_names: Vec<u32> = profile
        .frames
        .iter()
        .map(|f| intern(folded::clean(f.name()), kind_code(f.kind)))
        .collect();
    let mut parents = vec![0u32];
    let mut names = vec![0u32];
    let mut nodes: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut leaves = Vec::with_capacity(profile.samples.len());
    for sample in &profile.samples {
        let mut at = 0u32;
        let thread = sample
            .thread
            .as_ref()
            .map(|t| intern(folded::clean(t), kind_code(FrameKind::Pseudo)));
        for name in thread
            .into_iter()
            .chain(sample.stack.iter().map(|&f| frame_names[f]))
        {
            at = *nodes.entry((at, name)).or_insert_with(|| {
                parents.push(at);
                names.push(name);
                parents.len() as u32 - 1
            });
        }
        leaves.push(at);
    }
    Tree {
        parents,
        names,
        leaves,
        texts,
        kinds,
    }
}

/// The timeline's data, as one JSON object.
fn data(profile: &Profile, timeline: &Timeline, unit: &str) -> String {
    let tree = tree(profile);
    let mut out = String::with_capacity(1 << 20);
    let _ = write!(
        out,
        "{{\"start\":{},\"offset\":{},\"bucket\":{},\"unit\":",
        timeline.start, timeline.offset, timeline.bucket
    );
    json_string(&mut out, unit);
    out.push_str(",\"threads\":[");
    for (i, t) in timeline.threads.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_string(&mut out, t);
    }
    out.push_str("],\"texts\":[");
    for (i, t) in tree.texts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_string(&mut out, t);
    }
    out.push_str("],\"kinds\":");
    json_numbers(&mut out, tree.kinds.iter().map(|&k| i64::from(k)));
    out.push_str(",\"colours\":");
    out.push_str(&crate::flame::kind_colours_json());
    out.push_str(",\"parents\":");
    json_numbers(&mut out, tree.parents.iter().map(|&p| i64::from(p)));
    out.push_str(",\"names\":");
    json_numbers(&mut out, tree.names.iter().map(|&n| i64::from(n)));
    out.push_str(",\"leaves\":");
    json_numbers(&mut out, tree.leaves.iter().map(|&l| i64::from(l)));
    // Each interval's samples, in order, each as the step (1 or more) from the previous one's
    // index (from -1), followed by -value when its value is not 1: small numbers, a short
    // page.
    out.push_str(",\"samples\":[");
    for (i, pairs) in timeline.samples.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut previous = -1i64;
        json_numbers(
            &mut out,
            pairs.iter().flat_map(|&(s, v)| {
                let step = i64::from(s) - previous;
                previous = i64::from(s);
                std::iter::once(step).chain((v != 1).then_some(-v.max(0)))
            }),
        );
    }
    out.push_str("],\"byThread\":[");
    for (i, pairs) in timeline.by_thread.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_numbers(&mut out, pairs.iter().flat_map(|&(t, v)| [i64::from(t), v]));
    }
    out.push_str("]}");
    out
}

/// The page's styles for the timeline.
pub(crate) const STYLE: &str = r#"
#timeline { margin: 6px 0; }
#timeline canvas { width: 100%; display: block; cursor: crosshair; }
#timeline .info { font-size: 12px; color: #333; margin: 2px 0; }
#timeline .threads canvas { height: 18px; }
#timeline .threads div { font-size: 11px; color: #555; }
#range-view canvas { width: 100%; display: block; }
"#;

/// The two SVG views, as script blocks the page loads into their frames when asked.
pub(crate) fn deferred_views(callees: &str, callers: &str) -> String {
    let block = |id: &str, svg: &str| {
        format!(
            "<script type=\"text/plain\" id=\"{id}-svg\">{}</script>\n",
            svg.replace("</script", "<\\/script")
        )
    };
    block("callees", callees) + &block("callers", callers)
}

/// The timeline's HTML and script for `profile` (whose timeline is `timeline`), whose values
/// are in `unit`.
pub(crate) fn section(profile: &Profile, timeline: &Timeline, unit: &str) -> String {
    let data = data(profile, timeline, unit);
    format!(
        r#"<div id="timeline">
<div class="info"><b>Timeline</b> — <span id="tl-info"></span>
<button id="tl-threads" type="button">Per thread</button>
<button id="tl-reset" type="button">Whole profile</button>
<button id="tl-svg" type="button">SVG views (search, callers)</button></div>
<canvas id="tl-canvas" height="80"></canvas>
<div class="info" id="tl-axis"></div>
<div class="threads" id="tl-thread-list" style="display:none"></div>
</div>
<div id="range-view"><div class="info" id="range-info"></div><canvas id="range-canvas"></canvas>
<div class="info" id="range-detail">Hover a frame for its value; click to zoom, click the bottom frame to zoom out.</div></div>
<script type="application/json" id="tl-data">{data}</script>
<script>{SCRIPT}</script>
"#
    )
}

/// The timeline's script: draws the intervals, follows a drag, and draws the range's flame
/// graph on a canvas (`window.hprofTimeline.select(fromSeconds, toSeconds)` does what a drag
/// does, `.xOf(seconds)` is where a time is on the page, and `.rangeFrames()` lists the
/// range's frames and values, for tests).
const SCRIPT: &str = r##"
(function () {
  var D = JSON.parse(document.getElementById("tl-data").textContent);
  var n = D.samples.length;
  var totals = new Float64Array(n);
  // An interval's samples: steps between sample indices, each followed by -value unless 1.
  function eachSample(b, f) {
    var p = D.samples[b], id = -1;
    for (var i = 0; i < p.length; i++) {
      id += p[i];
      var v = 1;
      if (i + 1 < p.length && p[i + 1] <= 0) v = -p[++i];
      f(id, v);
    }
  }
  for (var b = 0; b < n; b++) eachSample(b, function (s, v) { totals[b] += v; });
  var canvas = document.getElementById("tl-canvas");
  var info = document.getElementById("tl-info");
  var sel = null, drag = null;
  function secs(b) { return (D.offset + b * D.bucket) / 1e9; }
  function fmt(s) { return s.toFixed(s < 10 ? 2 : 1) + " s"; }
  var wall = new Date(D.start / 1e6);
  document.getElementById("tl-axis").textContent = fmt(secs(0)) + " (" + wall.toLocaleString() +
    ")  …  " + fmt(secs(n)) + "   — intervals of " + (D.bucket / 1e6) + " ms; drag to pick a range";
  function drawBars(c, values, highlight) {
    var w = c.clientWidth || 800, h = c.height;
    c.width = w;
    var g = c.getContext("2d");
    g.clearRect(0, 0, w, h);
    var max = 0;
    for (var b = 0; b < values.length; b++) if (values[b] > max) max = values[b];
    if (highlight) {
      g.fillStyle = "rgba(70,130,220,0.18)";
      g.fillRect(highlight[0] * w / n, 0, (highlight[1] - highlight[0]) * w / n, h);
    }
    g.fillStyle = "rgb(205,95,50)";
    for (var b = 0; b < values.length; b++) {
      if (!values[b]) continue;
      var bh = Math.max(1, values[b] / max * (h - 2));
      g.fillRect(b * w / n, h - bh, Math.max(1, w / n - (w / n > 3 ? 1 : 0)), bh);
    }
  }
  function total() { var t = 0; for (var b = 0; b < n; b++) t += totals[b]; return t; }
  function redraw() {
    drawBars(canvas, totals, sel);
    info.textContent = sel ? (fmt(secs(sel[0])) + " – " + fmt(secs(sel[1]))) : (total() + " " + D.unit + " over " + fmt(secs(n) - secs(0)));
  }
  function bucketAt(x) {
    var r = canvas.getBoundingClientRect();
    return Math.max(0, Math.min(n, Math.round((x - r.left) / r.width * n)));
  }
  canvas.addEventListener("mousedown", function (e) { drag = bucketAt(e.clientX); sel = [drag, drag]; redraw(); e.preventDefault(); });
  window.addEventListener("mousemove", function (e) {
    if (drag === null) return;
    var b = bucketAt(e.clientX);
    sel = [Math.min(drag, b), Math.max(drag, b)];
    redraw();
  });
  window.addEventListener("mouseup", function (e) {
    if (drag === null) return;
    var b = bucketAt(e.clientX);
    var a = Math.min(drag, b), z = Math.max(drag, b);
    drag = null;
    if (z - a < 1) { z = Math.min(n, a + 1); }
    showRange(a, z);
  });
  // The range's flame graph: values summed per tree node over the range's intervals.
  var nodes = D.parents.length, children = null, rangeTotals = null, zoomNode = 0, rects = [];
  function buildChildren() {
    children = [];
    for (var i = 0; i < nodes; i++) children.push([]);
    for (var i = 1; i < nodes; i++) children[D.parents[i]].push(i);
    for (var i = 0; i < nodes; i++) children[i].sort(function (x, y) { return D.texts[D.names[x]] < D.texts[D.names[y]] ? -1 : 1; });
  }
  function rangeValues(a, z) {
    var v = new Float64Array(nodes);
    for (var b = a; b < z; b++) eachSample(b, function (s, x) { v[D.leaves[s]] += x; });
    for (var i = nodes - 1; i > 0; i--) v[D.parents[i]] += v[i];
    return v;
  }
  var rangeCanvas = document.getElementById("range-canvas");
  // Each kind's base colour and spread, as the flame graph's legend has them.
  var colours = D.colours;
  function colour(node) {
    var t = D.texts[D.names[node]], h = 0;
    for (var i = 0; i < t.length; i++) h = (h * 31 + t.charCodeAt(i)) % 60;
    var c = colours[D.kinds[D.names[node]]] || colours[0];
    function channel(i) { return c[3 + i] ? Math.min(255, c[i] + (h / c[3 + i] | 0)) : c[i]; }
    return "rgb(" + channel(0) + "," + channel(1) + "," + channel(2) + ")";
  }
  function drawRange() {
    var w = rangeCanvas.clientWidth || 1000, row = 16;
    var depth = 0, stack = [[zoomNode, 0, 0]];
    var layout = [];
    var root = rangeTotals[zoomNode] || 1;
    while (stack.length) {
      var e = stack.pop(), node = e[0], x = e[1], d = e[2];
      var width = rangeTotals[node] / root * w;
      if (width < 0.5) continue;
      if (node !== zoomNode || zoomNode !== 0) layout.push([node, x, d, width]);
      if (d > depth) depth = d;
      var cx = x;
      var ch = children[node];
      for (var i = 0; i < ch.length; i++) {
        if (rangeTotals[ch[i]] > 0) { stack.push([ch[i], cx, d + 1]); cx += rangeTotals[ch[i]] / root * w; }
      }
    }
    rangeCanvas.width = w;
    rangeCanvas.height = (depth + 1) * row;
    var g = rangeCanvas.getContext("2d");
    g.font = "11px sans-serif";
    rects = [];
    for (var i = 0; i < layout.length; i++) {
      var l = layout[i], y = rangeCanvas.height - (l[2] + 1) * row;
      g.fillStyle = colour(l[0]);
      g.fillRect(l[1], y, Math.max(0.5, l[3] - 0.5), row - 1);
      if (l[3] > 30) {
        g.fillStyle = "#000";
        g.save(); g.beginPath(); g.rect(l[1], y, l[3] - 2, row); g.clip();
        g.fillText(D.texts[D.names[l[0]]], l[1] + 2, y + row - 4);
        g.restore();
      }
      rects.push([l[1], y, l[3], row, l[0]]);
    }
  }
  function nodeAt(e) {
    var r = rangeCanvas.getBoundingClientRect();
    var x = e.clientX - r.left, y = e.clientY - r.top;
    for (var i = 0; i < rects.length; i++) {
      var q = rects[i];
      if (x >= q[0] && x < q[0] + q[2] && y >= q[1] && y < q[1] + q[3]) return q[4];
    }
    return -1;
  }
  rangeCanvas.addEventListener("mousemove", function (e) {
    var node = nodeAt(e);
    if (node < 0) return;
    var v = rangeTotals[node], t = rangeTotals[0] || 1;
    document.getElementById("range-detail").textContent = D.texts[D.names[node]] + " (" + v + " " + D.unit + ", " + (v * 100 / t).toFixed(2) + "%)";
  });
  rangeCanvas.addEventListener("click", function (e) {
    var node = nodeAt(e);
    if (node < 0) return;
    zoomNode = node === zoomNode ? D.parents[node] : node;
    drawRange();
  });
  function showRange(a, z, whole) {
    sel = whole ? null : [a, z];
    redraw();
    if (!children) buildChildren();
    rangeTotals = rangeValues(a, z);
    zoomNode = 0;
    document.getElementById("range-view").style.display = "block";
    var views = document.querySelectorAll("iframe, #bar");
    for (var i = 0; i < views.length; i++) views[i].style.display = "none";
    document.getElementById("range-info").textContent = (whole ? "Flame graph of the whole profile" : "Flame graph of " + fmt(secs(a)) + " – " + fmt(secs(z))) + ": " + rangeTotals[0] + " " + D.unit;
    drawRange();
  }
  document.getElementById("tl-reset").addEventListener("click", function () { showRange(0, n, true); });
  // The SVG views (inferno's, with search and the callers view), loaded at the first ask.
  document.getElementById("tl-svg").addEventListener("click", function () {
    ["callees", "callers"].forEach(function (id) {
      var frame = document.getElementById(id), src = document.getElementById(id + "-svg");
      if (src && !frame.getAttribute("srcdoc")) frame.setAttribute("srcdoc", src.textContent.replace(/<\\\/script/g, "<" + "/script"));
    });
    sel = null;
    redraw();
    document.getElementById("range-view").style.display = "none";
    document.getElementById("bar").style.display = "block";
    document.getElementById("callees").style.display = "block";
    document.getElementById("callers").style.display = "none";
    document.getElementById("toggle").textContent = "Show callers (inverted)";
  });
  // One strip per thread, busiest first, drawn when asked for.
  document.getElementById("tl-threads").addEventListener("click", function () {
    var list = document.getElementById("tl-thread-list");
    if (list.style.display === "none" && !list.childNodes.length) {
      var per = D.threads.map(function () { return new Float64Array(n); });
      var sums = D.threads.map(function () { return 0; });
      for (var b = 0; b < n; b++) {
        var p = D.byThread[b];
        for (var i = 0; i < p.length; i += 2) { per[p[i]][b] += p[i + 1]; sums[p[i]] += p[i + 1]; }
      }
      var order = D.threads.map(function (_, i) { return i; }).filter(function (i) { return sums[i] > 0; });
      order.sort(function (x, y) { return sums[y] - sums[x]; });
      order.slice(0, 64).forEach(function (t) {
        var label = document.createElement("div");
        label.textContent = D.threads[t] + " (" + sums[t] + " " + D.unit + ")";
        var c = document.createElement("canvas");
        c.height = 18;
        list.appendChild(label);
        list.appendChild(c);
        drawBars(c, per[t], null);
      });
    }
    list.style.display = list.style.display === "none" ? "" : "none";
  });
  window.hprofTimeline = {
    select: function (from, to) {
      var a = Math.max(0, Math.floor((from * 1e9 - D.offset) / D.bucket));
      var z = Math.min(n, Math.ceil((to * 1e9 - D.offset) / D.bucket));
      showRange(a, Math.max(z, a + 1));
    },
    rangeFrames: function () {
      var out = {};
      for (var i = 1; i < nodes; i++) if (rangeTotals && rangeTotals[i] > 0) {
        var t = D.texts[D.names[i]];
        out[t] = (out[t] || 0) + rangeTotals[i];
      }
      return out;
    },
    secondsOf: function (epochMillis) {
      return (epochMillis * 1e6 - D.start + D.offset) / 1e9;
    },
    xOf: function (seconds) {
      var r = canvas.getBoundingClientRect();
      return r.left + (seconds * 1e9 - D.offset) / D.bucket / n * r.width;
    },
    intervals: n
  };
  // The views below the timeline are parsed after this script.
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { showRange(0, n, true); });
  } else {
    showRange(0, n, true);
  }
  window.addEventListener("resize", function () { redraw(); if (rangeTotals) drawRange(); });
})();
"##;
