//! Output in tshark's shapes: `-T fields` (tab-separated values, one line per message, with
//! tshark's `-E` options) and `-T ek` (Elasticsearch bulk-index pairs: an index line, then the
//! document). The values are those the filters read ([`crate::filter::Projection`]).

use crate::filter::{FieldValue, Render};
use std::fmt::Write as _;

/// Which tshark output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    Fields(FieldsFormat),
    Ek,
}

/// `-E first`, `-E last` or all values of a field (`-E occurrence=f|l|a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurrence {
    First,
    Last,
    All,
}

/// tshark's `-E` options for `-T fields`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldsFormat {
    /// `header=y`: a first line of the field names.
    pub header: bool,
    /// `separator=/t|/s|C`: between fields (a tab by default).
    pub separator: String,
    pub occurrence: Occurrence,
    /// `aggregator=,|/s|C`: between the values of one field (a comma by default).
    pub aggregator: String,
    /// `quote=d|s|n`: around each field that has a value.
    pub quote: Option<char>,
    /// `escape=y|n`: tabs, newlines, carriage returns and backslashes in text escaped (on by
    /// default, as tshark's), and the quote character when quoting; other control
    /// characters (which tshark leaves raw) as `\u{1b}`.
    pub escape: bool,
    /// `bom=y`: a UTF-8 byte-order mark first.
    pub bom: bool,
}

impl Default for FieldsFormat {
    fn default() -> Self {
        FieldsFormat {
            header: false,
            separator: "\t".into(),
            occurrence: Occurrence::All,
            aggregator: ",".into(),
            quote: None,
            escape: true,
            bom: false,
        }
    }
}

impl FieldsFormat {
    /// Reads `-E` options: each `KEY=VALUE`, several in one argument separated by commas
    /// (`-E header=y,separator=,` is header and a comma separator, as a separator may be `,`).
    pub fn parse(options: &[String]) -> Result<FieldsFormat, String> {
        let mut f = FieldsFormat::default();
        for opt in options.iter().flat_map(|o| split_options(o)) {
            f.set(&opt)?;
        }
        Ok(f)
    }

    fn set(&mut self, opt: &str) -> Result<(), String> {
        let (key, value) = opt
            .split_once('=')
            .ok_or_else(|| format!("-E {opt:?}: an option is KEY=VALUE (header=y, separator=,)"))?;
        let yes_no = |v: &str| match v {
            "y" | "Y" => Ok(true),
            "n" | "N" => Ok(false),
            _ => Err(format!("-E {key}={v}: y or n")),
        };
        match key {
            "header" => self.header = yes_no(value)?,
            "bom" => self.bom = yes_no(value)?,
            "escape" => self.escape = yes_no(value)?,
            "separator" => self.separator = character(key, value)?,
            "aggregator" => self.aggregator = character(key, value)?,
            "occurrence" => {
                self.occurrence = match value {
                    "f" => Occurrence::First,
                    "l" => Occurrence::Last,
                    "a" => Occurrence::All,
                    _ => return Err(format!("-E occurrence={value}: f, l or a")),
                }
            }
            "quote" => {
                self.quote = match value {
                    "d" => Some('"'),
                    "s" => Some('\''),
                    "n" => None,
                    _ => return Err(format!("-E quote={value}: d, s or n")),
                }
            }
            _ => {
                return Err(format!(
                    "-E {key}: the options are header, separator, occurrence, aggregator, quote, escape and bom"
                ))
            }
        }
        Ok(())
    }

    /// The header line (without its newline), the field names as given.
    pub fn header_line(&self, names: &[&str]) -> String {
        let mut line = String::new();
        if self.bom {
            line.push('\u{feff}');
        }
        line.push_str(&names.join(&self.separator));
        line
    }

    /// One message's line (without its newline).
    pub fn line(&self, values: &[(&str, Vec<FieldValue>)], renders: &[Render]) -> String {
        let mut line = String::with_capacity(64 * values.len());
        for (i, (_, vs)) in values.iter().enumerate() {
            if i > 0 {
                line.push_str(&self.separator);
            }
            let render = renders.get(i).copied().unwrap_or_default();
            let picked: Vec<&FieldValue> = match self.occurrence {
                Occurrence::All => vs.iter().collect(),
                Occurrence::First => vs.first().into_iter().collect(),
                Occurrence::Last => vs.last().into_iter().collect(),
            };
            let texts: Vec<String> = picked
                .iter()
                .filter_map(|v| text(v, render))
                .map(|t| self.escaped(&t))
                .collect();
            if texts.is_empty() {
                continue;
            }
            let joined = texts.join(&self.aggregator);
            match self.quote {
                Some(q) => {
                    line.push(q);
                    line.push_str(&joined);
                    line.push(q);
                }
                None => line.push_str(&joined),
            }
        }
        line
    }

