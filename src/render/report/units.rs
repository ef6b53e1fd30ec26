//! Numbers as the page shows them: with their unit and three significant digits (a reader
//! compares magnitudes, and the JSON keeps every digit), counts whole with thousands
//! separated, times of the capture as seconds from its first message and as wall-clock time.

/// `v` with three significant digits (fewer when they are zeros after the point; at most
/// six decimals).
fn sig3(v: f64) -> String {
    let a = v.abs();
    let decimals = if a == 0.0 || a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        // 0.0123 → 4 decimals: three significant digits, at most 6 decimals.
        (2 - a.log10().floor() as i32).clamp(2, 6) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        let t = s.trim_end_matches('0').trim_end_matches('.');
        if t == "-0" {
            "0".into()
        } else {
            t.to_string()
        }
    } else {
        s
    }
}

/// A duration given in milliseconds: `0.83 ms`, `38.2 ms`, `497 ms`, `6.91 s`, `2 min 5 s`,
/// `1 h 2 min`.
pub fn duration_ms(ms: f64) -> String {
    if !ms.is_finite() {
        return "-".into();
    }
    let a = ms.abs();
    if a < 1000.0 {
        format!("{} ms", sig3(ms))
    } else if a < 60_000.0 {
        format!("{} s", sig3(ms / 1000.0))
    } else if a < 3_600_000.0 {
        let s = (ms / 1000.0).round() as i64;
        format!("{} min {} s", s / 60, s % 60)
    } else {
        let m = (ms / 60_000.0).round() as i64;
        format!("{} h {} min", m / 60, m % 60)
    }
}

/// A duration in nanoseconds, as [`duration_ms`].
pub fn duration_ns(ns: i64) -> String {
    duration_ms(ns as f64 / 1e6)
}

/// A whole count with thousands separated: `17,787`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A signed whole count, as [`count`].
pub fn count_i(n: i64) -> String {
    if n < 0 {
        format!("-{}", count(n.unsigned_abs()))
    } else {
        count(n as u64)
    }
}

/// A quantity with a decimal SI prefix: `950`, `1.75 k`, `12.3 M` (then `unit`, if any).
pub fn si(v: f64, unit: &str) -> String {
    let (scaled, prefix) = si_split(v);
    let sep = if unit.is_empty() && prefix.is_empty() {
        ""
    } else {
        " "
    };
    format!("{}{sep}{prefix}{unit}", sig3(scaled))
}

/// `v` scaled to its decimal prefix.
fn si_split(v: f64) -> (f64, &'static str) {
    let a = v.abs();
    for (f, p) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        // 999.95 k prints as 1000 k with three digits: round first, then choose.
        if a >= f * 0.9995 {
            return (v / f, p);
        }
    }
    (v, "")
}

/// Bytes: `217 B`, `16.5 kB`, `1.2 MB`.
pub fn bytes(n: f64) -> String {
    si(n, "B")
}

/// A rate per second: `0.54 records/s`, `1.75 krecords/s` reads badly, so the prefix goes
/// to the number: `1.75 k records/s`.
pub fn per_second(v: f64, what: &str) -> String {
    let (scaled, prefix) = si_split(v);
    let p = if prefix.is_empty() {
        String::new()
    } else {
        format!(" {prefix}")
    };
    format!("{}{p} {what}/s", sig3(scaled))
}

/// A ratio: `2.31×`.
pub fn ratio(v: f64) -> String {
    format!("{}×", sig3(v))
}

/// A time of the capture, as seconds from its first message: `8.32 s`, `2:05.3` past a
/// minute.
pub fn since_start(ts_ns: i64, start_ns: i64) -> String {
    let s = (ts_ns - start_ns) as f64 / 1e9;
    if s.abs() < 60.0 {
        format!("{} s", sig_time(s))
    } else {
        let whole = s.floor() as i64;
        format!("{}:{:02}", whole / 60, whole % 60)
    }
}

/// Seconds with millisecond precision, trailing zeros dropped.
fn sig_time(s: f64) -> String {
    let t = format!("{s:.3}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    t.to_string()
}

/// Wall-clock time (UTC) of a timestamp: `14:05:03.123`.
pub fn wall_time(ts_ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ts_ns)
        .format("%H:%M:%S%.3f")
        .to_string()
}

/// Wall-clock date and time (UTC): `2026-11-30 14:05:03 UTC`.
pub fn wall_datetime(ts_ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ts_ns)
        .format("%Y-%m-%d %H:%M:%S UTC")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_keep_three_significant_digits_and_change_unit() {
        assert_eq!(duration_ms(0.826), "0.826 ms");
        assert_eq!(duration_ms(0.05), "0.05 ms");
        assert_eq!(duration_ms(7.2), "7.2 ms");
        assert_eq!(duration_ms(3.579), "3.58 ms");
        assert_eq!(duration_ms(38.215), "38.2 ms");
        assert_eq!(duration_ms(497.434), "497 ms");
        assert_eq!(duration_ms(999.7), "1000 ms");
        assert_eq!(duration_ms(6905.873), "6.91 s");
        assert_eq!(duration_ms(125_000.0), "2 min 5 s");
        assert_eq!(duration_ms(3_720_000.0), "1 h 2 min");
        assert_eq!(duration_ms(0.0), "0 ms");
    }

    #[test]
    fn counts_rates_and_bytes() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(17_787), "17,787");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count_i(-4500), "-4,500");
        assert_eq!(per_second(0.538_435_9, "records"), "0.538 records/s");
        assert_eq!(per_second(1745.2, "records"), "1.75 k records/s");
        assert_eq!(bytes(217.0), "217 B");
        assert_eq!(bytes(16_450.0), "16.4 kB");
        assert_eq!(bytes(999_960.0), "1 MB");
        assert_eq!(si(41.635_836_177_375_77, ""), "41.6");
        assert_eq!(ratio(2.3148), "2.31×");
    }

    #[test]
    fn capture_times() {
        let start = 1_796_172_987_339_258_000;
        assert_eq!(since_start(start + 8_319_000_000, start), "8.319 s");
        assert_eq!(since_start(start + 125_500_000_000, start), "2:05");
        assert_eq!(wall_time(start), "00:56:27.339");
        assert_eq!(wall_datetime(start), "2026-12-02 00:56:27 UTC");
    }
}
