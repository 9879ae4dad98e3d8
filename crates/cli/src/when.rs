//! Reads the times `--from` and `--to` take: seconds from the recording's start, or a
//! wall-clock time (local unless it names its zone).

use anyhow::{Result, bail};
use chrono::{DateTime, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};

/// The wall-clock nanoseconds since the epoch that `text` names, for a recording that
/// started at `start` (nanoseconds since the epoch): `12.5` or `12.5s` (seconds from the
/// start), `14:03:12[.250]` (that time of the day the recording started, or of the next day
/// when that is before the start), `2026-11-26T14:03:12[.250]` (a space may stand for the
/// `T`), with `Z` or `+01:00` for another zone than the local one.
pub fn resolve(text: &str, start: i64) -> Result<i64> {
    let text = text.trim();
    let seconds = text.strip_suffix('s').unwrap_or(text);
    if let Ok(s) = seconds.parse::<f64>() {
        if !s.is_finite() || s < 0.0 {
            bail!("seconds from the start must be a number of 0 or more");
        }
        return Ok(start.saturating_add((s * 1e9).round() as i64));
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(&text.replacen(' ', "T", 1)) {
        return nanos(t.timestamp_nanos_opt());
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(&text.replacen(' ', "T", 1), format) {
            return local(t);
        }
    }
    for format in ["%H:%M:%S%.f", "%H:%M"] {
        if let Ok(time) = NaiveTime::parse_from_str(text, format) {
            let started = DateTime::from_timestamp_nanos(start).with_timezone(&Local);
            let day: NaiveDate = started.date_naive();
            let at = local(day.and_time(time))?;
            // A time of day before the start is on the next day (a recording across midnight).
            return if at < start {
                match day.succ_opt() {
                    Some(next) => local(next.and_time(time)),
                    None => Ok(at),
                }
            } else {
                Ok(at)
            };
        }
    }
    bail!(
        "not a time: give seconds from the start (12.5) or a wall-clock time (14:03:12, 2026-11-26T14:03:12, with Z or +01:00 for another zone)"
    )
}

fn local(t: NaiveDateTime) -> Result<i64> {
    match Local.from_local_datetime(&t).earliest() {
        Some(t) => nanos(t.timestamp_nanos_opt()),
        None => bail!("{t} does not exist in the local time zone"),
    }
}

fn nanos(n: Option<i64>) -> Result<i64> {
    n.ok_or_else(|| anyhow::anyhow!("the time is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_zoned_times() {
        let start = 1_700_000_000_000_000_000;
        assert_eq!(resolve("2", start).unwrap(), start + 2_000_000_000);
        assert_eq!(resolve("0.25s", start).unwrap(), start + 250_000_000);
        assert_eq!(
            resolve("2023-11-14T22:13:21Z", start).unwrap(),
            start + 1_000_000_000
        );
        assert_eq!(
            resolve("2023-11-14 23:13:21+01:00", start).unwrap(),
            start + 1_000_000_000
        );
        assert!(resolve("-1", start).is_err());
        assert!(resolve("soon", start).is_err());
    }

    #[test]
    fn a_time_of_day_is_on_the_recordings_day() {
        let start = 1_700_000_000_000_000_000;
        let started = DateTime::from_timestamp_nanos(start).with_timezone(&Local);
        let later = started + chrono::Duration::seconds(90);
        let text = later.format("%H:%M:%S%.f").to_string();
        assert_eq!(resolve(&text, start).unwrap(), start + 90_000_000_000);
    }
}
