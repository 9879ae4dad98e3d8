//! Owns the reader's error type: what is wrong, and at which byte offset of the file.

use std::fmt;

/// The result of reading JFR data.
pub type Result<T> = std::result::Result<T, Error>;

/// A problem found while reading a recording, with the byte offset (from the start of the
/// file) where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    offset: u64,
    kind: ErrorKind,
}

/// What kind of problem an [`Error`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A chunk, event or field runs past the end of the data it must lie in.
    Truncated {
        /// What was being read.
        what: &'static str,
    },
    /// The chunk does not start with `FLR\0`.
    BadMagic,
    /// A chunk version this reader does not know (JDK 11 and later write 2.0 or 2.1).
    UnsupportedVersion {
        /// Major version.
        major: u16,
        /// Minor version.
        minor: u16,
    },
    /// A value is not what the format allows there.
    Malformed(String),
}

impl Error {
    /// An error of `kind` found at byte `offset` of the file.
    pub fn new(offset: u64, kind: ErrorKind) -> Error {
        Error { offset, kind }
    }

    pub(crate) fn malformed(offset: u64, what: impl Into<String>) -> Error {
        Error::new(offset, ErrorKind::Malformed(what.into()))
    }

    pub(crate) fn truncated(offset: u64, what: &'static str) -> Error {
        Error::new(offset, ErrorKind::Truncated { what })
    }

    /// The byte offset in the file where the problem was found.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        match &self.kind {
            ErrorKind::Truncated { what } => {
                write!(
                    f,
                    "truncated {what} at byte offset {at}: the data ends inside it"
                )
            }
            ErrorKind::BadMagic => write!(
                f,
                "not a JFR chunk at byte offset {at}: no \"FLR\\0\" magic"
            ),
            ErrorKind::UnsupportedVersion { major, minor } => write!(
                f,
                "unsupported JFR chunk version {major}.{minor} at byte offset {at} (this reader knows 2.x, written by JDK 11 and later and by async-profiler)"
            ),
            ErrorKind::Malformed(what) => write!(f, "damaged JFR data at byte offset {at}: {what}"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// What is wrong, without the offset.
    pub fn what(&self) -> String {
        let text = self.to_string();
        let at = format!(" at byte offset {}", self.offset);
        text.replacen(&at, "", 1)
    }
}
