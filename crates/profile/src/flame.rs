//! The HTML flame graph: one self-contained page (no network) holding two flame graphs laid
//! out by `inferno` (the Rust port of Brendan Gregg's flamegraph.pl, with its click-to-zoom,
//! reset, search with the matched share, and tooltips with values and percents): the callees
//! view (roots at the bottom) and the inverted callers view (the hot methods at the root),
//! switched by a button. Frames are coloured by kind (`KINDS`): application methods in warm
//! reds, JDK methods in yellows, the JVM's own code in teals, other native code in greens, the
//! kernel in violets, the agent's pseudo-frames and allocated classes in blue-greys.

use rustc_hash::FxHashMap as HashMap;
use std::io::{self, Write};

use inferno::flamegraph::{self, Options};

use crate::folded;
use crate::model::{FrameKind, Profile};

/// Each kind of frame: its legend, and its colour as a base (red, green, blue) and how much
/// of a frame's variation (0 to 59, from its name) each channel gets (a divisor, 0 for none).
const KINDS: [(FrameKind, &str, [u8; 3], [u8; 3]); 6] = [
    (
        FrameKind::Application,
        "application",
        [200, 80, 50],
        [2, 1, 0],
    ),
    (FrameKind::Jdk, "JDK", [210, 180, 60], [3, 2, 0]),
    (FrameKind::Jvm, "JVM", [60, 170, 170], [0, 2, 2]),
    (FrameKind::Native, "native", [90, 185, 80], [2, 3, 0]),
    (FrameKind::Kernel, "kernel", [165, 120, 225], [2, 2, 0]),
    (
        FrameKind::Pseudo,
        "allocated class / agent",
        [130, 160, 200],
        [2, 2, 0],
    ),
];

/// A colour for a frame of `kind`, varied by `v` (0 to 59) so neighbours differ.
fn rgb(kind: FrameKind, v: u8) -> String {
    let (_, _, base, spread) = KINDS
        .iter()
        .find(|(k, ..)| *k == kind)
        .copied()
        .unwrap_or(KINDS[KINDS.len() - 1]);
    let channel = |i: usize| match spread[i] {
        0 => base[i],
        d => base[i].saturating_add(v / d),
    };
    format!("rgb({},{},{})", channel(0), channel(1), channel(2))
}

/// The index of `kind` in [`KINDS`] (the timeline's script colours a frame by it).
pub(crate) fn kind_index(kind: FrameKind) -> u8 {
    KINDS
        .iter()
        .position(|(k, ..)| *k == kind)
        .unwrap_or(KINDS.len() - 1) as u8
}

/// [`KINDS`]' colours as JSON, in their order: `[red, green, blue, red divisor, green
/// divisor, blue divisor]` each, for the timeline's script to colour frames as [`rgb`] does.
pub(crate) fn kind_colours_json() -> String {
    let entries: Vec<String> = KINDS
        .iter()
        .map(|(_, _, b, d)| format!("[{},{},{},{},{},{}]", b[0], b[1], b[2], d[0], d[1], d[2]))
        .collect();
    format!("[{}]", entries.join(","))
}

/// A colour for a frame of `kind`, varied by its name so neighbours differ.
fn colour(kind: FrameKind, name: &str) -> String {
    let h = name
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    rgb(kind, (h % 60) as u8)
}

/// The legend's entries: the kinds of frame `kinds` holds (the application's, the JDK's and
/// the agent's always), each a label in its colour.
fn legend(kinds: &HashMap<String, FrameKind>) -> String {
    let present: rustc_hash::FxHashSet<FrameKind> = kinds.values().copied().collect();
    KINDS
        .iter()
        .filter(|(kind, ..)| {
            matches!(
                kind,
                FrameKind::Application | FrameKind::Jdk | FrameKind::Pseudo
            ) || present.contains(kind)
        })
        .map(|&(kind, label, ..)| {
            format!(
                "<span class=\"kind-{}\" style=\"background:{}\">{label}</span>",
                kind.group().to_lowercase(),
                rgb(kind, 30)
            )
        })
        .collect()
}