    fn escaped(&self, t: &str) -> String {
        if !self.escape {
            return t.to_string();
        }
        let mut out = String::with_capacity(t.len());
        for c in t.chars() {
            match c {
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                c if Some(c) == self.quote => {
                    out.push('\\');
                    out.push(c);
                }
                // Other controls (ESC, BEL, DEL, C1) and invisible characters (a bidi
                // override) would reach a terminal raw: written as the other views write them.
                c if c.is_control() || crate::text::is_invisible(c) => {
                    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
                }
                c => out.push(c),
            }
        }
        out
    }
}

/// `header=y,separator=,` cut into options: a comma right after `=` is a value, not a cut.
fn split_options(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        if c == ',' && !cur.ends_with('=') && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A separator or aggregator: `/t` a tab, `/s` a space, else the character given.
fn character(key: &str, value: &str) -> Result<String, String> {
    match value {
        "/t" => Ok("\t".into()),
        "/s" => Ok(" ".into()),
        v if v.chars().count() == 1 => Ok(v.to_string()),
        v => Err(format!("-E {key}={v}: one character, /t or /s")),
    }
}

/// A value as tshark writes it in `-T fields`: numbers in decimal, booleans `1` and `0`,
/// bytes in hex, durations in seconds with nine decimals; nothing for a null or a struct.
pub fn text(v: &FieldValue, render: Render) -> Option<String> {
    Some(match v {
        FieldValue::Int(i) => i.to_string(),
        FieldValue::Float(f) => f.to_string(),
        FieldValue::Bool(b) => if *b { "1" } else { "0" }.to_string(),
        FieldValue::Str(s) => s.clone(),
        FieldValue::Bytes(b) => hex::encode(b),
        FieldValue::Uuid(u) => super::value::uuid(u),
        FieldValue::Duration(ns) => seconds(*ns),
        FieldValue::Time(ns) => match render {
            Render::Plain => super::time::rfc3339(*ns),
            Render::Epoch => seconds(*ns),
            Render::FrameTime => frame_time(*ns),
        },
        FieldValue::Struct | FieldValue::Null => return None,
    })
}

/// Nanoseconds as seconds with nine decimals: `1796042588.833958000`, `-0.000001000`.
pub fn seconds(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// `Nov 30, 2026 12:43:08.833958000 UTC`: tshark's `frame.time`, in UTC.
pub fn frame_time(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let nanos = ns.rem_euclid(1_000_000_000);
    match chrono::DateTime::from_timestamp(secs, 0) {
        Some(t) => format!("{}.{nanos:09} UTC", t.format("%b %e, %Y %H:%M:%S")),
        None => seconds(ns),
    }
}

/// The index line of a bulk-index pair: tshark's, an index per day of capture (UTC here).
pub fn ek_index(ts_nanos: i64) -> String {
    let day = chrono::DateTime::from_timestamp(ts_nanos.div_euclid(1_000_000_000), 0)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_default();
    format!("{{\"index\":{{\"_index\":\"packets-{day}\",\"_type\":\"doc\"}}}}")
}

/// The start of a document, up to its layers: `{"timestamp":"MILLISECONDS","layers":{`.
fn ek_start(ts_nanos: i64) -> String {
    format!(
        "{{\"timestamp\":\"{}\",\"layers\":{{",
        ts_nanos.div_euclid(1_000_000)
    )
}

/// A document of chosen fields (`-T ek -e F`): each field with values, under its name with
/// dots as underscores, its values as strings, as tshark writes them.
pub fn ek_fields_doc(
    ts_nanos: i64,
    values: &[(&str, Vec<FieldValue>)],
    renders: &[Render],
) -> String {
    let mut layers = serde_json::Map::new();
    for (i, (name, vs)) in values.iter().enumerate() {
        let render = renders.get(i).copied().unwrap_or_default();
        let texts: Vec<serde_json::Value> = vs
            .iter()
            .filter_map(|v| text(v, render))
            .map(serde_json::Value::String)
            .collect();
        if !texts.is_empty() {
            layers.insert(name.replace('.', "_"), serde_json::Value::Array(texts));
        }
    }
    let mut doc = ek_start(ts_nanos);
    let layers = serde_json::Value::Object(layers).to_string();
    // The object's braces are the layers' own.
    doc.push_str(layers.get(1..layers.len() - 1).unwrap_or_default());
    doc.push_str("}}");
    doc
}

/// The frame a message completed in, as the document's `frame` layer.
#[derive(Debug, Clone, Copy)]
pub struct EkFrame {
    pub number: u64,
    pub ts_nanos: i64,
    /// Time of the input's first packet.
    pub origin: i64,
}

/// A whole message's document: a `frame` layer (number and times, under tshark's names) and
/// a `kafka` layer that is the message's `--json` object.
pub fn ek_message_doc(f: EkFrame, message_json: &[u8]) -> String {
    let mut doc = ek_start(f.ts_nanos);
    let _ = write!(
        doc,
        "\"frame\":{{\"frame_frame_number\":\"{}\",\"frame_frame_time\":\"{}\",\"frame_frame_time_epoch\":\"{}\",\"frame_frame_time_relative\":\"{}\"}},\"kafka\":",
        f.number,
        super::time::rfc3339(f.ts_nanos),
        seconds(f.ts_nanos),
        seconds(f.ts_nanos - f.origin)
    );
    doc.push_str(&String::from_utf8_lossy(message_json));
    doc.push_str("}}");
    doc
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use FieldValue as V;

    fn vals() -> Vec<(&'static str, Vec<FieldValue>)> {
        vec![
            ("frame.number", vec![V::Int(24)]),
            (
                "kafka.topic_name",
                vec![V::Str("payments".into()), V::Str("audit\tlog".into())],
            ),
            ("kafka.error", vec![]),
            ("frame.time", vec![V::Time(1_796_042_589_277_503_000)]),
        ]
    }

    #[test]
    fn fields_lines_as_tshark_writes_them() {
        let r = [
            Render::Plain,
            Render::Plain,
            Render::Plain,
            Render::FrameTime,
        ];
        let f = FieldsFormat::default();
        assert_eq!(
            f.line(&vals(), &r),
            "24\tpayments,audit\\tlog\t\tNov 30, 2026 12:43:09.277503000 UTC"
        );
        let f = FieldsFormat::parse(&["header=y,separator=,".into(), "quote=d".into()]).unwrap();
        assert!(f.header);
        assert_eq!(f.header_line(&["a", "b"]), "a,b");
        assert_eq!(
            f.line(&vals(), &r),
            "\"24\",\"payments,audit\\tlog\",,\"Nov 30, 2026 12:43:09.277503000 UTC\""
        );
        let f =
            FieldsFormat::parse(&["occurrence=l".into(), "aggregator=/s,escape=n".into()]).unwrap();
        assert_eq!(f.line(&vals()[..2], &r), "24\taudit\tlog");
        let f = FieldsFormat::parse(&["aggregator=/s".into()]).unwrap();
        assert_eq!(f.line(&vals()[1..2], &r), "payments audit\\tlog");
        assert!(FieldsFormat::parse(&["colour=y".into()]).is_err());
        assert!(FieldsFormat::parse(&["separator=ab".into()]).is_err());
        assert!(FieldsFormat::parse(&["header".into()]).is_err());
    }

    #[test]
    fn values_in_tshark_notation() {
        assert_eq!(text(&V::Bool(true), Render::Plain).unwrap(), "1");
        assert_eq!(
            text(&V::Duration(566_827_000), Render::Plain).unwrap(),
            "0.566827000"
        );
        assert_eq!(
            text(&V::Time(1_796_042_588_833_958_000), Render::Epoch).unwrap(),
            "1796042588.833958000"
        );
        assert_eq!(
            text(&V::Bytes(vec![0, 0xab]), Render::Plain).unwrap(),
            "00ab"
        );
        assert_eq!(text(&V::Null, Render::Plain), None);
        assert_eq!(seconds(-1_000), "-0.000001000");
    }

    #[test]
    fn ek_pairs() {
        let ts = 1_796_042_588_835_503_000;
        assert_eq!(
            ek_index(ts),
            r#"{"index":{"_index":"packets-2026-11-30","_type":"doc"}}"#
        );
        let doc = ek_fields_doc(ts, &vals(), &[Render::Plain; 4]);
        let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(v["timestamp"], "1796042588835");
        assert_eq!(v["layers"]["frame_number"][0], "24");
        assert_eq!(v["layers"]["kafka_topic_name"][1], "audit\tlog");
        assert!(v["layers"].get("kafka_error").is_none());
        let doc = ek_message_doc(
            EkFrame {
                number: 6,
                ts_nanos: ts,
                origin: ts - 568_372_000,
            },
            br#"{"frame":6}"#,
        );
        let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(
            v["layers"]["frame"]["frame_frame_time_relative"],
            "0.568372000"
        );
        assert_eq!(v["layers"]["kafka"]["frame"], 6);
    }
}
