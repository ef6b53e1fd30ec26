//! Generates the walks of src/kafka/walk/generated.rs: one function per (API, direction, version)
//! and per struct it holds, written from the message specs, so that what the interpreted walk
//! (src/kafka/walk/interpreted.rs, src/kafka/walk/collect.rs) decides for every field of every message (is the
//! field in this version, is it tagged, how is its length written, which type is it, what does
//! the collector want of it) is decided here, once, when the crate is built.
//!
//! A walk reads a body for what the summary and the statistics need: where it ends, its
//! non-zero error codes with their paths, secret spans, record counts, and the fields of the
//! body's first two levels, which it hands to a visitor. It covers what the interpreted walk
//! covers and gives up where that gives up (SASL and embedded messages, records in the top two
//! levels, anything the decoder would diagnose), so that the decoder reads those bodies.
//!
//! Structs that generate the same code share one function: versions with the same layout,
//! and common structs used by several messages.

use crate::versions::{FieldType, Versions};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;

/// What a bytes field holds, as far as the walk cares.
#[derive(Clone, Copy, PartialEq)]
enum Content {
    Plain,
    /// Masked: its span is a secret.
    Secret,
    /// A SASL exchange or an embedded message: the decoder's part.
    Decoded,
}

/// One field of a spec, as the generator needs it.
struct Field {
    ty: FieldType,
    versions: Versions,
    nullable: Versions,
    tagged: Versions,
    tag: Option<u32>,
    content: Content,
    fields: Vec<Field>,
}

/// A message spec: its API, direction, versions and fields.
pub struct Spec {
    pub valid: Versions,
    flexible: Versions,
    fields: Vec<Field>,
}

fn versions(v: &Value, key: &str) -> Result<Versions, String> {
    match v.get(key).and_then(Value::as_str) {
        Some(s) => Versions::parse(s),
        None => Ok(Versions::NONE),
    }
}

fn field(v: &Value, common: &HashMap<String, &Value>, depth: usize) -> Result<Field, String> {
    let name = v.get("name").and_then(Value::as_str).unwrap_or("?");
    let ty = FieldType::parse(v.get("type").and_then(Value::as_str).unwrap_or(""));
    let inner = match &ty {
        FieldType::Struct(n) | FieldType::Array(FieldType::Struct(n)) => Some(*n),
        _ => None,
    };
    let fields = match (v.get("fields"), inner) {
        (Some(inline), _) => fields(inline, common, depth + 1)?,
        (None, Some(n)) => match common.get(n) {
            Some(s) => fields(s, common, depth + 1)?,
            None => return Err(format!("field {name}: unknown struct type {n}")),
        },
        (None, None) => Vec::new(),
    };
    let content = match v.get("content") {
        None => Content::Plain,
        Some(c) if c.as_str() == Some("plain") => Content::Plain,
        // A group protocol's bytes: the decoder finds no problem, error code or secret in
        // them whatever they hold (src/kafka/walk/embed.rs, `consumer_protocol`).
        Some(c) if c.get("layout").and_then(Value::as_str) == Some("consumer-protocol") => {
            Content::Plain
        }
        Some(c) if c.as_str() == Some("secret") => Content::Secret,
        Some(_) => Content::Decoded,
    };
    Ok(Field {
        ty,
        versions: versions(v, "versions")?,
        nullable: versions(v, "nullableVersions")?,
        tagged: versions(v, "taggedVersions")?,
        tag: v.get("tag").and_then(Value::as_u64).map(|t| t as u32),
        content,
        fields,
    })
}

fn fields(v: &Value, common: &HashMap<String, &Value>, depth: usize) -> Result<Vec<Field>, String> {
    if depth > 32 {
        return Err("struct nesting deeper than 32".into());
    }
    let list = v.as_array().ok_or("fields is not a list")?;
    list.iter().map(|f| field(f, common, depth)).collect()
}

/// Reads a spec file (`//` comment lines allowed, as the runtime's reader allows them).
pub fn parse(text: &str) -> Result<Spec, String> {
    let cleaned: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let v: Value = serde_json::from_str(&cleaned).map_err(|e| e.to_string())?;
    let mut common = HashMap::new();
    for s in v
        .get("commonStructs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let (Some(n), Some(f)) = (s.get("name").and_then(Value::as_str), s.get("fields")) {
            common.insert(n.to_string(), f);
        }
    }
    Ok(Spec {
        valid: versions(&v, "validVersions")?,
        flexible: versions(&v, "flexibleVersions")?,
        fields: fields(v.get("fields").ok_or("no fields")?, &common, 0)?,
    })
}

