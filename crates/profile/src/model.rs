//! The profile model: frames, stacks, sample types and values.

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// One frame of a stack. Names are shared (`Arc<str>`): a profile has few distinct methods and
/// many frames.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    /// `Class.method` (dotted class name), or the pseudo-frame's text (`<empty trace>`, an
    /// allocated class).
    pub name: Arc<str>,
    /// Source file, when known.
    pub file: Option<Arc<str>>,
    /// Source line, when known.
    pub line: Option<u32>,
    /// What the frame is, for colours.
    pub kind: FrameKind,
}

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A method of the application (any class outside the JDK's packages).
    Application,
    /// A method of the JDK (`java.`, `javax.`, `jdk.`, `sun.`, `com.sun.`, `org.xml.`).
    Jdk,
    /// Not a method: the agent's pseudo-frames (`<empty trace>`), or the class an allocation
    /// site allocated (the leaf of an allocation profile).
    Pseudo,
    /// A function of the JVM itself (`libjvm.so`) or of code it generated that is no Java
    /// method (`[stub]`: an intrinsic or runtime stub).
    Jvm,
    /// A function of other native code in user space: a JNI library, libc, the vDSO.
    Native,
    /// A function of the kernel (`[kernel]`).
    Kernel,
}

impl FrameKind {
    /// The kind of a function of native or kernel code in the library `library` (its file
    /// name, `libc.so.6`, or `[kernel]`).
    pub fn of_library(library: &str) -> FrameKind {
        match library {
            "[kernel]" => FrameKind::Kernel,
            "libjvm.so" | "[stub]" => FrameKind::Jvm,
            _ => FrameKind::Native,
        }
    }

    /// The group `hprof top` and the flame graph's legend show it in: `Java`, `JVM`,
    /// `native`, `kernel`, or `other` (the agent's pseudo-frames, allocated classes).
    pub fn group(self) -> &'static str {
        match self {
            FrameKind::Application | FrameKind::Jdk => "Java",
            FrameKind::Jvm => "JVM",
            FrameKind::Native => "native",
            FrameKind::Kernel => "kernel",
            FrameKind::Pseudo => "other",
        }
    }

    /// The kind of a method of the class `class` (dotted).
    pub fn of_class(class: &str) -> FrameKind {
        const JDK: [&str; 6] = ["java.", "javax.", "jdk.", "sun.", "com.sun.", "org.xml."];
        if JDK.iter().any(|p| class.starts_with(p)) {
            FrameKind::Jdk
        } else {
            FrameKind::Application
        }
    }
}

impl Frame {
    /// A method frame.
    pub fn method(class: &str, method: &str, file: Option<&str>, line: Option<u32>) -> Frame {
        Frame {
            name: format!("{class}.{method}").into(),
            file: file.map(Arc::from),
            line,
            kind: FrameKind::of_class(class),
        }
    }

    /// A function of native or kernel code: `function` of `library` (its file name,
    /// `libc.so.6`, or `[kernel]`), named `library.function` as the agent's text output
    /// prints it, with the library as its file.
    pub fn code(library: &str, function: &str) -> Frame {
        Frame {
            name: format!("{library}.{function}").into(),
            file: Some(library.into()),
            line: None,
            kind: FrameKind::of_library(library),
        }
    }

    /// A pseudo-frame.
    pub fn pseudo(text: &str) -> Frame {
        Frame {
            name: text.into(),
            file: None,
            line: None,
            kind: FrameKind::Pseudo,
        }
    }

    /// `Class.method`, or the pseudo-frame's text.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Which kind of section a profile is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// CPU SAMPLES: samples.
    Cpu,
    /// Wall-clock samples of JFR recordings (`jdk.NativeMethodSample`, async-profiler's
    /// `profiler.WallClockSample`), the thread's state as the root frame.
    Wall,
    /// CPU TIME: self milliseconds and calls.
    Times,
    /// SITES: allocated bytes and objects, the allocated class as the leaf.
    Alloc,
    /// SITES: live bytes and objects, the allocated class as the leaf.
    Live,
    /// MONITOR TIME: milliseconds waited to enter monitors, and contended entries.
    Lock,
}

impl Kind {
    /// Every kind, in the order a file's default is chosen.
    pub const ALL: [Kind; 6] = [
        Kind::Cpu,
        Kind::Times,
        Kind::Alloc,
        Kind::Live,
        Kind::Lock,
        Kind::Wall,
    ];

    /// The section title.
    pub fn section(self) -> &'static str {
        match self {
            Kind::Cpu => "CPU SAMPLES",
            Kind::Wall => "WALL SAMPLES",
            Kind::Times => "CPU TIME",
            Kind::Alloc | Kind::Live => "SITES",
            Kind::Lock => "MONITOR TIME",
        }
    }

    /// The sample types of a profile of this kind; the first is the one folded stacks and
    /// flame graphs show.
    pub fn sample_types(self) -> Vec<SampleType> {
        let t = |name: &str, unit: &str| SampleType {
            name: name.into(),
            unit: unit.into(),
        };
        match self {
            Kind::Cpu | Kind::Wall => vec![t("samples", "count")],
            Kind::Times => vec![t("cpu", "milliseconds"), t("calls", "count")],
            Kind::Alloc => vec![t("alloc_space", "bytes"), t("alloc_objects", "count")],
            Kind::Live => vec![t("inuse_space", "bytes"), t("inuse_objects", "count")],
            Kind::Lock => vec![t("delay", "milliseconds"), t("contentions", "count")],
        }
    }
}

