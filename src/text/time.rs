//! Times as text: RFC 3339 in UTC, written digit by digit (every JSON line has one). Shared by
//! the views (JSON, the tree's timestamp notes, tshark's fields), none of which owns it.

use std::io::Write;

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// RFC 3339 in UTC with nanoseconds: `2026-11-30T00:59:13.123456789Z`.
pub fn rfc3339(ts_nanos: i64) -> String {
    let mut w = Vec::with_capacity(30);
    push_rfc3339(&mut w, ts_nanos);
    String::from_utf8(w).unwrap_or_default()
}

/// [`rfc3339`], appended to `w`: every message's `time`, so its digits are pushed rather than
/// formatted.
pub(crate) fn push_rfc3339(w: &mut Vec<u8>, ts_nanos: i64) {
    let secs = ts_nanos.div_euclid(1_000_000_000);
    let nanos = ts_nanos.rem_euclid(1_000_000_000);
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    if !(0..=9999).contains(&y) {
        // Not reached with i64 nanoseconds (years 1677 to 2262); kept so that no year is
        // written other than as `{:04}` writes it.
        let _ = write!(
            w,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
            sod / 3600,
            (sod / 60) % 60,
            sod % 60
        );
        return;
    }
    push_digits(w, y as u64, 4);
    w.push(b'-');
    push_digits(w, u64::from(m), 2);
    w.push(b'-');
    push_digits(w, u64::from(d), 2);
    w.push(b'T');
    push_digits(w, (sod / 3600) as u64, 2);
    w.push(b':');
    push_digits(w, ((sod / 60) % 60) as u64, 2);
    w.push(b':');
    push_digits(w, (sod % 60) as u64, 2);
    w.push(b'.');
    push_digits(w, nanos as u64, 9);
    w.push(b'Z');
}

/// The last `n` decimal digits of `v`, zero-padded (`v` has at most `n` digits here).
fn push_digits(w: &mut Vec<u8>, mut v: u64, n: usize) {
    let at = w.len();
    w.resize(at + n, b'0');
    for i in (at..at + n).rev() {
        if let Some(c) = w.get_mut(i) {
            *c = b'0' + (v % 10) as u8;
        }
        v /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_the_format_string_wrote_them() {
        let old = |ts: i64| {
            let secs = ts.div_euclid(1_000_000_000);
            let nanos = ts.rem_euclid(1_000_000_000);
            let (y, m, d) = civil(secs.div_euclid(86_400));
            let sod = secs.rem_euclid(86_400);
            format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
                sod / 3600,
                (sod / 60) % 60,
                sod % 60
            )
        };
        for ts in [0, -1, 1, 1_764_464_353_123_456_789, i64::MIN, i64::MAX] {
            assert_eq!(rfc3339(ts), old(ts), "{ts}");
        }
    }

    #[test]
    fn times_are_rfc3339_with_nanoseconds() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999999999Z");
        assert_eq!(
            rfc3339(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000000000Z"
        );
    }
}
