//! Owns the commands a `net=` front-end sends the agent over the connection its output goes
//! to: one type, encoded by the front-end (`hprof listen`) and decoded by the agent's listener.
//!
//! Each command is `u1 tag, u4 serial, u4 length, body` (big-endian): 0x01 force GC, 0x02
//! dump heap, 0x03 allocation sites (`u2 flags, u4 cutoff as float`), 0x04 heap summary,
//! 0x05 exit the VM, 0x06 dump traces, 0x07 CPU samples (`u2 unused, u4 cutoff`), 0x08
//! control (`u2 sub-command` and its argument: a thread object id for 3 and 4, a `u2` depth
//! for 7, none otherwise), and a lone 0xFF byte ends the session.

use std::io::Read;

/// The longest command body a reader accepts.
pub const MAX_BODY: u32 = 1 << 16;

/// A command from the front-end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    /// 0x01: collect garbage.
    ForceGc,
    /// 0x02: dump the heap.
    DumpHeap,
    /// 0x03: list allocation sites.
    AllocSites {
        /// 0x1 incremental, 0x2 by allocated bytes, 0x4 force GC.
        flags: u16,
        /// Cutoff ratio.
        cutoff: f32,
    },
    /// 0x04: heap summary.
    HeapSummary,
    /// 0x05: make the program exit.
    ExitVm,
    /// 0x06: write every trace not written yet.
    DumpTraces,
    /// 0x07: CPU samples since the last listing.
    CpuSamples {
        /// Cutoff ratio.
        cutoff: f32,
    },
    /// 0x08: a control sub-command ([`Control`]'s constants).
    Control {
        /// Sub-command.
        sub: u16,
        /// Its argument: a thread object id (3, 4) or a depth (7); 0 for the others.
        argument: u64,
    },
    /// 0xFF, or the connection closed.
    End,
    /// A tag no agent knows.
    Unknown(u8),
}

/// The control sub-commands (0x08).
#[derive(Debug)]
pub struct Control;

impl Control {
    /// CPU sampling on, for the thread whose object id is the argument (0: all).
    pub const SAMPLING_ON: u16 = 3;
    /// CPU sampling off, for the thread whose object id is the argument (0: all).
    pub const SAMPLING_OFF: u16 = 4;
    /// Forget the CPU samples.
    pub const CLEAR_CPU: u16 = 5;
    /// Forget the allocation sites.
    pub const CLEAR_SITES: u16 = 6;
    /// The stack depth of later traces is the argument.
    pub const DEPTH: u16 = 7;

    /// Bytes of the argument of sub-command `sub` on the wire.
    fn argument_len(sub: u16) -> usize {
        match sub {
            Control::SAMPLING_ON | Control::SAMPLING_OFF => 8,
            Control::DEPTH => 2,
            _ => 0,
        }
    }
}

/// A command whose body is longer than [`MAX_BODY`]: no front-end sends one, so the
/// connection is not one to follow further.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong {
    /// The command's tag.
    pub tag: u8,
    /// The length it gave.
    pub length: u32,
}

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "command 0x{:02x} from the front-end is {} bytes long",
            self.tag, self.length
        )
    }
}

impl std::error::Error for TooLong {}

fn u16_at(body: &[u8], at: usize) -> u16 {
    body.get(at..at + 2)
        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
}