/// Which dumps of a file a profile is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// The last (the default).
    Last,
    /// The n-th, from 1.
    Nth(usize),
    /// Every dump, added up.
    All,
}

/// A sample type and its unit, as pprof names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleType {
    /// `samples`, `cpu`, `alloc_space`, ...
    pub name: String,
    /// `count`, `milliseconds`, `bytes`.
    pub unit: String,
}

/// A stack and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// Frame indices into [`Profile::frames`], root first.
    pub stack: Vec<usize>,
    /// Name of the thread, for traces taken with `thread=y`.
    pub thread: Option<String>,
    /// One value per sample type.
    pub values: Vec<i64>,
}

/// A profile: stacks with values.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// What it is made from.
    pub kind: Option<Kind>,
    /// Sample types, the first one shown by default.
    pub sample_types: Vec<SampleType>,
    /// Every distinct frame.
    pub frames: Vec<Frame>,
    /// The samples.
    pub samples: Vec<Sample>,
    /// Index of the frames added by [`Profile::intern`] (frames given whole by
    /// [`Profile::with_frames`] are distinct already and not indexed).
    frame_index: FxHashMap<Frame, usize>,
    /// The samples over time, when the file has sample times and the profile was asked for
    /// them.
    pub timeline: Option<crate::timed::Timeline>,
    /// Every frame name, once: frames of one method share its `Arc` (code that groups by
    /// method compares the names' addresses). Filled on the first [`Profile::intern`].
    names: rustc_hash::FxHashSet<Arc<str>>,
}

impl Profile {
    /// An empty profile of `kind`.
    pub fn new(kind: Kind) -> Profile {
        Profile {
            kind: Some(kind),
            sample_types: kind.sample_types(),
            ..Profile::default()
        }
    }

    /// An empty profile of `kind` whose frames are `frames` (all distinct).
    pub fn with_frames(kind: Kind, frames: Vec<Frame>) -> Profile {
        Profile {
            frames,
            ..Profile::new(kind)
        }
    }

    /// The index of `frame`, added if new (its name shared with the frames of the same name).
    pub fn intern(&mut self, frame: &Frame) -> usize {
        if let Some(&i) = self.frame_index.get(frame) {
            return i;
        }
        if self.names.is_empty() {
            self.names = self.frames.iter().map(|f| f.name.clone()).collect();
        }
        let name = match self.names.get(&frame.name) {
            Some(name) => name.clone(),
            None => {
                self.names.insert(frame.name.clone());
                frame.name.clone()
            }
        };
        let i = self.frames.len();
        let frame = Frame {
            name,
            ..frame.clone()
        };
        self.frames.push(frame.clone());
        self.frame_index.insert(frame, i);
        i
    }

    /// Adds a sample of `frames` (root first).
    pub fn add(&mut self, frames: &[Frame], thread: Option<String>, values: Vec<i64>) {
        let stack = frames.iter().map(|f| self.intern(f)).collect();
        self.samples.push(Sample {
            stack,
            thread,
            values,
        });
    }

    /// The sum of the first sample type over every sample.
    pub fn total(&self) -> i64 {
        self.samples
            .iter()
            .map(|s| s.values.first().copied().unwrap_or(0))
            .sum()
    }

    /// Renames frames of hidden classes and lambdas without what changes from one run to the
    /// next (their addresses, their numbers: [`hprof_format::stable_class_name`]), so that
    /// profiles of two runs compare method by method.
    pub fn stable_names(&mut self) {
        // Names are looked at once per `Arc`; equal texts end up sharing one.
        let mut by_address: FxHashMap<*const u8, Arc<str>> = FxHashMap::default();
        let mut by_text: FxHashMap<Box<str>, Arc<str>> = FxHashMap::default();
        for frame in &mut self.frames {
            let address = frame.name.as_ptr();
            let name = match by_address.get(&address) {
                Some(name) => name.clone(),
                None => {
                    let text: Box<str> = hprof_format::stable_class_name(&frame.name).into();
                    let name = by_text
                        .entry(text)
                        .or_insert_with_key(|text| {
                            if **text == *frame.name {
                                frame.name.clone()
                            } else {
                                Arc::from(&**text)
                            }
                        })
                        .clone();
                    by_address.insert(address, name.clone());
                    name
                }
            };
            frame.name = name;
        }
        self.frame_index.clear();
        self.names.clear();
    }

    /// Keeps only frames whose name matches `include` (when given) and drops those matching
    /// `exclude`; samples left with no frame are dropped.
    pub fn filter(&mut self, include: Option<&regex::Regex>, exclude: Option<&regex::Regex>) {
        let keep: Vec<bool> = self
            .frames
            .iter()
            .map(|f| {
                let name = f.name();
                include.is_none_or(|r| r.is_match(name))
                    && !exclude.is_some_and(|r| r.is_match(name))
            })
            .collect();
        for sample in &mut self.samples {
            sample.stack.retain(|&i| keep[i]);
        }
        self.samples.retain(|s| !s.stack.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_names_merge_the_lambdas_of_two_runs() {
        let mut p = Profile::new(Kind::Cpu);
        let f = |c: &str| Frame::method(c, "run", None, None);
        p.add(&[f("Main$$Lambda$14/0x0000000800c03000")], None, vec![1]);
        p.add(&[f("Main$$Lambda$15/0x0000000800c04000")], None, vec![2]);
        p.add(&[f("Main")], None, vec![4]);
        p.stable_names();
        let rows = crate::top::methods(&p);
        let names: Vec<(&str, i64)> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.self_value))
            .collect();
        assert_eq!(names, [("Main.run", 4), ("Main$$Lambda.run", 3)]);
    }
}