/// How deep a struct lies: the body, the level just below it (both reported to the
/// visitor), or deeper (only walked).
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Body,
    One,
    Deep,
}

impl Level {
    fn below(self) -> Level {
        match self {
            Level::Body => Level::One,
            _ => Level::Deep,
        }
    }

    fn number(self) -> usize {
        match self {
            Level::Body => 0,
            _ => 1,
        }
    }
}

/// The version being generated and whether it is flexible.
#[derive(Clone, Copy)]
struct At {
    version: i16,
    flexible: bool,
}

/// Whether a field, or any field inside it, may need the path to where the walk is: an int16
/// (an error code is listed with its path) or records (their problems are).
fn needs_path(f: &Field) -> bool {
    let own = match &f.ty {
        FieldType::Int16 | FieldType::Records => true,
        FieldType::Array(t) => matches!(t, FieldType::Records),
        _ => false,
    };
    own || f.fields.iter().any(needs_path)
}

/// Whether records lie in these fields or below: the topic named before them decides how
/// their values are read, so only then is the topic followed.
fn has_records(fields: &[Field]) -> bool {
    fields
        .iter()
        .any(|f| f.ty == FieldType::Records || has_records(&f.fields))
}

/// The generated functions, one per distinct code, and the table of bodies.
#[derive(Default)]
pub struct Gen {
    code: Vec<String>,
    by_code: HashMap<String, usize>,
    /// (spec file index, first version, last version, function).
    bodies: Vec<(usize, i16, i16, usize)>,
}

impl Gen {
    /// Adds the walks of every version of the spec file at `index`.
    pub fn spec(&mut self, index: usize, spec: &Spec) {
        if spec.valid.none {
            return;
        }
        let last = spec.valid.max.unwrap_or(spec.valid.min);
        for version in spec.valid.min..=last {
            let at = At {
                version,
                flexible: spec.flexible.contains(version),
            };
            let w = self.walk(&spec.fields, at, Level::Body);
            match self.bodies.last_mut() {
                Some((i, _, hi, f)) if *i == index && *f == w && *hi + 1 == version => {
                    *hi = version
                }
                _ => self.bodies.push((index, version, version, w)),
            }
        }
    }

    /// The function walking `fields` at `level`, made if no identical one exists.
    fn walk(&mut self, fields: &[Field], at: At, level: Level) -> usize {
        let body = self.struct_code(fields, at, level);
        if let Some(&i) = self.by_code.get(&body) {
            return i;
        }
        let i = self.code.len();
        self.by_code.insert(body.clone(), i);
        self.code.push(body);
        i
    }

    fn struct_code(&mut self, fields: &[Field], at: At, level: Level) -> String {
        let tracks = has_records(fields);
        let mut out = String::new();
        if tracks && level != Level::Body {
            out.push_str("let topic = d.topic_layout;\n");
        }
        // Fixed-size fields in a row that nothing reads are stepped over at once.
        let mut run = 0;
        for (i, f) in fields.iter().enumerate() {
            if !f.versions.contains(at.version) || (at.flexible && f.tagged.contains(at.version)) {
                continue;
            }
            let silent = level == Level::Deep
                && f.ty != FieldType::Int16
                && !(f.ty == FieldType::Uuid && tracks);
            if let (true, Some(n)) = (silent, f.ty.fixed_width()) {
                run += n;
                continue;
            }
            skip(&mut out, &mut run);
            self.field(&mut out, i, f, at, level, false, tracks);
        }
        skip(&mut out, &mut run);
        if at.flexible {
            self.tagged_section(&mut out, fields, at, level, tracks);
        }
        if tracks && level != Level::Body {
            out.push_str("d.topic_layout = topic;\n");
        }
        out.push_str("Ok(())\n");
        out
    }

