//! `hprof listen`: the `net=` front-end. Accepts the agent's connection, writes its stream to
//! a file as it arrives, and sends it commands typed at the prompt or given with `--command`.

use std::fs::File;
use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use hprof_format::net::{Command as Net, Control};

/// Arguments of `hprof listen`.
#[derive(Debug, Args)]
#[command(
    about = "Receive a profile over the network (the agent's net= option) and send it commands",
    long_about = "Listens for the hprof agent started with `net=HOST:PORT`, writes everything \
it sends to a file as it arrives, and sends it commands, typed at the `hprof>` prompt or given \
with --command (in order; `sleep MS` waits between them):\n\n  gc                    collect garbage\n  \
dump                  dump the heap\n  sites [--cutoff X] [--incremental] [--by-alloc] [--no-gc]\n                        \
allocation sites (after a GC unless --no-gc)\n  summary               heap summary (binary output)\n  \
traces                write every trace not written yet\n  cpu [--cutoff X]      CPU samples since the last listing\n  \
sampling on|off [ID]  CPU sampling for the thread with object id ID, or all\n  clear cpu|sites       forget CPU samples or allocation sites\n  \
depth N               stack depth of later traces\n  exit-vm               make the program exit (status 0)\n  \
quit                  disconnect; the program runs on\n  sleep MS              wait (for scripts)\n  \
wait                  wait for a line on standard input (for scripts driven by another program)\n\n\
It exits when the program ends (the stream is complete) or after `quit`.",
    after_help = "Example:\n  hprof listen --port 7777 -o profile.hprof &\n  java -agentpath:libhprof.so=cpu=samples,format=b,net=localhost:7777 -jar app.jar"
)]
pub struct ListenArgs {
    /// Port to listen on (0 picks a free one, printed on stderr).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub bind: String,
    /// File the stream is written to.
    #[arg(short, long, value_name = "FILE", default_value = "java.hprof.net")]
    pub output: PathBuf,
    /// A command to send once connected (repeatable; disables the prompt).
    #[arg(long = "command", value_name = "CMD")]
    pub commands: Vec<String>,
}

/// A parsed front-end command.
#[derive(Debug, Clone, PartialEq)]
enum Command {
    Send(Vec<u8>),
    Sleep(Duration),
    /// Waits for a line on standard input (or its end).
    Wait,
    Quit,
}

/// A command to send, encoded (serial 1).
fn send(command: Net) -> Command {
    Command::Send(command.encode(1))
}

fn control(sub: u16, argument: u64) -> Command {
    send(Net::Control { sub, argument })
}

/// Parses one command line of the front-end's language.
fn parse(line: &str) -> Result<Command> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let cutoff = |words: &[&str]| -> Result<f32> {
        match words.iter().position(|w| *w == "--cutoff") {
            Some(i) => words
                .get(i + 1)
                .context("--cutoff needs a value")?
                .parse()
                .context("--cutoff must be a number"),
            None => Ok(0.0001),
        }
    };
    Ok(match words.as_slice() {
        ["gc"] => send(Net::ForceGc),
        ["dump"] => send(Net::DumpHeap),
        ["sites", rest @ ..] => {
            let mut flags = 0x4u16;
            for word in rest {
                match *word {
                    "--incremental" => flags |= 0x1,
                    "--by-alloc" => flags |= 0x2,
                    "--no-gc" => flags &= !0x4,
                    "--cutoff" => {}
                    w if w.parse::<f32>().is_ok() => {}
                    other => bail!("sites: unknown flag {other}"),
                }
            }
            send(Net::AllocSites {
                flags,
                cutoff: cutoff(rest)?,
            })
        }
        ["summary"] => send(Net::HeapSummary),
        ["traces"] => send(Net::DumpTraces),
        ["cpu", rest @ ..] => send(Net::CpuSamples {
            cutoff: cutoff(rest)?,
        }),
        ["sampling", state @ ("on" | "off"), rest @ ..] => {
            let id = match rest {
                [] => 0,
                [id] => match id.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => id.parse(),
                }
                .context("the thread object id must be a number")?,
                _ => bail!("sampling on|off [THREAD-OBJECT-ID]"),
            };
            let sub = if *state == "on" {
                Control::SAMPLING_ON
            } else {
                Control::SAMPLING_OFF
            };
            control(sub, id)
        }
        ["clear", "cpu"] => control(Control::CLEAR_CPU, 0),
        ["clear", "sites"] => control(Control::CLEAR_SITES, 0),
        ["depth", n] => control(
            Control::DEPTH,
            u64::from(n.parse::<u16>().context("depth must be 0 to 65535")?),
        ),
        ["exit-vm"] => send(Net::ExitVm),
        ["quit"] => Command::Quit,
        ["sleep", ms] => Command::Sleep(Duration::from_millis(
            ms.parse().context("sleep takes milliseconds")?,
        )),
        ["wait"] => Command::Wait,
        _ => bail!("unknown command `{line}` (see `hprof listen --help`)"),
    })
}

