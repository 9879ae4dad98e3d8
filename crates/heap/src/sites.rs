//! Owns the join of a heap dump's objects to the allocation sites that made them, from the
//! hprof agent's records (`heap=all`, or `heap=dump` with `heap=sites`): OBJECT SITES names
//! the site of each object the agent tracked (every object with `sites=exact`, a sample of
//! the allocations otherwise), ALLOC SITES how many live objects each site holds.
//!
//! An object in OBJECT SITES is joined exactly. Any other object's site is estimated: the
//! objects of one class in a part of the heap (a suspect's retained set) are shared among
//! the class's sites in proportion to the tracked objects of that class found in the same
//! part (each standing for what its sampling left out), with the class's sites' live bytes
//! from ALLOC SITES as a prior worth one sample. Each estimate comes with its sample count
//! and a standard error (see [`SiteRow::error_bytes`]).

use hprof_format::{Record, Records, java_class_name};
use rustc_hash::FxHashMap;

use crate::analysis::Analysis;
use crate::dominators::NONE;
use crate::graph::{FrameInfo, HeapGraph, Result};

/// `of_node` marks objects that were in the heap before the agent began counting.
const BASELINE: u32 = u32::MAX - 1;

/// An allocation site: a class and the stack trace that allocated it.
#[derive(Debug, Clone)]
pub struct Site {
    /// The class's serial in the file.
    pub class_serial: u32,
    /// The allocation trace's serial.
    pub trace_serial: u32,
    /// The class's index in the graph, or [`NONE`].
    pub class: u32,
    /// The class's name.
    pub class_name: String,
    /// The trace's frames, innermost (the allocating one) first.
    pub frames: Vec<FrameInfo>,
    /// Live bytes and objects as ALLOC SITES lists them, if it does.
    pub listed: Option<(u64, u64)>,
}

/// How the file's objects were joined to their sites.
#[derive(Debug, Clone)]
pub struct SiteJoin {
    /// Every site named by OBJECT SITES or ALLOC SITES.
    pub sites: Vec<Site>,
    /// Per node: its site, [`BASELINE`], or [`NONE`] (not joined).
    of_node: Vec<u32>,
    /// The joined objects are a sample of the allocations (the agent's fast or sampled
    /// mode); else every tracked object is joined (`sites=exact`).
    pub sampled: bool,
    /// The sampling interval in bytes (0: every allocation tracked).
    pub interval: u64,
    /// Each joined object stands for this many tracked ones.
    pub stride: u64,
    /// Objects of the dump joined to a site.
    pub joined: u64,
    /// Objects of the dump that were in the heap before the agent began counting.
    pub baseline: u64,
    /// Whether the file holds an OBJECT SITES record for its last dump.
    pub has_objects: bool,
    /// Whether the file holds an ALLOC SITES record.
    pub has_listing: bool,
    /// Per class index: the prior shares of its sites, and what no site accounts for.
    priors: Vec<Prior>,
}

#[derive(Debug, Clone, Default)]
struct Prior {
    sites: Vec<(u32, f64)>,
    unattributed: f64,
}

/// What one part of the heap (a dominator subtree) holds, by allocation site.
#[derive(Debug, Clone, Default)]
pub struct Breakdown {
    /// Bytes of the part's strongly reachable objects (its retained size).
    pub bytes: u64,
    /// Its objects.
    pub objects: u64,
    /// Objects of the part joined to their site (tracked or sampled by the agent).
    pub samples: u64,
    /// Per site, the most bytes first.
    pub rows: Vec<SiteRow>,
    /// Per class: bytes and objects no site accounts for (allocated where nothing counted),
    /// the most bytes first.
    pub unattributed: Vec<(u32, u64, u64)>,
    /// Bytes and objects that were in the heap before the agent began counting.
    pub before_counting: (u64, u64),
    /// Frames of the sites' traces by the bytes allocated under them (see
    /// [`Breakdown::frames`]).
    pub frames: Vec<FrameRow>,
}