    /// The code of field `i`: reported to the visitor in the top two levels, walked below.
    #[allow(clippy::too_many_arguments)]
    fn field(
        &mut self,
        out: &mut String,
        i: usize,
        f: &Field,
        at: At,
        level: Level,
        tagged: bool,
        tracks: bool,
    ) {
        // An error code pushes its own step, only when it is not zero.
        let path = needs_path(f) && f.ty != FieldType::Int16;
        out.push_str("{\n");
        let _ = writeln!(out, "let f = field(fs, {i})?;");
        if path {
            out.push_str("d.push_step(Step::Field(FieldId::of(f)));\n");
        }
        if level == Level::Deep {
            self.deep_value(out, f, at, tracks);
        } else {
            out.push_str("let val = ");
            self.reported_value(out, f, at, level, tracks);
            out.push_str(";\n");
            let _ = writeln!(out, "v.field({}, f, {tagged}, val);", level.number());
        }
        if path {
            out.push_str("d.pop_step();\n");
        }
        out.push_str("}\n");
    }

    /// A value of the top two levels, as an expression giving its `Val`.
    fn reported_value(&mut self, out: &mut String, f: &Field, at: At, level: Level, tracks: bool) {
        let nullable = f.nullable.contains(at.version);
        match &f.ty {
            // A bool as the decoder reads it: any byte but 0 is true.
            FieldType::Bool => out.push_str("Val::Int(i64::from(d.read_i8()? != 0))"),
            FieldType::Float64 => {
                let _ = write!(out, "{{ d.skip_fixed({})?; Val::Other }}", f.ty.fixed_width().unwrap_or(0));
            }
            FieldType::Int8 => out.push_str("Val::Int(i64::from(d.read_i8()?))"),
            FieldType::Int16 => out.push_str(
                "{ let x = d.read_i16()?; if x != 0 { d.error_code(f, x); } Val::Int(i64::from(x)) }",
            ),
            FieldType::Uint16 => out.push_str("Val::Int(i64::from(d.read_u16()?))"),
            FieldType::Int32 => out.push_str("Val::Int(i64::from(d.read_i32()?))"),
            FieldType::Uint32 => out.push_str("Val::Int(i64::from(u32::from_be_bytes(d.fixed()?)))"),
            FieldType::Int64 => out.push_str("Val::Int(d.read_i64()?)"),
            FieldType::Uuid => {
                out.push_str("{ let u = d.read_uuid()?; ");
                if tracks {
                    out.push_str("d.follow_topic_id(f, &u); ");
                }
                out.push_str("Val::Uuid(u) }");
            }
            FieldType::String => {
                let _ = write!(out, "Val::Str({})", string(at, nullable, tracks));
            }
            FieldType::Bytes => {
                out.push('{');
                bytes(out, at, f.content, nullable);
                out.push_str(" Val::Other }");
            }
            FieldType::Records => out.push_str("return Err(GiveUp)"),
            FieldType::Struct(_) => {
                let w = self.walk(&f.fields, at, level.below());
                if level == Level::Body {
                    let _ = write!(
                        out,
                        "if {} {{ let n = v.open_struct(); w{w}(d, v, f.fields)?; v.close(d.buf); Val::Struct(true, n) }} else {{ Val::Struct(false, 0) }}",
                        presence(nullable)
                    );
                } else {
                    let _ = write!(
                        out,
                        "if {} {{ w{w}(d, v, f.fields)?; Val::Struct(true, 0) }} else {{ Val::Struct(false, 0) }}",
                        presence(nullable)
                    );
                }
            }
            FieldType::Array(inner) => {
                let _ = write!(out, "{{ let len = {}; ", len(at, false, nullable));
                if level == Level::Body {
                    out.push_str("let idx = v.body_array(f); if let Some(n) = len { ");
                    out.push_str("if n > d.opts.max_elements { return Err(GiveUp); } ");
                    self.body_elements(out, f, inner, at);
                    out.push_str("} Val::Array(len, idx) }");
                } else {
                    out.push_str("if let Some(n) = len { ");
                    self.deep_elements(out, f, inner, at);
                    out.push_str("} Val::Array(len, 0) }");
                }
            }
        }
    }

