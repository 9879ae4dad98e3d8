//! The kernel's function symbols, from `/proc/kallsyms`.

use crate::table::SymbolTable;

/// The kernel's text symbols in `text` (the contents of `/proc/kallsyms`): `None` when the
/// kernel hides their addresses (every address 0: `kptr_restrict`, or a reader without
/// `CAP_SYSLOG`). A module's symbol is named `name [module]`. `limit` bounds the table's bytes
/// (the symbols beyond it are left out).
pub fn parse(text: &str, limit: usize) -> Option<SymbolTable> {
    let mut table = SymbolTable::new();
    let mut bytes = 0;
    let mut name = String::new();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        let (Some(address), Some(kind), Some(symbol)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if !matches!(kind, "t" | "T" | "w" | "W") {
            continue;
        }
        let Ok(address) = u64::from_str_radix(address, 16) else {
            continue;
        };
        if address == 0 {
            continue;
        }
        name.clear();
        name.push_str(symbol);
        if let Some(module) = fields.next() {
            name.push(' ');
            name.push_str(module);
        }
        bytes += name.len() + 24;
        if bytes > limit {
            break;
        }
        table.push(address, 0, &name, kind == "T" || kind == "W");
    }
    table.finish();
    (!table.is_empty()).then_some(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_symbols_are_kept_by_address() {
        let text = "\
ffffffff81000000 T _stext
ffffffff81001000 T do_syscall_64
ffffffff81002000 t __x64_sys_getpid
ffffffff81800000 D some_data
ffffffffc0a01000 t ext4_file_write_iter\t[ext4]
";
        let t = parse(text, 1 << 20).unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(t.find(0xffffffff81001010).unwrap().name, "do_syscall_64");
        assert_eq!(t.find(0xffffffff81002fff).unwrap().name, "__x64_sys_getpid");
        assert_eq!(
            t.find(0xffffffffc0a01234).unwrap().name,
            "ext4_file_write_iter [ext4]"
        );
        assert!(t.find(0xffffffff80000000).is_none());
        // Hidden addresses: nothing to name with.
        assert!(
            parse(
                "0000000000000000 T _stext\n0000000000000000 T do_syscall_64\n",
                1 << 20
            )
            .is_none()
        );
        // The limit keeps the first symbols.
        assert_eq!(parse(text, 70).unwrap().len(), 2);
    }
}
