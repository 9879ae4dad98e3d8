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

/// The folded lines of `profile`, aggregated, in the order their stacks first appear:
/// (stack, value). With thread names the thread is the root frame.
pub fn lines(profile: &Profile) -> Vec<(String, i64)> {
    let names: Vec<std::borrow::Cow<'_, str>> = profile
        .frames
        .iter()
        .map(|f| {
            if f.name.contains([';', '\n']) {
                clean(&f.name).into()
            } else {
                f.name().into()
            }
        })
        .collect();
    let mut lines: Vec<(String, i64)> = Vec::new();
    let mut index: FxHashMap<String, usize> = FxHashMap::default();
    for sample in &profile.samples {
        let value = sample.values.first().copied().unwrap_or(0);
        if value <= 0 {
            continue;
        }
        let mut key = String::new();
        if let Some(thread) = &sample.thread {
            key.push_str(&clean(thread));
        }
        for &frame in &sample.stack {
            if !key.is_empty() {
                key.push(';');
            }
            key.push_str(&names[frame]);
        }
        match index.get(&key) {
            Some(&i) => lines[i].1 += value,
            None => {
                index.insert(key.clone(), lines.len());
                lines.push((key, value));
            }
        }
    }
    lines
}

/// Writes `profile` as folded stacks.
pub fn write(profile: &Profile, out: &mut dyn Write) -> io::Result<()> {
    for (stack, value) in lines(profile) {
        writeln!(out, "{stack} {value}")?;
    }
    Ok(())
}