/// The bytes of a part of the heap that one site allocated.
#[derive(Debug, Clone, Copy, Default)]
pub struct SiteRow {
    /// The site's index in [`SiteJoin::sites`].
    pub site: u32,
    /// Bytes and objects of the objects joined to the site.
    pub exact_bytes: u64,
    /// See `exact_bytes`.
    pub exact_objects: u64,
    /// Bytes and objects estimated to come from the site.
    pub estimated_bytes: u64,
    /// See `estimated_bytes`.
    pub estimated_objects: u64,
    /// Two standard errors of `estimated_bytes` (about a 95 % bound).
    pub error_bytes: u64,
    /// Objects joined to the site in the part.
    pub samples: u64,
}

impl SiteRow {
    /// Exact and estimated bytes.
    pub fn bytes(&self) -> u64 {
        self.exact_bytes + self.estimated_bytes
    }

    /// Exact and estimated objects.
    pub fn objects(&self) -> u64 {
        self.exact_objects + self.estimated_objects
    }
}

/// The bytes allocated under one frame (a method and line) of the sites' traces.
#[derive(Debug, Clone)]
pub struct FrameRow {
    /// The frame.
    pub frame: FrameInfo,
    /// Bytes of the sites whose trace holds the frame.
    pub bytes: u64,
    /// Two standard errors of the estimated part of `bytes`.
    pub error_bytes: u64,
    /// The frame's mean depth in those traces, weighted by bytes (0: the allocating frame).
    pub depth: f64,
}

impl SiteJoin {
    /// Reads the agent's records of `graph`'s file: `None` when it holds neither OBJECT
    /// SITES for its last heap dump nor ALLOC SITES.
    pub fn read(graph: &HeapGraph<'_>) -> Result<Option<SiteJoin>> {
        let (_, mut records) = Records::new(graph.file())?;
        // Class serial -> (class id, name id): as written before the last dump, later
        // records (for SITES) filling in what it lacks.
        let mut classes: FxHashMap<u32, (u64, u64)> = FxHashMap::default();
        let mut at_dump: FxHashMap<u32, (u64, u64)> = FxHashMap::default();
        let mut in_dump = false;
        let mut objects: Vec<(u64, u32, u32)> = Vec::new();
        let mut mode = (0u32, 0u32, 1u32);
        let mut listing: Vec<hprof_format::AllocSite> = Vec::new();
        let mut has_listing = false;
        let mut has_objects = false;
        while let Some((_, record)) = records.next()? {
            match record {
                Record::LoadClass {
                    class_serial,
                    class_id,
                    name_id,
                    ..
                } => {
                    classes.insert(class_serial, (class_id, name_id));
                }
                Record::HeapDumpSegment(_) | Record::HeapDump(_) if !in_dump => {
                    // A new dump: what was joined belonged to the one before.
                    in_dump = !matches!(record, Record::HeapDump(_));
                    at_dump = classes.clone();
                    objects.clear();
                    has_objects = false;
                }
                Record::HeapDumpEnd => in_dump = false,
                Record::ObjectSites(sites) => {
                    has_objects = true;
                    mode = (sites.flags, sites.interval, sites.stride.max(1));
                    for g in sites.groups() {
                        objects.extend(
                            g.objects
                                .iter()
                                .map(|id| (id, g.class_serial, g.stack_trace_serial)),
                        );
                    }
                }
                Record::AllocSites(sites) => {
                    has_listing = true;
                    listing = sites.sites().collect();
                }
                _ => {}
            }
        }
        if !has_objects && !has_listing {
            return Ok(None);
        }
        for (serial, class) in classes {
            at_dump.entry(serial).or_insert(class);
        }
        let mut join = SiteJoin {
            sites: Vec::new(),
            of_node: Vec::new(),
            sampled: mode.0 & hprof_format::ObjectSites::SAMPLED != 0,
            interval: u64::from(mode.1),
            stride: u64::from(mode.2),
            joined: 0,
            baseline: 0,
            has_objects,
            has_listing,
            priors: Vec::new(),
        };
        let mut index: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        let mut site_of = |join: &mut SiteJoin, class_serial: u32, trace_serial: u32| -> u32 {
            *index
                .entry((class_serial, trace_serial))
                .or_insert_with(|| {
                    let (class, class_name) = match at_dump.get(&class_serial) {
                        Some(&(id, name)) => (
                            graph.class_by_id(id).unwrap_or(NONE),
                            graph
                                .string(name)
                                .map(|n| java_class_name(&n))
                                .unwrap_or_default(),
                        ),
                        None => (NONE, String::new()),
                    };
                    let class_name = if class_name.is_empty() && class != NONE {
                        graph.classes()[class as usize].name.clone()
                    } else {
                        class_name
                    };
                    join.sites.push(Site {
                        class_serial,
                        trace_serial,
                        class,
                        class_name,
                        frames: graph.trace_frames(trace_serial).unwrap_or_default(),
                        listed: None,
                    });
                    join.sites.len() as u32 - 1
                })
        };
        for s in &listing {
            let site = site_of(&mut join, s.class_serial, s.stack_trace_serial);
            let listed = &mut join.sites[site as usize].listed;
            let (b, o) = listed.unwrap_or((0, 0));
            *listed = Some((b + u64::from(s.live_bytes), o + u64::from(s.live_instances)));
        }
        // Object ids to nodes: a merge over the nodes (in id order) when many, else a
        // binary search each.
        let n = graph.len();
        join.of_node = vec![NONE; n];
        let mut marks: Vec<(u64, u32)> = objects
            .into_iter()
            .map(|(id, class, trace)| {
                let mark = if class == 0 && trace == 0 {
                    BASELINE
                } else {
                    site_of(&mut join, class, trace)
                };
                (id, mark)
            })
            .collect();
        marks.sort_unstable();
        let mark = |v: u32, m: u32, join: &mut SiteJoin| {
            join.of_node[v as usize] = m;
            if m == BASELINE {
                join.baseline += 1;
            } else {
                join.joined += 1;
            }
        };
        if marks.len() > n / 32 {
            let mut at = 0;
            for v in 0..n as u32 {
                if at >= marks.len() {
                    break;
                }
                let id = graph.id(v);
                while at < marks.len() && marks[at].0 < id {
                    at += 1;
                }
                if at < marks.len() && marks[at].0 == id {
                    mark(v, marks[at].1, &mut join);
                }
            }
        } else {
            for &(id, m) in &marks {
                if let Some(v) = graph.node(id) {
                    mark(v, m, &mut join);
                }
            }
        }
        Ok(Some(join))
    }