pub(crate) fn escape(s: &str) -> String {
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

/// Frame names numbered once, shared by the stacks of several profiles (a diff numbers both
/// profiles' names alike).
#[derive(Default)]
pub(crate) struct Names<'a> {
    pub(crate) texts: Vec<std::borrow::Cow<'a, str>>,
    by_text: HashMap<String, u32>,
}

impl<'a> Names<'a> {
    /// The number of `text`, added if new.
    pub(crate) fn intern(&mut self, text: std::borrow::Cow<'a, str>) -> u32 {
        let next = self.texts.len() as u32;
        let id = *self.by_text.entry(text.to_string()).or_insert(next);
        if id == next {
            self.texts.push(text);
        }
        id
    }
}

/// The stacks of a profile as numbered names, ready for both views: each distinct stack
/// (with its thread as the root, when it has one) root first, with its value.
pub(crate) struct Stacks<'a> {
    pub(crate) names: Names<'a>,
    pub(crate) paths: Vec<(Vec<u32>, i64)>,
}

impl<'a> Stacks<'a> {
    fn of(profile: &'a Profile) -> Stacks<'a> {
        let mut names = Names::default();
        let paths = Stacks::paths(profile, &mut names);
        Stacks { names, paths }
    }

    /// The distinct stacks of `profile` as paths of numbers from `names`.
    pub(crate) fn paths(profile: &'a Profile, names: &mut Names<'a>) -> Vec<(Vec<u32>, i64)> {
        // Frames of one method share its name's `Arc`: the text is looked at once per address.
        let mut by_address: HashMap<usize, u32> = HashMap::default();
        let frame_names: Vec<u32> = profile
            .frames
            .iter()
            .map(|f| {
                *by_address
                    .entry(f.name.as_ptr() as usize)
                    .or_insert_with(|| {
                        names.intern(if f.name.contains([';', '\n']) {
                            folded::clean(&f.name).into()
                        } else {
                            f.name().into()
                        })
                    })
            })
            .collect();
        folded::aggregate(profile)
            .into_iter()
            .map(|(i, value)| {
                let sample = &profile.samples[i];
                let mut path = Vec::with_capacity(sample.stack.len() + 1);
                if let Some(thread) = &sample.thread {
                    path.push(names.intern(folded::clean(thread).into()));
                }
                path.extend(sample.stack.iter().map(|&f| frame_names[f]));
                (path, value)
            })
            .collect()
    }
}

/// The image's width, in pixels.
const IMAGE_WIDTH: usize = 1200;
/// The narrowest frame inferno draws, in percent of the total (its default).
const MIN_WIDTH_PERCENT: f64 = 0.01;

/// The paths (numbered names) of the frames a flame graph of `paths` can show, root first
/// (leaf first for the callers view, `inverted`), with their values. A frame narrower than inferno's minimum width is not
/// drawn, nor is any frame above it, but their samples still widen the frames below: so each
/// stack is cut at its first frame whose whole subtree weighs less than a quarter of that
/// minimum (the root frame stays), its value kept by the frame below the cut, and the stacks
/// cut to the same prefix are added up. Every frame drawn keeps its exact width; inferno gets
/// a few thousand lines instead of one per stack.
pub(crate) fn visible_paths(paths: &[(Vec<u32>, i64)], inverted: bool) -> Vec<(Vec<u32>, i64)> {
    let total: i64 = paths.iter().map(|&(_, v)| v).sum();
    let threshold = total as f64 * MIN_WIDTH_PERCENT / 100.0 / 4.0;
    let ordered = |path: &[u32]| -> Vec<u32> {
        if inverted {
            path.iter().rev().copied().collect()
        } else {
            path.to_vec()
        }
    };
    // The prefix tree: node = (parent, name), with its subtree's weight; each stack as the
    // nodes it passes through. Built from the stacks in sorted order, where the stacks that
    // share a prefix come together: each shares the nodes of its prefix in common with the
    // one before it (no look-up per frame).
    let ordered: Vec<Vec<u32>> = paths.iter().map(|(path, _)| ordered(path)).collect();
    let mut sorted: Vec<u32> = (0..paths.len() as u32).collect();
    sorted.sort_unstable_by(|&a, &b| ordered[a as usize].cmp(&ordered[b as usize]));
    let mut weight: Vec<i64> = vec![0];
    let mut parent: Vec<(u32, u32)> = vec![(0, 0)];
    let mut walks: Vec<(Vec<u32>, i64)> = vec![(Vec::new(), 0); paths.len()];
    let mut stack: Vec<u32> = Vec::new();
    let mut previous: &[u32] = &[];
    for &i in &sorted {
        let path = &ordered[i as usize];
        let common = path
            .iter()
            .zip(previous)
            .take_while(|(a, b)| a == b)
            .count();
        stack.truncate(common);
        for &name in &path[common..] {
            parent.push((stack.last().copied().unwrap_or(0), name));
            weight.push(0);
            stack.push(weight.len() as u32 - 1);
        }
        let value = paths[i as usize].1;
        for &node in &stack {
            weight[node as usize] += value;
        }
        walks[i as usize] = (stack.clone(), value);
        previous = path;
    }
    // Each stack cut at its first invisible frame (the root frame always stays: its samples
    // count in the graph's total); values added up by the node cut at.
    let mut ends: HashMap<u32, i64> = HashMap::default();
    let mut order: Vec<u32> = Vec::new();
    for (walk, value) in &walks {
        let Some(&root) = walk.first() else { continue };
        let at = walk
            .iter()
            .skip(1)
            .take_while(|&&node| weight[node as usize] as f64 >= threshold)
            .last()
            .copied()
            .unwrap_or(root);
        let sum = ends.entry(at).or_insert_with(|| {
            order.push(at);
            0
        });
        *sum += value;
    }
    let mut visible = Vec::with_capacity(order.len());
    for at in order {
        let mut path = Vec::new();
        let mut node = at;
        while node != 0 {
            let (up, name) = parent[node as usize];
            path.push(name);
            node = up;
        }
        path.reverse();
        visible.push((path, ends[&at]));
    }
    visible
}

/// The folded line of `path` (numbered `names`) with `value`.
pub(crate) fn line(path: &[u32], names: &Names<'_>, value: i64) -> String {
    let mut line = String::new();
    for &name in path {
        if !line.is_empty() {
            line.push(';');
        }
        line.push_str(&names.texts[name as usize]);
    }
    line.push(' ');
    line.push_str(&value.to_string());
    line
}

/// The folded lines of the frames a flame graph of `stacks` can show (see [`visible_paths`]).
fn visible_lines(stacks: &Stacks<'_>, inverted: bool) -> Vec<String> {
    visible_paths(&stacks.paths, inverted)
        .iter()
        .map(|(path, value)| line(path, &stacks.names, *value))
        .collect()
}

/// How inferno orders the lines it lays out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// Sorted as text (inferno's default, flamegraph.pl's).
    Sorted,
    /// As given: each frame's children in the order their lines come.
    Given,
}

