//! Owns the reader's error type: what went wrong, and at which byte offset.

use std::fmt;

/// The result of reading HPROF data.
pub type Result<T> = std::result::Result<T, Error>;

/// An error found while reading HPROF data, with the byte offset where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    offset: u64,
    kind: ErrorKind,
}

/// What kind of problem an [`Error`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A record or field runs past the end of the data.
    Truncated {
        /// The record or field being read.
        what: &'static str,
        /// How many bytes it needs from `offset`.
        needed: u64,
        /// How many bytes remain from `offset`.
        available: u64,
    },
    /// The file does not start with a `JAVA PROFILE` header.
    BadMagic,
    /// The header names a version other than 1.0.1 or 1.0.2.
    UnsupportedVersion,
    /// The identifier size is neither 4 nor 8.
    BadIdSize(u32),
    /// A top-level record tag that HPROF does not define.
    UnknownTag(u8),
    /// A heap dump sub-record tag that HPROF does not define.
    UnknownSubTag(u8),
    /// A basic type code that HPROF does not define.
    BadBasicType {
        /// The field holding the code.
        what: &'static str,
        /// The code found.
        code: u8,
    },
    /// A length field disagrees with the data it describes.
    LengthMismatch {
        /// The record whose length is wrong.
        what: &'static str,
        /// The length the record declares.
        declared: u64,
        /// The length its fields actually use.
        actual: u64,
    },
    /// An I/O error while reading a stream: its kind and what the source said (a gzip
    /// decoder's message names its own offsets).
    Io(std::io::ErrorKind, String),
    /// A record declares a length beyond a reader's limit for its kind.
    TooLong {
        /// The record.
        what: &'static str,
        /// The length it declares.
        declared: u64,
        /// The most the reader accepts.
        limit: u64,
    },
}

impl Error {
    /// Creates an error of `kind` found at byte `offset`.
    pub fn new(offset: u64, kind: ErrorKind) -> Error {
        Error { offset, kind }
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
            ErrorKind::Truncated {
                what,
                needed,
                available,
            } => write!(
                f,
                "truncated {what} at offset {at:#x}: needs {needed} bytes, {available} remain"
            ),
            ErrorKind::BadMagic => write!(
                f,
                "not an HPROF file: no \"JAVA PROFILE\" header at offset {at:#x}"
            ),
            ErrorKind::UnsupportedVersion => write!(
                f,
                "unsupported HPROF version at offset {at:#x} (expected JAVA PROFILE 1.0.1 or 1.0.2)"
            ),
            ErrorKind::BadIdSize(n) => write!(
                f,
                "bad identifier size {n} at offset {at:#x} (expected 4 or 8)"
            ),
            ErrorKind::UnknownTag(t) => {
                write!(f, "unknown record tag {t:#04x} at offset {at:#x}")
            }
            ErrorKind::UnknownSubTag(t) => {
                write!(
                    f,
                    "unknown heap dump sub-record tag {t:#04x} at offset {at:#x}"
                )
            }
            ErrorKind::BadBasicType { what, code } => {
                write!(f, "bad basic type {code} in {what} at offset {at:#x}")
            }
            ErrorKind::LengthMismatch {
                what,
                declared,
                actual,
            } => write!(
                f,
                "bad length in {what} at offset {at:#x}: declares {declared} bytes, its fields use {actual}"
            ),
            ErrorKind::Io(_, message) => write!(f, "read error at offset {at:#x}: {message}"),
            ErrorKind::TooLong {
                what,
                declared,
                limit,
            } => write!(
                f,
                "{what} at offset {at:#x} declares {declared} bytes, more than this reader \
                 accepts for it ({limit})"
            ),
        }
    }
}

impl std::error::Error for Error {}
