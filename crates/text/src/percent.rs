//! Percent columns as C's `%5.2f%%` prints them.

/// Formats `part / total` as a percentage with two decimals, right-aligned in five
/// columns like C's `%5.2f`. A zero total gives `0.00` rather than the original's `nan`.
pub(crate) fn percent(ratio: f64) -> String {
    let value = if ratio.is_finite() {
        ratio * 100.0
    } else {
        0.0
    };
    format!("{value:5.2}")
}

/// `part / total` as a float, zero when `total` is zero.
pub(crate) fn ratio(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_c_printf() {
        // Expected values printed by C's printf("%5.2f", x).
        assert_eq!(percent(0.00125), " 0.12");
        assert_eq!(percent(0.00375), " 0.38");
        assert_eq!(percent(0.4907407407), "49.07");
        assert_eq!(percent(1.0), "100.00");
        assert_eq!(percent(f64::NAN), " 0.00");
        assert_eq!(percent(ratio(106, 216)), "49.07");
        assert_eq!(percent(ratio(0, 0)), " 0.00");
    }
}
