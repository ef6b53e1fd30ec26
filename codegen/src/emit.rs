//! The Rust of the tables: one module per spec file, each field list a named `static` (a
//! field's address is its `FieldId`, so every list is its own item, never a constant that the
//! compiler could merge with an equal one), and the index that the runtime's registry reads.

use crate::spec::{Content, Field, Kind, Layout, RecordLayouts, Spec};
use crate::versions::{FieldType, Versions};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

/// An integer literal, negative ones as a negation (a literal token is unsigned).
pub fn int(v: i64) -> TokenStream {
    let lit = Literal::i64_unsuffixed(v.unsigned_abs() as i64);
    if v < 0 {
        quote! { -#lit }
    } else {
        quote! { #lit }
    }
}

fn string(s: &str) -> Literal {
    Literal::string(s)
}

pub fn versions(v: Versions) -> TokenStream {
    match (v.none, v.max) {
        (true, _) => quote! { Versions::NONE },
        (false, None) => {
            let min = int(v.min.into());
            quote! { Versions::from(#min) }
        }
        (false, Some(max)) => {
            let (min, max) = (int(v.min.into()), int(max.into()));
            quote! { Versions::between(#min, #max) }
        }
    }
}

fn field_type(t: &FieldType) -> TokenStream {
    match t {
        FieldType::Struct(n) => {
            let n = string(n);
            quote! { FieldType::Struct(#n) }
        }
        FieldType::Array(inner) => {
            let inner = field_type(inner);
            quote! { FieldType::Array(&#inner) }
        }
        primitive => {
            let name = format_ident!("{}", format!("{primitive:?}"));
            quote! { FieldType::#name }
        }
    }
}

pub fn layout(l: &Layout) -> TokenStream {
    match l {
        Layout::Request => quote! { Layout::Request },
        Layout::Response => quote! { Layout::Response },
        Layout::MetadataRecord => quote! { Layout::MetadataRecord },
        Layout::VersionPrefixed(n) => {
            let n = string(n);
            quote! { Layout::VersionPrefixed(#n) }
        }
        Layout::ConsumerProtocol(n) => {
            let n = string(n);
            quote! { Layout::ConsumerProtocol(#n) }
        }
        Layout::Unprefixed(n, v) => {
            let (n, v) = (string(n), int((*v).into()));
            quote! { Layout::Unprefixed(#n, #v) }
        }
    }
}

fn content(c: &Content) -> TokenStream {
    match c {
        Content::Plain => quote! { Content::Plain },
        Content::Sasl => quote! { Content::Sasl },
        Content::Secret => quote! { Content::Secret },
        Content::Embedded(l) => {
            let l = layout(l);
            quote! { Content::Embedded(#l) }
        }
    }
}

/// `CamelCase` to `SCREAMING_SNAKE`.
fn screaming(name: &str) -> String {
    snake(name).to_ascii_uppercase()
}

/// `CamelCase` to `snake_case`: `KRaftVersionRecord` to `k_raft_version_record`.
pub fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|p| chars.get(p));
        let next = chars.get(i + 1);
        let boundary = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        if boundary {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The statics of one spec's fields, written depth first: `FIELDS` for the body, then
/// `FIELDS__TOPICS`, `FIELDS__TOPICS__PARTITIONS`... for the structs below it.
struct Lists {
    items: Vec<TokenStream>,
}

impl Lists {
    /// Adds the list `path` (and those below it) and returns its name.
    fn list(&mut self, path: &str, about: &str, fields: &[Field]) -> Ident {
        let name = Ident::new(path, Span::call_site());
        let slot = self.items.len();
        self.items.push(TokenStream::new());
        let entries: Vec<TokenStream> = fields.iter().map(|f| self.field(path, f)).collect();
        let n = Literal::usize_unsuffixed(fields.len());
        let doc = format!(" {about}");
        let item = quote! {
            #[doc = #doc]
            pub(crate) static #name: [FieldSpec; #n] = [#(#entries),*];
        };
        if let Some(s) = self.items.get_mut(slot) {
            *s = item;
        }
        name
    }

    /// One field's entry: the keys that differ from `FieldSpec::BASE`.
    fn field(&mut self, path: &str, f: &Field) -> TokenStream {
        let name = string(&f.name);
        let ty = field_type(&f.ty);
        let type_name = string(&f.type_name);
        let elem_name = string(&f.elem_name);
        let v = versions(f.versions);
        let mut keys = vec![
            quote! { name: #name },
            quote! { ty: #ty },
            quote! { type_name: #type_name },
            quote! { elem_name: #elem_name },
            quote! { versions: #v },
        ];
        if !f.nullable_versions.none {
            let v = versions(f.nullable_versions);
            keys.push(quote! { nullable_versions: #v });
        }
        if !f.tagged_versions.none {
            let v = versions(f.tagged_versions);
            keys.push(quote! { tagged_versions: #v });
        }
        if let Some(t) = f.tag {
            let t = Literal::u32_unsuffixed(t);
            keys.push(quote! { tag: Some(#t) });
        }
        if f.ignorable {
            keys.push(quote! { ignorable: true });
        }
        if let Some(d) = &f.default {
            let d = string(d);
            keys.push(quote! { default: Some(#d) });
        }
        if let Some(e) = &f.entity_type {
            let e = string(e);
            keys.push(quote! { entity_type: Some(#e) });
        }
        if f.map_key {
            keys.push(quote! { map_key: true });
        }
        if !f.about.is_empty() {
            let a = string(&f.about);
            keys.push(quote! { about: #a });
        }
        if f.content != Content::Plain {
            let c = content(&f.content);
            keys.push(quote! { content: #c });
        }
        if let Some(e) = &f.enumeration {
            let e = string(e);
            keys.push(quote! { enumeration: Some(names::enumeration_named(#e)) });
        }
        if let Some(fv) = f.flexible_versions {
            let fv = versions(fv);
            keys.push(quote! { flexible_versions: Some(#fv) });
        }
        if !f.fields.is_empty() {
            let below = format!("{path}__{}", screaming(&f.name));
            let about = format!("The fields of `{}`, the type of `{}`.", f.elem_name, f.name);
            let list = self.list(&below, &about, &f.fields);
            keys.push(quote! { fields: &#list });
        }
        if f.role != crate::role::Role::Other {
            let r = format_ident!("{}", format!("{:?}", f.role));
            keys.push(quote! { role: Role::#r });
        }
        if f.fact != crate::fact_field::FactField::None {
            let x = format_ident!("{}", format!("{:?}", f.fact));
            keys.push(quote! { fact: FactField::#x });
        }
        if f.facts {
            keys.push(quote! { facts: true });
        }
        if f.error_code {
            keys.push(quote! { error_code: true });
        }
        if f.names_topic {
            keys.push(quote! { names_topic: true });
        }
        quote! {
            FieldSpec { #(#keys,)* ..FieldSpec::BASE }
        }
    }
}

/// The module of one spec file: its `SPEC` and its field lists.
pub fn spec_module(file: &str, spec: &Spec, walk: Option<u16>) -> TokenStream {
    let mut lists = Lists { items: Vec::new() };
    let body_about = format!("The fields of {}'s body.", spec.name);
    let fields = lists.list("FIELDS", &body_about, &spec.fields);
    let api_key = int(spec.api_key.into());
    let kind = format_ident!(
        "{}",
        match spec.kind {
            Kind::Message => "Message",
            Kind::Header => "Header",
            Kind::Data => "Data",
            Kind::MetadataRecord => "MetadataRecord",
        }
    );
    let direction = if spec.response {
        quote! { Direction::Response }
    } else {
        quote! { Direction::Request }
    };
    let header = spec.kind == Kind::Header;
    let name = string(&spec.name);
    let valid = versions(spec.valid_versions);
    let flexible = versions(spec.flexible_versions);
    let has_secrets = spec.has_secrets;
    let may_hold_ids = spec.may_hold_ids;
    let walk = match walk {
        Some(w) => {
            let w = Literal::u16_unsuffixed(w);
            quote! { Some(#w) }
        }
        None => quote! { None },
    };
    let header_versions = spec.header_versions.iter().map(|(r, h)| {
        let r = versions(*r);
        let h = int((*h).into());
        quote! { (#r, #h) }
    });
    let doc = format!(
        " {} (schema/{file}), generated by kdissect-codegen from that file: do not edit, run \
         `cargo run -p kdissect-codegen`.",
        spec.name
    );
    let spec_doc = format!(" The spec of {}.", spec.name);
    let items = &lists.items;
    quote! {
        #![doc = #doc]

        use crate::kafka::spec::tables::prelude::*;

        #[doc = #spec_doc]
        pub(crate) static SPEC: MessageSpec = MessageSpec {
            api_key: #api_key,
            kind: SpecKind::#kind,
            direction: #direction,
            header: #header,
            name: #name,
            valid_versions: #valid,
            flexible_versions: #flexible,
            fields: &#fields,
            has_secrets: #has_secrets,
            may_hold_ids: #may_hold_ids,
            walk: #walk,
            header_versions: &[#(#header_versions),*],
        };

        #(#items)*
    }
}

/// The record layouts of schema-src/records.json.
pub fn record_layouts(r: &RecordLayouts) -> TokenStream {
    let key = match &r.control_key {
        Some(l) => {
            let l = layout(l);
            quote! { Some(#l) }
        }
        None => quote! { None },
    };
    let values = r.control_values.iter().map(|(t, l)| {
        let (t, l) = (int((*t).into()), layout(l));
        quote! { (#t, #l) }
    });
    let topics = r.topics.iter().map(|(n, id, l)| {
        let (n, l) = (string(n), layout(l));
        let id = id.iter().map(|b| Literal::u8_unsuffixed(*b));
        quote! { (#n, [#(#id),*], #l) }
    });
    quote! {
        RecordLayouts {
            control_key: #key,
            control_values: &[#(#values),*],
            topics: &[#(#topics),*],
        }
    }
}