/// The SVG flame graph of folded `lines`, laid out by inferno.
pub(crate) fn svg(lines: &[String], title: &str, unit: &str, order: Order) -> io::Result<String> {
    let mut options = Options::default();
    options.title = title.to_string();
    options.count_name = unit.to_string();
    options.min_width = MIN_WIDTH_PERCENT;
    options.hash = true;
    options.image_width = Some(IMAGE_WIDTH);
    let mut svg = Vec::new();
    match order {
        Order::Sorted => {
            flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
        }
        Order::Given => {
            // A flame chart keeps its lines' order (inferno reverses them first, and checks
            // no sort order): the same layout as a flame graph of lines in that order.
            options.flame_chart = true;
            flamegraph::from_lines(
                &mut options,
                lines.iter().rev().map(String::as_str),
                &mut svg,
            )
        }
    }
    .map_err(io::Error::other)?;
    Ok(String::from_utf8_lossy(&svg).into_owned())
}

/// The name of the first sample type's unit as a flame graph's tooltips give it.
pub(crate) fn unit(profile: &Profile) -> &str {
    profile.sample_types.first().map_or("samples", |t| {
        if t.unit == "count" {
            t.name.as_str()
        } else {
            t.unit.as_str()
        }
    })
}

/// Makes both views with `view` (given whether it is the inverted one, the callers view, and
/// its title): the callees view on this thread, the callers view on another.
pub(crate) fn both_views<F>(title: &str, view: F) -> io::Result<(String, String)>
where
    F: Fn(bool, &str) -> io::Result<String> + Sync,
{
    let callers_title = format!("{title} (callers)");
    let (callees, callers) = std::thread::scope(|scope| {
        let callers = scope.spawn(|| view(true, &callers_title));
        let callees = view(false, title);
        let callers = callers
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the callers view failed")));
        (callees, callers)
    });
    Ok((callees?, callers?))
}

