//! The timeline of the flame graph page: samples per interval above the flame graphs (one
//! strip per thread on demand); dragging across it draws the flame graph of that range, in
//! the page, from the samples of its intervals. Only for profiles with a [`Timeline`].
//!
//! The page gets what its first view draws as JSON: the samples' stacks as a prefix tree
//! (each node its parent and name, each sample its leaf node, nodes in drawing order), each
//! interval's total and each sample's over the whole profile, and per-thread values. The
//! intervals' (sample, value) pairs, the bulk of a large profile, come packed in base64 and
//! are decoded at the first range drawn: a range's flame graph is a sum over its intervals and
//! one pass up the tree.

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
/// its first frame. Nodes are numbered in pre-order with each node's children in the order of
/// their names, so the page lists a node's children in drawing order with one pass, no sort.
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
    // Renumbered: pre-order, children by name.
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); parents.len()];
    for (node, &parent) in parents.iter().enumerate().skip(1) {
        children[parent as usize].push(node as u32);
    }
    for list in &mut children {
        list.sort_unstable_by(|&a, &b| {
            texts[names[a as usize] as usize].cmp(&texts[names[b as usize] as usize])
        });
    }
    let mut new_id = vec![0u32; parents.len()];
    let mut order: Vec<u32> = Vec::with_capacity(parents.len());
    let mut pending = vec![0u32];
    while let Some(node) = pending.pop() {
        new_id[node as usize] = order.len() as u32;
        order.push(node);
        pending.extend(children[node as usize].iter().rev());
    }
    let parents = order
        .iter()
        .map(|&old| new_id[parents[old as usize] as usize])
        .collect();
    let names = order.iter().map(|&old| names[old as usize]).collect();
    let leaves = leaves.iter().map(|&l| new_id[l as usize]).collect();
    Tree {
        parents,
        names,
        leaves,
        texts,
        kinds,
    }
}

/// Appends `v` as an unsigned LEB128 number.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The largest value a dense interval holds in a nibble; larger ones are escaped.
const NIBBLE_ESCAPE: i64 = 15;

/// Each interval's (sample, value) pairs, packed: the bytes, and where each interval's bytes
/// start (one more offset for the end) and whether it is dense. A sparse interval is its pairs
/// in order, each as the varint `(step - 1) * 2 + (value != 1)` (the step from the previous
/// sample, the first from -1) followed by the value's varint unless it is 1. A dense one (most
/// samples present, as in a long busy recording) is a nibble per sample of the profile (the
/// even sample in the low half), 0 to 14 its value and 15 an escape, followed by the escaped
/// values' varints in order. Whichever is shorter; values below 0 count as 0.
fn packed_samples(timeline: &Timeline, samples: usize) -> (Vec<u8>, Vec<usize>, Vec<bool>) {
    let mut out = Vec::new();
    let mut offsets = Vec::with_capacity(timeline.samples.len() + 1);
    let mut dense = Vec::with_capacity(timeline.samples.len());
    let mut sparse_part = Vec::new();
    let mut dense_part = Vec::new();
    for pairs in &timeline.samples {
        offsets.push(out.len());
        sparse_part.clear();
        let mut previous = -1i64;
        for &(s, v) in pairs {
            let v = v.max(0);
            let step = i64::from(s) - previous;
            previous = i64::from(s);
            varint(&mut sparse_part, (step as u64 - 1) * 2 + u64::from(v != 1));
            if v != 1 {
                varint(&mut sparse_part, v as u64);
            }
        }
        // A dense interval is at least half a byte per sample: only worth building when the
        // sparse one is longer.
        let is_dense = sparse_part.len() > samples.div_ceil(2) && {
            dense_part.clear();
            dense_part.resize(samples.div_ceil(2), 0);
            let mut escaped = Vec::new();
            for &(s, v) in pairs {
                let v = v.max(0);
                let nibble = if v >= NIBBLE_ESCAPE {
                    varint(&mut escaped, v as u64);
                    NIBBLE_ESCAPE
                } else {
                    v
                } as u8;
                dense_part[s as usize / 2] |= nibble << (4 * (s % 2));
            }
            dense_part.extend_from_slice(&escaped);
            dense_part.len() < sparse_part.len()
        };
        out.extend_from_slice(if is_dense { &dense_part } else { &sparse_part });
        dense.push(is_dense);
    }
    offsets.push(out.len());
    (out, offsets, dense)
}

