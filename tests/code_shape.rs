//! The shape of the code, for what the compiler cannot check. The wire stages (wire/: capture,
//! TCP, TLS) are a crate of their own, which cannot name this one: that arrow the compiler
//! keeps. Within src/ it cannot, so src/ (and wire/src/, for the length of functions) is read as Rust syntax (`syn`), never as lines of text, so that a word in a comment
//! neither trips a check nor satisfies it:
//!
//! - no function in src/ runs past `LIMIT` lines unless the comment above it says why, with
//!   the words `long:` (`/// Long: one arm per API.`, `// Why this is long: ...`);
//! - the top modules use one another one way (`LAYERS`), and the rooms of src/kafka too
//!   (`ROOMS`): a path (`use`, a call, a type) to a later module is an arrow the wrong way;
//! - no renderer, filter or fact collector compares a node's or a field's name or type, or
//!   takes a child by position, beyond the debts listed in `NAME_TESTS_ALLOWED`, which only
//!   shrink (the arena tree with FieldIds is what pays them off).
//!
//! Unit tests (`mod tests`, `#[cfg(test)]`) are left out of every check.

use proc_macro2::Span;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::visit::Visit;

const LIMIT: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The wire crate's sources (capture, TCP, TLS).
fn wire_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("wire/src")
}