    /// The elements of an array of the body, each reported to the visitor.
    fn body_elements(&mut self, out: &mut String, f: &Field, inner: &FieldType, at: At) {
        let path = needs_path(f);
        out.push_str("for i in 0..n { if !room(d, v) { return Err(GiveUp); } ");
        if path {
            out.push_str("d.push_step(Step::Index(i as u32)); ");
        }
        match inner {
            FieldType::Struct(_) => {
                let w = self.walk(&f.fields, at, Level::One);
                let _ = write!(
                    out,
                    "v.open_element(idx); w{w}(d, v, f.fields)?; v.close(d.buf); "
                );
            }
            FieldType::String => {
                let _ = write!(
                    out,
                    "let s = {}; v.scalar_element(idx, Some(s), d.buf); ",
                    string(at, false, false)
                );
            }
            FieldType::Bytes => {
                let _ = write!(
                    out,
                    "{}; v.scalar_element(idx, None, d.buf); ",
                    len(at, false, false)
                );
            }
            t => match t.fixed_width() {
                Some(n) => {
                    let _ = write!(
                        out,
                        "d.skip_fixed({n})?; v.scalar_element(idx, None, d.buf); "
                    );
                }
                None => out.push_str("return Err(GiveUp); "),
            },
        }
        if path {
            out.push_str("d.pop_step(); ");
        }
        out.push_str("} ");
    }

    /// The `n` elements of an array below the body, walked.
    fn deep_elements(&mut self, out: &mut String, f: &Field, inner: &FieldType, at: At) {
        match inner {
            FieldType::Struct(_) => {
                let w = self.walk(&f.fields, at, Level::Deep);
                if needs_path(f) {
                    let _ = write!(
                        out,
                        "for i in 0..n {{ d.push_step(Step::Index(i as u32)); w{w}(d, v, f.fields)?; d.pop_step(); }} "
                    );
                } else {
                    let _ = write!(out, "for _ in 0..n {{ w{w}(d, v, f.fields)?; }} ");
                }
            }
            FieldType::String | FieldType::Bytes => {
                let l = len(at, *inner == FieldType::String, false);
                let _ = write!(out, "for _ in 0..n {{ let l = {l}; d.span(l); }} ");
            }
            t => match t.fixed_width() {
                // Each element is checked against the bytes left: all of them at once is the
                // same test.
                Some(w) => {
                    let _ = write!(out, "d.skip_fixed(n.checked_mul({w}).ok_or(GiveUp)?)?; ");
                }
                None => out.push_str("return Err(GiveUp); "),
            },
        }
    }

    /// A value below the top two levels: walked for its error codes, secrets and records.
    fn deep_value(&mut self, out: &mut String, f: &Field, at: At, tracks: bool) {
        let nullable = f.nullable.contains(at.version);
        match &f.ty {
            FieldType::Int16 => {
                out.push_str("let x = d.read_i16()?; if x != 0 { d.error_code(f, x); }\n")
            }
            FieldType::Uuid => out.push_str("let u = d.read_uuid()?; d.follow_topic_id(f, &u);\n"),
            FieldType::String => {
                let _ = writeln!(out, "{};", string(at, nullable, tracks));
            }
            FieldType::Bytes => {
                bytes(out, at, f.content, nullable);
                out.push('\n');
            }
            FieldType::Records => out.push_str("d.walk_records(f)?;\n"),
            FieldType::Struct(_) => {
                let w = self.walk(&f.fields, at, Level::Deep);
                let _ = writeln!(
                    out,
                    "if {} {{ w{w}(d, v, f.fields)?; }}",
                    presence(nullable)
                );
            }
            FieldType::Array(inner) => {
                let _ = write!(out, "if let Some(n) = {} {{ ", len(at, false, nullable));
                self.deep_elements(out, f, inner, at);
                out.push_str("}\n");
            }
            t => {
                let _ = writeln!(out, "d.skip_fixed({})?;", t.fixed_width().unwrap_or(0));
            }
        }
    }

