//! kdissect's code generator: reads Kafka's message specs once (schema/**/*.json, and
//! kdissect's record layouts, schema-src/records.json) and writes them as static Rust tables
//! (src/kafka/spec/tables/), so that the dissector parses no JSON when it runs, and the walks
//! of every message version (src/kafka/walk/generated/walks/, codegen/src/walks.rs).
//!
//! The Rust is built as tokens with `quote`, checked by `syn` and printed by `prettyplease`,
//! as kafka-protocol-rs's protocol_codegen writes its messages. The output is checked in;
//! tests/codegen_fresh.rs regenerates it and fails when it differs, so a spec changed without
//! running the generator (`cargo run -p kdissect-codegen`) fails CI.
//!
//! The spec language's words and what kdissect works out from a field's name (its role, the
//! fact it is) are the runtime's own files, included here as they are, so that the generator
//! and the crate cannot disagree on them.

#[allow(dead_code)]
#[path = "../../src/kafka/spec/fact_field.rs"]
mod fact_field;
#[allow(dead_code)]
#[path = "../../src/kafka/spec/role.rs"]
mod role;
#[allow(dead_code)]
#[path = "../../src/kafka/spec/versions.rs"]
mod versions;

mod emit;
mod spec;
mod walks;

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use spec::{Kind, Spec};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Where the tables go, under the crate's root.
pub const TABLES: &str = "src/kafka/spec/tables";

/// Where the walks go, under the crate's root.
pub const WALKS: &str = "src/kafka/walk/generated/walks";

/// Folders of schema/ whose specs are not API messages: the headers, the data messages
/// carried in others' bytes and the KRaft metadata records.
const APART: [&str; 3] = ["headers/", "data/", "metadata/"];

/// Every `.json` file under `dir`, named from `schema/` with `/` between folders.
fn collect(dir: &Path, rel: &str, out: &mut Vec<String>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if path.is_dir() {
            collect(&path, &r, out)?;
        } else if name.ends_with(".json") {
            out.push(r);
        }
    }
    Ok(())
}

/// One spec file read, with where its module goes.
struct Table {
    /// Its name under schema/: `legacy/FetchRequest.json`.
    file: String,
    spec: Spec,
    /// Its module's path below the tables: `["legacy", "fetch_request"]`.
    module: Vec<String>,
    /// For an API message, its index among them (its walks are found by it, `walk_body`).
    walk: Option<u16>,
}