    /// Computes each class's prior over its sites: the sites' live bytes (ALLOC SITES) less
    /// what is joined to them, over the class's objects not joined.
    pub fn prepare(&mut self, graph: &HeapGraph<'_>, analysis: &Analysis) {
        let classes = graph.classes().len();
        let mut joined = vec![0u64; self.sites.len()];
        let mut unknown = vec![0u64; classes];
        for v in 0..graph.len() as u32 {
            if analysis.retained[v as usize] == 0 {
                continue;
            }
            let bytes = graph.shallow(v);
            match self.of_node[v as usize] {
                NONE => unknown[graph.class_of(v) as usize] += bytes,
                BASELINE => {}
                s => joined[s as usize] += bytes,
            }
        }
        let mut priors = vec![Prior::default(); classes];
        for (s, site) in self.sites.iter().enumerate() {
            if let (Some((live, _)), true) = (site.listed, site.class != NONE) {
                let rest = live.saturating_sub(joined[s]);
                if rest > 0 {
                    priors[site.class as usize]
                        .sites
                        .push((s as u32, rest as f64));
                }
            }
        }
        for (c, prior) in priors.iter_mut().enumerate() {
            let sum: f64 = prior.sites.iter().map(|s| s.1).sum();
            let whole = sum.max(unknown[c] as f64);
            if whole <= 0.0 {
                prior.sites.clear();
                prior.unattributed = 1.0;
                continue;
            }
            for s in &mut prior.sites {
                s.1 /= whole;
            }
            prior.unattributed = 1.0 - sum / whole;
        }
        self.priors = priors;
    }

    /// The bytes one joined object of `bytes` stands for beyond itself.
    fn stands_for(&self, bytes: u64) -> f64 {
        let b = bytes as f64;
        let t = self.stride as f64;
        if self.sampled {
            (b.max(self.interval as f64) * t - b).max(0.0)
        } else {
            (t - 1.0) * b
        }
    }

