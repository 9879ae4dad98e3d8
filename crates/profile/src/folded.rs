//! Brendan Gregg's folded (collapsed) stacks: one line per distinct stack, frames root first
//! joined by `;`, then a space and the value of the profile's first sample type; lines in the
//! order their stacks first appear in the profile.

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::io::{self, Write};

use crate::model::Profile;

/// A frame's name as a folded line can hold it (no `;`, no line break).
pub(crate) fn clean(name: &str) -> String {
    name.replace([';', '\n'], ":")
}

/// The distinct stacks of `profile` (with their thread, when it has threads), in the order
/// they first appear, each with the sum of its samples' first value: (a sample holding the
/// stack, value). Stacks are compared as frame indices, not as text; frames a folded line
/// names alike (one method at several lines) count as the first of them.
pub(crate) fn aggregate(profile: &Profile) -> Vec<(usize, i64)> {
    let mut first: FxHashMap<(&str, bool), usize> = FxHashMap::default();
    let same: Vec<usize> = profile
        .frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let kernel = f.kind == crate::model::FrameKind::Kernel;
            *first.entry((f.name(), kernel)).or_insert(i)
        })
        .collect();
    let mut order: Vec<(usize, i64)> = Vec::new();
    let mut index: FxHashMap<(Option<&str>, Cow<'_, [usize]>), usize> = FxHashMap::default();
    for (i, sample) in profile.samples.iter().enumerate() {
        let value = sample.values.first().copied().unwrap_or(0);
        if value <= 0 {
            continue;
        }
        let stack: Cow<'_, [usize]> = if sample.stack.iter().all(|&f| same[f] == f) {
            Cow::Borrowed(&sample.stack)
        } else {
            Cow::Owned(sample.stack.iter().map(|&f| same[f]).collect())
        };
        let key = (sample.thread.as_deref(), stack);
        match index.get(&key) {
            Some(&at) => order[at].1 += value,
            None => {
                index.insert(key, order.len());
                order.push((i, value));
            }
        }
    }
    order
}

/// Frame names as folded lines can hold them; a kernel function ends with `_[k]`, the mark
/// flame-graph tools (`flamegraph.pl --color=java`, async-profiler's converters) colour
/// kernel frames by.
pub(crate) fn names(profile: &Profile) -> Vec<std::borrow::Cow<'_, str>> {
    profile
        .frames
        .iter()
        .map(|f| {
            let name: std::borrow::Cow<'_, str> = if f.name.contains([';', '\n']) {
                clean(&f.name).into()
            } else {
                f.name().into()
            };
            if f.kind == crate::model::FrameKind::Kernel {
                format!("{name}_[k]").into()
            } else {
                name
            }
        })
        .collect()
}

