//! Owns what the commands that read the agent's profiles share (none imports another): which
//! profile of a file to read ([`ProfileArgs`]), writing a profile to a file in a standard
//! format ([`write()`]), the report `hprof run` and `hprof attach` print ([`report`]), and the
//! warning that a profile is incomplete ([`warn_notes`]).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use hprof_profile::{Format, Kind, Profile, Recording, Selection};

use crate::profile_select::SelectArgs;

/// Which profile of a file a command reads: the file, and the kind of section, the dump,
/// threads, times and filters.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// A profile: the agent's java.hprof.txt or binary output, a JFR recording (JDK 11 to 25,
    /// async-profiler), folded stacks, or gzipped pprof; plain or gzip-compressed.
    pub input: PathBuf,
    #[command(flatten)]
    pub select: SelectArgs,
}

impl ProfileArgs {
    /// The default profile of `input` (every option at its default).
    pub fn of(input: &Path) -> ProfileArgs {
        ProfileArgs {
            input: input.to_path_buf(),
            select: SelectArgs::default(),
        }
    }

    /// Reads the input and makes the profile the options select.
    pub fn load(&self) -> Result<(Profile, Kind)> {
        self.load_with(false)
    }

    /// As [`ProfileArgs::load`]; with `timeline`, the profile has its timeline when the
    /// file's samples carry their times.
    pub fn load_with(&self, timeline: bool) -> Result<(Profile, Kind)> {
        let name = self.input.display().to_string();
        let recording = crate::input::read_recording(&self.input)?;
        warn_notes(&name, &recording);
        self.select
            .select(&recording, self.select.kind(), &name, timeline)
    }
}

/// The parser of a `--format` option: a [`Format`]'s name.
pub fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(
        Format::ALL.map(|f| clap::builder::PossibleValue::new(f.name()).help(f.description())),
    )
    .map(|name| Format::from_name(&name).unwrap_or(Format::Html))
}

/// Writes the profile `profile` selects to `output` in `format` (the flame graph titled
/// `title`, by default after the section and the file), and says so on standard error.
pub fn convert(
    profile: &ProfileArgs,
    output: &Path,
    format: Format,
    title: Option<&str>,
) -> Result<()> {
    let (selected, kind) = profile.load_with(format == Format::Html)?;
    let title = title.map_or_else(
        || format!("{} — {}", kind.section(), profile.input.display()),
        str::to_string,
    );
    write(&selected, format, &title, output)?;
    let (total, stacks) = (selected.total(), selected.samples.len());
    let sample_type = selected
        .sample_types
        .first()
        .map(|t| t.name.clone())
        .unwrap_or_default();
    // Freeing its millions of small strings would cost more than the conversion.
    std::mem::forget(selected);
    eprintln!(
        "hprof: wrote {} ({} {}, {} stacks)",
        output.display(),
        total,
        sample_type,
        stacks
    );
    Ok(())
}

/// Writes `profile` to a new private file at `path` in `format`.
pub fn write(profile: &Profile, format: Format, title: &str, path: &Path) -> Result<()> {
    let file =
        hprof_outfile::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    format
        .write(profile, title, &mut out)
        .and_then(|()| out.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Reports a profile: for each kind of section it holds, the hottest methods of the last dump;
/// then writes its flame graph (of the first kind) to `flame`.
pub fn report(path: &Path, flame: Option<&Path>, top: usize, out: &mut dyn Write) -> Result<()> {
    let recording = crate::input::read_recording(path)?;
    warn_notes(&path.display().to_string(), &recording);
    writeln!(out, "\nProfile written to {}", path.display())?;
    let kinds: Vec<Kind> = [Kind::Cpu, Kind::Times, Kind::Alloc, Kind::Lock]
        .into_iter()
        .filter(|&k| recording.dumps(k) > 0)
        .collect();
    for &kind in &kinds {
        let profile = recording.profile(kind, Selection::Last, false)?;
        writeln!(out)?;
        hprof_profile::top::write_methods(&profile, kind.section(), top, false, false, out)?;
    }
    if let (Some(flame), Some(&kind)) = (flame, kinds.first()) {
        let profile = recording.profile(kind, Selection::Last, false)?;
        if profile.total() > 0 {
            let title = format!("{} — {}", kind.section(), path.display());
            write(&profile, Format::Html, &title, flame)?;
            writeln!(out, "Flame graph: {}", flame.display())?;
        }
    }
    Ok(())
}

/// Warns of what the agent noted it could not write into a profile (a dump cut short by a
/// full disk, a heap dump it lost): the profile is incomplete.
pub fn warn_notes(name: &str, recording: &Recording) {
    for note in recording.notes() {
        eprintln!("hprof: warning: {name} is incomplete: its writer noted: {note}");
    }
}
