//! The `hprof` command: reads and analyses HPROF files.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod agent_lib;
mod cmd;
mod heap_progress;
mod input;
mod mmap;
mod profile_select;
mod profiles;
mod units;
mod when;

/// Reads and analyses HPROF heap dumps and profiles.
#[derive(Debug, Parser)]
#[command(
    name = "hprof",
    version,
    about,
    after_help = "Exit status: 0 on success, 1 when a file cannot be read, is not valid \
HPROF (the message names the byte offset and record kind) or is incomplete (a heap dump cut \
short: --allow-truncated accepts it), 2 on a usage error; `hprof run` exits with the status of \
the program it ran, `hprof attach` with its own (see `hprof attach --help`); `hprof diff` exits \
with 1 when its gate fails and 2 on any error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The most bytes read from an input of unknown size: standard input, a pipe, a device,
    /// or a gzip file's contents (k, M, G or T suffixes). Default for profiles: 4G; heap
    /// dumps are copied to a temporary file, limited by its file system.
    #[arg(long, global = true, value_name = "SIZE", value_parser = input::parse_size)]
    max_input: Option<u64>,
}

#[derive(Debug, Subcommand)]
enum Command {
    Run(cmd::run::RunArgs),
    Attach(cmd::attach::AttachArgs),
    Listen(cmd::listen::ListenArgs),
    Summary(cmd::summary::SummaryArgs),
    Print(cmd::print::PrintArgs),
    Convert(cmd::convert::ConvertArgs),
    Top(cmd::top::TopArgs),
    Analyze(cmd::analyze::AnalyzeArgs),
    Path(cmd::analyze::PathArgs),
    Diff(cmd::diff::DiffArgs),
}

/// Runs the command; `Some(code)` when the exit status is a profiled program's.
fn run(cli: &Cli, out: &mut dyn Write) -> anyhow::Result<Option<i32>> {
    match &cli.command {
        Command::Run(args) => cmd::run::run(args).map(Some),
        Command::Attach(args) => cmd::attach::run(args).map(Some),
        Command::Listen(args) => cmd::listen::run(args, out).map(|()| None),
        Command::Summary(args) => cmd::summary::run(args, out).map(|()| None),
        Command::Print(args) => cmd::print::run(args, out).map(|()| None),
        Command::Convert(args) => cmd::convert::run(args).map(|()| None),
        Command::Top(args) => cmd::top::run(args, out).map(|()| None),
        Command::Analyze(args) => cmd::analyze::run(args, out).map(|()| None),
        Command::Path(args) => cmd::analyze::run_path(args, out).map(|()| None),
        Command::Diff(args) => cmd::diff::run(args, out).map(Some),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(limit) = cli.max_input {
        input::set_max_input(limit);
    }
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = run(&cli, &mut out).and_then(|code| Ok(out.flush().map(|()| code)?));
    match result {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(code)) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("hprof: error: {err:#}");
            // `hprof diff` exits with 1 when its gate fails: bad input is 2 there.
            if matches!(cli.command, Command::Diff(_)) {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// True when the error is a closed stdout (`hprof print big.hprof | head`).
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
