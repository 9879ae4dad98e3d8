//! Owns the agent's errors: one type, [`AgentError`], whose kind says which part of the agent
//! failed, and the one place that prints them to stderr, [`AgentError::report`], with the
//! `HPROF ERROR: ` prefix the original agent used. Errors written into a profile (an
//! incomplete dump's note) carry the same prefix, [`PREFIX`].

use std::fmt;

/// What every error line of the agent begins with.
pub const PREFIX: &str = "HPROF ERROR: ";

/// Which part of the agent an error comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Loading the agent: options, the JVMTI environment, capabilities, events.
    Load,
    /// Starting a profiling engine or an agent thread.
    Start,
    /// A dump that could not be written whole.
    Dump,
    /// The profile's output (file or socket).
    Output,
    /// A command of the `net=` front-end, or an `hprof attach` session.
    Command,
    /// A panic caught before it could cross into the JVM.
    Internal,
}

/// An error of the agent: its kind and the message the user sees after the prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentError {
    /// Which part of the agent failed.
    pub kind: ErrorKind,
    message: String,
}

impl AgentError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> AgentError {
        AgentError {
            kind,
            message: message.into(),
        }
    }

    /// An error of loading the agent ([`ErrorKind::Load`]) saying `message`.
    pub fn loading(message: impl Into<String>) -> AgentError {
        AgentError::new(ErrorKind::Load, message)
    }

    /// An error of starting an engine or an agent thread ([`ErrorKind::Start`]) saying
    /// `message`.
    pub fn starting(message: impl Into<String>) -> AgentError {
        AgentError::new(ErrorKind::Start, message)
    }

    /// The message, without the prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Prints the error on stderr as one `HPROF ERROR: ` line: the one place the agent
    /// prints its errors.
    pub fn report(&self) {
        eprintln!("{PREFIX}{}", self.message);
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AgentError {}

/// Prints `message` as an error of `kind` (shorthand for `AgentError::new(..).report()`).
pub fn report(kind: ErrorKind, message: impl fmt::Display) {
    AgentError::new(kind, message.to_string()).report();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_and_start_errors_carry_their_kind() {
        let load = AgentError::loading("can't enable VMInit (JVMTI_ERROR_NOT_AVAILABLE)");
        assert_eq!(load.kind, ErrorKind::Load);
        assert_eq!(
            load.message(),
            "can't enable VMInit (JVMTI_ERROR_NOT_AVAILABLE)"
        );
        let start = AgentError::starting(String::from("heap=sites was started twice"));
        assert_eq!(start.kind, ErrorKind::Start);
        assert_eq!(start.to_string(), "heap=sites was started twice");
    }

    #[test]
    fn an_error_shows_its_message_and_is_printed_with_the_prefix() {
        let error = AgentError::new(ErrorKind::Start, "cpu=times can't start: why");
        assert_eq!(error.to_string(), "cpu=times can't start: why");
        assert_eq!(
            format!("{PREFIX}{error}"),
            "HPROF ERROR: cpu=times can't start: why"
        );
    }
}