/// The timeline's data, as one JSON object, and the intervals' samples packed (see
/// [`packed_samples`]) in base64, read by the page at the first range drawn.
fn data(profile: &Profile, timeline: &Timeline, unit: &str) -> (String, String) {
    use base64::Engine as _;
    let tree = tree(profile);
    let (packed, offsets, dense) = packed_samples(timeline, profile.samples.len());
    let mut totals = vec![0i64; timeline.samples.len()];
    let mut whole = vec![0i64; profile.samples.len()];
    for (b, pairs) in timeline.samples.iter().enumerate() {
        for &(s, v) in pairs {
            totals[b] += v.max(0);
            whole[s as usize] += v.max(0);
        }
    }
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
    out.push_str(",\"totals\":");
    json_numbers(&mut out, totals);
    out.push_str(",\"whole\":");
    json_numbers(&mut out, whole);
    out.push_str(",\"offsets\":");
    json_numbers(&mut out, offsets.iter().map(|&o| o as i64));
    out.push_str(",\"dense\":");
    json_numbers(&mut out, dense.iter().map(|&d| i64::from(d)));
    out.push_str(",\"byThread\":[");
    for (i, pairs) in timeline.by_thread.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_numbers(&mut out, pairs.iter().flat_map(|&(t, v)| [i64::from(t), v]));
    }
    out.push_str("]}");
    (
        out,
        base64::engine::general_purpose::STANDARD.encode(packed),
    )
}

/// The page's styles for the timeline.
pub(crate) const STYLE: &str = r#"
#timeline { margin: 6px 0; }
#timeline canvas { width: 100%; display: block; cursor: crosshair; }
#timeline .info { font-size: 12px; color: #333; margin: 2px 0; }
#timeline .threads canvas { height: 18px; }
#timeline .threads div { font-size: 11px; color: #555; }
#range-view canvas { width: 100%; display: block; }
#range-view .info { font-size: 13px; margin: 3px 0; }
#range-view .info button, #range-view .info input { font-size: 12px; margin-left: 6px; }
#range-match { color: #a000a0; margin-left: 6px; }
"#;

/// The two SVG views, as script blocks the page loads into their frames when asked: each
/// compressed (zlib, the browser's `DecompressionStream("deflate")`) in base64, as a large
/// profile's views are megabytes the browser would otherwise parse at every load.
pub(crate) fn deferred_views(callees: &str, callers: &str) -> String {
    let block = |id: &str, svg: &str| {
        format!(
            "<script type=\"text/plain\" id=\"{id}-svg\">{}</script>\n",
            deflated_base64(svg.as_bytes())
        )
    };
    block("callees", callees) + &block("callers", callers)
}

/// `bytes` compressed in the zlib format, in base64.
fn deflated_base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    use std::io::Write as _;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = z.write_all(bytes);
    let packed = z.finish().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(packed)
}

/// The timeline's HTML and script for `profile` (whose timeline is `timeline`), whose values
/// are in `unit`.
pub(crate) fn section(profile: &Profile, timeline: &Timeline, unit: &str) -> String {
    let (data, samples) = data(profile, timeline, unit);
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
<div id="range-view"><div class="info"><span id="range-info"></span>
<button id="range-invert" type="button">Callers (inverted)</button>
<input id="range-search" type="search" placeholder="Search frames (regular expression)" size="36">
<span id="range-match"></span></div><canvas id="range-canvas"></canvas>
<div class="info" id="range-detail">Hover a frame for its value; click to zoom, click the bottom frame to zoom out.</div></div>
<script type="application/json" id="tl-data">{data}</script>
<script type="text/plain" id="tl-samples">{samples}</script>
<script>{SCRIPT}</script>
"#
    )
}