fn u32_at(body: &[u8], at: usize) -> u32 {
    body.get(at..at + 4)
        .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

impl Command {
    /// The command's bytes on the wire, with serial number `serial`.
    pub fn encode(&self, serial: u32) -> Vec<u8> {
        let (tag, body): (u8, Vec<u8>) = match *self {
            Command::ForceGc => (0x01, Vec::new()),
            Command::DumpHeap => (0x02, Vec::new()),
            Command::AllocSites { flags, cutoff } => {
                let mut body = flags.to_be_bytes().to_vec();
                body.extend_from_slice(&cutoff.to_bits().to_be_bytes());
                (0x03, body)
            }
            Command::HeapSummary => (0x04, Vec::new()),
            Command::ExitVm => (0x05, Vec::new()),
            Command::DumpTraces => (0x06, Vec::new()),
            Command::CpuSamples { cutoff } => {
                let mut body = 0u16.to_be_bytes().to_vec();
                body.extend_from_slice(&cutoff.to_bits().to_be_bytes());
                (0x07, body)
            }
            Command::Control { sub, argument } => {
                let mut body = sub.to_be_bytes().to_vec();
                let bytes = argument.to_be_bytes();
                body.extend_from_slice(&bytes[8 - Control::argument_len(sub)..]);
                (0x08, body)
            }
            Command::End => return vec![0xFF],
            Command::Unknown(tag) => (tag, Vec::new()),
        };
        let mut bytes = vec![tag];
        bytes.extend_from_slice(&serial.to_be_bytes());
        bytes.extend_from_slice(&(body.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&body);
        bytes
    }

    /// The command of tag `tag` with body `body` (fields a short body lacks read as 0).
    pub fn decode(tag: u8, body: &[u8]) -> Command {
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
                // The argument's width is what the front-end sent.
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

    /// Reads the next command from `stream`: [`Command::End`] when the connection closes or
    /// breaks, also in the middle of a command; an error for a body over [`MAX_BODY`] bytes.
    pub fn read(stream: &mut impl Read) -> Result<Command, TooLong> {
        let mut head = [0u8; 9];
        if stream.read_exact(&mut head[..1]).is_err() || head[0] == 0xFF {
            return Ok(Command::End);
        }
        if stream.read_exact(&mut head[1..]).is_err() {
            return Ok(Command::End);
        }
        let length = u32::from_be_bytes([head[5], head[6], head[7], head[8]]);
        if length > MAX_BODY {
            return Err(TooLong {
                tag: head[0],
                length,
            });
        }
        let mut body = vec![0u8; length as usize];
        if stream.read_exact(&mut body).is_err() {
            return Ok(Command::End);
        }
        Ok(Command::decode(head[0], &body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_reads_back_as_it_was_sent() {
        let commands = [
            Command::ForceGc,
            Command::DumpHeap,
            Command::AllocSites {
                flags: 0x6,
                cutoff: 0.25,
            },
            Command::HeapSummary,
            Command::ExitVm,
            Command::DumpTraces,
            Command::CpuSamples { cutoff: 0.0001 },
            Command::Control {
                sub: Control::SAMPLING_ON,
                argument: 0x5000_0007,
            },
            Command::Control {
                sub: Control::SAMPLING_OFF,
                argument: 0,
            },
            Command::Control {
                sub: Control::CLEAR_CPU,
                argument: 0,
            },
            Command::Control {
                sub: Control::CLEAR_SITES,
                argument: 0,
            },
            Command::Control {
                sub: Control::DEPTH,
                argument: 12,
            },
            Command::Unknown(0x42),
        ];
        let mut wire = Vec::new();
        for (serial, c) in commands.iter().enumerate() {
            wire.extend_from_slice(&c.encode(serial as u32 + 1));
        }
        wire.extend_from_slice(&Command::End.encode(0));
        let mut stream = &wire[..];
        for c in &commands {
            assert_eq!(Command::read(&mut stream), Ok(*c));
        }
        assert_eq!(Command::read(&mut stream), Ok(Command::End));
        assert!(stream.is_empty());
        assert_eq!(
            Command::read(&mut stream),
            Ok(Command::End),
            "a closed stream ends quietly"
        );
    }

    #[test]
    fn the_wire_format_is_the_originals() {
        assert_eq!(Command::ForceGc.encode(1), [1, 0, 0, 0, 1, 0, 0, 0, 0]);
        let depth = Command::Control {
            sub: Control::DEPTH,
            argument: 3,
        }
        .encode(1);
        assert_eq!(&depth[9..], &[0, 7, 0, 3]);
        let sites = Command::AllocSites {
            flags: 0x6,
            cutoff: 0.5,
        }
        .encode(9);
        assert_eq!(&sites[1..5], &9u32.to_be_bytes());
        assert_eq!(&sites[9..11], &0x6u16.to_be_bytes());
        assert_eq!(&sites[11..15], &0.5f32.to_bits().to_be_bytes());
        let mut huge = vec![0x03, 0, 0, 0, 0];
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            Command::read(&mut &huge[..]),
            Err(TooLong {
                tag: 3,
                length: u32::MAX
            })
        );
    }
}