/// What a flame graph page holds besides its two views.
pub(crate) struct Page<'a> {
    /// The page's title.
    pub(crate) title: &'a str,
    /// The legend (HTML), after the view button.
    pub(crate) legend: &'a str,
    /// How to use the page (HTML), after the legend.
    pub(crate) help: &'a str,
    /// Controls (HTML) after the view button, before the legend.
    pub(crate) controls: &'a str,
    /// Script run after the page's own (JavaScript, no `<script>` tags).
    pub(crate) script: &'a str,
    /// HTML above the view button (the timeline), and its style sheet.
    pub(crate) top: &'a str,
    pub(crate) style: &'a str,
}

/// An SVG view as its frame's document. inferno's script keeps the zoom and search in the
/// page's URL (history.replaceState), which a srcdoc frame may not do: each frame gets a
/// no-op instead.
pub(crate) fn frame_document(svg: &str) -> String {
    format!("<script>history.replaceState = function () {{}};</script>{svg}")
}

/// How to use a flame graph page.
pub(crate) const HELP: &str = r#"Click a frame to zoom, Ctrl-F or "Search" to highlight matches (their share is shown), hover for values."#;

/// Writes a self-contained page with the callees and callers views (SVGs from [`svg`]).
pub(crate) fn write_page(
    page: &Page<'_>,
    callees: &str,
    callers: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    // An empty view stays an empty frame (the timeline's page fills it when asked).
    let frame = |svg: &str| {
        if svg.is_empty() {
            String::new()
        } else {
            escape(&frame_document(svg))
        }
    };
    write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 8px; }}
iframe {{ width: 100%; height: 90vh; border: 0; }}
.legend span {{ display: inline-block; padding: 2px 8px; margin-right: 6px; border-radius: 3px; }}
{style}</style></head>
<body>
{top}<div id="bar"><button id="toggle" type="button">Show callers (inverted)</button>
{controls}{legend}
{help}</div>
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
{script}
</script>
</body></html>
"#,
        title = escape(page.title),
        controls = page.controls,
        legend = page.legend,
        help = page.help,
        script = page.script,
        style = page.style,
        top = page.top,
        callees = frame(callees),
        callers = frame(callers),
    )
}

