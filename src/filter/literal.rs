//! Reading values as written: integers, durations, UUIDs.

/// `42`, `-1`, `0x1f`, `-0x10`.
pub(crate) fn int(text: &str) -> Option<i64> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let v: i128 = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) => {
            i128::from_str_radix(hex, 16).ok()?
        }
        Some(_) => return None,
        None if !body.is_empty() && body.chars().all(|c| c.is_ascii_digit()) => {
            body.parse::<i128>().ok()?
        }
        None => return None,
    };
    i64::try_from(if neg { -v } else { v }).ok()
}

/// `1.5`, `-2`, `3e2` is not accepted: plain decimals only.
pub(crate) fn float(text: &str) -> Option<f64> {
    let body = text.strip_prefix('-').unwrap_or(text);
    let ok = !body.is_empty()
        && body.chars().all(|c| c.is_ascii_digit() || c == '.')
        && body.chars().filter(|&c| c == '.').count() <= 1
        && body.chars().any(|c| c.is_ascii_digit());
    ok.then(|| text.parse().ok()).flatten()
}

/// Units of a duration, longest suffix first so that `ms` is not read as `m` + `s`.
const UNITS: &[(&str, i128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// The unit names, for messages.
pub(crate) const UNIT_NAMES: &str = "ns, us (µs), ms, s, m, h";

/// A duration in nanoseconds: `50ms`, `300us`, `1.5s`, `2m`. `None` when the text is not a
/// number followed by a unit; `Some(Err)` when it is, but does not fit.
pub(crate) fn duration(text: &str) -> Option<Result<i64, String>> {
    let (unit, scale) = UNITS
        .iter()
        .find(|(u, _)| text.strip_suffix(u).is_some_and(is_decimal))?;
    let num = text.strip_suffix(unit)?;
    Some(scaled(num, *scale).ok_or_else(|| format!("duration `{text}` is out of range")))
}

fn is_decimal(s: &str) -> bool {
    let mut parts = s.splitn(2, '.');
    let whole = parts.next().unwrap_or("");
    let frac = parts.next();
    let digits = |p: &str| p.chars().all(|c| c.is_ascii_digit());
    digits(whole)
        && frac.is_none_or(digits)
        && (!whole.is_empty() || frac.is_some_and(|f| !f.is_empty()))
}

/// `num * scale` in integers, so that `1.5s` is exactly 1 500 000 000 ns; digits past a
/// nanosecond are dropped.
fn scaled(num: &str, scale: i128) -> Option<i64> {
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    let whole: i128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut v = whole.checked_mul(scale)?;
    let mut unit = scale;
    for d in frac.chars() {
        unit /= 10;
        if unit == 0 {
            break;
        }
        v = v.checked_add(i128::from(d.to_digit(10)?) * unit)?;
    }
    i64::try_from(v).ok()
}

/// Seconds as a plain decimal (`5`, `2.5`), in nanoseconds: the unit-less form of a time
/// since the first packet. `None` when it is not one, or does not fit.
pub(crate) fn seconds(text: &str) -> Option<i64> {
    is_decimal(text)
        .then(|| scaled(text, 1_000_000_000))
        .flatten()
}

/// The forms of an absolute time, for messages.
pub(crate) const TIME_FORMS: &str = "2026-11-30T12:00:00Z, 2026-11-30 12:00:00.5 (local time), 2026-11-30T13:00:00+01:00, 2026-11-30, \"Nov 30, 2026 12:00:00\" (tshark's frame.time), @1796040000 (seconds since 1970)";

/// An absolute time, in nanoseconds since 1970 (UTC): RFC 3339 and its relatives (a space
/// for the `T`, seconds and fractions optional, a date alone; without a zone the local time,
/// as tshark reads `frame.time`), tshark's own `Nov 30, 2026 12:00:00[.f] [UTC]`, or
/// `@SECONDS` since 1970. `None` when the text is none of them (or a local time that does
/// not exist, in a daylight-saving gap).
pub(crate) fn time(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Some(epoch) = t.strip_prefix('@') {
        return epoch_seconds(epoch);
    }
    iso_time(t).or_else(|| tshark_time(t))
}

/// Seconds since 1970, a decimal, possibly negative.
pub(crate) fn epoch_seconds(text: &str) -> Option<i64> {
    match text.strip_prefix('-') {
        Some(rest) => seconds(rest).map(|n| -n),
        None => seconds(text),
    }
}

fn iso_time(t: &str) -> Option<i64> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime};
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return d.timestamp_nanos_opt();
    }
    let with_t = t.replacen(' ', "T", 1);
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%:z",
    ] {
        if let Ok(d) = DateTime::parse_from_str(&with_t, f) {
            return d.timestamp_nanos_opt();
        }
    }
    if let Some(utc) = with_t
        .strip_suffix('Z')
        .or_else(|| with_t.strip_suffix('z'))
    {
        return naive_iso(utc).and_then(|n| n.and_utc().timestamp_nanos_opt());
    }
    if let Some(n) = naive_iso(&with_t) {
        return local(n);
    }
    let day = NaiveDate::parse_from_str(t, "%Y-%m-%d").ok()?;
    local(NaiveDateTime::from(day))
}

fn naive_iso(t: &str) -> Option<chrono::NaiveDateTime> {
    use chrono::NaiveDateTime;
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(t, f).ok())
}

