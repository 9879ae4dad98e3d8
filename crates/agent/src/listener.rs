//! Owns the `net=` command listener: an agent thread that reads the front-end's commands
//! from the socket the output goes to, and carries them out.
//!
//! Each command is `u1 tag, u4 serial, u4 length, body` (big-endian): 0x01 force GC, 0x02
//! dump heap, 0x03 allocation sites (`u2 flags, u4 cutoff as float`), 0x04 heap summary,
//! 0x05 exit the VM, 0x06 dump traces, 0x07 CPU samples (`u2 unused, u4 cutoff`), 0x08
//! control (`u2 sub-command` and its argument), 0xFF end. Unlike the original, a closed
//! connection ends the listener quietly, ids are read in network byte order, and an unknown
//! command is reported and skipped, never ending the VM.

use std::io::Read;

use crate::jvmti::Jni;
use crate::profiler;

/// Name of the listener thread (agent threads' names start with `HPROF `).
pub const THREAD_NAME: &str = "HPROF listener thread";

/// The longest command body accepted.
const MAX_BODY: u32 = 1 << 16;

/// A command from the front-end.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// 0x01.
    ForceGc,
    /// 0x02.
    DumpHeap,
    /// 0x03.
    AllocSites {
        /// 0x1 incremental, 0x2 by allocated bytes, 0x4 force GC.
        flags: u16,
        /// Cutoff ratio.
        cutoff: f32,
    },
    /// 0x04.
    HeapSummary,
    /// 0x05.
    ExitVm,
    /// 0x06.
    DumpTraces,
    /// 0x07.
    CpuSamples {
        /// Cutoff ratio.
        cutoff: f32,
    },
    /// 0x08.
    Control {
        /// Sub-command.
        sub: u16,
        /// Its argument: a thread object id (3, 4) or a depth (7).
        argument: u64,
    },
    /// 0xFF, or the connection closed.
    End,
    /// A tag this agent does not know.
    Unknown(u8),
}

fn u16_at(body: &[u8], at: usize) -> u16 {
    body.get(at..at + 2)
        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
}

fn u32_at(body: &[u8], at: usize) -> u32 {
    body.get(at..at + 4)
        .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Parses one command's body.
pub fn parse(tag: u8, body: &[u8]) -> Command {
    match tag {
        0x01 => Command::ForceGc,
        0x02 => Command::DumpHeap,
        0x03 => Command::AllocSites {
            flags: u16_at(body, 0),
            cutoff: f32::from_bits(u32_at(body, 2)),
        },
        0x04 => Command::HeapSummary,
        0x05 => Command::ExitVm,
        0x06 => Command::DumpTraces,
        0x07 => Command::CpuSamples {
            cutoff: f32::from_bits(u32_at(body, 2)),
        },
        0x08 => {
            let sub = u16_at(body, 0);
            let rest = &body[body.len().min(2)..];
            let argument = match rest.len() {
                8.. => u64::from_be_bytes(rest[..8].try_into().unwrap_or([0; 8])),
                4..=7 => u64::from(u32_at(rest, 0)),
                2..=3 => u64::from(u16_at(rest, 0)),
                _ => 0,
            };
            Command::Control { sub, argument }
        }
        0xFF => Command::End,
        other => Command::Unknown(other),
    }
}

/// Reads the next command; `End` when the connection closes or breaks.
pub fn read_command(stream: &mut impl Read) -> Command {
    let mut head = [0u8; 9];
    if stream.read_exact(&mut head[..1]).is_err() {
        return Command::End;
    }
    if head[0] == 0xFF {
        return Command::End;
    }
    if stream.read_exact(&mut head[1..]).is_err() {
        return Command::End;
    }
    let length = u32::from_be_bytes([head[5], head[6], head[7], head[8]]);
    if length > MAX_BODY {
        eprintln!(
            "HPROF ERROR: command 0x{:02x} from the front-end is {length} bytes long; the listener stops",
            head[0]
        );
        return Command::End;
    }
    let mut body = vec![0u8; length as usize];
    if stream.read_exact(&mut body).is_err() {
        return Command::End;
    }
    parse(head[0], &body)
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
                    eprintln!("HPROF ERROR: CONTROL command ignored: {message}");
                }
            }
            Command::Unknown(tag) => {
                eprintln!("HPROF ERROR: unknown command 0x{tag:02x} from the front-end, ignored")
            }
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
