//! The progress of a heap analysis on stderr (`hprof analyze`, `path`, `diff`).

use std::io::IsTerminal;
use std::time::Duration;

use hprof_heap::Progress;
use indicatif::{ProgressBar, ProgressStyle};

use crate::input::Input;

/// The progress of the analysis on stderr, when it is a terminal and the file is big
/// enough for phases to last (100 MB and more): one line per phase, with a bar and a
/// percentage when the phase knows its amount of work, else a spinner, and the time spent.
pub struct Bar(Option<ProgressBar>);

impl Bar {
    pub fn new(input: &Input) -> Bar {
        Bar(
            (input.bytes().len() >= 100 << 20 && std::io::stderr().is_terminal()).then(|| {
                let bar = ProgressBar::new(0);
                bar.enable_steady_tick(Duration::from_millis(100));
                bar
            }),
        )
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    /// Clears the line on every exit path, errors included.
    fn drop(&mut self) {
        self.finish();
    }
}

impl Progress for Bar {
    fn phase(&self, name: &str, total: u64) {
        let Some(bar) = &self.0 else { return };
        let template = if total > 0 {
            "{msg:38} [{bar:30}] {percent:>3}% {elapsed:>4}"
        } else {
            "{msg:38} {spinner} {elapsed:>4}"
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_length(total);
        bar.set_position(0);
        bar.reset_elapsed();
        bar.set_message(name.to_string());
    }

    fn advance(&self, done: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(done);
        }
    }
}
