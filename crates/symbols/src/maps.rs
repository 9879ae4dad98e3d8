//! The executable mappings of a process, from `/proc/PID/maps`.

/// One executable mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// Address past the last.
    pub end: u64,
    /// Offset in the file of `start`.
    pub offset: u64,
    /// The device and inode of the file (`fe:01 1234`), what tells a replaced file apart.
    pub inode: (String, u64),
    /// The file's path, or the kernel's name of the area (`[vdso]`), or empty for anonymous
    /// memory.
    pub path: String,
}

/// The executable mappings listed in `maps` (the text of a `/proc/PID/maps`), by address.
pub fn parse(maps: &str) -> Vec<Mapping> {
    let mut mappings: Vec<Mapping> = maps.lines().filter_map(parse_line).collect();
    mappings.sort_by_key(|m| m.start);
    mappings
}

fn parse_line(line: &str) -> Option<Mapping> {
    let mut fields = line.splitn(6, ' ');
    let range = fields.next()?;
    let perms = fields.next()?;
    let offset = fields.next()?;
    let dev = fields.next()?;
    let inode = fields.next()?;
    let path = fields.next().unwrap_or("").trim_start();
    if perms.as_bytes().get(2) != Some(&b'x') {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    if end <= start {
        return None;
    }
    Some(Mapping {
        start,
        end,
        offset: u64::from_str_radix(offset, 16).ok()?,
        inode: (dev.to_string(), inode.parse().ok()?),
        path: path.to_string(),
    })
}

/// The file name of `path` (`libc.so.6` for `/usr/lib/x86_64-linux-gnu/libc.so.6`), without
/// the ` (deleted)` the kernel appends to a file removed since it was mapped.
pub fn file_name(path: &str) -> &str {
    let path = path.strip_suffix(" (deleted)").unwrap_or(path);
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executable_mappings_are_kept_with_their_files() {
        let maps = "\
55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 393217                     /usr/bin/java
7f1c2a428000-7f1c2a5bd000 r-xp 00028000 fe:01 1234                       /usr/lib/x86_64-linux-gnu/libc.so.6
7f1c29000000-7f1c29270000 rwxp 00000000 00:00 0 
7ffd1b5f0000-7ffd1b5f2000 r-xp 00000000 00:00 0                          [vdso]
7f1c20000000-7f1c20100000 r-xp 00100000 fe:01 77                         /tmp/libgone.so (deleted)
garbage line
";
        let m = parse(maps);
        assert_eq!(m.len(), 4);
        assert_eq!(
            m[0],
            Mapping {
                start: 0x7f1c20000000,
                end: 0x7f1c20100000,
                offset: 0x100000,
                inode: ("fe:01".into(), 77),
                path: "/tmp/libgone.so (deleted)".into(),
            }
        );
        assert_eq!(m[1].path, "");
        assert_eq!(m[2].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
        assert_eq!(m[2].offset, 0x28000);
        assert_eq!(m[3].path, "[vdso]");
        assert_eq!(file_name(&m[0].path), "libgone.so");
        assert_eq!(file_name(&m[2].path), "libc.so.6");
        assert_eq!(file_name("[vdso]"), "[vdso]");
    }
}
