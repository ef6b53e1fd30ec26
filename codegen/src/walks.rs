//! The Rust of the generated walks (src/kafka/walk/generated/walks/): one module per API
//! message spec, holding one named walk per version (`metadata_response_v13`) and one per
//! struct it holds (`metadata_response_topic_v10_12`), and the dispatch (`walk_body`) that
//! finds a body's walk by its spec's index and version.
//!
//! What the interpreted walk (src/kafka/walk/interpreted.rs, src/kafka/walk/collect.rs)
//! decides for every field of every message (is the field in this version, is it tagged, how
//! is its length written, which type is it, what does the collector want of it) is decided
//! here, once. A walk reads a body for what the summary and the statistics need: where it
//! ends, its non-zero error codes with their paths, secret spans, record counts, and the
//! fields of the body's first two levels, which it hands to a visitor. It gives up where the
//! interpreted walk gives up (SASL and embedded messages, records in the top two levels,
//! anything the decoder would diagnose), so that the decoder reads those bodies.
//!
//! A field the walk hands over is named by its place in a table's static list
//! (`table::FIELDS__TOPICS[2]`), the list the runtime's spec points to, so its `FieldId` is
//! the table's. Versions of a struct that walk the same share one function; every walk is
//! generic over its visitor (`V: Visit`).

use crate::emit::snake;
use crate::spec::{Content, Field, Layout, Spec};
use crate::versions::FieldType;
use proc_macro2::{Ident, Literal, TokenStream, TokenTree};
use quote::{format_ident, quote};
use std::collections::HashMap;

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

    fn number(self) -> Literal {
        Literal::usize_unsuffixed(match self {
            Level::Body => 0,
            Level::One => 1,
            Level::Deep => 2,
        })
    }
}

/// The version being generated and whether it is flexible.
#[derive(Clone, Copy)]
struct At {
    version: i16,
    flexible: bool,
}

/// What a bytes field holds, as far as the walk cares.
#[derive(Clone, Copy, PartialEq)]
enum Bytes {
    Plain,
    /// Masked: its span is a secret.
    Secret,
    /// A SASL exchange or an embedded message: the decoder's part.
    Decoded,
}

fn bytes_content(f: &Field) -> Bytes {
    match &f.content {
        Content::Plain => Bytes::Plain,
        // A group protocol's bytes: the decoder finds no problem, error code or secret in
        // them whatever they hold (src/kafka/walk/embed.rs, `consumer_protocol`).
        Content::Embedded(Layout::ConsumerProtocol(_)) => Bytes::Plain,
        Content::Secret => Bytes::Secret,
        Content::Sasl | Content::Embedded(_) => Bytes::Decoded,
    }
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

/// Whether `tokens` name the identifier `name` anywhere (a variable the code uses).
fn uses(tokens: &TokenStream, name: &str) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => uses(&g.stream(), name),
        _ => false,
    })
}

/// The name of a struct's type: `MetadataResponseTopic` for `[]MetadataResponseTopic`.
fn struct_name(ty: &FieldType) -> Option<&'static str> {
    match ty {
        FieldType::Struct(n) => Some(n),
        FieldType::Array(FieldType::Struct(n)) => Some(n),
        _ => None,
    }
}

/// The list paths (`FIELDS__TOPICS`) each struct type of a spec is found at.
fn sites(fields: &[Field], path: &str, out: &mut HashMap<&'static str, Vec<String>>) {
    for f in fields {
        if f.fields.is_empty() {
            continue;
        }
        let below = format!("{path}__{}", snake(&f.name).to_ascii_uppercase());
        if let Some(n) = struct_name(&f.ty) {
            out.entry(n).or_default().push(below.clone());
        }
        sites(&f.fields, &below, out);
    }
}

/// One walk function: the code of a struct at the versions that walk it alike.
struct WalkFn {
    /// Its name without the versions: `metadata_response_topic`.
    base: String,
    /// What it walks, for its documentation.
    about: String,
    versions: Vec<i16>,
    /// Its statements; callees are named by placeholders (`__walk3__`).
    code: TokenStream,
}

