//! Brendan Gregg's folded (collapsed) stacks: one line per distinct stack, frames root first
//! joined by `;`, then a space and the value of the profile's first sample type; lines in the
//! order their stacks first appear in the profile.

use rustc_hash::FxHashMap;
use std::io::{self, Write};

use crate::model::Profile;

/// A frame's name as a folded line can hold it (no `;`, no line break).
pub(crate) fn clean(name: &str) -> String {
    name.replace([';', '\n'], ":")
}

/// The distinct stacks of `profile` (with their thread, when it has threads), in the order
/// they first appear, each with the sum of its samples' first value: (a sample holding the
/// stack, value). Stacks are compared as frame indices, not as text.
pub(crate) fn aggregate(profile: &Profile) -> Vec<(usize, i64)> {
    let mut order: Vec<(usize, i64)> = Vec::new();
    let mut index: FxHashMap<(Option<&str>, &[usize]), usize> = FxHashMap::default();
    for (i, sample) in profile.samples.iter().enumerate() {
        let value = sample.values.first().copied().unwrap_or(0);
        if value <= 0 {
            continue;
        }
        let key = (sample.thread.as_deref(), sample.stack.as_slice());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, Kind};

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
            String::from_utf8(out).unwrap(),
            "App.main;libc.so.6.write;[kernel].do_syscall_64_[k] 3\n"
        );
    }
}
