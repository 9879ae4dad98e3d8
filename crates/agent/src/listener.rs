//! Owns the `net=` command listener: an agent thread that reads the front-end's commands
//! (`hprof_format::net`, the original's protocol) from the socket the output goes to, and
//! carries them out. Unlike the original, a closed connection ends the listener quietly, ids
//! are read in network byte order, and an unknown command is reported and skipped, never
//! ending the VM.

use std::io::Read;

pub use hprof_format::net::Command;

use crate::error::{ErrorKind, report};
use crate::jvmti::Jni;
use crate::profiler;

/// Name of the listener thread (agent threads' names start with `HPROF `).
pub const THREAD_NAME: &str = profiler::LISTENER_THREAD_NAME;

/// Reads the next command; `End` when the connection closes or breaks, or sends a command
/// longer than any front-end's (reported).
pub fn read_command(stream: &mut impl Read) -> Command {
    Command::read(stream).unwrap_or_else(|too_long| {
        report(
            ErrorKind::Command,
            format!("{too_long}; the listener stops"),
        );
        Command::End
    })
}

/// The listener thread's body.
pub fn run(jni: Jni) {
    let Some(p) = profiler::get() else { return };
    let Some(mut stream) = p.take_command_stream() else {
        return;
    };
    loop {
        let command = read_command(&mut stream);
        if !p.is_running() {
            return;
        }
        match command {
            Command::End => return,
            Command::ForceGc => p.command_gc(),
            Command::DumpHeap => p.command_dump_heap(jni),
            Command::AllocSites { flags, cutoff } => {
                p.command_alloc_sites(flags, f64::from(cutoff))
            }
            Command::HeapSummary => p.command_heap_summary(),
            Command::ExitVm => {
                if p.ctx.options.verbose {
                    eprintln!("HPROF: received exit event, exiting ...");
                }
                jni.system_exit(0);
                return;
            }
            Command::DumpTraces => p.command_dump_traces(),
            Command::CpuSamples { cutoff } => p.command_cpu_samples(f64::from(cutoff)),
            Command::Control { sub, argument } => {
                if let Err(message) = p.command_control(sub, argument) {
                    report(
                        ErrorKind::Command,
                        format!("CONTROL command ignored: {message}"),
                    );
                }
            }
            Command::Unknown(tag) => report(
                ErrorKind::Command,
                format!("unknown command 0x{tag:02x} from the front-end, ignored"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![tag];
        bytes.extend_from_slice(&7u32.to_be_bytes());
        bytes.extend_from_slice(&(body.len() as u32).to_be_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn commands_parse() {
        let mut sites = 0x3u16.to_be_bytes().to_vec();
        sites.extend_from_slice(&0.25f32.to_bits().to_be_bytes());
        let mut control = 3u16.to_be_bytes().to_vec();
        control.extend_from_slice(&0x5000_0007u64.to_be_bytes());
        let mut input: Vec<u8> = [
            frame(0x01, &[]),
            frame(0x03, &sites),
            frame(0x08, &control),
            frame(0x42, &[1, 2, 3]),
        ]
        .concat();
        input.extend_from_slice(&frame(0x08, &[0, 7, 0, 12]));
        input.push(0xFF);
        let mut stream = &input[..];
        assert_eq!(read_command(&mut stream), Command::ForceGc);
        assert_eq!(
            read_command(&mut stream),
            Command::AllocSites {
                flags: 3,
                cutoff: 0.25
            }
        );
        assert_eq!(
            read_command(&mut stream),
            Command::Control {
                sub: 3,
                argument: 0x5000_0007
            }
        );
        assert_eq!(read_command(&mut stream), Command::Unknown(0x42));
        assert_eq!(
            read_command(&mut stream),
            Command::Control {
                sub: 7,
                argument: 12
            }
        );
        assert_eq!(read_command(&mut stream), Command::End);
        assert_eq!(
            read_command(&mut stream),
            Command::End,
            "a closed stream ends quietly"
        );
    }

    #[test]
    fn a_truncated_command_ends_the_listener() {
        let bytes = frame(0x03, &[0, 1]);
        assert_eq!(read_command(&mut &bytes[..4]), Command::End);
        let mut huge = vec![0x03, 0, 0, 0, 0];
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(read_command(&mut &huge[..]), Command::End);
    }
}