impl WalkFn {
    /// `base_v10_12`: the versions as runs, `base_v0_3_v6` where they are not one.
    fn name(&self) -> String {
        let mut name = self.base.clone();
        for (lo, hi) in runs(&self.versions) {
            if lo == hi {
                name.push_str(&format!("_v{lo}"));
            } else {
                name.push_str(&format!("_v{lo}_{hi}"));
            }
        }
        name
    }

    fn versions_text(&self) -> String {
        let runs: Vec<String> = runs(&self.versions)
            .into_iter()
            .map(|(lo, hi)| {
                if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}-{hi}")
                }
            })
            .collect();
        match self.versions.as_slice() {
            [_] => format!("version {}", runs.join("")),
            _ => format!("versions {}", runs.join(", ")),
        }
    }
}

/// Versions in order as runs of consecutive ones: (first, last).
fn runs(versions: &[i16]) -> Vec<(i16, i16)> {
    let mut runs: Vec<(i16, i16)> = Vec::new();
    for &v in versions {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 1 == v => *hi = v,
            _ => runs.push((v, v)),
        }
    }
    runs
}

/// A placeholder for the name of walk `i`, replaced once every version is generated.
fn placeholder(i: usize) -> Ident {
    format_ident!("__walk{}__", i)
}

/// The walks of one message spec.
struct Walks<'a> {
    spec: &'a Spec,
    fns: Vec<WalkFn>,
    by_code: HashMap<(String, String), usize>,
    /// Struct types found at more than one place, named with their place.
    shared_types: Vec<&'static str>,
    /// Generating the branch of a deep struct that a deep visitor (`V::DEEP`) takes: every
    /// field read and reported, none stepped over by arithmetic.
    report: bool,
}

/// What the generated code of one field does: read on, or give up whatever it reads.
struct Code {
    tokens: TokenStream,
    gives_up: bool,
}