/// Writes `profile` as a self-contained HTML page with the callees and callers flame graphs.
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> io::Result<()> {
    if profile.total() <= 0 {
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
    let unit = unit(profile);
    let stacks = Stacks::of(profile);
    let (callees, callers) = both_views(title, |inverted, title| {
        let lines = visible_lines(&stacks, inverted);
        svg(&lines, title, unit, Order::Sorted).map(|s| recolour(&s, &kinds))
    })?;
    // With sample times: the timeline above the flame graphs. The SVG views of a page with a
    // timeline wait in script blocks until asked for (a large profile's SVG takes the browser
    // seconds to lay out): the range view, drawn on a canvas, shows the whole profile first.
    let (top, style, callees, callers) = match &profile.timeline {
        Some(t) => (
            crate::flame_timeline::section(profile, t, unit)
                + &crate::flame_timeline::deferred_views(
                    &frame_document(&callees),
                    &frame_document(&callers),
                ),
            crate::flame_timeline::STYLE,
            String::new(),
            String::new(),
        ),
        None => (String::new(), "", callees, callers),
    };
    let legend = format!("<span class=\"legend\">{}</span>", legend(&kinds));
    let page = Page {
        title,
        legend: &legend,
        help: HELP,
        controls: "",
        script: "",
        top: &top,
        style,
    };
    write_page(&page, &callees, &callers, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, Kind, Profile};

    /// A profile with a long tail of stacks too narrow to draw, under a few wide ones.
    fn skewed() -> Profile {
        let mut profile = Profile::new(Kind::Cpu);
        for i in 0..3000u32 {
            let frames: Vec<Frame> = (0..(4 + i % 9))
                .map(|d| {
                    // Shared near the root, distinct from the third frame up.
                    let method = if d < 2 {
                        format!("m{d}")
                    } else {
                        format!("m{d}_{i}")
                    };
                    Frame::method(&format!("C{}", (i + d * 7) % 5), &method, None, None)
                })
                .collect();
            let value = if i < 20 {
                100_000
            } else {
                i64::from(1 + i % 17)
            };
            profile.add(&frames, None, vec![value]);
        }
        profile
    }

    /// The titles (name and samples) of the frames inferno draws from `lines`.
    fn drawn(lines: &[String]) -> Vec<String> {
        let svg = svg(lines, "t", "samples", Order::Sorted).unwrap();
        let mut titles: Vec<String> = svg
            .split("<title>")
            .skip(1)
            .map(|t| t.split("</title>").next().unwrap().to_string())
            .collect();
        titles.sort();
        titles
    }

    #[test]
    fn native_jvm_and_kernel_frames_have_colours_and_legends_of_their_own() {
        let mut profile = Profile::new(Kind::Cpu);
        let main = Frame::method("App", "main", None, None);
        profile.add(
            &[
                main.clone(),
                Frame::code("libc.so.6", "write"),
                Frame::code("[kernel]", "do_syscall_64"),
            ],
            None,
            vec![5],
        );
        profile.add(
            &[main, Frame::code("libjvm.so", "os::javaTimeNanos")],
            None,
            vec![3],
        );
        let mut html = Vec::new();
        write(&profile, "t", &mut html).unwrap();
        let html = String::from_utf8(html).unwrap();
        for (kind, label) in [
            (FrameKind::Native, ">native<"),
            (FrameKind::Jvm, ">JVM<"),
            (FrameKind::Kernel, ">kernel<"),
            (FrameKind::Application, ">application<"),
        ] {
            assert!(html.contains(label), "{label}");
            assert!(html.contains(&rgb(kind, 30)), "{kind:?}");
        }
        // Each frame drawn in its kind's colour (the srcdoc is escaped once).
        for (name, kind) in [
            ("[kernel].do_syscall_64", FrameKind::Kernel),
            ("libc.so.6.write", FrameKind::Native),
            ("libjvm.so.os::javaTimeNanos", FrameKind::Jvm),
        ] {
            let at = html.find(&format!("&lt;title&gt;{name} (")).expect(name);
            let fill = &html[at..][html[at..].find("fill=").unwrap()..];
            assert!(
                fill.contains(&colour(kind, name)),
                "{name}: {}",
                &fill[..40]
            );
        }
        // A profile of Java code alone has no legend for them.
        let mut java = Profile::new(Kind::Cpu);
        java.add(&[Frame::method("App", "main", None, None)], None, vec![1]);
        let mut html = Vec::new();
        write(&java, "t", &mut html).unwrap();
        let html = String::from_utf8(html).unwrap();
        assert!(!html.contains(">kernel<") && !html.contains(">native<"));
    }

    #[test]
    fn pruned_stacks_draw_exactly_the_frames_of_all_stacks() {
        let profile = skewed();
        let stacks = Stacks::of(&profile);
        for inverted in [false, true] {
            let all: Vec<String> = stacks
                .paths
                .iter()
                .map(|(path, value)| {
                    let mut names: Vec<&str> = path
                        .iter()
                        .map(|&n| stacks.names.texts[n as usize].as_ref())
                        .collect();
                    if inverted {
                        names.reverse();
                    }
                    format!("{} {value}", names.join(";"))
                })
                .collect();
            let pruned = visible_lines(&stacks, inverted);
            // (Inverted, every distinct leaf is a root, and roots always stay.)
            assert!(
                inverted || pruned.len() * 10 < all.len(),
                "{} of {}",
                pruned.len(),
                all.len()
            );
            assert_eq!(drawn(&pruned), drawn(&all), "inverted: {inverted}");
        }
    }
}
