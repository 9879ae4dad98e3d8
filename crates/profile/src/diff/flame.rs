//! The differential flame graph: one self-contained page holding NEW's flame graph (callees
//! and callers views, search, zoom, as [`crate::flame::write`] draws them) with each frame
//! coloured by the change of its share from BASE to NEW: red grew, blue shrank, white no
//! change, the intensity by points (the largest change, or 1 point if less, is the full
//! colour). Frames are coloured by the change of their self share (the samples that end in
//! them, as Brendan Gregg's differential flame graphs do) or, with the page's button, of their
//! total share (their whole width); tooltips give both values and both changes. In the callers
//! view a frame's width is the self value of the leaf method it ends in: the change of that
//! colours it.

use std::fmt::Write as _;
use std::io::{self, Write};

use rustc_hash::FxHashMap as HashMap;

use super::{ProfileDiff, percent};
use crate::flame::{self, Names, Order, Page, Stacks};

/// A frame of one view: a prefix of stacks (in the view's order), as drawn.
#[derive(Debug, Clone, Default)]
struct Node {
    /// Its last name.
    name: u32,
    /// Its children, in drawing order once sorted.
    children: Vec<u32>,
    /// The visible value that ends here (NEW's stacks cut where frames get too narrow).
    own: i64,
    /// Values of NEW's and BASE's whole stacks through it and ending in it.
    new_total: i64,
    new_self: i64,
    base_total: i64,
    base_self: i64,
}

/// One view's frames: a tree of the visible prefixes of NEW's stacks.
struct View {
    nodes: Vec<Node>,
    index: HashMap<(u32, u32), u32>,
}

impl View {
    /// The tree of `visible` paths (root first in the view's order).
    fn of(visible: &[(Vec<u32>, i64)]) -> View {
        let mut view = View {
            nodes: vec![Node::default()],
            index: HashMap::default(),
        };
        for (path, value) in visible {
            let mut at = 0u32;
            for &name in path {
                at = match view.index.get(&(at, name)) {
                    Some(&child) => child,
                    None => {
                        let child = view.nodes.len() as u32;
                        view.nodes.push(Node {
                            name,
                            ..Node::default()
                        });
                        view.nodes[at as usize].children.push(child);
                        view.index.insert((at, name), child);
                        child
                    }
                };
            }
            view.nodes[at as usize].own += value;
        }
        view
    }

    /// Adds the values of whole stacks (`paths`, in the view's order) to the frames they pass
    /// through, as NEW's (`new`) or BASE's.
    fn add(&mut self, paths: &[(Vec<u32>, i64)], inverted: bool, new: bool) {
        for (path, value) in paths {
            let mut at = 0u32;
            let add = |node: &mut Node, last: bool| {
                let (total, own) = if new {
                    (&mut node.new_total, &mut node.new_self)
                } else {
                    (&mut node.base_total, &mut node.base_self)
                };
                *total += value;
                if last {
                    *own += value;
                }
            };
            add(&mut self.nodes[0], false);
            let len = path.len();
            for i in 0..len {
                let name = if inverted { path[len - 1 - i] } else { path[i] };
                let Some(&child) = self.index.get(&(at, name)) else {
                    break;
                };
                at = child;
                add(&mut self.nodes[at as usize], i + 1 == len);
            }
        }
    }

    /// Sorts every frame's children by name, lays the frames out as inferno will from lines
    /// in that order (a frame's own line, then its children's), and returns the lines and
    /// each frame by (depth, first sample), inferno's depth counting its `all` frame as 0.
    fn layout(&mut self, names: &Names<'_>) -> (Vec<String>, HashMap<(usize, i64), u32>) {
        let node_names: Vec<u32> = self.nodes.iter().map(|n| n.name).collect();
        for node in &mut self.nodes {
            node.children.sort_by(|&a, &b| {
                let (a, b) = (node_names[a as usize], node_names[b as usize]);
                names.texts[a as usize].cmp(&names.texts[b as usize])
            });
        }
        let mut lines = Vec::new();
        let mut at: HashMap<(usize, i64), u32> = HashMap::default();
        let mut time = 0i64;
        let mut path: Vec<u32> = Vec::new();
        // (node, next child), depth = stack length.
        let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
        while let Some(&(node, next)) = stack.last() {
            let n = &self.nodes[node as usize];
            if next == 0 && node != 0 {
                at.insert((stack.len() - 1, time), node);
                if n.own > 0 {
                    lines.push(flame::line(&path, names, n.own));
                    time += n.own;
                }
            }
            if let Some(&child) = n.children.get(next) {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
                path.push(self.nodes[child as usize].name);
                stack.push((child, 0));
            } else {
                stack.pop();
                path.pop();
            }
        }
        (lines, at)
    }
}