/// Appends the folded stack of `sample` (thread first, then frames root first) to `out`.
fn push_stack(
    out: &mut String,
    names: &[std::borrow::Cow<'_, str>],
    sample: &crate::model::Sample,
) {
    if let Some(thread) = &sample.thread {
        out.push_str(&clean(thread));
    }
    for &frame in &sample.stack {
        if !out.is_empty() {
            out.push(';');
        }
        out.push_str(&names[frame]);
    }
}

/// The folded lines of `profile`, aggregated, in the order their stacks first appear:
/// (stack, value). With thread names the thread is the root frame.
pub fn lines(profile: &Profile) -> Vec<(String, i64)> {
    let names = names(profile);
    aggregate(profile)
        .into_iter()
        .map(|(i, value)| {
            let mut stack = String::new();
            push_stack(&mut stack, &names, &profile.samples[i]);
            (stack, value)
        })
        .collect()
}

/// Writes `profile` as folded stacks.
pub fn write(profile: &Profile, out: &mut dyn Write) -> io::Result<()> {
    let names = names(profile);
    let mut line = String::new();
    for (i, value) in aggregate(profile) {
        line.clear();
        push_stack(&mut line, &names, &profile.samples[i]);
        line.push(' ');
        line.push_str(itoa(value, &mut [0u8; 20]));
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// `value` in decimal, in `buf`.
fn itoa(value: i64, buf: &mut [u8; 20]) -> &str {
    let mut n = value.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if value < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    std::str::from_utf8(&buf[at..]).unwrap_or("0")
}

/// True if `bytes` look like folded stacks: text whose first line is frames, a space and a
/// count (a second count, as differential tools write, is allowed).
pub(crate) fn looks_folded(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64 << 10)];
    if head.contains(&0) {
        return false;
    }
    let text = String::from_utf8_lossy(head);
    let Some(first) = text.lines().map(str::trim_end).find(|l| !l.is_empty()) else {
        return false;
    };
    parse_line(first).is_some()
}

/// A folded line as (stack, first count, second count when there are two).
fn parse_line(line: &str) -> Option<(&str, i64, Option<i64>)> {
    let (rest, last) = line.rsplit_once(' ')?;
    let last: i64 = last.parse().ok()?;
    if let Some((stack, first)) = rest.rsplit_once(' ')
        && let Ok(first) = first.parse::<i64>()
        && !stack.is_empty()
    {
        return Some((stack, first, Some(last)));
    }
    (!rest.is_empty()).then_some((rest, last, None))
}

/// A frame of a folded stack: async-profiler's annotation (`_[j]` Java, `_[i]` inlined,
/// `_[0]`/`_[1]` interpreted/compiled, `_[k]` kernel) taken off, and a Java method's class
/// written with slashes (`java/lang/Thread.run`) dotted, so stacks from other tools meet ours.
fn parse_frame(name: &str) -> crate::model::Frame {
    use crate::model::{Frame, FrameKind};
    let (name, annotation) = match name.rfind("_[") {
        Some(at) if name.ends_with(']') && name.len() - at <= 5 => {
            (&name[..at], Some(&name[at + 2..name.len() - 1]))
        }
        _ => (name, None),
    };
    let java = matches!(annotation, Some("j" | "i" | "0" | "1"));
    let java_like = |s: &str| {
        s.contains('.')
            && !s.starts_with('/')
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_$/.<>".contains(&b))
    };
    if annotation == Some("k") {
        // A kernel function: ours are `[kernel].function`.
        let (library, function) = crate::read::split_code_name(name);
        return match library {
            "[kernel]" => Frame::code(library, function),
            _ => Frame {
                kind: FrameKind::Kernel,
                ..Frame::pseudo(name)
            },
        };
    }
    if !(java || java_like(name)) {
        return Frame::pseudo(name);
    }
    match name.rsplit_once('.') {
        Some((class, method)) => {
            let class = class.replace('/', ".");
            Frame::method(&class, method, None, None)
        }
        None => Frame {
            kind: FrameKind::Pseudo,
            ..Frame::pseudo(name)
        },
    }
}

/// Reads folded stacks (ours, Brendan Gregg's `stackcollapse-*`, async-profiler's `collapsed`
/// output) into a profile of `kind`: each line one sample, frames root first, its count the
/// value (the second count, for a line that has two). Blank lines and `#` comments are
/// skipped; any other line that is not frames and a count is an error with its offset.
pub(crate) fn read(bytes: &[u8], kind: crate::model::Kind) -> Result<Profile, crate::Error> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        crate::Error {
            offset: Some(at as u64),
            message: format!("line {line}: the folded stacks are not UTF-8"),
        }
    })?;
    let mut profile = Profile::new(kind);
    let extra = profile.sample_types.len() - 1;
    let mut frames: FxHashMap<&str, usize> = FxHashMap::default();
    let mut offset = 0u64;
    for (number, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_end();
        let at = offset;
        offset += raw.len() as u64;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((stack, first, second)) = parse_line(line) else {
            return Err(crate::Error {
                offset: Some(at),
                message: format!(
                    "line {}: not a folded stack line (frames separated by `;`, a space, a count)",
                    number + 1
                ),
            });
        };
        let value = second.unwrap_or(first);
        let stack = stack
            .split(';')
            .map(|name| match frames.get(name) {
                Some(&i) => i,
                None => {
                    let i = profile.intern(&parse_frame(name));
                    frames.insert(name, i);
                    i
                }
            })
            .collect();
        let mut values = vec![value];
        values.resize(1 + extra, 0);
        profile.samples.push(crate::model::Sample {
            stack,
            thread: None,
            values,
        });
    }
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, FrameKind, Kind};

    #[test]
    fn folded_lines_read_back_with_their_counts() {
        let text = "# a comment\nThread.run;A.main;A.hot 7\nThread.run;A.main;B.cold 3\n\n\
java/lang/Thread.run_[j];A.main_[j];A.hot_[i] 5\n[unknown];__libc_start 2\n";
        let p = read(text.as_bytes(), Kind::Cpu).unwrap();
        assert_eq!(p.total(), 17);
        let names: Vec<Vec<&str>> = p
            .samples
            .iter()
            .map(|s| s.stack.iter().map(|&f| p.frames[f].name()).collect())
            .collect();
        assert_eq!(names[2], ["java.lang.Thread.run", "A.main", "A.hot"]);
        assert_eq!(names[0][2], "A.hot");
        let hot = &p.frames[p.samples[0].stack[2]];
        assert_eq!(hot.kind, FrameKind::Application);
        assert_eq!(p.frames[p.samples[3].stack[1]].kind, FrameKind::Pseudo);
        // A differential line: the second count is the value.
        let p = read(b"a;b 3 9\n", Kind::Cpu).unwrap();
        assert_eq!(p.total(), 9);
        // Two sample types for kinds that have them, the second unknown.
        let p = read(b"a;b 3\n", Kind::Alloc).unwrap();
        assert_eq!(p.samples[0].values, [3, 0]);
        assert!(looks_folded(b"a;b 3\n"));
        assert!(!looks_folded(b"JAVA PROFILE 1.0.1, created Tue\n"));
        assert!(!looks_folded(b"hello"));
        let err = read(b"a;b 3\nbroken line\n", Kind::Cpu).unwrap_err();
        assert_eq!(err.offset, Some(6));
        assert!(err.message.starts_with("line 2: not a folded"), "{err}");
        let err = read(b"a;b 3\n\na;\xff 2\n", Kind::Cpu).unwrap_err();
        assert_eq!(err.offset, Some(9));
        assert!(
            err.message
                .starts_with("line 3: the folded stacks are not UTF-8"),
            "{err}"
        );
    }

    #[test]
    fn one_method_at_several_lines_is_one_folded_line() {
        let mut p = Profile::new(Kind::Cpu);
        let f = |m: &str, l: u32| Frame::method("A", m, Some("A.java"), Some(l));
        p.add(&[f("main", 3), f("hot", 9)], None, vec![2]);
        p.add(&[f("main", 4), f("hot", 9)], None, vec![5]);
        p.add(&[f("main", 3), f("hot", 10)], None, vec![1]);
        p.add(&[f("main", 3)], None, vec![1]);
        assert_eq!(
            lines(&p),
            [("A.main;A.hot".to_string(), 8), ("A.main".to_string(), 1)]
        );
    }

    #[test]
    fn kernel_functions_carry_the_kernel_mark() {
        let mut p = Profile::new(Kind::Cpu);
        p.add(
            &[
                Frame::method("App", "main", None, None),
                Frame::code("libc.so.6", "write"),
                Frame::code("[kernel]", "do_syscall_64"),
            ],
            None,
            vec![3],
        );
        let mut out = Vec::new();
        write(&p, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "App.main;libc.so.6.write;[kernel].do_syscall_64_[k] 3\n"
        );
        // Read back, the kernel's function is one again, and is written alike.
        let back = read(&out, Kind::Cpu).unwrap();
        let leaf = &back.frames[*back.samples[0].stack.last().unwrap()];
        assert_eq!(leaf.kind, FrameKind::Kernel);
        assert_eq!(lines(&back), lines(&p));
    }
}