/// The timeline's script: draws the intervals, follows a drag, and draws the range's flame
/// graph on a canvas, of its callees or its callers (inverted), with the frames a search
/// matches marked and their share of the range. For tests: `window.hprofTimeline.
/// select(fromSeconds, toSeconds)` does what a drag does, `.xOf(seconds)` is where a time is
/// on the page, `.rangeFrames()` lists the drawn graph's frames and values, `.rootFrames()`
/// its bottom row's, `.callers(on)` switches the graph, `.search(text)` searches as the box
/// does and returns the matched value.
const SCRIPT: &str = r##"
(function () {
  var D = JSON.parse(document.getElementById("tl-data").textContent);
  // Each interval's total, and each sample's over the whole profile, come ready.
  var totals = D.totals, n = totals.length, leaves = D.leaves;
  // The intervals' samples, packed by the writer (sparse: varints of (step - 1) * 2 +
  // (value != 1), each followed by its value's varint unless 1; dense: a nibble per sample,
  // 15 escaping to a varint after the nibbles), decoded from base64 at the first range drawn.
  var packed = null;
  function addInterval(v, b) {
    if (packed === null) {
      var text = atob(document.getElementById("tl-samples").textContent);
      packed = new Uint8Array(text.length);
      for (var k = 0; k < text.length; k++) packed[k] = text.charCodeAt(k);
    }
    var p = packed, i = D.offsets[b], end = D.offsets[b + 1];
    function varint() {
      var x = 0, scale = 1, c;
      do { c = p[i++]; x += (c & 127) * scale; scale *= 128; } while (c & 128);
      return x;
    }
    if (D.dense[b]) {
      var count = leaves.length, nibbles = i;
      i += (count + 1) >> 1;
      for (var s = 0; s < count; s += 2) {
        var c = p[nibbles + (s >> 1)];
        if (!c) continue;
        var x = c & 15;
        if (x === 15) x = varint();
        if (x) v[leaves[s]] += x;
        x = c >> 4;
        if (x === 15) x = varint();
        if (x) v[leaves[s + 1]] += x;
      }
    } else {
      for (var id = -1; i < end;) {
        var step = varint();
        id += (step >>> 1) + 1;
        v[leaves[id]] += (step & 1) ? varint() : 1;
      }
    }
  }
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
  var nodes = D.parents.length, children = null, rangeTotals = null, rects = [];
  // The graph drawn: the callees' tree (the page's nodes) or the callers' (built from the
  // range's own values), each with its parents, names, totals, children (a function of a node)
  // and zoomed node.
  var view = null, inverted = false, matched = null;
  function buildChildren() {
    children = [];
    for (var i = 0; i < nodes; i++) children.push([]);
    for (var i = 1; i < nodes; i++) children[D.parents[i]].push(i);
    // (Nodes come in pre-order with each one's children by name: already in drawing order.)
  }
  function rangeValues(a, z) {
    var v = new Float64Array(nodes);
    if (a <= 0 && z >= n) for (var s = 0; s < leaves.length; s++) v[leaves[s]] += D.whole[s];
    else for (var b = a; b < z; b++) addInterval(v, b);
    // (A node's parent comes before it.)
    for (var i = nodes - 1; i > 0; i--) v[D.parents[i]] += v[i];
    return v;
  }
  function calleesView() {
    return {
      parents: D.parents, names: D.names, totals: rangeTotals, zoom: 0,
      children: function (node) { return children[node]; },
    };
  }
  // Each node's own value (its total less its children's) on the path from it to the root,
  // leaf first: the callers' tree of the range, each node's children by name. A node is found
  // by (parent, name) in an open-addressing table of integers: on 20,000 stacks (479,000
  // callers' nodes) a Map keyed by numbers past 2^31 and a list of children per node took
  // 0.33 s, this about 0.12 s.
  var nameRank = null;
  function callersView() {
    var parents = [0], names = [0], totals = [rangeTotals[0]], count = 1;
    var bits = 10;
    while ((1 << bits) < nodes * 4 && bits < 30) bits++;
    var slots = new Int32Array(1 << bits);
    function find(at, name) {
      var mask = (1 << bits) - 1;
      var h = (Math.imul(at, 0x9e3779b1) ^ Math.imul(name + 1, 0x85ebca77)) >>> (32 - bits);
      for (;; h = (h + 1) & mask) {
        var e = slots[h];
        if (e === 0) return -1 - h;
        if (parents[e] === at && names[e] === name) return e;
      }
    }
    for (var i = 1; i < nodes; i++) {
      var own = rangeTotals[i], ch = children[i];
      for (var k = 0; k < ch.length; k++) own -= rangeTotals[ch[k]];
      if (!(own > 0)) continue;
      for (var at = 0, j = i; j > 0; j = D.parents[j]) {
        var name = D.names[j], next = find(at, name);
        if (next < 0) {
          slots[-1 - next] = count;
          next = count++;
          parents.push(at); names.push(name); totals.push(0);
          if (count * 2 > slots.length) {
            bits++;
            slots = new Int32Array(1 << bits);
            for (var e = 1; e < count; e++) slots[-1 - find(parents[e], names[e])] = e;
          }
        }
        totals[next] += own;
        at = next;
      }
    }
    if (!nameRank) {
      // The names' order once per page, by the same comparison the callees' tree is drawn in.
      var order = D.texts.map(function (_, k) { return k; });
      order.sort(function (x, y) {
        var a = D.texts[x], b = D.texts[y];
        return a < b ? -1 : a > b ? 1 : 0;
      });
      nameRank = new Int32Array(order.length);
      for (var k = 0; k < order.length; k++) nameRank[order[k]] = k;
    }
    // Each node's children, contiguous (most of the tree is never drawn: a list of its own per
    // node took half the time); sorted by name when first asked for.
    var first = new Int32Array(count + 1), kids = new Int32Array(count);
    for (var i = 1; i < count; i++) first[parents[i] + 1]++;
    for (var i = 0; i < count; i++) first[i + 1] += first[i];
    var fill = first.slice(0, count);
    for (var i = 1; i < count; i++) kids[fill[parents[i]]++] = i;
    var sorted = new Map();
    function childrenOf(node) {
      var list = sorted.get(node);
      if (!list) {
        list = Array.prototype.slice.call(kids.subarray(first[node], first[node + 1]));
        list.sort(function (x, y) { return nameRank[names[x]] - nameRank[names[y]]; });
        sorted.set(node, list);
      }
      return list;
    }
    return { parents: parents, names: names, totals: totals, children: childrenOf, zoom: 0 };
  }
  var rangeCanvas = document.getElementById("range-canvas");
  // Each kind's base colour and spread, as the flame graph's legend has them.
  var colours = D.colours;
  function colour(name) {
    if (matched && matched[name]) return "rgb(230,0,230)";
    var t = D.texts[name], h = 0;
    for (var i = 0; i < t.length; i++) h = (h * 31 + t.charCodeAt(i)) % 60;
    var c = colours[D.kinds[name]] || colours[0];
    function channel(i) { return c[3 + i] ? Math.min(255, c[i] + (h / c[3 + i] | 0)) : c[i]; }
    return "rgb(" + channel(0) + "," + channel(1) + "," + channel(2) + ")";
  }
  function drawRange() {
    var w = rangeCanvas.clientWidth || 1000, row = 16, t = view.totals, zoom = view.zoom;
    var depth = 0, stack = [[zoom, 0, 0]];
    var layout = [];
    var root = t[zoom] || 1;
    while (stack.length) {
      var e = stack.pop(), node = e[0], x = e[1], d = e[2];
      var width = t[node] / root * w;
      if (width < 0.5) continue;
      if (node !== zoom || zoom !== 0) layout.push([node, x, d, width]);
      if (d > depth) depth = d;
      var cx = x;
      var ch = view.children(node);
      for (var i = 0; i < ch.length; i++) {
        if (t[ch[i]] > 0) { stack.push([ch[i], cx, d + 1]); cx += t[ch[i]] / root * w; }
      }
    }
    rangeCanvas.width = w;
    rangeCanvas.height = (depth + 1) * row;
    var g = rangeCanvas.getContext("2d");
    g.font = "11px sans-serif";
    rects = [];
    for (var i = 0; i < layout.length; i++) {
      var l = layout[i], y = rangeCanvas.height - (l[2] + 1) * row, name = view.names[l[0]];
      g.fillStyle = colour(name);
      g.fillRect(l[1], y, Math.max(0.5, l[3] - 0.5), row - 1);
      if (l[3] > 30) {
        g.fillStyle = "#000";
        g.save(); g.beginPath(); g.rect(l[1], y, l[3] - 2, row); g.clip();
        g.fillText(D.texts[name], l[1] + 2, y + row - 4);
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
    var v = view.totals[node], t = rangeTotals[0] || 1;
    document.getElementById("range-detail").textContent = D.texts[view.names[node]] + " (" + v + " " + D.unit + ", " + (v * 100 / t).toFixed(2) + "%)";
  });
  rangeCanvas.addEventListener("click", function (e) {
    var node = nodeAt(e);
    if (node < 0) return;
    view.zoom = node === view.zoom ? view.parents[node] : node;
    drawRange();
  });
  // The value of the range's samples with a frame the search matches, each sample once
  // however many such frames its stack has: the totals of the matched nodes with no matched
  // node below them (nodes come in pre-order: a parent before its children).
  function matchedValue() {
    if (!matched) return 0;
    var below = new Uint8Array(nodes), sum = 0;
    for (var i = 1; i < nodes; i++) {
      var p = D.parents[i];
      below[i] = below[p] || (p > 0 && matched[D.names[p]]) ? 1 : 0;
      if (matched[D.names[i]] && !below[i]) sum += rangeTotals[i];
    }
    return sum;
  }
  function showMatch() {
    var v = matchedValue(), t = rangeTotals[0] || 1;
    document.getElementById("range-match").textContent = matched ?
      "Matched: " + v + " " + D.unit + " (" + (v * 100 / t).toFixed(2) + "% of the range)" : "";
    return v;
  }
  // A search as a regular expression, or as plain text where it is not one.
  function search(text) {
    matched = null;
    if (text) {
      var re = null;
      try { re = new RegExp(text); } catch (e) { re = null; }
      matched = new Uint8Array(D.texts.length);
      for (var k = 0; k < D.texts.length; k++) {
        matched[k] = (re ? re.test(D.texts[k]) : D.texts[k].indexOf(text) >= 0) ? 1 : 0;
      }
    }
    if (view) drawRange();
    return rangeTotals ? showMatch() : 0;
  }
  var searchBox = document.getElementById("range-search");
  searchBox.addEventListener("input", function () { search(searchBox.value); });
  function setCallers(on) {
    inverted = !!on;
    document.getElementById("range-invert").textContent = inverted ? "Callees" : "Callers (inverted)";
    if (!rangeTotals) return;
    view = inverted ? callersView() : calleesView();
    drawRange();
  }
  document.getElementById("range-invert").addEventListener("click", function () { setCallers(!inverted); });
  function showRange(a, z, whole) {
    sel = whole ? null : [a, z];
    redraw();
    if (!children) buildChildren();
    rangeTotals = rangeValues(a, z);
    view = inverted ? callersView() : calleesView();
    document.getElementById("range-view").style.display = "block";
    var views = document.querySelectorAll("iframe, #bar");
    for (var i = 0; i < views.length; i++) views[i].style.display = "none";
    document.getElementById("range-info").textContent = (whole ? "Flame graph of the whole profile" : "Flame graph of " + fmt(secs(a)) + " – " + fmt(secs(z))) + ": " + rangeTotals[0] + " " + D.unit;
    showMatch();
    drawRange();
  }
  document.getElementById("tl-reset").addEventListener("click", function () { showRange(0, n, true); });
  // The SVG views (inferno's, with search and the callers view), compressed in the page:
  // loaded at the first ask.
  function inflated(id) {
    var text = atob(document.getElementById(id).textContent), bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).text();
  }
  document.getElementById("tl-svg").addEventListener("click", function () {
    ["callees", "callers"].forEach(function (id) {
      var frame = document.getElementById(id);
      if (frame.getAttribute("srcdoc") || frame.dataset.loading) return;
      frame.dataset.loading = "yes";
      inflated(id + "-svg").then(function (svg) { frame.setAttribute("srcdoc", svg); });
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
      if (view) for (var i = 1; i < view.totals.length; i++) if (view.totals[i] > 0) {
        var t = D.texts[view.names[i]];
        out[t] = (out[t] || 0) + view.totals[i];
      }
      return out;
    },
    rootFrames: function () {
      var out = {};
      if (view) view.children(0).forEach(function (i) {
        if (view.totals[i] > 0) { var t = D.texts[view.names[i]]; out[t] = (out[t] || 0) + view.totals[i]; }
      });
      return out;
    },
    callers: setCallers,
    search: search,
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
