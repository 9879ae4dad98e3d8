//! Owns the choice among the standard formats a profile is written in: an HTML flame graph
//! ([`crate::flame`]), folded stacks ([`crate::folded`]) or pprof ([`crate::pprof`]), named
//! or told by a file's extension.

use std::io::{self, Write};
use std::path::Path;

use crate::model::Profile;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An interactive HTML flame graph.
    Html,
    /// Folded (collapsed) stacks.
    Collapsed,
    /// pprof (gzipped profile.proto).
    Pprof,
}

impl Format {
    /// Every format, by its name ([`Format::name`]).
    pub const ALL: [Format; 3] = [Format::Html, Format::Collapsed, Format::Pprof];

    /// The format's name: `html`, `collapsed`, `pprof`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Collapsed => "collapsed",
            Format::Pprof => "pprof",
        }
    }

    /// What the format is, in a few words.
    pub fn description(self) -> &'static str {
        match self {
            Format::Html => "An interactive HTML flame graph",
            Format::Collapsed => "Folded (collapsed) stacks",
            Format::Pprof => "pprof (gzipped profile.proto)",
        }
    }

    /// The format called `name`.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The format a file name's extension names: `.html` or `.htm`, `.collapsed` or
    /// `.folded`, `.pb.gz` or `.pprof`.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        if name.ends_with(".html") || name.ends_with(".htm") {
            Some(Format::Html)
        } else if name.ends_with(".collapsed") || name.ends_with(".folded") {
            Some(Format::Collapsed)
        } else if name.ends_with(".pb.gz") || name.ends_with(".pprof") {
            Some(Format::Pprof)
        } else {
            None
        }
    }

    /// Writes `profile` in this format (`title`: the flame graph's).
    pub fn write(self, profile: &Profile, title: &str, out: &mut dyn Write) -> io::Result<()> {
        match self {
            Format::Collapsed => crate::folded::write(profile, out),
            Format::Pprof => crate::pprof::write(profile, out),
            Format::Html => crate::flame::write(profile, title, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_name_and_extension() {
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(f));
        }
        assert_eq!(Format::from_name("svg"), None);
        let ext = |n: &str| Format::from_extension(Path::new(n));
        assert_eq!(ext("a/flame.HTML"), Some(Format::Html));
        assert_eq!(ext("x.folded"), Some(Format::Collapsed));
        assert_eq!(ext("x.pb.gz"), Some(Format::Pprof));
        assert_eq!(ext("x.txt"), None);
    }
}