    /// The tagged fields that end a struct in flexible versions: those the spec knows are
    /// read within their size, the others stepped over.
    fn tagged_section(
        &mut self,
        out: &mut String,
        fields: &[Field],
        at: At,
        level: Level,
        tracks: bool,
    ) {
        out.push_str("{\nlet count = d.tag_count()?;\n");
        if level != Level::Deep {
            let _ = writeln!(
                out,
                "if count > d.opts.max_elements {{ return Err(GiveUp); }}\nv.tagged_count({}, count);",
                level.number()
            );
        }
        out.push_str("let mut last: Option<u32> = None;\nfor _ in 0..count {\n");
        out.push_str("let (tag, data_end) = d.tag_head(&mut last)?;\n");
        // The first field with the tag in this version, as the decoder finds it.
        let mut known: Vec<(u32, usize)> = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if let (Some(t), true) = (f.tag, f.tagged.contains(at.version)) {
                if !known.iter().any(|(k, _)| *k == t) {
                    known.push((t, i));
                }
            }
        }
        if known.is_empty() {
            out.push_str("let _ = tag;\nd.pos = data_end;\n");
        } else {
            out.push_str("match tag {\n");
            for (t, i) in known {
                let Some(f) = fields.get(i) else { continue };
                let _ = writeln!(out, "{t} => {{");
                if f.ty == FieldType::Int16 && level == Level::Deep {
                    // Below the levels it keeps, the decoder lists a tagged error code twice:
                    // its way.
                    let _ = writeln!(
                        out,
                        "if field(fs, {i})?.error_code {{ return Err(GiveUp); }}"
                    );
                }
                out.push_str("let (end, region) = (d.end, d.region);\n");
                out.push_str("d.end = data_end;\nd.region = Region::TaggedFields;\n");
                self.field(out, i, f, at, level, true, tracks);
                out.push_str("d.end = end;\nd.region = region;\n");
                out.push_str("if d.pos != data_end { return Err(GiveUp); }\n}\n");
            }
            out.push_str("_ => d.pos = data_end,\n}\n");
        }
        out.push_str("}\n}\n");
    }

    /// The generated source: the functions and the table that picks a body's.
    pub fn source(&self) -> String {
        let mut out = String::new();
        for (i, body) in self.code.iter().enumerate() {
            let _ = write!(
                out,
                "fn w{i}<V: Visit>(d: &mut Decoder<'_>, v: &mut V, fs: &'static [FieldSpec]) -> W {{\n{body}}}\n\n"
            );
        }
        out.push_str(
            "/// The walk of the body of spec file `file` at `version`; `None` if none was generated.\n",
        );
        out.push_str("pub(in crate::kafka) fn walk_body<V: Visit>(file: u16, version: i16, d: &mut Decoder<'_>, v: &mut V, fs: &'static [FieldSpec]) -> Option<W> {\n");
        out.push_str("Some(match (file, version) {\n");
        for (file, lo, hi, w) in &self.bodies {
            let _ = writeln!(out, "({file}, {lo}..={hi}) => w{w}(d, v, fs),");
        }
        out.push_str("_ => return None,\n})\n}\n");
        out
    }
}

/// The call reading a length prefix as version `at` writes it: compact in flexible versions,
/// else an int16 for strings and an int32 for the rest.
fn len(at: At, string: bool, nullable: bool) -> String {
    match (at.flexible, string) {
        (true, _) => format!("d.len_compact({nullable})?"),
        (false, true) => format!("d.len_classic::<2>({nullable})?"),
        (false, false) => format!("d.len_classic::<4>({nullable})?"),
    }
}

/// A string read for where its bytes lie; followed as a topic name where records follow.
fn string(at: At, nullable: bool, tracks: bool) -> String {
    if tracks {
        format!("d.walk_string({nullable}, Some(f))?")
    } else {
        format!("{{ let l = {}; d.span(l) }}", len(at, true, nullable))
    }
}

/// A struct's presence test: a nullable struct's presence byte, where the encoding has one.
fn presence(nullable: bool) -> &'static str {
    if nullable {
        "d.walk_presence(true)?"
    } else {
        "true"
    }
}

/// A bytes value by what it holds: plain, a secret (its span kept), or the decoder's part.
fn bytes(out: &mut String, at: At, content: Content, nullable: bool) {
    let l = len(at, false, nullable);
    match content {
        Content::Plain => {
            let _ = write!(out, " let l = {l}; d.span(l);");
        }
        Content::Secret => {
            let _ = write!(
                out,
                " let l = {l}; if let Some(span) = d.span(l) {{ d.secrets.push(span); }}"
            );
        }
        Content::Decoded => out.push_str(" return Err(GiveUp);"),
    }
}

/// Steps over the fixed-size fields gathered so far.
fn skip(out: &mut String, run: &mut usize) {
    if *run > 0 {
        let _ = writeln!(out, "d.skip_fixed({run})?;");
        *run = 0;
    }
}
