//! The HTML flame graph: one self-contained page (no network) holding two flame graphs laid
//! out by `inferno` (the Rust port of Brendan Gregg's flamegraph.pl, with its click-to-zoom,
//! reset, search with the matched share, and tooltips with values and percents): the callees
//! view (roots at the bottom) and the inverted callers view (the hot methods at the root),
//! switched by a button. Frames are coloured by kind: application methods in warm reds, JDK
//! methods in yellows, the agent's pseudo-frames and allocated classes in blue-greys.

use rustc_hash::FxHashMap as HashMap;
use std::io::{self, Write};

use inferno::flamegraph::{self, Options};

use crate::folded;
use crate::model::{FrameKind, Profile};

/// A colour for a frame of `kind`, varied by its name so neighbours differ.
fn colour(kind: FrameKind, name: &str) -> String {
    let h = name
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    let v = (h % 60) as u8;
    match kind {
        FrameKind::Application => format!("rgb({},{},{})", 200 + v / 2, 80 + v, 50),
        FrameKind::Jdk => format!("rgb({},{},{})", 210 + v / 3, 180 + v / 2, 60),
        FrameKind::Pseudo => format!("rgb({},{},{})", 130 + v / 2, 160 + v / 2, 200),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Recolours inferno's frames by kind: each frame is `<g><title>NAME (…)</title><rect … fill="…"`.
fn recolour(svg: &str, kinds: &HashMap<String, FrameKind>) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(start) = rest.find("<title>") {
        let (head, tail) = rest.split_at(start + 7);
        out.push_str(head);
        let title_end = tail.find("</title>").unwrap_or(tail.len());
        let title = &tail[..title_end];
        let name = title.rsplit_once(" (").map_or(title, |(n, _)| n);
        let unescaped = name
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&");
        let kind = kinds.get(&unescaped).copied();
        let after_title = &tail[title_end..];
        match (kind, after_title.find("fill=\"")) {
            (Some(kind), Some(fill)) if !after_title[..fill].contains("<title>") => {
                let value_start = fill + 6;
                let value_end = value_start + after_title[value_start..].find('"').unwrap_or(0);
                out.push_str(title);
                out.push_str(&after_title[..value_start]);
                out.push_str(&colour(kind, &unescaped));
                rest = &after_title[value_end..];
            }
            _ => {
                out.push_str(title);
                rest = after_title;
            }
        }
    }
    out.push_str(rest);
    out
}

fn svg(lines: &[String], title: &str, unit: &str, inverted: bool) -> io::Result<String> {
    let mut options = Options::default();
    options.title = title.to_string();
    options.count_name = unit.to_string();
    options.reverse_stack_order = inverted;
    options.hash = true;
    options.image_width = Some(1200);
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
        .map_err(io::Error::other)?;
    Ok(String::from_utf8_lossy(&svg).into_owned())
}

/// Writes `profile` as a self-contained HTML page with the callees and callers flame graphs.
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> io::Result<()> {
    let lines: Vec<String> = folded::lines(profile)
        .into_iter()
        .map(|(stack, value)| format!("{stack} {value}"))
        .collect();
    if lines.is_empty() {
        return Err(io::Error::other("the profile has no samples to draw"));
    }
    // One entry per method (frames of a method share its name's `Arc`).
    let mut kinds: HashMap<String, FrameKind> = HashMap::default();
    let mut seen: rustc_hash::FxHashSet<*const u8> = rustc_hash::FxHashSet::default();
    for frame in &profile.frames {
        if seen.insert(frame.name.as_ptr()) {
            kinds.insert(folded::clean(frame.name()), frame.kind);
        }
    }
    let unit = profile.sample_types.first().map_or("samples", |t| {
        if t.unit == "count" {
            t.name.as_str()
        } else {
            t.unit.as_str()
        }
    });
    // inferno's script keeps the zoom and search in the page's URL (history.replaceState),
    // which a srcdoc frame may not do: each frame gets a no-op instead.
    let frame =
        |svg: String| format!("<script>history.replaceState = function () {{}};</script>{svg}");
    // The two views are laid out side by side, one on each core.
    let callers_title = format!("{title} (callers)");
    let (callees, callers) = std::thread::scope(|scope| {
        let callers = scope
            .spawn(|| svg(&lines, &callers_title, unit, true).map(|s| frame(recolour(&s, &kinds))));
        let callees = svg(&lines, title, unit, false).map(|s| frame(recolour(&s, &kinds)));
        let callers = callers
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the callers view failed")));
        (callees, callers)
    });
    let (callees, callers) = (callees?, callers?);
    write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 8px; }}
iframe {{ width: 100%; height: 90vh; border: 0; }}
.legend span {{ display: inline-block; padding: 2px 8px; margin-right: 6px; border-radius: 3px; }}
</style></head>
<body>
<div id="bar"><button id="toggle" type="button">Show callers (inverted)</button>
<span class="legend"><span style="background:rgb(215,110,50)">application</span><span style="background:rgb(225,205,60)">JDK</span><span style="background:rgb(150,180,200)">allocated class / agent</span></span>
Click a frame to zoom, Ctrl-F or "Search" to highlight matches (their share is shown), hover for values.</div>
<iframe id="callees" title="callees" width="100%" height="800" style="width:100%;height:85vh" srcdoc="{callees}"></iframe>
<iframe id="callers" title="callers" width="100%" height="800" style="width:100%;height:85vh;display:none" srcdoc="{callers}"></iframe>
<script>
document.getElementById("toggle").addEventListener("click", function () {{
  var a = document.getElementById("callees"), b = document.getElementById("callers");
  var inverted = a.style.display !== "none";
  a.style.display = inverted ? "none" : "";
  b.style.display = inverted ? "" : "none";
  this.textContent = inverted ? "Show callees" : "Show callers (inverted)";
}});
</script>
</body></html>
"#,
        title = escape(title),
        callees = escape(&callees),
        callers = escape(&callers),
    )
}