    /// What the dominator subtrees of `roots` (the super-root for the whole heap) hold, by
    /// allocation site. [`SiteJoin::prepare`] must have run.
    pub fn breakdown(
        &self,
        graph: &HeapGraph<'_>,
        analysis: &Analysis,
        roots: &[u32],
    ) -> Breakdown {
        #[derive(Default)]
        struct ClassPart {
            unknown_bytes: u64,
            unknown_objects: u64,
            evidence: FxHashMap<u32, f64>,
            samples: u64,
            mean: (u64, u64),
        }
        let mut out = Breakdown::default();
        let mut parts: FxHashMap<u32, ClassPart> = FxHashMap::default();
        let mut known: FxHashMap<u32, SiteRow> = FxHashMap::default();
        let mut stack = roots.to_vec();
        while let Some(v) = stack.pop() {
            stack.extend_from_slice(analysis.children(v));
            if v as usize >= graph.len() || analysis.retained[v as usize] == 0 {
                continue;
            }
            let bytes = graph.shallow(v);
            out.bytes += bytes;
            out.objects += 1;
            let c = graph.class_of(v);
            let part = parts.entry(c).or_default();
            part.mean.0 += bytes;
            part.mean.1 += 1;
            match self.of_node[v as usize] {
                NONE => {
                    part.unknown_bytes += bytes;
                    part.unknown_objects += 1;
                }
                BASELINE => {
                    out.before_counting.0 += bytes;
                    out.before_counting.1 += 1;
                }
                s => {
                    out.samples += 1;
                    part.samples += 1;
                    *part.evidence.entry(s).or_default() += self.stands_for(bytes);
                    let row = known.entry(s).or_insert(SiteRow {
                        site: s,
                        ..SiteRow::default()
                    });
                    row.exact_bytes += bytes;
                    row.exact_objects += 1;
                    row.samples += 1;
                }
            }
        }
        // Per frame: bytes, per class the share of its estimate, and depth × bytes.
        let mut classes_of_rows: Vec<(u32, u32, f64)> = Vec::new();
        let mut variance_parts: Vec<(u32, f64, f64)> = Vec::new();
        for (&c, part) in &parts {
            if part.unknown_bytes == 0 {
                continue;
            }
            let empty = Prior {
                sites: Vec::new(),
                unattributed: 1.0,
            };
            let prior = self.priors.get(c as usize).unwrap_or(&empty);
            let evidence: f64 = part.evidence.values().sum();
            let mean = part.mean.0 as f64 / part.mean.1.max(1) as f64;
            let kappa = if self.sampled {
                mean.max(self.interval as f64) * self.stride as f64
            } else {
                mean.max(1.0) * self.stride as f64
            };
            let mut shares: FxHashMap<u32, f64> = FxHashMap::default();
            for (&s, &e) in &part.evidence {
                *shares.entry(s).or_default() += e;
            }
            for &(s, q) in &prior.sites {
                *shares.entry(s).or_default() += kappa * q;
            }
            let whole = evidence + kappa;
            let unattributed = kappa * prior.unattributed / whole;
            // Joined objects are evidence of the others' sites when they are a sample of
            // them; with every allocation tracked, the objects not joined were not
            // tracked at all and only the prior speaks for them.
            let k = if self.sampled || self.stride > 1 {
                part.samples as f64
            } else {
                0.0
            };
            let u = part.unknown_bytes as f64;
            variance_parts.push((c, u, k));
            for (s, w) in shares {
                let p = w / whole;
                let row = known.entry(s).or_insert(SiteRow {
                    site: s,
                    ..SiteRow::default()
                });
                row.estimated_bytes += (u * p).round() as u64;
                row.estimated_objects += (part.unknown_objects as f64 * p).round() as u64;
                let sigma = u * (p * (1.0 - p) / (k + 1.0)).sqrt();
                row.error_bytes =
                    ((row.error_bytes as f64 / 2.0).hypot(sigma) * 2.0).round() as u64;
                classes_of_rows.push((s, c, p));
            }
            if unattributed > 0.0 {
                let b = (u * unattributed).round() as u64;
                let o = (part.unknown_objects as f64 * unattributed).round() as u64;
                if b > 0 {
                    out.unattributed.push((c, b, o));
                }
            }
        }
        out.unattributed
            .sort_unstable_by_key(|&(c, b, _)| (std::cmp::Reverse(b), c));
        let mut rows: Vec<SiteRow> = known.into_values().filter(|r| r.bytes() > 0).collect();
        rows.sort_unstable_by_key(|r| (std::cmp::Reverse(r.bytes()), r.site));
        out.frames = self.frames(&rows, &classes_of_rows, &variance_parts);
        out.rows = rows;
        out
    }

