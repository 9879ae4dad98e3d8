//! Owns the error type: what was wrong with a class file, and where.

use std::fmt;

/// Why a class file could not be read or rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Byte offset in the class file (or in a method's code, see `what`) where it was found.
    pub offset: usize,
    /// What was wrong.
    pub what: String,
}

impl Error {
    pub(crate) fn new(offset: usize, what: impl Into<String>) -> Error {
        Error {
            offset,
            what: what.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.what, self.offset)
    }
}

impl std::error::Error for Error {}

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
