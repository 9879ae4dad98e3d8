//! Fuzz target: feeds arbitrary bytes to both HPROF readers. Neither may panic, loop forever
//! or allocate from a length field; both must agree on files they accept.
//!
//! Run with `cargo fuzz run read` from the repository root (needs a nightly toolchain).

#![no_main]

use hprof_format::{Event, Record, Records, StreamReader};
use libfuzzer_sys::fuzz_target;

fn slice_count(data: &[u8]) -> Option<usize> {
    let (header, mut records) = Records::new(data).ok()?;
    let mut n = 0;
    loop {
        match records.next() {
            Ok(Some((_, Record::HeapDump(body) | Record::HeapDumpSegment(body)))) => {
                n += 1;
                let mut heap = body.records(header.id_size);
                loop {
                    match heap.next() {
                        Ok(Some((_, hprof_format::HeapRecord::ClassDump(class)))) => {
                            n += 1 + class.constant_pool().count() + class.static_fields().count();
                            n += class.instance_fields().count();
                        }
                        Ok(Some(_)) => n += 1,
                        Ok(None) => break,
                        Err(_) => return None,
                    }
                }
                n += 1;
            }
            Ok(Some(_)) => n += 1,
            Ok(None) => return Some(n),
            Err(_) => return None,
        }
    }
}

fn stream_count(data: &[u8]) -> Option<usize> {
    let mut reader = StreamReader::new(data).ok()?;
    let mut n = 0;
    loop {
        match reader.next_event() {
            Ok(Some(Event::HeapRecord(_, hprof_format::HeapRecord::ClassDump(class)))) => {
                n += 1 + class.constant_pool().count() + class.static_fields().count();
                n += class.instance_fields().count();
            }
            Ok(Some(_)) => n += 1,
            Ok(None) => return Some(n),
            Err(_) => return None,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let slice = slice_count(data);
    let stream = stream_count(data);
    if let (Some(a), Some(b)) = (slice, stream) {
        assert_eq!(a, b, "readers disagree on a file both accept");
    }
    if slice.is_some() {
        assert!(stream.is_some(), "the stream reader rejects a file the slice reader accepts");
    }
});
