//! Which profile of a file a command reads: the kind of section, the dump, threads and
//! filters, as options shared by the commands that read profiles (`convert`, `top`, `diff`).

use anyhow::{Context, Result};
use clap::Args;
use hprof_profile::{Kind, Profile, Recording, Selection};

/// The options that pick a profile out of a file.
#[derive(Debug, Default, Args)]
pub struct SelectArgs {
    /// CPU SAMPLES.
    #[arg(long, group = "kind")]
    pub cpu: bool,
    /// CPU TIME: self milliseconds and calls.
    #[arg(long, group = "kind")]
    pub times: bool,
    /// SITES: allocated bytes and objects (the allocated class as the leaf frame).
    #[arg(long, group = "kind")]
    pub alloc: bool,
    /// SITES: live bytes and objects (the allocated class as the leaf frame).
    #[arg(long, group = "kind")]
    pub live: bool,
    /// MONITOR TIME: time waited to enter monitors.
    #[arg(long, group = "kind")]
    pub lock: bool,
    /// The N-th dump of the file (from 1), instead of the last.
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub dump: Option<usize>,
    /// Every dump of the file, added up.
    #[arg(long)]
    pub all: bool,
    /// Split by thread (traces taken with thread=y): the thread is the root frame.
    #[arg(long)]
    pub threads: bool,
    /// Keep only frames matching this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub include: Option<String>,
    /// Drop frames matching this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub exclude: Option<String>,
}

impl SelectArgs {
    /// The kind a flag names, if one does.
    pub fn kind(&self) -> Option<Kind> {
        [
            (self.cpu, Kind::Cpu),
            (self.times, Kind::Times),
            (self.alloc, Kind::Alloc),
            (self.live, Kind::Live),
            (self.lock, Kind::Lock),
        ]
        .into_iter()
        .find_map(|(flag, kind)| flag.then_some(kind))
    }

    /// The dumps the options select.
    pub fn selection(&self) -> Selection {
        match (self.dump, self.all) {
            (Some(n), _) => Selection::Nth(n),
            (None, true) => Selection::All,
            (None, false) => Selection::Last,
        }
    }

    /// The profile of `kind` in `recording` (read from the file `name`), filtered.
    pub fn profile(&self, recording: &Recording, kind: Kind, name: &str) -> Result<Profile> {
        let mut profile = recording
            .profile(kind, self.selection(), self.threads)
            .with_context(|| name.to_string())?;
        let regex = |r: &Option<String>| -> Result<Option<regex::Regex>> {
            r.as_deref()
                .map(|r| {
                    regex::Regex::new(r).with_context(|| format!("bad regular expression {r:?}"))
                })
                .transpose()
        };
        profile.filter(
            regex(&self.include)?.as_ref(),
            regex(&self.exclude)?.as_ref(),
        );
        Ok(profile)
    }
}