impl Table {
    fn path(&self) -> TokenStream {
        let parts = self.module.iter().map(|m| format_ident!("{m}"));
        quote! { #(#parts::)*SPEC }
    }
}

/// Reads every spec under `root/schema`, in the order build.rs embeds them: the API messages first
/// (sorted by name, legacy ones among them), then the folders apart.
fn read_tables(root: &Path) -> Result<Vec<Table>, String> {
    let mut names = Vec::new();
    collect(&root.join("schema"), "", &mut names)?;
    names.sort();
    let (apart, messages): (Vec<String>, Vec<String>) = names
        .into_iter()
        .partition(|n| APART.iter().any(|a| n.starts_with(a)));
    let mut tables = Vec::new();
    for (i, file) in messages.iter().chain(&apart).enumerate() {
        let text = fs::read_to_string(root.join("schema").join(file))
            .map_err(|e| format!("schema/{file}: {e}"))?;
        let spec = spec::parse(&text).map_err(|e| format!("schema/{file}: {e}"))?;
        let mut module: Vec<String> = file.split('/').map(str::to_string).collect();
        if let Some(last) = module.last_mut() {
            *last = emit::snake(last.trim_end_matches(".json"));
        }
        let walk = if i < messages.len() {
            if spec.kind != Kind::Message {
                return Err(format!("schema/{file} is not a request or a response"));
            }
            Some(u16::try_from(i).map_err(|_| "too many specs".to_string())?)
        } else {
            None
        };
        tables.push(Table {
            file: file.clone(),
            spec,
            module,
            walk,
        });
    }
    Ok(tables)
}

fn check_kinds(tables: &[Table]) -> Result<(), String> {
    for t in tables {
        let want = match t.module.first().map(String::as_str) {
            Some("headers") => Kind::Header,
            Some("data") => Kind::Data,
            Some("metadata") => Kind::MetadataRecord,
            _ => Kind::Message,
        };
        if t.spec.kind != want {
            return Err(format!("schema/{}: not a spec of its folder", t.file));
        }
    }
    Ok(())
}

/// Specs sorted as the registry wants them: the current table (valid versions, the newest)
/// first, files otherwise in their order.
fn current_first(mut v: Vec<&Table>) -> Vec<&Table> {
    v.sort_by_key(|t| std::cmp::Reverse((!t.spec.valid_versions.none, t.spec.max_version())));
    v
}

/// The index the registry reads: message specs by API and direction, the headers, the data
/// and metadata record specs, and the record layouts.
fn index(tables: &[Table], records: &spec::RecordLayouts) -> Result<TokenStream, String> {
    let mut by_api: Vec<Vec<&Table>> = Vec::new();
    for t in tables.iter().filter(|t| t.spec.kind == Kind::Message) {
        let key = usize::try_from(t.spec.api_key)
            .map_err(|_| format!("schema/{} has a negative API key", t.file))?;
        let slot = key * 2 + usize::from(t.spec.response);
        if by_api.len() <= slot {
            by_api.resize_with(slot + 1, Vec::new);
        }
        if let Some(s) = by_api.get_mut(slot) {
            s.push(t);
        }
    }
    let slots = by_api.into_iter().map(|v| {
        let specs = current_first(v).into_iter().map(Table::path);
        quote! { &[#(&#specs),*] }
    });
    let n_slots = Literal::usize_unsuffixed(slots.len());
    let headers = [false, true].map(|response| {
        let v = tables
            .iter()
            .filter(|t| t.spec.kind == Kind::Header && t.spec.response == response)
            .collect();
        let specs = current_first(v).into_iter().map(Table::path);
        quote! { &[#(&#specs),*] }
    });
    let mut data: Vec<&Table> = tables
        .iter()
        .filter(|t| t.spec.kind == Kind::Data)
        .collect();
    data.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
    if data.windows(2).any(|w| w[0].spec.name == w[1].spec.name) {
        return Err("two data specs have the same name".into());
    }
    let mut metadata: Vec<&Table> = tables
        .iter()
        .filter(|t| t.spec.kind == Kind::MetadataRecord)
        .collect();
    metadata.sort_by_key(|t| t.spec.api_key);
    if metadata
        .windows(2)
        .any(|w| w[0].spec.api_key == w[1].spec.api_key)
    {
        return Err("two metadata records have the same type".into());
    }
    let (n_data, n_metadata) = (
        Literal::usize_unsuffixed(data.len()),
        Literal::usize_unsuffixed(metadata.len()),
    );
    let data = data.into_iter().map(Table::path);
    let metadata = metadata.into_iter().map(Table::path);
    let records = emit::record_layouts(records);
    Ok(quote! {
        /// The message specs of each API and direction: at `api_key * 2` the request's, at
        /// `api_key * 2 + 1` the response's, the current table (valid versions, the newest)
        /// first, then the legacy ones.
        pub(crate) static BY_API: [&[&MessageSpec]; #n_slots] = [#(#slots),*];

        /// The header specs, the request's then the response's, current first.
        pub(crate) static HEADERS: [&[&MessageSpec]; 2] = [#(#headers),*];

        /// The data messages carried in others' bytes, by name.
        pub(crate) static DATA: [&MessageSpec; #n_data] = [#(&#data),*];

        /// The KRaft metadata records, by record type.
        pub(crate) static METADATA_RECORDS: [&MessageSpec; #n_metadata] = [#(&#metadata),*];

        /// How record keys and values are laid out where they are not plain bytes
        /// (schema-src/records.json).
        pub(crate) static RECORD_LAYOUTS: RecordLayouts = #records;
    })
}

/// Prints a module's tokens as formatted Rust.
fn pretty(tokens: TokenStream, what: &str) -> Result<String, String> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| format!("{what}: {e}"))?;
    Ok(prettyplease::unparse(&file))
}

/// A folder's `mod.rs`: its modules, and at the top, the prelude and the index.
fn mod_file(dir: &[String], children: &[String], top: Option<TokenStream>) -> TokenStream {
    let mods = children.iter().map(|c| format_ident!("{c}"));
    let doc = if dir.is_empty() {
        " The spec tables: every message spec under schema/ as static Rust, generated by \
         kdissect-codegen (codegen/) from those files and schema-src/records.json. Do not \
         edit: change the specs and run `cargo run -p kdissect-codegen`; \
         tests/codegen_fresh.rs fails when these files are not what it writes."
            .to_string()
    } else {
        format!(
            " The tables of schema/{}/, generated by kdissect-codegen: do not edit.",
            dir.join("/")
        )
    };
    let top = top.map(|index| {
        quote! {
            /// What every table names.
            pub(crate) mod prelude {
                pub(crate) use crate::kafka::spec::fact_field::FactField;
                pub(crate) use crate::kafka::spec::names;
                pub(crate) use crate::kafka::spec::schema::{
                    Content, Direction, FieldSpec, FieldType, Layout, MessageSpec, RecordLayouts,
                    Role, SpecKind, Versions,
                };
            }

            use prelude::*;

            #index
        }
    });
    quote! {
        #![doc = #doc]

        #(pub(crate) mod #mods;)*

        #top
    }
}

/// Enters folder `dir` and each folder above it as a child module of its parent in `dirs`
/// (each folder's child modules, by folder path), once each.
fn add_folders(dirs: &mut BTreeMap<Vec<String>, Vec<String>>, dir: &[String]) {
    for depth in 0..dir.len() {
        let parent = dir.get(..depth).unwrap_or_default().to_vec();
        let child = dir.get(depth).cloned().unwrap_or_default();
        let entry = dirs.entry(parent).or_default();
        if !entry.contains(&child) {
            entry.push(child);
        }
    }
}

/// Every file of the tables: its path under `root` and its text.
pub fn generate(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let tables = read_tables(root)?;
    check_kinds(&tables)?;
    let records_text = fs::read_to_string(root.join("schema-src/records.json"))
        .map_err(|e| format!("schema-src/records.json: {e}"))?;
    let records = spec::RecordLayouts::parse(&records_text)
        .map_err(|e| format!("schema-src/records.json: {e}"))?;
    let out = Path::new(TABLES);
    let mut files = Vec::new();
    // Each folder's child modules.
    let mut dirs: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    dirs.insert(Vec::new(), Vec::new());
    for t in &tables {
        let (name, dir) = t.module.split_last().ok_or("a spec without a name")?;
        add_folders(&mut dirs, dir);
        let entry = dirs.entry(dir.to_vec()).or_default();
        if entry.contains(name) {
            return Err(format!("schema/{}: its module {name} is taken", t.file));
        }
        entry.push(name.clone());
        let tokens = emit::spec_module(&t.file, &t.spec, t.walk);
        let mut path = out.to_path_buf();
        path.extend(dir);
        path.push(format!("{name}.rs"));
        files.push((path, pretty(tokens, &t.file)?));
    }
    for (dir, mut children) in dirs {
        children.sort();
        let top = if dir.is_empty() {
            Some(index(&tables, &records)?)
        } else {
            None
        };
        let mut path = out.to_path_buf();
        path.extend(&dir);
        path.push("mod.rs");
        let text = pretty(mod_file(&dir, &children, top), "mod.rs")?;
        files.push((path, text));
    }
    files.extend(walk_files(&tables)?);
    files.sort();
    Ok(files)
}

/// The files of the walks: a module per API message spec, laid out as its table's, and the
/// dispatch in the top `mod.rs`.
fn walk_files(tables: &[Table]) -> Result<Vec<(PathBuf, String)>, String> {
    let out = Path::new(WALKS);
    let mut files = Vec::new();
    let mut dirs: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    dirs.insert(Vec::new(), Vec::new());
    let mut arms = Vec::new();
    for t in tables {
        let Some(index) = t.walk else { continue };
        // A spec with no valid versions (kept for its history) has no walk.
        if t.spec.valid_versions.none {
            continue;
        }
        let (name, dir) = t.module.split_last().ok_or("a spec without a name")?;
        add_folders(&mut dirs, dir);
        dirs.entry(dir.to_vec()).or_default().push(name.clone());
        let made = walks::spec_module(&t.file, &t.spec, &t.module)?;
        let module = t
            .module
            .iter()
            .map(|m| format_ident!("{m}"))
            .collect::<Vec<_>>();
        let index = Literal::u16_unsuffixed(index);
        for (version, entry) in made.entries {
            let (version, entry) = (emit::int(version.into()), format_ident!("{entry}"));
            arms.push(quote! { (#index, #version) => #(#module::)*#entry(d, v), });
        }
        let mut path = out.to_path_buf();
        path.extend(dir);
        path.push(format!("{name}.rs"));
        files.push((path, made.text));
    }
    for (dir, mut children) in dirs {
        children.sort();
        let top = dir.is_empty().then(|| {
            quote! {
                use crate::kafka::walk::generated::prelude::*;

                /// The walk of the body of the API message spec numbered `file` (its table's
                /// `walk`) at `version`; `None` where there is none.
                pub(in crate::kafka::walk) fn walk_body<V: Visit>(
                    file: u16,
                    version: i16,
                    d: &mut Decoder<'_>,
                    v: &mut V,
                ) -> Option<W> {
                    Some(match (file, version) {
                        #(#arms)*
                        _ => return None,
                    })
                }
            }
        });
        let mods = children.iter().map(|c| format_ident!("{c}"));
        let doc = if dir.is_empty() {
            " The generated walks: one module per API message spec under schema/, with a named \
             walk for each version of its body and of each struct in it, generated by \
             kdissect-codegen (codegen/src/walks.rs) from those files. Do not edit: change the \
             specs and run `cargo run -p kdissect-codegen`; tests/codegen_fresh.rs fails when \
             these files are not what it writes."
                .to_string()
        } else {
            format!(
                " The walks of schema/{}/, generated by kdissect-codegen: do not edit.",
                dir.join("/")
            )
        };
        let tokens = quote! {
            #![doc = #doc]

            #(pub(in crate::kafka::walk) mod #mods;)*

            #top
        };
        let mut path = out.to_path_buf();
        path.extend(&dir);
        path.push("mod.rs");
        let text = walks::long_noted(
            &pretty(tokens, "walks/mod.rs")?,
            "generated, one arm for each (API, direction, version).",
        );
        files.push((path, text));
    }
    Ok(files)
}

/// Every `.rs` file under `root/TABLES` and `root/WALKS`, as paths under `root`: what a run of the generator
/// replaces.
pub fn existing(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                if let Ok(rel) = p.strip_prefix(root) {
                    out.push(rel.to_path_buf());
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&root.join(TABLES), root, &mut out);
    walk(&root.join(WALKS), root, &mut out);
    out.sort();
    out
}
