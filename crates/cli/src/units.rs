//! Owns how sizes and counts read in reports: bytes in B, KB, MB, GB and TB (powers of
//! 1,024, as Eclipse MAT and VisualVM count them) with three significant digits, counts
//! with thousands separators.

/// `bytes` in the largest unit it reaches: `512 B`, `1.23 KB`, `54.8 MB`, `1.10 GB`.
pub fn bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KB", "MB", "GB", "TB", "PB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1023.95 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let text = if value >= 99.95 {
        format!("{value:.0}")
    } else if value >= 9.995 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    };
    format!("{text} {}", UNITS[unit])
}

/// `n` with a comma every three digits: `14,200,000`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_counts_read_at_a_glance() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1024), "1.00 KB");
        assert_eq!(bytes(1536), "1.50 KB");
        assert_eq!(bytes(54_786_304), "52.2 MB");
        assert_eq!(bytes(1_048_575), "1.00 MB");
        assert_eq!(bytes(200 << 20), "200 MB");
        assert_eq!(bytes(1_181_116_006), "1.10 GB");
        assert_eq!(bytes(u64::MAX), "16384 PB");
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(14_200_000), "14,200,000");
    }
}