/// A fill for a change of `points`, where `scale` points is the full colour.
fn colour(points: f64, scale: f64) -> String {
    let t = (points.abs() / scale).clamp(0.0, 1.0).sqrt();
    let mix = |from: f64, to: f64| (from + (to - from) * t).round() as u8;
    let (r, g, b) = if points >= 0.0 {
        (mix(248.0, 220.0), mix(248.0, 40.0), mix(248.0, 40.0))
    } else {
        (mix(248.0, 40.0), mix(248.0, 90.0), mix(248.0, 220.0))
    };
    format!("rgb({r},{g},{b})")
}

/// The value of attribute `name` in `tag`.
fn attribute<'t>(tag: &'t str, name: &str) -> Option<&'t str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = at + tag[at..].find('"')?;
    Some(&tag[at..end])
}

/// Totals and names the frames' tooltips use.
struct Labels<'a> {
    diff: &'a ProfileDiff<'a>,
    unit: &'a str,
    names: &'a Names<'a>,
}

impl Labels<'_> {
    /// A frame's tooltip: its name, NEW's and BASE's values and shares, both changes (in the
    /// callers view, `inverted`, the one change: every width there is the leaf's self value).
    fn title(&self, node: &Node, root: bool, inverted: bool) -> String {
        let (bt, nt) = (self.diff.base_total, self.diff.new_total);
        let name = if root {
            "all"
        } else {
            &self.names.texts[node.name as usize]
        };
        let (self_points, total_points) = changes(node, self.diff);
        let mut t = String::new();
        let _ = write!(
            t,
            "{name} (new {} {unit}, {:.2}%; base {} {unit}, {:.2}%; ",
            node.new_total,
            percent(node.new_total, nt),
            node.base_total,
            percent(node.base_total, bt),
            unit = self.unit,
        );
        if inverted {
            let _ = write!(t, "{total_points:+.2} points)");
        } else {
            let _ = write!(
                t,
                "total {total_points:+.2} points, self {self_points:+.2} points)"
            );
        }
        t
    }
}

/// The changes of a frame's self and total shares, in points.
fn changes(node: &Node, diff: &ProfileDiff<'_>) -> (f64, f64) {
    let (bt, nt) = (diff.base_total, diff.new_total);
    (
        percent(node.new_self, nt) - percent(node.base_self, bt),
        percent(node.new_total, nt) - percent(node.base_total, bt),
    )
}