fn parse(text: &str, path: &Path) -> syn::File {
    syn::parse_file(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether items carrying `attrs` are test code: `#[cfg(test)]` or `#[test]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

// ---- function length ----------------------------------------------------------------

/// Functions of a file: (name, first line of `fn` or its attributes, last line).
struct Functions(Vec<(String, usize, usize)>);

impl Functions {
    fn add(&mut self, name: &syn::Ident, span: Span) {
        self.0
            .push((name.to_string(), span.start().line, span.end().line));
    }
}

impl<'a> Visit<'a> for Functions {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if !is_test(&m.attrs) && m.ident != "tests" {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test(&f.attrs) {
            self.add(
                &f.sig.ident,
                f.sig
                    .fn_token
                    .span
                    .join(f.block.span())
                    .unwrap_or(f.block.span()),
            );
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            self.add(
                &f.sig.ident,
                f.sig
                    .fn_token
                    .span
                    .join(f.block.span())
                    .unwrap_or(f.block.span()),
            );
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if let Some(b) = &f.default {
            self.add(
                &f.sig.ident,
                f.sig.fn_token.span.join(b.span()).unwrap_or(b.span()),
            );
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// Whether a comment line says why a function is long: `long:` after a word boundary.
fn says_why_long(comment: &str) -> bool {
    let lower = comment.to_lowercase();
    lower.match_indices("long:").any(|(at, _)| {
        !lower[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The comment lines and attributes right above line `line` (1-based), nearest first.
fn comments_above(lines: &[&str], line: usize) -> Vec<String> {
    lines[..line.saturating_sub(1)]
        .iter()
        .rev()
        .map(|l| l.trim_start())
        .take_while(|t| t.starts_with("//") || t.starts_with("#["))
        .map(str::to_string)
        .collect()
}

/// Functions longer than LIMIT lines without a reason: (file:line name, length).
fn long_functions(path: &Path) -> Vec<(String, usize)> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let mut fns = Functions(Vec::new());
    fns.visit_file(&parse(&text, path));
    fns.0
        .into_iter()
        .filter(|(_, start, end)| end - start + 1 > LIMIT)
        .filter(|(_, start, _)| {
            !comments_above(&lines, *start)
                .iter()
                .filter(|c| c.starts_with("//"))
                .any(|c| says_why_long(c))
        })
        .map(|(name, start, end)| {
            (
                format!("{}:{start} {name}", path.display()),
                end - start + 1,
            )
        })
        .collect()
}

#[test]
fn no_function_is_long_without_saying_why() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    rust_files(&wire_src(), &mut files);
    assert!(files.len() > 20, "src/ not found");
    assert!(
        files.iter().any(|f| f.ends_with("wire/src/tcp/mod.rs")),
        "wire/src/ not found"
    );
    let long: Vec<_> = files.iter().flat_map(|f| long_functions(f)).collect();
    assert!(
        long.is_empty(),
        "functions over {LIMIT} lines without a comment saying why (`long:`): {long:?}"
    );
}

// ---- arrows between modules -----------------------------------------------------------

/// Every path a file names outside its unit tests, as segments: `use` trees spelt out,
/// types, calls, patterns, macros' paths.
struct Paths(Vec<Vec<String>>);

fn use_paths(t: &syn::UseTree, pre: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut with = |name: String| {
        let mut v = pre.clone();
        v.push(name);
        out.push(v);
    };
    match t {
        syn::UseTree::Path(p) => {
            pre.push(p.ident.to_string());
            use_paths(&p.tree, pre, out);
            pre.pop();
        }
        syn::UseTree::Name(n) => with(n.ident.to_string()),
        syn::UseTree::Rename(n) => with(n.ident.to_string()),
        syn::UseTree::Glob(_) => out.push(pre.clone()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|i| use_paths(i, pre, out)),
    }
}

impl<'a> Visit<'a> for Paths {
    fn visit_path(&mut self, p: &'a syn::Path) {
        self.0
            .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }
    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        use_paths(&u.tree, &mut Vec::new(), &mut self.0);
    }
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if !is_test(&m.attrs) && m.ident != "tests" {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
}

/// The module a file of src/ is: `kafka/walk/decode.rs` is `[kafka, walk, decode]`,
/// `kafka/walk/mod.rs` is `[kafka, walk]`.
fn module_of(rel: &str) -> Vec<String> {
    let mut m: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if m.last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        m.pop();
    }
    m
}

/// The module path a path in module `module` reaches, from the crate's root: `crate::x` and
/// `kdissect::x` (the binary naming the library) are absolute, `super::` climbs from the
/// file's module, `self::` stays; other paths (std, locals, imported names) reach nothing.
fn reached(module: &[String], path: &[String]) -> Option<Vec<String>> {
    match path.first().map(String::as_str) {
        Some("crate") | Some("kdissect") => Some(path[1..].to_vec()),
        Some("super") => {
            let mut base = module.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            base.extend_from_slice(rest);
            Some(base)
        }
        Some("self") => {
            let mut base = module.to_vec();
            base.extend_from_slice(&path[1..]);
            Some(base)
        }
        _ => None,
    }
}

/// Modules reached by a file, at `depth` segments (1: top modules; 2 under src/kafka: its
/// rooms), each with one example path: (reached, `a::b::c`).
fn arrows(path: &Path, rel: &str, depth: usize) -> Vec<(String, String)> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut paths = Paths(Vec::new());
    paths.visit_file(&parse(&text, path));
    let module = module_of(rel);
    let mut out = BTreeMap::new();
    for p in &paths.0 {
        let Some(to) = reached(&module, p) else {
            continue;
        };
        if to.len() >= depth && to[..depth] != module[..depth.min(module.len())] {
            out.entry(to[..depth].join("/"))
                .or_insert_with(|| p.join("::"));
        }
    }
    out.into_iter().collect()
}

/// The top modules in the order data moves through them (the library's, then the binary's):
/// a module may use only those before it. Names not listed (functions of main.rs, the
/// crate's small helpers `be` and `side`) are free to use.
const LAYERS: [&str; 16] = [
    "interrupt",
    "text",
    "capture",
    "tcp",
    "tls",
    "kafka",
    "filter",
    "analyses",
    "render",
    "pipeline",
    "input",
    "flags",
    "sinks",
    "cli_capture",
    "hex_run",
    "subcommands",
];

fn rank(m: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == m)
}

#[test]
fn top_modules_use_one_another_one_way() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let from = module_of(&rel);
        let Some(r) = from.first().and_then(|m| rank(m)) else {
            continue;
        };
        for (to, example) in arrows(f, &rel, 1) {
            if rank(&to).is_some_and(|t| t > r) {
                wrong.push(format!("{rel}: {} uses {to} ({example})", from[0]));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows against the flow (LAYERS): {wrong:#?}"
    );
}

/// The rooms of src/kafka, in the order data moves through them, and the rooms each may use:
/// arrows go one way (src/kafka/mod.rs says why each arrow is there).
const ROOMS: [(&str, &[&str]); 5] = [
    ("spec", &[]),
    ("meaning", &["spec"]),
    ("walk", &["spec", "meaning"]),
    ("records", &["spec", "meaning", "walk"]),
    ("conversation", &["spec", "meaning", "walk", "records"]),
];

/// Arrows from a file of room `room` to rooms it may not use, or to what src/kafka/mod.rs
/// itself holds or re-exports (which hides the room it comes from).
fn room_trespasses(path: &Path, rel: &str, room: &str, allowed: &[&str]) -> Vec<String> {
    arrows(path, rel, 2)
        .into_iter()
        .filter(|(to, _)| to.starts_with("kafka/"))
        .filter(|(to, _)| {
            let r = &to["kafka/".len()..];
            r != room && !allowed.contains(&r)
        })
        .map(|(to, example)| format!("{rel}: {to} ({example})"))
        .collect()
}

#[test]
fn the_rooms_of_kafka_use_one_another_one_way() {
    let root = src();
    let mut checked = 0;
    let mut found = Vec::new();
    for (room, allowed) in ROOMS {
        let mut files = Vec::new();
        rust_files(&root.join("kafka").join(room), &mut files);
        assert!(!files.is_empty(), "no room {room}");
        for f in &files {
            checked += 1;
            let rel = f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            found.extend(room_trespasses(f, &rel, room, allowed));
        }
    }
    // Every file of src/kafka but mod.rs and example.rs lies in a room.
    let mut all = Vec::new();
    rust_files(&root.join("kafka"), &mut all);
    assert_eq!(
        checked + 2,
        all.len(),
        "a file of src/kafka outside the rooms"
    );
    assert!(
        found.is_empty(),
        "arrows between rooms the wrong way: {found:#?}"
    );
}

// ---- name tests -----------------------------------------------------------------------

/// Expressions that test a name or a type, or take a child by position: comparisons with a
/// `.name` or `.ty` field (or `name()`) on either side; `starts_with`, `ends_with`,
/// `contains`, `eq` called on one or given one; `.child("…")`, `field(_, "…")`;
/// `children[2]`, `children.get(2)`; a `match` of a name against text. Each is counted at its line.
struct NameTests(Vec<usize>);

fn names_a_name(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Field(f) => {
            matches!(&f.member, syn::Member::Named(i) if i == "name" || i == "ty")
        }
        syn::Expr::MethodCall(m) => {
            (m.method == "name" && m.args.is_empty())
                || (["as_ref", "as_str", "to_string", "as_bytes"]
                    .contains(&m.method.to_string().as_str())
                    && names_a_name(&m.receiver))
        }
        syn::Expr::Reference(r) => names_a_name(&r.expr),
        syn::Expr::Unary(u) => names_a_name(&u.expr),
        syn::Expr::Paren(p) => names_a_name(&p.expr),
        _ => false,
    }
}

fn is_str_lit(e: &syn::Expr) -> bool {
    matches!(e, syn::Expr::Lit(l) if matches!(l.lit, syn::Lit::Str(_)))
}

fn is_int_lit(e: &syn::Expr) -> bool {
    matches!(e, syn::Expr::Lit(l) if matches!(l.lit, syn::Lit::Int(_)))
}

fn is_children(e: &syn::Expr) -> bool {
    matches!(e, syn::Expr::Field(f) if matches!(&f.member, syn::Member::Named(i) if i == "children"))
}

impl NameTests {
    fn hit(&mut self, s: Span) {
        self.0.push(s.start().line);
    }
}

impl<'a> Visit<'a> for NameTests {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if !is_test(&m.attrs) && m.ident != "tests" {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_expr_binary(&mut self, b: &'a syn::ExprBinary) {
        if matches!(b.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_))
            && (names_a_name(&b.left) || names_a_name(&b.right))
        {
            self.hit(b.span());
        }
        syn::visit::visit_expr_binary(self, b);
    }
    fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
        let method = m.method.to_string();
        let tests = ["starts_with", "ends_with", "contains", "eq"].contains(&method.as_str())
            && (names_a_name(&m.receiver) || m.args.iter().any(names_a_name));
        let by_name = method == "child" && m.args.iter().any(is_str_lit);
        let by_position =
            method == "get" && is_children(&m.receiver) && m.args.iter().any(is_int_lit);
        if tests || by_name || by_position {
            self.hit(m.method.span());
        }
        syn::visit::visit_expr_method_call(self, m);
    }
    fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
        let field = matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident("field"));
        if field && c.args.iter().skip(1).any(is_str_lit) {
            self.hit(c.span());
        }
        syn::visit::visit_expr_call(self, c);
    }
    fn visit_expr_index(&mut self, i: &'a syn::ExprIndex) {
        if is_children(&i.expr) && is_int_lit(&i.index) {
            self.hit(i.span());
        }
        syn::visit::visit_expr_index(self, i);
    }
    fn visit_expr_match(&mut self, m: &'a syn::ExprMatch) {
        let by_text = m
            .arms
            .iter()
            .any(|a| matches!(&a.pat, syn::Pat::Lit(l) if matches!(l.lit, syn::Lit::Str(_))));
        if names_a_name(&m.expr) && by_text {
            self.hit(m.match_token.span);
        }
        syn::visit::visit_expr_match(self, m);
    }
}

/// Lines of `path` (outside its unit tests) that test a name or a type.
fn name_tests(path: &Path) -> Vec<usize> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut found = NameTests(Vec::new());
    found.visit_file(&parse(&text, path));
    found.0
}

/// Files that still test names, with how many tests: each is a debt, and the count may only
/// go down (lower it here when it does). A file not listed may have none. Most compare a
/// node's name with a spec field's or a filter path's: the tree's nodes still carry their
/// names, and these go when the tree holds only FieldIds.
///
/// The filter's two are not debts: a filter's words are names, and `Builtin`s and aliases
/// are found by them.
const NAME_TESTS_ALLOWED: [(&str, usize); 5] = [
    ("src/render/json.rs", 2),
    ("src/render/tree.rs", 2),
    ("src/filter/record.rs", 3),
    ("src/filter/fields.rs", 2),
    ("src/filter/alias.rs", 2),
];

#[test]
fn renderers_filters_and_fact_collectors_do_not_test_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src/render", "src/filter", "src/analyses", "src/sinks"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.push(root.join("src/kafka/meaning/facts.rs"));
    files.push(root.join("src/kafka/walk/collect.rs"));
    files.push(root.join("src/kafka/walk/tree_facts.rs"));
    files.push(root.join("src/kafka/conversation/topics.rs"));
    assert!(files.len() > 20, "src/ not found");
    let mut over = Vec::new();
    let mut under = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        let found = name_tests(f);
        let allowed = NAME_TESTS_ALLOWED
            .iter()
            .find(|(p, _)| *p == rel)
            .map_or(0, |(_, n)| *n);
        if found.len() > allowed {
            over.push((rel, allowed, found));
        } else if found.len() < allowed {
            under.push((rel, allowed, found.len()));
        }
    }
    assert!(
        over.is_empty(),
        "names or types tested (read the node's kind or its field's role instead), \
         (file, allowed, lines): {over:?}"
    );
    assert!(
        under.is_empty(),
        "fewer name tests than allowed: lower NAME_TESTS_ALLOWED to match (file, allowed, found): \
         {under:?}"
    );
}

// ---- the checks themselves ------------------------------------------------------------

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kdissect-shape-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_length_scan_wants_a_reason_not_a_word() {
    let body = "    let x = 1;\n".repeat(90);
    let plain = scratch(
        "plain.rs",
        &format!("/// Does it.\npub fn big() {{\n{body}}}\n"),
    );
    let longest = scratch(
        "longest.rs",
        &format!("/// Keeps the longest run.\nfn big() {{\n{body}}}\n"),
    );
    let excused = scratch(
        "excused.rs",
        &format!("/// Long: one table, read top to bottom.\nfn big() {{\n{body}}}\n"),
    );
    let method = scratch(
        "method.rs",
        &format!("impl X {{\n    // Why this is long: one match.\n    fn big(&self) {{\n{body}    }}\n    fn small() {{}}\n}}\n"),
    );
    let test = scratch(
        "test.rs",
        &format!("#[cfg(test)]\nmod t {{\n    fn big() {{\n{body}    }}\n}}\n"),
    );
    assert_eq!(long_functions(&plain).len(), 1);
    assert_eq!(long_functions(&longest).len(), 1, "`longest` is no reason");
    assert!(long_functions(&excused).is_empty());
    assert!(long_functions(&method).is_empty());
    assert!(long_functions(&test).is_empty());
}

#[test]
fn the_arrow_scan_reads_code_not_comments() {
    let text = "use super::node::Node;\n// crate::render::tree in a comment\n\
                /// crate::flags in a doc\nfn f() { let s = \"crate::sinks\"; }\n\
                fn g() -> crate::render::Style { kdissect::flags::x() }\n\
                use crate::kafka::{conversation::stream::Tracker, spec};\n\
                #[cfg(test)]\nmod tests { use crate::sinks::Printer; }\n";
    let p = scratch("walk.rs", text);
    let found = arrows(&p, "kafka/walk/walk.rs", 1);
    let to: Vec<&str> = found.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(to, ["flags", "render"], "{found:?}");
    let rooms = room_trespasses(&p, "kafka/walk/walk.rs", "walk", &["spec"]);
    assert_eq!(rooms.len(), 1, "{rooms:?}");
    assert!(rooms[0].contains("kafka/conversation"), "{rooms:?}");
    // `super::super::records` from kafka/walk/x.rs is the records room.
    let up = scratch("up.rs", "use super::super::records::Batch;\n");
    assert_eq!(
        room_trespasses(&up, "kafka/walk/up.rs", "walk", &["spec"]).len(),
        1
    );
}

#[test]
fn the_name_scan_finds_name_tests_in_code_only() {
    let clean = scratch(
        "clean.rs",
        "fn f(n: &Node) -> bool {\n    n.kind == NodeKind::Array && role(n) == Role::Topics\n}\n\
         // n.name == \"x\" in a comment\nfn field(n: &Node, id: FieldId) {}\n\
         #[cfg(test)]\nmod tests {\n    fn t() { assert!(n.name == \"x\"); }\n}\n",
    );
    let names = scratch(
        "names.rs",
        "fn f(n: &Node) -> bool {\n    n.name == \"Topics\" || n.ty == \"struct\"\n}\n\
         fn g(b: &Node) { let t = field(b, \"TopicId\"); }\n\
         fn h(n: &Node) { n.name.starts_with(\"Request\"); }\n\
         fn p(n: &Node) { n.children.get(2); }\n\
         fn q(n: &Node) { n.children[0]; n.children.get(i); }\n\
         fn r(n: &Node, s: &Spec) { s.name == n.name; LENGTHS.contains(&&*n.name); }\n\
         fn m(n: &Node) { match n.name.as_ref() { \"a\" => 1, _ => 2 }; }\n",
    );
    assert!(name_tests(&clean).is_empty(), "{:?}", name_tests(&clean));
    assert_eq!(
        name_tests(&names),
        [2, 2, 4, 5, 6, 7, 8, 8, 9],
        "{:?}",
        name_tests(&names)
    );
}