/// `Nov 30, 2026 12:00:00.123456789`, as tshark shows `frame.time`; a trailing `UTC` or `GMT`
/// makes it UTC, no zone the local time.
fn tshark_time(t: &str) -> Option<i64> {
    use chrono::NaiveDateTime;
    let (t, utc) = match t.strip_suffix(" UTC").or_else(|| t.strip_suffix(" GMT")) {
        Some(rest) => (rest, true),
        None => (t, false),
    };
    let n = ["%b %d, %Y %H:%M:%S%.f", "%b %d, %Y %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(t, f).ok())?;
    if utc {
        n.and_utc().timestamp_nanos_opt()
    } else {
        local(n)
    }
}

/// A wall-clock time in the local zone (TZ), the earlier one when a change of offset makes
/// it happen twice.
fn local(n: chrono::NaiveDateTime) -> Option<i64> {
    use chrono::TimeZone;
    chrono::Local
        .from_local_datetime(&n)
        .earliest()?
        .timestamp_nanos_opt()
}

/// `01a229ff-56de-74f2-931f-3b49a65ac33a` (hyphens where a UUID has them, either case).
pub(crate) fn uuid(text: &str) -> Option<[u8; 16]> {
    let groups: Vec<&str> = text.split('-').collect();
    let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    if lens != [8, 4, 4, 4, 12] {
        return None;
    }
    let hex: String = groups.concat();
    let mut out = [0u8; 16];
    hex::decode_to_slice(hex, &mut out).ok()?;
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(int("42"), Some(42));
        assert_eq!(int("-1"), Some(-1));
        assert_eq!(int("0x1f"), Some(31));
        assert_eq!(int("0XFF"), Some(255));
        assert_eq!(int("-0x10"), Some(-16));
        assert_eq!(int("9223372036854775807"), Some(i64::MAX));
        assert_eq!(int("-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "-",
            "0x",
            "1.5",
            "12a",
            "9223372036854775808",
            "0x1g",
            "--1",
        ] {
            assert_eq!(int(bad), None, "{bad}");
        }
    }

    #[test]
    fn durations() {
        let d = |s: &str| duration(s).map(|r| r.unwrap());
        assert_eq!(d("50ms"), Some(50_000_000));
        assert_eq!(d("300us"), Some(300_000));
        assert_eq!(d("300µs"), Some(300_000));
        assert_eq!(d("1.5s"), Some(1_500_000_000));
        assert_eq!(d("2m"), Some(120_000_000_000));
        assert_eq!(d("1h"), Some(3_600_000_000_000));
        assert_eq!(d("7ns"), Some(7));
        assert_eq!(d(".5ms"), Some(500_000));
        assert_eq!(d("0.0000000019s"), Some(1));
        for not in ["50", "ms", "5x", "1.2.3s", "-5ms", "5 ms", ".ms", "orders"] {
            assert_eq!(duration(not), None, "{not}");
        }
        assert!(duration("99999999999999h").unwrap().is_err());
    }

    #[test]
    fn uuids() {
        let u = uuid("01a229ff-56de-74f2-931f-3b49a65ac33A").unwrap();
        assert_eq!(hex::encode(u), "01a229ff56de74f2931f3b49a65ac33a");
        for bad in [
            "01a229ff56de74f2931f3b49a65ac33a",
            "01a229ff-56de-74f2-931f-3b49a65ac33",
            "g1a229ff-56de-74f2-931f-3b49a65ac33a",
            "",
        ] {
            assert_eq!(uuid(bad), None, "{bad}");
        }
    }

    #[test]
    fn absolute_times_in_every_form() {
        // 2026-11-30T12:00:00Z
        let noon = 1_796_040_000_000_000_000;
        assert_eq!(time("2026-11-30T12:00:00Z"), Some(noon));
        assert_eq!(time("2026-11-30T12:00Z"), Some(noon));
        assert_eq!(time("2026-11-30 12:00:00Z"), Some(noon));
        assert_eq!(time("2026-11-30T12:00:00.25Z"), Some(noon + 250_000_000));
        assert_eq!(time("2026-11-30T13:00:00+01:00"), Some(noon));
        assert_eq!(time("2026-11-30T13:00:00+0100"), Some(noon));
        assert_eq!(time("2026-11-30 13:30+01:30"), Some(noon));
        assert_eq!(time("Nov 30, 2026 12:00:00.000000001 UTC"), Some(noon + 1));
        assert_eq!(time("@1796040000"), Some(noon));
        assert_eq!(time("@1796040000.5"), Some(noon + 500_000_000));
        // Without a zone: the local time, which the test cannot know, but the forms agree.
        let local = time("2026-11-30 12:00:00").unwrap();
        assert_eq!(time("2026-11-30T12:00:00"), Some(local));
        assert_eq!(time("2026-11-30T12:00"), Some(local));
        assert_eq!(time("Nov 30, 2026 12:00:00"), Some(local));
        assert_eq!(time("2026-11-30"), Some(local - 12 * 3_600_000_000_000));
        for bad in [
            "",
            "noon",
            "2026-13-01",
            "2026-11-30T25:00:00Z",
            "@",
            "@x",
            "12:00",
        ] {
            assert_eq!(time(bad), None, "{bad}");
        }
    }

    #[test]
    fn seconds_since_the_first_packet() {
        assert_eq!(seconds("5"), Some(5_000_000_000));
        assert_eq!(seconds("2.5"), Some(2_500_000_000));
        assert_eq!(seconds("-1"), None);
        assert_eq!(seconds("5s"), None);
    }

    #[test]
    fn floats() {
        assert_eq!(float("1.5"), Some(1.5));
        assert_eq!(float("-2"), Some(-2.0));
        assert_eq!(float("1e3"), None);
        assert_eq!(float("."), None);
    }
}