/// Rewrites inferno's frames (`<g><title>…</title><rect … fill="…" fg:x="…" …/>`): each
/// found by its depth (from its `y`) and first sample gets the diff's tooltip, its fill by the
/// change of its self share, and `data-self`/`data-total` fills for the page's switch. In the
/// callers view (`inverted`) both are the change of the frame's share: its width is the self
/// value of the leaf method it ends in.
fn recolour(
    svg: &str,
    view: &View,
    at: &HashMap<(usize, i64), u32>,
    labels: &Labels<'_>,
    inverted: bool,
) -> String {
    // Frames are one height apart; the `all` frame (depth 0) is the lowest.
    let frame_height = inferno::flamegraph::Options::default().frame_height as i64;
    let mut all_y = None;
    for piece in svg.split("<title>").skip(1) {
        if piece.starts_with("all (")
            && let Some(rect) = piece.find("<rect").map(|i| &piece[i..])
        {
            all_y = attribute(rect, "y").and_then(|y| y.parse::<i64>().ok());
        }
    }
    let Some(all_y) = all_y else {
        return svg.to_string();
    };
    // The scales: the largest change drawn, at least 1 point.
    let (mut self_scale, mut total_scale) = (1.0f64, 1.0f64);
    for node in view.nodes.iter().skip(1) {
        let (s, t) = changes(node, labels.diff);
        let s = if inverted { t } else { s };
        self_scale = self_scale.max(s.abs());
        total_scale = total_scale.max(t.abs());
    }
    let mut out = String::with_capacity(svg.len() + svg.len() / 2);
    let mut rest = svg;
    while let Some(start) = rest.find("<title>") {
        let (head, tail) = rest.split_at(start + "<title>".len());
        out.push_str(head);
        let title_end = tail.find("</title>").unwrap_or(tail.len());
        let after = &tail[title_end..];
        let rect = after
            .find("<rect")
            .filter(|&r| !after[..r].contains("<title>"))
            .map(|r| (r, r + after[r..].find("/>").unwrap_or(0)));
        let node = rect.and_then(|(r, end)| {
            let tag = &after[r..end];
            let y: i64 = attribute(tag, "y")?.parse().ok()?;
            let x: i64 = attribute(tag, "fg:x")?.parse().ok()?;
            let depth = usize::try_from((all_y - y) / frame_height).ok()?;
            let node = if depth == 0 { 0 } else { *at.get(&(depth, x))? };
            Some((node, depth == 0))
        });
        match (node, rect) {
            (Some((node, root)), Some((r, end))) => {
                let n = &view.nodes[node as usize];
                out.push_str(&flame::escape(&labels.title(n, root, inverted)));
                let tag = &after[..end];
                let (s, t) = changes(n, labels.diff);
                let s = if inverted { t } else { s };
                let (self_fill, total_fill) = (colour(s, self_scale), colour(t, total_scale));
                let fill_at = tag[r..].find(" fill=\"").map(|f| r + f + 7);
                match fill_at {
                    Some(f) => {
                        let fill_end = f + tag[f..].find('"').unwrap_or(0);
                        out.push_str(&tag[..f]);
                        out.push_str(&self_fill);
                        out.push('"');
                        let _ = write!(
                            out,
                            " data-self=\"{self_fill}\" data-total=\"{total_fill}\""
                        );
                        out.push_str(&tag[fill_end + 1..]);
                    }
                    None => out.push_str(tag),
                }
                rest = &after[end..];
            }
            _ => {
                out.push_str(&tail[..title_end]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The legend: the colours, and what the widths are.
const LEGEND: &str = r#"<span class="legend"><span style="background:rgb(220,40,40);color:#fff">grew</span><span style="background:rgb(248,248,248)">no change</span><span style="background:rgb(40,90,220);color:#fff">shrank</span></span> Widths are NEW's; colours the change of each frame's share from BASE (points of each profile's total)."#;

/// The switch between colouring by self and by total share.
const CONTROLS: &str = r#"<button id="colour-by" type="button">Colour by total share</button> "#;

/// Swaps every frame's fill between its `data-self` and `data-total` colours.
const SCRIPT: &str = r##"document.getElementById("colour-by").addEventListener("click", function () {
  var total = this.textContent.indexOf("total") >= 0;
  ["callees", "callers"].forEach(function (id) {
    var d = document.getElementById(id).contentDocument;
    if (!d) return;
    Array.prototype.forEach.call(d.querySelectorAll("#frames rect[data-self]"), function (r) {
      r.setAttribute("fill", r.getAttribute(total ? "data-total" : "data-self"));
    });
  });
  this.textContent = total ? "Colour by self share" : "Colour by total share";
});"##;

/// Writes the differential flame graph page of `diff`.
pub fn write(diff: &ProfileDiff<'_>, title: &str, out: &mut dyn Write) -> io::Result<()> {
    if diff.new_total <= 0 {
        return Err(io::Error::other("NEW has no samples to draw"));
    }
    let mut names = Names::default();
    let new_paths = Stacks::paths(diff.new, &mut names);
    let base_paths = Stacks::paths(diff.base, &mut names);
    let unit = flame::unit(diff.new);
    let labels = Labels {
        diff,
        unit,
        names: &names,
    };
    let (callees, callers) = flame::both_views(title, |inverted, title| {
        let mut view = View::of(&flame::visible_paths(&new_paths, inverted));
        view.add(&new_paths, inverted, true);
        view.add(&base_paths, inverted, false);
        let (lines, at) = view.layout(labels.names);
        let svg = flame::svg(&lines, title, unit, Order::Given)?;
        Ok(recolour(&svg, &view, &at, &labels, inverted))
    })?;
    let page = Page {
        title,
        legend: LEGEND,
        help: flame::HELP,
        controls: CONTROLS,
        script: SCRIPT,
        top: "",
        style: "",
    };
    flame::write_page(&page, &callees, &callers, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, Kind, Profile};

    /// Two profiles with many stacks (some too narrow to draw), names that sort differently
    /// as text and as frames (`m`, `m$1`, `m;`-free), recursion and a thread root.
    fn pair() -> (Profile, Profile) {
        let mut base = Profile::new(Kind::Cpu);
        let mut new = Profile::new(Kind::Cpu);
        let f = |c: &str, m: &str| Frame::method(c, m, None, None);
        for i in 0..400u32 {
            let mut frames = vec![f("T", "run"), f("A", "m")];
            match i % 4 {
                0 => frames.push(f("A", "m$1")),
                1 => frames.extend([f("A", "m"), f("A", "m")]),
                2 => frames.push(f("B", &format!("leaf{}", i % 37))),
                _ => {}
            }
            let value = if i < 5 { 5_000 } else { i64::from(1 + i % 7) };
            base.add(&frames, None, vec![value]);
            // NEW: the recursive stacks twice as heavy.
            let value = if i % 4 == 1 { 2 * value } else { value };
            new.add(&frames, Some("main".into()), vec![value]);
        }
        (base, new)
    }

    /// Each drawn frame's title, and whether it was recoloured.
    fn frames(svg: &str) -> Vec<(String, bool)> {
        svg.split("<title>")
            .skip(1)
            .map(|piece| {
                let title = piece.split("</title>").next().unwrap().to_string();
                let rect = &piece[piece.find("<rect").unwrap()..];
                let rect = &rect[..rect.find("/>").unwrap()];
                (title, rect.contains("data-total="))
            })
            .collect()
    }

    #[test]
    fn every_drawn_frame_gets_its_own_values_from_both_profiles() {
        let (base, new) = pair();
        // NEW split by thread, BASE not: the thread root is only NEW's.
        let diff = ProfileDiff::new(&base, &new);
        let mut names = Names::default();
        let new_paths = Stacks::paths(diff.new, &mut names);
        let base_paths = Stacks::paths(diff.base, &mut names);
        let labels = Labels {
            diff: &diff,
            unit: "samples",
            names: &names,
        };
        for inverted in [false, true] {
            let mut view = View::of(&flame::visible_paths(&new_paths, inverted));
            view.add(&new_paths, inverted, true);
            view.add(&base_paths, inverted, false);
            let (lines, at) = view.layout(&names);
            let svg = flame::svg(&lines, "t", "samples", Order::Given).unwrap();
            let drawn = frames(&recolour(&svg, &view, &at, &labels, inverted));
            assert!(drawn.len() > 20, "{drawn:?}");
            for (title, recoloured) in &drawn {
                assert!(*recoloured && title.contains("; base "), "{title}");
            }
            // Each frame's NEW value is its width, as inferno computed it from the lines.
            let widths = frames(&svg);
            for ((ours, _), (theirs, _)) in drawn.iter().zip(&widths) {
                let width = theirs
                    .rsplit_once(" (")
                    .unwrap()
                    .1
                    .split(' ')
                    .next()
                    .unwrap();
                let new_value = ours
                    .split("(new ")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap();
                assert_eq!(width.replace(',', ""), new_value, "{ours} / {theirs}");
            }
        }
        // Callees: the thread is new (all of BASE's samples are elsewhere), `A.m` under it has
        // no BASE value; in the callers view `A.m` as the leaf grew.
        let mut view = View::of(&flame::visible_paths(&new_paths, true));
        view.add(&new_paths, true, true);
        view.add(&base_paths, true, false);
        let m = names
            .texts
            .iter()
            .position(|t| t.as_ref() == "A.m")
            .unwrap() as u32;
        let leaf = &view.nodes[view.index[&(0, m)] as usize];
        assert!(
            leaf.base_total > 0 && leaf.new_total > leaf.base_total,
            "{leaf:?}"
        );
        let (_, total_points) = changes(leaf, &diff);
        assert!(total_points > 0.0, "{total_points}");
    }

    #[test]
    fn the_page_is_written_whole() {
        let (base, new) = pair();
        let diff = ProfileDiff::new(&base, &new);
        let mut page = Vec::new();
        write(&diff, "diff", &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.contains("id=\"colour-by\"") && page.contains("data-total=&quot;"));
        assert!(page.ends_with("</html>\n"));
    }
}