    /// The frames of the rows' traces by bytes allocated under them, the most first; a
    /// frame is left out when one nearer the allocations, in a subset of its traces, covers
    /// at least 99 % of its bytes (the callers of the method that did it all, down to
    /// `main`).
    fn frames(
        &self,
        rows: &[SiteRow],
        shares: &[(u32, u32, f64)],
        variance_parts: &[(u32, f64, f64)],
    ) -> Vec<FrameRow> {
        struct Acc {
            frame: FrameInfo,
            bytes: u64,
            depth: f64,
            /// Per class: the summed estimate shares of the frame's sites.
            share: FxHashMap<u32, f64>,
            /// The sites whose trace holds the frame, in row order.
            sites: Vec<u32>,
        }
        let mut by_frame: FxHashMap<(String, String), Acc> = FxHashMap::default();
        let mut sites_of: FxHashMap<u32, Vec<(u32, f64)>> = FxHashMap::default();
        for &(s, c, p) in shares {
            sites_of.entry(s).or_default().push((c, p));
        }
        for row in rows {
            let site = &self.sites[row.site as usize];
            let mut seen: Vec<(&str, &str)> = Vec::new();
            for (depth, f) in site.frames.iter().enumerate() {
                if seen.contains(&(f.method.as_str(), f.location.as_str())) {
                    continue;
                }
                seen.push((f.method.as_str(), f.location.as_str()));
                let acc = by_frame
                    .entry((f.method.clone(), f.location.clone()))
                    .or_insert_with(|| Acc {
                        frame: f.clone(),
                        bytes: 0,
                        depth: 0.0,
                        share: FxHashMap::default(),
                        sites: Vec::new(),
                    });
                acc.sites.push(row.site);
                acc.bytes += row.bytes();
                acc.depth += depth as f64 * row.bytes() as f64;
                for &(c, p) in sites_of.get(&row.site).into_iter().flatten() {
                    *acc.share.entry(c).or_default() += p;
                }
            }
        }
        let parts: FxHashMap<u32, (f64, f64)> = variance_parts
            .iter()
            .map(|&(c, u, k)| (c, (u, k)))
            .collect();
        let mut accs: Vec<Acc> = by_frame.into_values().collect();
        // Frames in the most bytes' traces: the others' callers cannot cover more.
        accs.sort_by_key(|a| std::cmp::Reverse(a.bytes));
        accs.truncate(1000);
        for a in &mut accs {
            a.sites.sort_unstable();
        }
        // A frame is left out when one nearer the allocations, in a subset of its traces,
        // covers at least 99 % of its bytes: it only called that one.
        let covered = |f: &Acc| {
            accs.iter().any(|k| {
                k.depth * (f.bytes as f64) < f.depth * (k.bytes as f64)
                    && k.bytes * 100 >= f.bytes * 99
                    && k.sites.iter().all(|s| f.sites.binary_search(s).is_ok())
            })
        };
        let keep: Vec<bool> = accs.iter().map(|a| !covered(a)).collect();
        let mut frames: Vec<FrameRow> = accs
            .into_iter()
            .zip(keep)
            .filter(|(_, keep)| *keep)
            .map(|(a, _)| {
                let variance: f64 = a
                    .share
                    .iter()
                    .map(|(c, &p)| {
                        let (u, k) = parts.get(c).copied().unwrap_or((0.0, 0.0));
                        let p = p.min(1.0);
                        u * u * p * (1.0 - p) / (k + 1.0)
                    })
                    .sum();
                FrameRow {
                    depth: if a.bytes == 0 {
                        0.0
                    } else {
                        a.depth / a.bytes as f64
                    },
                    frame: a.frame,
                    bytes: a.bytes,
                    error_bytes: (2.0 * variance.sqrt()).round() as u64,
                }
            })
            .collect();
        frames.sort_by(|a, b| {
            b.bytes
                .cmp(&a.bytes)
                .then(a.depth.total_cmp(&b.depth))
                .then_with(|| a.frame.method.cmp(&b.frame.method))
        });
        frames
    }
}