impl<'a> Walks<'a> {
    fn new(spec: &'a Spec) -> Walks<'a> {
        let mut found = HashMap::new();
        sites(&spec.fields, "FIELDS", &mut found);
        let mut shared_types: Vec<&'static str> = found
            .into_iter()
            .filter(|(_, places)| places.len() > 1)
            .map(|(n, _)| n)
            .collect();
        shared_types.sort_unstable();
        Walks {
            spec,
            fns: Vec::new(),
            by_code: HashMap::new(),
            shared_types,
            report: false,
        }
    }

    /// The function walking `fields` (the table's list `list`) at `level`, made if no
    /// identical one exists; its placeholder.
    fn walk(&mut self, fields: &[Field], list: &str, at: At, level: Level, base: String) -> Ident {
        placeholder(self.walk_index(fields, list, at, level, base))
    }

    /// The index of the function walking `fields` at `level` (see `walk`).
    fn walk_index(
        &mut self,
        fields: &[Field],
        list: &str,
        at: At,
        level: Level,
        base: String,
    ) -> usize {
        let code = self.struct_code(fields, list, at, level);
        let key = (base.clone(), code.to_string());
        if let Some(&i) = self.by_code.get(&key) {
            if let Some(w) = self.fns.get_mut(i) {
                if !w.versions.contains(&at.version) {
                    w.versions.push(at.version);
                }
            }
            return i;
        }
        let i = self.fns.len();
        let about = if level == Level::Body {
            format!("The body of {}", self.spec.name)
        } else {
            format!("The fields of `{list}`")
        };
        self.by_code.insert(key, i);
        self.fns.push(WalkFn {
            base,
            about,
            versions: vec![at.version],
            code,
        });
        i
    }

    /// The function name of the struct `f` holds.
    fn struct_base(&self, f: &Field, list: &str) -> String {
        let ty = struct_name(&f.ty).unwrap_or("Struct");
        if self.shared_types.contains(&ty) {
            let place = list.trim_start_matches("FIELDS__").to_ascii_lowercase();
            format!("{}_at_{}", snake(ty), place.replace("__", "_"))
        } else {
            snake(ty)
        }
    }

    /// The statements walking a struct's fields, then its tagged fields. Below the body's
    /// first two levels, two ways in one function: a visitor that asks for every depth
    /// (`V::DEEP`) has each field read and reported; the others step over what they do not
    /// read by arithmetic, as before (the constant picks the branch when it is compiled).
    fn struct_code(&mut self, fields: &[Field], list: &str, at: At, level: Level) -> TokenStream {
        if level != Level::Deep {
            return self.struct_body(fields, list, at, level);
        }
        let was = std::mem::replace(&mut self.report, true);
        let loud = self.struct_body(fields, list, at, level);
        self.report = false;
        let quiet = self.struct_body(fields, list, at, level);
        self.report = was;
        quote! { if V::DEEP { #loud } else { #quiet } }
    }

    /// The statements of one way of walking a struct (see `struct_code`).
    fn struct_body(&mut self, fields: &[Field], list: &str, at: At, level: Level) -> TokenStream {
        let records = has_records(fields);
        let saves_topic = records && level != Level::Body;
        let mut out = Vec::new();
        let mut gave_up = false;
        // Fixed-size fields in a row that nothing reads are stepped over at once.
        let mut run = 0;
        for (i, f) in fields.iter().enumerate() {
            if !f.versions.contains(at.version)
                || (at.flexible && f.tagged_versions.contains(at.version))
            {
                continue;
            }
            let silent = level == Level::Deep
                && !self.report
                && f.ty != FieldType::Int16
                && !(f.ty == FieldType::Uuid && records);
            if let (true, Some(n)) = (silent, f.ty.fixed_width()) {
                run += n;
                continue;
            }
            out.extend(skip(&mut run));
            let code = self.field(list, i, f, at, level, false, records);
            out.push(code.tokens);
            if code.gives_up {
                gave_up = true;
                break;
            }
        }
        if gave_up {
            // Nothing after a field that gives up is reached.
            return quote! { #(#out)* };
        }
        out.extend(skip(&mut run));
        if at.flexible {
            out.push(self.tagged_section(fields, list, at, level, records));
        }
        if saves_topic {
            quote! {
                let topic = d.topic_layout;
                #(#out)*
                d.topic_layout = topic;
                Ok(())
            }
        } else {
            quote! { #(#out)* Ok(()) }
        }
    }

    /// The code of field `i` of `list`: reported to the visitor in the top two levels,
    /// walked below.
    #[allow(clippy::too_many_arguments)]
    fn field(
        &mut self,
        list: &str,
        i: usize,
        f: &Field,
        at: At,
        level: Level,
        tagged: bool,
        tracks: bool,
    ) -> Code {
        // An error code pushes its own step, only when it is not zero.
        let path = needs_path(f) && f.ty != FieldType::Int16;
        let gives_up = match &f.ty {
            FieldType::Records => level != Level::Deep,
            FieldType::Bytes => bytes_content(f) == Bytes::Decoded,
            _ => false,
        };
        let push = path.then(|| quote! { d.push_step(Step::Field(FieldId::of(f))); });
        let list_ident = format_ident!("{list}");
        let index = Literal::usize_unsuffixed(i);
        let fetch = quote! { let f: &'static FieldSpec = &table::#list_ident[#index]; };
        if gives_up {
            // The decoder reads this field: the walk stops here (the decoder's state is
            // restored when it does).
            let tail = if tagged {
                quote! { return Err(GiveUp); }
            } else {
                quote! { Err(GiveUp) }
            };
            let tokens = if path {
                quote! { { #fetch #push #tail } }
            } else {
                tail
            };
            return Code {
                tokens,
                gives_up: true,
            };
        }
        let value = if level == Level::Deep && !self.report {
            self.deep_value(list, f, at, tracks)
        } else if f.ty == FieldType::Records {
            // Below the top two levels (above them the walk gave up): the visitor's hook.
            quote! { v.records(d, f)?; }
        } else {
            let val = self.reported_value(list, f, at, level, tracks);
            let number = level.number();
            quote! {
                let val = #val;
                v.field(#number, f, #tagged, val);
            }
        };
        let pop = path.then(|| quote! { d.pop_step(); });
        let body = quote! { #push #value #pop };
        let fetch = uses(&body, "f").then_some(fetch);
        Code {
            tokens: quote! { { #fetch #body } },
            gives_up: false,
        }
    }

    /// The struct function a field of struct type calls, and its presence test.
    fn struct_call(&mut self, list: &str, f: &Field, at: At, level: Level) -> Ident {
        let below = format!("{list}__{}", snake(&f.name).to_ascii_uppercase());
        let base = self.struct_base(f, &below);
        self.walk(&f.fields, &below, at, level, base)
    }

    /// A value of the top two levels, as an expression giving its `Val`.
    fn reported_value(
        &mut self,
        list: &str,
        f: &Field,
        at: At,
        level: Level,
        tracks: bool,
    ) -> TokenStream {
        let nullable = f.nullable_versions.contains(at.version);
        match &f.ty {
            // A bool as the decoder reads it: any byte but 0 is true.
            FieldType::Bool => quote! { Val::Int(i64::from(d.read_i8()? != 0)) },
            FieldType::Float64 => {
                let n = Literal::usize_unsuffixed(f.ty.fixed_width().unwrap_or(0));
                quote! { { d.skip_fixed(#n)?; Val::Other } }
            }
            FieldType::Int8 => quote! { Val::Int(i64::from(d.read_i8()?)) },
            FieldType::Int16 => quote! {
                {
                    let x = d.read_i16()?;
                    if x != 0 {
                        d.error_code(f, x);
                    }
                    Val::Int(i64::from(x))
                }
            },
            FieldType::Uint16 => quote! { Val::Int(i64::from(d.read_u16()?)) },
            FieldType::Int32 => quote! { Val::Int(i64::from(d.read_i32()?)) },
            FieldType::Uint32 => quote! { Val::Int(i64::from(u32::from_be_bytes(d.fixed()?))) },
            FieldType::Int64 => quote! { Val::Int(d.read_i64()?) },
            FieldType::Uuid => {
                let follow = tracks.then(|| quote! { d.follow_topic_id(f, &u); });
                quote! { { let u = d.read_uuid()?; #follow Val::Uuid(u) } }
            }
            FieldType::String => {
                let s = string(at, nullable, tracks);
                quote! { Val::Str(#s) }
            }
            FieldType::Bytes => reported_bytes(at, f, nullable),
            // Given up on before (`field`).
            FieldType::Records => quote! { return Err(GiveUp) },
            FieldType::Struct(_) => {
                let w = self.struct_call(list, f, at, level.below());
                let present = if level == Level::Body {
                    quote! {
                        let n = v.open_struct();
                        v.enter(f);
                        #w(d, v)?;
                        v.close(d.buf);
                        Val::Struct(true, n)
                    }
                } else {
                    quote! { v.enter(f); #w(d, v)?; Val::Struct(true, 0) }
                };
                if nullable {
                    quote! {
                        if d.walk_presence(true)? { #present } else { Val::Struct(false, 0) }
                    }
                } else {
                    quote! { { #present } }
                }
            }
            FieldType::Array(inner) => {
                let len = len(at, false, nullable);
                if level == Level::Body {
                    let elements = self.body_elements(list, f, inner, at);
                    quote! {
                        {
                            let len = #len;
                            let idx = v.body_array(f);
                            if let Some(n) = len {
                                if n > d.opts.max_elements {
                                    return Err(GiveUp);
                                }
                                v.enter(f);
                                #elements
                            }
                            Val::Array(len, idx)
                        }
                    }
                } else {
                    let elements = self.deep_elements(list, f, inner, at);
                    quote! {
                        {
                            let len = #len;
                            if let Some(n) = len {
                                v.enter(f);
                                #elements
                            }
                            Val::Array(len, 0)
                        }
                    }
                }
            }
        }
    }

    /// The elements of an array of the body, each reported to the visitor.
    fn body_elements(&mut self, list: &str, f: &Field, inner: &FieldType, at: At) -> TokenStream {
        let path = needs_path(f);
        let (index, push, pop) = if path {
            (
                quote! { i },
                quote! { d.push_step(Step::Index(i as u32)); },
                quote! { d.pop_step(); },
            )
        } else if matches!(inner, FieldType::Struct(_)) {
            (quote! { i }, quote! {}, quote! {})
        } else {
            (quote! { _ }, quote! {}, quote! {})
        };
        let element = match inner {
            FieldType::Struct(_) => {
                let w = self.struct_call(list, f, at, Level::One);
                quote! {
                    v.open_element(idx);
                    v.element(f, i);
                    #w(d, v)?;
                    v.close(d.buf);
                    v.leave();
                }
            }
            FieldType::String => {
                let s = string(at, false, false);
                quote! {
                    let s = #s;
                    v.scalar_element(idx, Some(s), d.buf);
                    v.item(f, Val::Str(s));
                }
            }
            FieldType::Bytes => {
                let l = len(at, false, false);
                quote! { #l; v.scalar_element(idx, None, d.buf); v.item(f, Val::Other); }
            }
            t => match t.fixed_width() {
                Some(n) => {
                    let n = Literal::usize_unsuffixed(n);
                    let read = scalar_read(t);
                    quote! {
                        if V::DEEP {
                            let val = #read;
                            v.item(f, val);
                        } else {
                            d.skip_fixed(#n)?;
                        }
                        v.scalar_element(idx, None, d.buf);
                    }
                }
                // Nothing after it in the element is reached.
                None => {
                    return quote! {
                        for #index in 0..n {
                            if !room(d, v) {
                                return Err(GiveUp);
                            }
                            #push
                            return Err(GiveUp);
                        }
                    }
                }
            },
        };
        quote! {
            for #index in 0..n {
                if !room(d, v) {
                    return Err(GiveUp);
                }
                #push
                #element
                #pop
            }
        }
    }

    /// The `n` elements of an array below the body, walked.
    fn deep_elements(&mut self, list: &str, f: &Field, inner: &FieldType, at: At) -> TokenStream {
        // A deep visitor is told of every element: past the decoder's bounds it would have
        // left elements out of its tree, so the walk leaves the array to the decoder.
        let room = quote! {
            if V::DEEP {
                deep_room(d, v, n)?;
            }
        };
        match inner {
            FieldType::Struct(_) => {
                let w = self.struct_call(list, f, at, Level::Deep);
                let (push, pop) = if needs_path(f) {
                    (
                        quote! { d.push_step(Step::Index(i as u32)); },
                        quote! { d.pop_step(); },
                    )
                } else {
                    (quote! {}, quote! {})
                };
                quote! {
                    #room
                    for i in 0..n {
                        #push
                        v.element(f, i);
                        #w(d, v)?;
                        v.leave();
                        #pop
                    }
                }
            }
            FieldType::String | FieldType::Bytes => {
                let string = *inner == FieldType::String;
                let l = len(at, string, false);
                let val = if string {
                    quote! { Val::Str(s) }
                } else {
                    quote! { Val::Bytes(s) }
                };
                quote! {
                    #room
                    for _ in 0..n {
                        let l = #l;
                        let s = d.span(l);
                        v.item(f, #val);
                    }
                }
            }
            t => match t.fixed_width() {
                // Each element is checked against the bytes left: all of them at once is the
                // same test.
                Some(w) => {
                    let w = Literal::usize_unsuffixed(w);
                    let read = scalar_read(t);
                    quote! {
                        if V::DEEP {
                            deep_room(d, v, n)?;
                            for _ in 0..n {
                                let val = #read;
                                v.item(f, val);
                            }
                        } else {
                            d.skip_fixed(n.checked_mul(#w).ok_or(GiveUp)?)?;
                        }
                    }
                }
                None => quote! { return Err(GiveUp); },
            },
        }
    }

    /// A value below the top two levels: walked for its error codes, secrets and records.
    fn deep_value(&mut self, list: &str, f: &Field, at: At, tracks: bool) -> TokenStream {
        let nullable = f.nullable_versions.contains(at.version);
        match &f.ty {
            FieldType::Int16 => quote! {
                let x = d.read_i16()?;
                if x != 0 {
                    d.error_code(f, x);
                }
            },
            FieldType::Uuid => quote! {
                let u = d.read_uuid()?;
                d.follow_topic_id(f, &u);
            },
            FieldType::String => {
                let s = string(at, nullable, tracks);
                quote! { #s; }
            }
            FieldType::Bytes => bytes(at, bytes_content(f), nullable),
            FieldType::Records => quote! { v.records(d, f)?; },
            FieldType::Struct(_) => {
                let w = self.struct_call(list, f, at, Level::Deep);
                if nullable {
                    quote! { if d.walk_presence(true)? { v.enter(f); #w(d, v)?; } }
                } else {
                    quote! { v.enter(f); #w(d, v)?; }
                }
            }
            FieldType::Array(inner) => {
                let len = len(at, false, nullable);
                let elements = self.deep_elements(list, f, inner, at);
                quote! { if let Some(n) = #len { v.enter(f); #elements } }
            }
            t => {
                let n = Literal::usize_unsuffixed(t.fixed_width().unwrap_or(0));
                quote! { d.skip_fixed(#n)?; }
            }
        }
    }

    /// The tagged fields that end a struct in flexible versions: those the spec knows are
    /// read within their size, the others stepped over.
    fn tagged_section(
        &mut self,
        fields: &[Field],
        list: &str,
        at: At,
        level: Level,
        tracks: bool,
    ) -> TokenStream {
        let counted = if level != Level::Deep {
            let number = level.number();
            quote! {
                if count > d.opts.max_elements {
                    return Err(GiveUp);
                }
                v.tagged_count(#number, count);
            }
        } else {
            // Past the limit the decoder sums tagged fields up in one node: its way.
            quote! {
                if V::DEEP && count > d.opts.max_elements {
                    return Err(GiveUp);
                }
            }
        };
        // The first field with the tag in this version, as the decoder finds it.
        let mut known: Vec<(u32, usize)> = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if let (Some(t), true) = (f.tag, f.tagged_versions.contains(at.version)) {
                if !known.iter().any(|(k, _)| *k == t) {
                    known.push((t, i));
                }
            }
        }
        let each = if known.is_empty() {
            quote! {
                let (tag, data_end) = d.tag_head(&mut last)?;
                v.unknown_tag(tag, (d.pos, data_end - d.pos));
                d.pos = data_end;
            }
        } else {
            let arms = known.into_iter().filter_map(|(t, i)| {
                let f = fields.get(i)?;
                let t = Literal::u32_unsuffixed(t);
                Some(self.tagged_arm(list, i, f, at, level, tracks, t))
            });
            let arms: Vec<TokenStream> = arms.collect();
            quote! {
                let (tag, data_end) = d.tag_head(&mut last)?;
                match tag {
                    #(#arms)*
                    _ => {
                        v.unknown_tag(tag, (d.pos, data_end - d.pos));
                        d.pos = data_end;
                    }
                }
            }
        };
        quote! {
            {
                let count = d.tag_count()?;
                #counted
                let mut last: Option<u32> = None;
                for _ in 0..count {
                    #each
                }
            }
        }
    }

    /// The arm of a tagged field the spec knows: read within its size.
    #[allow(clippy::too_many_arguments)]
    fn tagged_arm(
        &mut self,
        list: &str,
        i: usize,
        f: &Field,
        at: At,
        level: Level,
        tracks: bool,
        tag: Literal,
    ) -> TokenStream {
        if f.ty == FieldType::Int16 && level == Level::Deep && f.error_code {
            // Below the levels it keeps, the decoder lists a tagged error code twice: its way.
            return quote! { #tag => return Err(GiveUp), };
        }
        let code = self.field(list, i, f, at, level, true, tracks);
        let read = code.tokens;
        let rest = (!code.gives_up).then(|| {
            quote! {
                d.end = end;
                d.region = region;
                if d.pos != data_end {
                    return Err(GiveUp);
                }
            }
        });
        quote! {
            #tag => {
                let (end, region) = (d.end, d.region);
                d.end = data_end;
                d.region = Region::TaggedFields;
                #read
                #rest
            }
        }
    }
}

/// The call reading a length prefix as version `at` writes it: compact in flexible versions,
/// else an int16 for strings and an int32 for the rest.
fn len(at: At, string: bool, nullable: bool) -> TokenStream {
    match (at.flexible, string) {
        (true, _) => quote! { d.len_compact(#nullable)? },
        (false, true) => quote! { d.len_classic::<2>(#nullable)? },
        (false, false) => quote! { d.len_classic::<4>(#nullable)? },
    }
}

/// A string read for where its bytes lie; followed as a topic name where records follow.
fn string(at: At, nullable: bool, tracks: bool) -> TokenStream {
    if tracks {
        quote! { d.walk_string(#nullable, Some(f))? }
    } else {
        let l = len(at, true, nullable);
        quote! { { let l = #l; d.span(l) } }
    }
}

/// A bytes value by what it holds: plain, or a secret (its span kept). The decoder's part is
/// given up on before (`Walks::field`).
fn bytes(at: At, content: Bytes, nullable: bool) -> TokenStream {
    let l = len(at, false, nullable);
    match content {
        Bytes::Plain => quote! { let l = #l; d.span(l); },
        Bytes::Secret => quote! {
            let l = #l;
            if let Some(span) = d.span(l) {
                d.secrets.push(span);
            }
        },
        Bytes::Decoded => quote! { return Err(GiveUp); },
    }
}

/// A bytes value reported to the visitor: its span (a secret's noted), and a consumer
/// protocol's bytes handed to the visitor's hook for what they embed.
fn reported_bytes(at: At, f: &Field, nullable: bool) -> TokenStream {
    let l = len(at, false, nullable);
    let content = bytes_content(f);
    if content == Bytes::Decoded {
        return quote! { return Err(GiveUp) };
    }
    let secret = (content == Bytes::Secret).then(|| {
        quote! {
            if let Some(span) = s {
                d.secrets.push(span);
            }
        }
    });
    let hook = matches!(f.content, Content::Embedded(Layout::ConsumerProtocol(_)))
        .then(|| quote! { v.embedded(d, f, s)?; });
    quote! {
        {
            let l = #l;
            let s = d.span(l);
            #secret
            #hook
            Val::Bytes(s)
        }
    }
}

/// An expression reading one fixed-size value of type `t` as the visitor is told of it.
fn scalar_read(t: &FieldType) -> TokenStream {
    match t {
        FieldType::Bool => quote! { Val::Int(i64::from(d.read_i8()? != 0)) },
        FieldType::Int8 => quote! { Val::Int(i64::from(d.read_i8()?)) },
        FieldType::Int16 => quote! { Val::Int(i64::from(d.read_i16()?)) },
        FieldType::Uint16 => quote! { Val::Int(i64::from(d.read_u16()?)) },
        FieldType::Int32 => quote! { Val::Int(i64::from(d.read_i32()?)) },
        FieldType::Uint32 => quote! { Val::Int(i64::from(u32::from_be_bytes(d.fixed()?))) },
        FieldType::Int64 => quote! { Val::Int(d.read_i64()?) },
        FieldType::Uuid => quote! { Val::Uuid(d.read_uuid()?) },
        t => {
            let n = Literal::usize_unsuffixed(t.fixed_width().unwrap_or(0));
            quote! { { d.skip_fixed(#n)?; Val::Other } }
        }
    }
}

/// Steps over the fixed-size fields gathered so far.
fn skip(run: &mut usize) -> Option<TokenStream> {
    if *run == 0 {
        return None;
    }
    let n = Literal::usize_unsuffixed(*run);
    *run = 0;
    Some(quote! { d.skip_fixed(#n)?; })
}

/// The generated module of one message spec, and the name of each version's walk.
pub struct SpecWalks {
    /// The module's Rust, printed.
    pub text: String,
    /// (version, the function walking that version's body).
    pub entries: Vec<(i16, String)>,
}

/// The walks of `spec` (schema/`file`), whose table is the module `table` (its path below
/// the tables).
pub fn spec_module(file: &str, spec: &Spec, table: &[String]) -> Result<SpecWalks, String> {
    let mut w = Walks::new(spec);
    let base = snake(&spec.name);
    let mut bodies: Vec<(i16, usize)> = Vec::new();
    if !spec.valid_versions.none {
        for version in spec.valid_versions.min..=spec.max_version() {
            let at = At {
                version,
                flexible: spec.flexible_versions.contains(version),
            };
            let i = w.walk_index(&spec.fields, "FIELDS", at, Level::Body, base.clone());
            bodies.push((version, i));
        }
    }
    let names: Vec<String> = w.fns.iter().map(WalkFn::name).collect();
    let mut items = Vec::new();
    let mut entries = Vec::new();
    let mut all_names = names.clone();
    for (version, i) in &bodies {
        let entry = format!("{base}_v{version}");
        let body = names.get(*i).cloned().unwrap_or_default();
        if entry != body {
            let (e, b) = (format_ident!("{entry}"), format_ident!("{body}"));
            let doc = format!(
                " The body of {} in version {version}, laid out as in the versions [`{body}`] \
                 walks.",
                spec.name
            );
            items.push(quote! {
                #[doc = #doc]
                #[inline]
                pub(in crate::kafka::walk) fn #e<V: Visit>(d: &mut Decoder<'_>, v: &mut V) -> W {
                    #b(d, v)
                }
            });
            all_names.push(entry.clone());
        }
        entries.push((*version, entry));
    }
    let mut sorted = all_names.clone();
    sorted.sort();
    if let Some(dup) = sorted.windows(2).find(|p| p[0] == p[1]) {
        return Err(format!("schema/{file}: two walks named {}", dup[0]));
    }
    for (i, f) in w.fns.iter().enumerate() {
        let name = format_ident!("{}", names.get(i).cloned().unwrap_or_default());
        let entry = names
            .get(i)
            .is_some_and(|n| entries.iter().any(|(_, e)| e == n));
        let vis = entry.then(|| quote! { pub(in crate::kafka::walk) });
        let doc = format!(" {} in {}.", f.about, f.versions_text());
        let code = &f.code;
        let d = if uses(code, "d") {
            quote! { d }
        } else {
            quote! { _ }
        };
        let v = if uses(code, "v") {
            quote! { v }
        } else {
            quote! { _ }
        };
        items.push(quote! {
            #[doc = #doc]
            #vis fn #name<V: Visit>(#d: &mut Decoder<'_>, #v: &mut V) -> W {
                #code
            }
        });
    }
    let table_path = table.iter().map(|m| format_ident!("{m}"));
    let all = quote! { #(#items)* };
    let table_use = uses(&all, "table")
        .then(|| quote! { use crate::kafka::spec::tables #(::#table_path)* as table; });
    let doc = format!(
        " The walks of {} (schema/{file}), generated by kdissect-codegen from that file: do not \
         edit, run `cargo run -p kdissect-codegen`.",
        spec.name
    );
    let tokens = quote! {
        #![doc = #doc]

        #table_use
        use crate::kafka::walk::generated::prelude::*;

        #all
    };
    // The placeholders become the functions' names.
    let mut text = tokens.to_string();
    for i in (0..w.fns.len()).rev() {
        let name = names.get(i).cloned().unwrap_or_default();
        text = text.replace(&placeholder(i).to_string(), &name);
    }
    let file_syntax: syn::File = syn::parse_str(&text).map_err(|e| format!("{file}: {e}"))?;
    Ok(SpecWalks {
        text: long_noted(
            &prettyplease::unparse(&file_syntax),
            "generated, one block for each field of the struct, in the spec's order.",
        ),
        entries,
    })
}

/// The printed module with `reason` above each function longer than tests/code_shape.rs
/// allows without one.
pub fn long_noted(text: &str, reason: &str) -> String {
    const LIMIT: usize = 80;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        let starts_fn =
            line.starts_with("fn ") || line.starts_with("pub(in crate::kafka::walk) fn ");
        if starts_fn {
            let end = lines
                .iter()
                .skip(i)
                .position(|l| *l == "}")
                .unwrap_or_default();
            if end + 1 > LIMIT {
                out.push_str("// long: ");
                out.push_str(reason);
                out.push('\n');
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