/// Runs `hprof listen`.
pub fn run(args: &ListenArgs, out: &mut dyn Write) -> Result<()> {
    let scripted: Vec<Command> = args
        .commands
        .iter()
        .map(|c| parse(c))
        .collect::<Result<_>>()?;
    // Created before waiting, so a path that can't be written is refused at once.
    let file = hprof_outfile::create(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let listener = TcpListener::bind((args.bind.as_str(), args.port))
        .with_context(|| format!("cannot listen on {}:{}", args.bind, args.port))?;
    let address = listener.local_addr()?;
    eprintln!(
        "hprof: listening on {address}; start Java with -agentpath:.../libhprof.so=net={address}"
    );
    let (stream, peer) = listener
        .accept()
        .context("accepting the agent's connection")?;
    eprintln!(
        "hprof: agent connected from {peer}; writing to {}",
        args.output.display()
    );
    let received = Arc::new(AtomicU64::new(0));
    let reader = {
        let stream = stream.try_clone()?;
        let received = received.clone();
        std::thread::spawn(move || copy_stream(stream, file, &received))
    };
    let mut commands = stream.try_clone()?;
    if scripted.is_empty() && io::stdin().is_terminal() {
        prompt(&mut commands, &reader)?;
    } else {
        for command in scripted {
            if reader.is_finished() {
                break;
            }
            if !perform(&mut commands, command)? {
                break;
            }
        }
    }
    let result = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the receiving thread failed"))?;
    result.with_context(|| format!("receiving into {}", args.output.display()))?;
    writeln!(
        out,
        "received {} bytes into {}",
        received.load(Ordering::Relaxed),
        args.output.display()
    )?;
    Ok(())
}

/// Sends one command; `false` after `quit`, which also disconnects.
fn perform(stream: &mut TcpStream, command: Command) -> Result<bool> {
    match command {
        Command::Send(bytes) => {
            stream
                .write_all(&bytes)
                .context("sending a command (has the program ended?)")?;
            Ok(true)
        }
        Command::Sleep(duration) => {
            std::thread::sleep(duration);
            Ok(true)
        }
        Command::Wait => {
            io::stdin()
                .lock()
                .read_line(&mut String::new())
                .context("reading standard input for `wait`")?;
            Ok(true)
        }
        Command::Quit => {
            let _ = stream.write_all(&Net::End.encode(0));
            let _ = stream.shutdown(Shutdown::Both);
            Ok(false)
        }
    }
}

/// Reads commands at an `hprof>` prompt until `quit`, end of input, or the program ends.
fn prompt(stream: &mut TcpStream, reader: &std::thread::JoinHandle<io::Result<()>>) -> Result<()> {
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    loop {
        eprint!("hprof> ");
        let Some(line) = lines.next() else { break };
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        if reader.is_finished() {
            eprintln!("hprof: the program has ended");
            break;
        }
        match parse(&line) {
            Ok(command) => {
                if !perform(stream, command)? {
                    break;
                }
            }
            Err(err) => eprintln!("hprof: {err:#}"),
        }
    }
    Ok(())
}

/// Copies the agent's stream into the file as it arrives, flushing each piece so the file
/// can be read at any moment; shows a status line on a terminal.
fn copy_stream(mut stream: TcpStream, mut file: File, received: &AtomicU64) -> io::Result<()> {
    let status = io::stderr().is_terminal();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
                ) =>
            {
                break;
            }
            Err(e) => return Err(e),
        };
        file.write_all(&buf[..n])?;
        file.flush()?;
        let total = received.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        if status {
            eprint!("\r\x1b[2Khprof: received {total} bytes\r");
        }
    }
    file.sync_data()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_encode_the_protocol() {
        assert_eq!(
            parse("gc").unwrap(),
            Command::Send(vec![1, 0, 0, 0, 1, 0, 0, 0, 0])
        );
        let Command::Send(sites) = parse("sites --by-alloc --cutoff 0.5").unwrap() else {
            panic!()
        };
        assert_eq!(&sites[..1], &[3]);
        assert_eq!(&sites[9..11], &0x6u16.to_be_bytes());
        assert_eq!(&sites[11..15], &0.5f32.to_bits().to_be_bytes());
        let Command::Send(depth) = parse("depth 3").unwrap() else {
            panic!()
        };
        assert_eq!(&depth[9..], &[0, 7, 0, 3]);
        let Command::Send(on) = parse("sampling on 0x50000001").unwrap() else {
            panic!()
        };
        assert_eq!(&on[9..11], &[0, 3]);
        assert_eq!(&on[11..], &0x5000_0001u64.to_be_bytes());
        assert_eq!(
            parse("sleep 20").unwrap(),
            Command::Sleep(Duration::from_millis(20))
        );
        assert_eq!(parse("quit").unwrap(), Command::Quit);
        assert_eq!(parse("wait").unwrap(), Command::Wait);
        assert!(parse("explode").is_err());
        assert!(parse("depth many").is_err());
    }
}
