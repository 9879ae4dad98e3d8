//! Truncated and corrupt files give errors naming the offset and record kind, never panics.

use hprof_format::{ErrorKind, IdSize, Records, Version};

use crate::sample::{every_kind, layouts, slice_events, stream_events};

/// Offsets where a record (or the header) ends: cutting there leaves a valid, shorter file.
fn boundaries(bytes: &[u8]) -> Vec<usize> {
    let (_, mut records) = Records::new(bytes).unwrap();
    let mut ends = vec![records.offset() as usize];
    while records.next().unwrap().is_some() {
        ends.push(records.offset() as usize);
    }
    ends
}

#[test]
fn every_prefix_is_an_error_or_ends_at_a_record_boundary() {
    for (version, id_size) in layouts() {
        let bytes = every_kind(version, id_size, 300);
        let ends = boundaries(&bytes);
        for len in 0..bytes.len() {
            let prefix = &bytes[..len];
            let slice = slice_events(prefix);
            let stream = stream_events(prefix);
            if ends.contains(&len) {
                assert!(
                    slice.is_ok(),
                    "{version:?} {id_size:?} cut at record end {len}: {slice:?}"
                );
                assert_eq!(slice, stream);
                continue;
            }
            let err = slice.expect_err("a cut inside a record must fail");
            let message = err.to_string();
            assert!(err.offset() as usize <= len, "{message}");
            assert!(
                message.contains(&format!("offset 0x{:x}", err.offset())),
                "{message}"
            );
            if len > 31 {
                assert!(
                    matches!(*err.kind(), ErrorKind::Truncated { .. }),
                    "{len}: {message}"
                );
                assert!(message.starts_with("truncated "), "{message}");
            }
            let stream_err = stream.expect_err("the stream reader must fail too");
            assert!(
                matches!(
                    *stream_err.kind(),
                    ErrorKind::Truncated { .. }
                        | ErrorKind::BadMagic
                        | ErrorKind::UnsupportedVersion
                        | ErrorKind::BadIdSize(_)
                ),
                "{stream_err}"
            );
        }
    }
}

#[test]
fn corrupt_fields_are_named() {
    let bytes = every_kind(Version::V1_0_2, IdSize::Eight, 64 << 20);
    let first_record = boundaries(&bytes)[0];

    let mut bad_tag = bytes.clone();
    bad_tag[first_record] = 0x55;
    let err = slice_events(&bad_tag).unwrap_err();
    assert_eq!(err.offset() as usize, first_record);
    assert!(err.to_string().contains("0x55"), "{err}");

    // A record length running past the end of the file.
    let mut long = bytes.clone();
    long[first_record + 5..first_record + 9].copy_from_slice(&u32::MAX.to_be_bytes());
    let err = slice_events(&long).unwrap_err();
    assert!(err.to_string().contains("CONTROL SETTINGS"), "{err}");
    assert!(matches!(*err.kind(), ErrorKind::Truncated { .. }));

    // A CONTROL SETTINGS record longer than its fields.
    let mut padded = bytes[..first_record].to_vec();
    padded.extend_from_slice(&[0x0e, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 3, 0, 8, 0]);
    let err = slice_events(&padded).unwrap_err();
    assert!(
        matches!(*err.kind(), ErrorKind::LengthMismatch { .. }),
        "{err}"
    );

    // A primitive array with an unknown element type.
    let (header, mut records) = Records::new(&bytes).unwrap();
    let mut array_type_at = None;
    while let Some((_, record)) = records.next().unwrap() {
        if let hprof_format::Record::HeapDumpSegment(body) = record {
            let mut heap = body.records(header.id_size);
            while let Some((offset, sub)) = heap.next().unwrap() {
                if let hprof_format::HeapRecord::PrimitiveArrayDump { .. } = sub {
                    array_type_at.get_or_insert(offset as usize + 1 + 8 + 4 + 4);
                }
            }
        }
    }
    let mut bad_type = bytes.clone();
    bad_type[array_type_at.unwrap()] = 3;
    let err = slice_events(&bad_type).unwrap_err();
    assert!(
        matches!(*err.kind(), ErrorKind::BadBasicType { code: 3, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("PRIMITIVE ARRAY DUMP"), "{err}");

    let err = slice_events(b"JAVA PROFILE 1.0.3\0\0\0\0\x08\0\0\0\0\0\0\0\0").unwrap_err();
    assert!(
        matches!(*err.kind(), ErrorKind::UnsupportedVersion),
        "{err}"
    );
    let err = slice_events(b"JAVA PROFILE 1.0.2\0\0\0\0\x05\0\0\0\0\0\0\0\0").unwrap_err();
    assert!(matches!(*err.kind(), ErrorKind::BadIdSize(5)), "{err}");
    assert!(slice_events(b"PK\x03\x04 a zip file").is_err());
}
