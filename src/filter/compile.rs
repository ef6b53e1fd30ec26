//! An expression checked and made ready to run: fields looked up, values read as what the
//! field holds (an API name as its key, `50ms` as nanoseconds), patterns compiled. All that
//! can go wrong goes wrong here, so that running a filter cannot fail.

use super::fields::{resolve, Builtin, FieldRef, FieldValue, Fields, Kind};
use super::literal::{self, UNIT_NAMES};
use super::parser::{parse, CmpOp, Expr, FieldName, Literal, SetMember};
use super::pattern::{Budget, Pattern};
use super::record::RecordFields;
use super::suggest::{did_you_mean, nearest};
use super::FilterError;
use crate::kafka::names::{api_key_from_str, API_NAMES, ERROR_NAMES};
use crate::kafka::stream::Record;
use std::cmp::Ordering;
use std::fmt;

/// A compiled display filter.
#[derive(Debug, Clone)]
pub struct Filter {
    expr: Expr,
    root: Prog,
}

#[derive(Debug, Clone)]
enum Prog {
    Or(Box<Prog>, Box<Prog>),
    And(Box<Prog>, Box<Prog>),
    Not(Box<Prog>),
    Test { field: FieldRef, check: Check },
}

#[derive(Debug, Clone)]
enum Check {
    /// A bare field.
    Truthy,
    /// `== != < <= > >=` against a value of the field's type.
    Cmp(CmpOp, FieldValue),
    Contains(String),
    Matches(Pattern),
    /// `contains` or `matches` on API keys or error codes: the numbers whose names match,
    /// found once here rather than per message.
    OneOf(Vec<i64>),
    /// `in {...}`: a value equal to a member, or inside a member's range.
    In(Vec<Member>),
}

/// A member of a set, read as the field's type.
#[derive(Debug, Clone)]
enum Member {
    One(FieldValue),
    /// Both ends included.
    Range(FieldValue, FieldValue),
}

impl Member {
    fn holds(&self, v: &FieldValue) -> bool {
        match self {
            Member::One(want) => order(v, want).is_some_and(Ordering::is_eq),
            Member::Range(lo, hi) => {
                order(v, lo).is_some_and(Ordering::is_ge)
                    && order(v, hi).is_some_and(Ordering::is_le)
            }
        }
    }
}

impl Filter {
    /// Parses and checks a filter.
    pub fn compile(text: &str) -> Result<Filter, FilterError> {
        Filter::from_expr(&parse(text)?)
    }

    /// Checks a parsed filter. Its `matches` patterns together are held to
    /// [`super::pattern::TOTAL_LIMIT`].
    pub fn from_expr(expr: &Expr) -> Result<Filter, FilterError> {
        Ok(Filter {
            expr: expr.clone(),
            root: prog(expr, &mut Budget::new())?,
        })
    }

    /// Whether a message passes.
    pub fn matches(&self, f: &dyn Fields) -> bool {
        run(&self.root, f)
    }

    /// Whether a captured message passes.
    pub fn matches_record(&self, rec: &Record<'_>) -> bool {
        self.matches(&RecordFields::new(rec))
    }

    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// Whether the filter reads this built-in field (a filter on `latency` can only pass
    /// responses, for instance).
    pub fn uses(&self, b: Builtin) -> bool {
        self.any_field(&|f| f.reads(b))
    }

    /// Whether the filter reads the decoded tree below the body's first levels (`topic`,
    /// `partition`, schema paths): the decoder must then keep every level (its
    /// `keep_depth` option), or those fields see only what was kept.
    pub fn needs_tree(&self) -> bool {
        self.any_field(&FieldRef::needs_tree)
    }

    /// Whether the filter names fields of the schema (paths, field names), as opposed to
    /// built-in fields only.
    pub fn reads_schema(&self) -> bool {
        self.any_field(&FieldRef::reads_schema)
    }

    /// Whether any field the filter tests passes `pred`.
    fn any_field(&self, pred: &dyn Fn(&FieldRef) -> bool) -> bool {
        fn go(p: &Prog, pred: &dyn Fn(&FieldRef) -> bool) -> bool {
            match p {
                Prog::Or(x, y) | Prog::And(x, y) => go(x, pred) || go(y, pred),
                Prog::Not(x) => go(x, pred),
                Prog::Test { field, .. } => pred(field),
            }
        }
        go(&self.root, pred)
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)
    }
}

fn prog(e: &Expr, budget: &mut Budget) -> Result<Prog, FilterError> {
    Ok(match e {
        Expr::Or(a, b) => Prog::Or(Box::new(prog(a, budget)?), Box::new(prog(b, budget)?)),
        Expr::And(a, b) => Prog::And(Box::new(prog(a, budget)?), Box::new(prog(b, budget)?)),
        Expr::Not(a) => Prog::Not(Box::new(prog(a, budget)?)),
        Expr::Test { field, cmp } => {
            let (fref, kinds) = resolve(field)?;
            let check = match cmp {
                None => Check::Truthy,
                Some((op, lit)) => check(field, &kinds, *op, lit, budget)?,
            };
            Prog::Test { field: fref, check }
        }
        Expr::In { field, set } => {
            let (fref, kinds) = resolve(field)?;
            let check = first_kind(&kinds, lit_column(set), |k| set_check(field, k, set))?;
            Prog::Test { field: fref, check }
        }
    })
}

/// The column of a set's first member, for an error that names none.
fn lit_column(set: &[SetMember]) -> usize {
    match set.first() {
        Some(SetMember::One(l) | SetMember::Range(l, _)) => l.column,
        None => 1,
    }
}

/// The check made with the first of the field's kinds that accepts it (a path may have
/// several when versions or directions differ), else the first kind's error.
fn first_kind(
    kinds: &[Kind],
    column: usize,
    mut make: impl FnMut(Kind) -> Result<Check, FilterError>,
) -> Result<Check, FilterError> {
    let mut first_err = None;
    for k in kinds {
        match make(*k) {
            Ok(c) => return Ok(c),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or_else(|| FilterError::new(column, "no value fits this field")))
}

/// `field in {...}`: every member read as the field's kind; ranges need an order.
fn set_check(field: &FieldName, kind: Kind, set: &[SetMember]) -> Result<Check, FilterError> {
    if matches!(kind, Kind::Struct | Kind::Protocol) {
        return Err(bare_only(field, kind));
    }
    let mut members = Vec::with_capacity(set.len());
    for m in set {
        members.push(match m {
            SetMember::One(lit) => Member::One(value(field, kind, lit)?),
            SetMember::Range(lo, _) if matches!(kind, Kind::Bool | Kind::Uuid | Kind::Bytes) => {
                return Err(FilterError::new(
                    lo.column,
                    format!(
                        "a range needs an order: `{}` is {}",
                        field.text,
                        kind.describe()
                    ),
                ))
            }
            SetMember::Range(lo, hi) => {
                Member::Range(value(field, kind, lo)?, value(field, kind, hi)?)
            }
        });
    }
    Ok(Check::In(members))
}

/// The error for a comparison on what can only be tested bare.
fn bare_only(field: &FieldName, kind: Kind) -> FilterError {
    let name = &field.text;
    let message = if kind == Kind::Protocol {
        format!("`{name}` is the protocol: test it bare (`{name}` alone holds for every message)")
    } else {
        format!("`{name}` is a struct, an array of structs or records: test it bare, or compare one of its fields")
    };
    FilterError::new(field.column, message)
}

/// The check for `field op lit`: the literal read as the first of the field's kinds that
/// accepts it (a path may have several when versions or directions differ).
fn check(
    field: &FieldName,
    kinds: &[Kind],
    op: CmpOp,
    lit: &Literal,
    budget: &mut Budget,
) -> Result<Check, FilterError> {
    first_kind(kinds, lit.column, |k| check_kind(field, k, op, lit, budget))
}

fn check_kind(
    field: &FieldName,
    kind: Kind,
    op: CmpOp,
    lit: &Literal,
    budget: &mut Budget,
) -> Result<Check, FilterError> {
    let name = &field.text;
    if matches!(kind, Kind::Struct | Kind::Protocol) {
        return Err(bare_only(field, kind));
    }
    match op {
        CmpOp::Contains | CmpOp::Matches => text_check(field, kind, op, lit, budget),
        _ if op.is_ordering() && matches!(kind, Kind::Bool | Kind::Uuid | Kind::Bytes) => {
            Err(FilterError::new(
                field.column,
                format!(
                    "`{}` needs an order: `{name}` is {}",
                    op.as_str(),
                    kind.describe()
                ),
            ))
        }
        _ => Ok(Check::Cmp(op, value(field, kind, lit)?)),
    }
}

/// `contains` and `matches`: on text (strings, bytes, topic names), or on the names of API
/// keys and error codes.
fn text_check(
    field: &FieldName,
    kind: Kind,
    op: CmpOp,
    lit: &Literal,
    budget: &mut Budget,
) -> Result<Check, FilterError> {
    let at = lit.column + usize::from(lit.quoted);
    let pattern = match op {
        CmpOp::Matches => Some(Pattern::new(&lit.text).map_err(|e| {
            FilterError::new(at + e.offset, format!("in the pattern: {}", e.message))
        })?),
        _ => None,
    };
    let hit = |name: &str| match &pattern {
        Some(p) => p.is_match(name),
        None => name.contains(lit.text.as_str()),
    };
    let codes = |table: &[(i16, &str)]| -> Vec<i64> {
        table
            .iter()
            .filter(|(_, n)| hit(n))
            .map(|(k, _)| i64::from(*k))
            .collect()
    };
    match kind {
        Kind::Api => Ok(Check::OneOf(codes(API_NAMES))),
        Kind::Error => Ok(Check::OneOf(codes(ERROR_NAMES))),
        Kind::Str | Kind::Bytes | Kind::Topic => Ok(match pattern {
            Some(p) => {
                // Kept for the filter's life: counted against what all its patterns may take.
                budget
                    .charge(&p)
                    .map_err(|e| FilterError::new(at, e.message))?;
                Check::Matches(p)
            }
            None => Check::Contains(lit.text.clone()),
        }),
        _ => Err(FilterError::new(
            field.column,
            format!(
                "`{}` needs text: `{}` is {}",
                op.as_str(),
                field.text,
                kind.describe()
            ),
        )),
    }
}

/// The literal as a value of the field's kind.
fn value(field: &FieldName, kind: Kind, lit: &Literal) -> Result<FieldValue, FilterError> {
    let text = lit.text.as_str();
    let bad = |what: String| FilterError::new(lit.column, what);
    let expect = |want: &str| {
        bad(format!(
            "`{}` is {}: expected {want}, found `{lit}`",
            field.text,
            kind.describe()
        ))
    };
    let word_int = || (!lit.quoted).then(|| literal::int(text)).flatten();
    Ok(match kind {
        Kind::Int => {
            FieldValue::Int(word_int().ok_or_else(|| expect("an integer (42, -1, 0x1f)"))?)
        }
        Kind::Float => match word_int() {
            Some(i) => FieldValue::Float(i as f64),
            None => FieldValue::Float(
                (!lit.quoted)
                    .then(|| literal::float(text))
                    .flatten()
                    .ok_or_else(|| expect("a number"))?,
            ),
        },
        Kind::Bool => match (lit.quoted, text) {
            (false, "true") => FieldValue::Bool(true),
            (false, "false") => FieldValue::Bool(false),
            _ => return Err(expect("`true` or `false`")),
        },
        Kind::Str => FieldValue::Str(lit.text.clone()),
        Kind::Bytes => FieldValue::Bytes(lit.text.clone().into_bytes()),
        Kind::Uuid => FieldValue::Uuid(literal::uuid(text).ok_or_else(|| expect("a UUID"))?),
        // A quoted topic is a name, even one shaped like a UUID; an unquoted UUID is an id.
        Kind::Topic => match (!lit.quoted).then(|| literal::uuid(text)).flatten() {
            Some(u) => FieldValue::Uuid(u),
            None => FieldValue::Str(lit.text.clone()),
        },
        Kind::Duration => FieldValue::Duration(duration(field, lit)?),
        Kind::Time => FieldValue::Time(time(field, lit)?),
        Kind::Offset => FieldValue::Duration(offset(field, lit)?),
        Kind::Api => FieldValue::Int(api(lit)?),
        Kind::Error => FieldValue::Int(error_code(lit)?),
        Kind::Struct | Kind::Protocol => return Err(expect("nothing: test it bare")),
    })
}

fn duration(field: &FieldName, lit: &Literal) -> Result<i64, FilterError> {
    let err = |m: String| FilterError::new(lit.column, m);
    if lit.quoted {
        return Err(err(format!(
            "`{}` is a duration: write it unquoted, as in `50ms`",
            field.text
        )));
    }
    match literal::duration(&lit.text) {
        Some(r) => r.map_err(err),
        None if literal::int(&lit.text) == Some(0) => Ok(0),
        None => Err(err(format!(
            "`{}` is a duration: `{}` needs a unit, as in `50ms` (units: {UNIT_NAMES})",
            field.text, lit.text
        ))),
    }
}

/// An absolute time: any form [`literal::time`] reads, or (unquoted) seconds since 1970.
fn time(field: &FieldName, lit: &Literal) -> Result<i64, FilterError> {
    let epoch = (!lit.quoted)
        .then(|| literal::epoch_seconds(&lit.text))
        .flatten();
    epoch.or_else(|| literal::time(&lit.text)).ok_or_else(|| {
        FilterError::new(
            lit.column,
            format!(
                "`{}` is a time: `{}` is not one (forms: {})",
                field.text,
                lit.text,
                literal::TIME_FORMS
            ),
        )
    })
}

/// A time since the first packet: seconds (`5`, `2.5`) or a duration with its unit.
fn offset(field: &FieldName, lit: &Literal) -> Result<i64, FilterError> {
    let err = |m: String| FilterError::new(lit.column, m);
    if let Some(r) = (!lit.quoted)
        .then(|| literal::duration(&lit.text))
        .flatten()
    {
        return r.map_err(err);
    }
    (!lit.quoted)
        .then(|| literal::seconds(&lit.text))
        .flatten()
        .ok_or_else(|| {
            err(format!(
                "`{}` is a time since the first packet: `{}` is neither seconds (`5`, `2.5`) nor a duration (`500ms`)",
                field.text, lit.text
            ))
        })
}

/// An API by key or by name (any case, with or without separators: `DescribeCluster`,
/// `describe-cluster`).
fn api(lit: &Literal) -> Result<i64, FilterError> {
    if let Some(i) = (!lit.quoted).then(|| literal::int(&lit.text)).flatten() {
        return i16::try_from(i)
            .map(i64::from)
            .map_err(|_| FilterError::new(lit.column, format!("API key {i} is out of range")));
    }
    let known = api_key_from_str(&lit.text)
        .filter(|_| literal::int(&lit.text).is_none())
        .filter(|k| API_NAMES.iter().any(|(key, _)| key == k));
    known.map(i64::from).ok_or_else(|| {
        let hint = super::api_hint(&lit.text);
        FilterError::new(lit.column, format!("unknown API `{}`{hint}", lit.text))
    })
}

/// Letters and digits only, upper case: `not-leader-or-follower` and
/// `NotLeaderOrFollower` both read `NOTLEADERORFOLLOWER`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_uppercase()
}

/// An error by code or by name.
fn error_code(lit: &Literal) -> Result<i64, FilterError> {
    if let Some(i) = (!lit.quoted).then(|| literal::int(&lit.text)).flatten() {
        return i16::try_from(i)
            .map(i64::from)
            .map_err(|_| FilterError::new(lit.column, format!("error code {i} is out of range")));
    }
    let want = squash(&lit.text);
    if let Some((code, _)) = ERROR_NAMES.iter().find(|(_, n)| squash(n) == want) {
        return Ok(i64::from(*code));
    }
    let hint = did_you_mean(&nearest(&lit.text, ERROR_NAMES.iter().map(|(_, n)| *n)));
    Err(FilterError::new(
        lit.column,
        format!("unknown error `{}`{hint}", lit.text),
    ))
}

fn run(p: &Prog, f: &dyn Fields) -> bool {
    match p {
        Prog::Or(a, b) => run(a, f) || run(b, f),
        Prog::And(a, b) => run(a, f) && run(b, f),
        Prog::Not(a) => !run(a, f),
        Prog::Test { field, check } => {
            let values = field.values(f);
            // Any value that passes will do; `!=` therefore passes when any value differs.
            values.iter().any(|v| passes(v, check))
        }
    }
}

fn passes(v: &FieldValue, check: &Check) -> bool {
    match check {
        Check::Truthy => v.truthy(),
        Check::Cmp(op, want) => order(v, want).is_some_and(|o| holds(*op, o)),
        Check::Contains(s) => match v {
            FieldValue::Str(x) => x.contains(s.as_str()),
            FieldValue::Bytes(b) => {
                let n = s.as_bytes();
                n.is_empty() || b.windows(n.len()).any(|w| w == n)
            }
            _ => false,
        },
        Check::Matches(p) => match v {
            FieldValue::Str(x) => p.is_match(x),
            FieldValue::Bytes(b) => p.is_match(&String::from_utf8_lossy(b)),
            _ => false,
        },
        Check::OneOf(set) => matches!(v, FieldValue::Int(i) if set.contains(i)),
        Check::In(members) => members.iter().any(|m| m.holds(v)),
    }
}

/// How a value compares with a literal; `None` for values of another type (a topic id when a
/// name was asked for), which neither equal nor differ.
fn order(v: &FieldValue, want: &FieldValue) -> Option<Ordering> {
    use FieldValue as V;
    match (v, want) {
        (V::Int(a), V::Int(b)) | (V::Duration(a), V::Duration(b)) | (V::Time(a), V::Time(b)) => {
            Some(a.cmp(b))
        }
        (V::Float(a), V::Float(b)) => a.partial_cmp(b),
        (V::Int(a), V::Float(b)) => (*a as f64).partial_cmp(b),
        (V::Str(a), V::Str(b)) => Some(a.cmp(b)),
        (V::Bool(a), V::Bool(b)) => Some(a.cmp(b)),
        (V::Uuid(a), V::Uuid(b)) => Some(a.cmp(b)),
        (V::Bytes(a), V::Bytes(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

fn holds(op: CmpOp, o: Ordering) -> bool {
    match op {
        CmpOp::Eq => o.is_eq(),
        CmpOp::Ne => o.is_ne(),
        CmpOp::Lt => o.is_lt(),
        CmpOp::Le => o.is_le(),
        CmpOp::Gt => o.is_gt(),
        CmpOp::Ge => o.is_ge(),
        CmpOp::Contains | CmpOp::Matches => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::super::fields::FieldPath;
    use super::*;
    use std::collections::HashMap;

    /// A message as a table of values.
    #[derive(Default)]
    struct Fake {
        builtins: HashMap<&'static str, Vec<FieldValue>>,
        paths: HashMap<String, Vec<FieldValue>>,
    }

    impl Fields for Fake {
        fn builtin(&self, b: Builtin) -> Vec<FieldValue> {
            self.builtins.get(b.name()).cloned().unwrap_or_default()
        }
        fn path(&self, p: &FieldPath) -> Vec<FieldValue> {
            self.paths.get(&p.to_string()).cloned().unwrap_or_default()
        }
    }

    fn fake() -> Fake {
        use FieldValue as V;
        let mut f = Fake::default();
        let b = &mut f.builtins;
        b.insert("api", vec![V::Int(3)]);
        b.insert("version", vec![V::Int(12)]);
        b.insert("request", vec![V::Bool(false)]);
        b.insert("response", vec![V::Bool(true)]);
        b.insert("corr", vec![V::Int(7)]);
        b.insert("latency", vec![V::Duration(60_000_000)]);
        b.insert("error", vec![V::Int(6), V::Int(3)]);
        b.insert("topic", vec![V::Str("orders".into()), V::Uuid([1; 16])]);
        b.insert("partition", vec![V::Int(0), V::Int(2)]);
        b.insert("src", vec![V::Str("127.0.0.1:9092".into())]);
        b.insert("port", vec![V::Int(9092), V::Int(53872)]);
        b.insert("malformed", vec![V::Bool(false)]);
        f.paths.insert(
            "Metadata.Topics[*].Partitions[*].ErrorCode".into(),
            vec![V::Int(0), V::Int(6)],
        );
        f.paths.insert(
            "Metadata.Topics[*].Name".into(),
            vec![V::Str("orders".into()), V::Null],
        );
        f.paths.insert("Metadata".into(), vec![V::Struct]);
        f
    }

    fn t(expr: &str) -> bool {
        Filter::compile(expr)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .matches(&fake())
    }

    fn e(expr: &str) -> FilterError {
        match Filter::compile(expr) {
            Ok(_) => panic!("{expr} compiled"),
            Err(e) => e,
        }
    }

    #[test]
    fn builtins_compare_by_name_number_and_unit() {
        assert!(t("api == Metadata"));
        assert!(t("api == metadata && api == 3 && api == \"Metadata\""));
        assert!(!t("api == describe-cluster"));
        assert!(t("api contains \"data\" && api matches \"^Meta\""));
        assert!(!t("api matches \"^Describe\""));
        assert!(t("api < 10 && api >= 3"));
        assert!(t("version > 11 && version <= 12 && !(version != 12)"));
        assert!(t(
            "response && !request && response == true && request == false"
        ));
        assert!(t("corr == 7 && corr == 0x7"));
        assert!(t(
            "latency > 50ms && latency < 0.1s && latency >= 60000us && latency <= 60000000ns"
        ));
        assert!(!t("latency > 1m"));
        assert!(t(
            "error == NOT_LEADER_OR_FOLLOWER && error == 6 && error == not-leader-or-follower"
        ));
        assert!(t(
            "error && error matches \"^UNKNOWN_TOPIC\" && error contains \"LEADER\""
        ));
        assert!(!t("error == NONE"));
        assert!(t(
            "topic == orders && topic == 01010101-0101-0101-0101-010101010101"
        ));
        assert!(t("topic contains ord && topic matches \"s$\""));
        assert!(t(
            "topic matches \"^(orders|payments)$\" && topic matches \"^o.{4}s\""
        ));
        assert!(t("partition == 2 && partition"));
        assert!(t("src == 127.0.0.1:9092 && src contains \":9092\""));
        assert!(t("port == 53872 && port != 9092"));
        assert!(t("!malformed && malformed == false"));
        // Fields the message does not have: every test on them fails, `!=` too.
        assert!(!t("client_id") && !t("client_id != x") && t("!client_id"));
        assert!(!t("stream == 0") && !t("stream != 0"));
    }

    #[test]
    fn any_value_semantics() {
        // Two error codes, 6 and 3: `==` and `!=` both hold.
        assert!(t("error == 3 && error != 3"));
        assert!(t("partition == 0 && partition != 0"));
        assert!(t("partition > 1 && partition < 1"));
        // A topic id is not a name: it neither equals nor differs from one.
        assert!(!t("topic != orders"));
    }

    #[test]
    fn paths_and_bare_fields() {
        assert!(t("Metadata.Topics[*].Partitions[*].ErrorCode != 0"));
        assert!(t(
            "Metadata.Topics[*].Partitions[*].ErrorCode == NOT_LEADER_OR_FOLLOWER"
        ));
        assert!(t("Metadata.Topics[*].Partitions[*].ErrorCode"));
        assert!(t("Metadata.Topics[*].Name == orders"));
        assert!(t("Metadata"));
        assert!(!t("Produce"));
        assert!(!t("Produce.Acks == 0"));
        assert!(t("not Produce.Acks"));
    }

    #[test]
    fn sets_as_wireshark_writes_them() {
        assert!(t("kafka.api_key in {3 19}"));
        assert!(t("api in {3,19}") && t("api in {19, 3}") && !t("api in {19 60}"));
        assert!(t("api in {Produce Metadata}") && t("api in {fetch..metadata}"));
        assert!(t("api in {0..3}") && t("api in {3..3}") && !t("api in {4..9}"));
        assert!(!t("api not in {3}") && t("api not in {0 1}"));
        assert!(t("latency in {50ms..70ms}") && !t("latency in {1ms..59ms}"));
        assert!(t("topic in {\"payments\" \"orders\"}") && t("topic in {orders}"));
        assert!(t("topic in {01010101-0101-0101-0101-010101010101}"));
        assert!(t("error in {NOT_LEADER_OR_FOLLOWER}") && t("error in {1..3}"));
        // Any value: one of several partitions in the range is enough; none is outside
        // the set only when negated.
        assert!(t("partition in {1..2}") && t("partition in {0}") && !t("partition in {5..9}"));
        assert!(!t("port not in {9092 53872}") && !t("port not in {9092}"));
        assert!(t("port not in {1 2}"));
        assert!(!t("client_id in {a}") && t("client_id not in {a}"));
        assert!(t("Metadata.Topics[*].Partitions[*].ErrorCode in {6 7}"));
        assert!(e("api in {Metdata}")
            .message
            .contains("did you mean `Metadata`"));
        assert_eq!(e("api in {3 Metdata}").column, 11);
        assert!(e("request in {true..false}")
            .message
            .contains("a range needs an order"));
        assert!(e("Metadata.Topics in {1}").message.contains("test it bare"));
        assert!(e("version in {1 x}")
            .message
            .contains("expected an integer"));
        assert_eq!(
            Filter::compile("api in {3,19}").unwrap().to_string(),
            "api in {3 19}"
        );
    }

    #[test]
    fn kafka_alone_is_every_message() {
        assert!(t("kafka"));
        assert!(!t("!kafka"));
        assert!(t("kafka && api == 3"));
        let f = Filter::compile("kafka").unwrap();
        assert!(!f.needs_tree() && !f.reads_schema());
        let x = e("kafka == 1");
        assert_eq!(
            (x.column, x.message.as_str()),
            (
                1,
                "`kafka` is the protocol: test it bare (`kafka` alone holds for every message)"
            )
        );
        assert!(e("kafka in {1}").message.contains("is the protocol"));
        assert!(e("kafka.api_kee")
            .message
            .contains("did you mean `kafka.api_key`"));
    }

    #[test]
    fn patterns_share_one_budget() {
        // 1,000 patterns just under the limit for one would take about a GiB: the one that
        // passes the budget is named, at its column. (A thousand tests nest a thousand deep:
        // compiled in a thread with the stack of a main thread.)
        let one = r#"client_id matches "[a-z]{12000}""#;
        let text = vec![one; 1000].join(" || ");
        let x = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || e(&text))
            .unwrap()
            .join()
            .unwrap();
        assert!(
            x.message.starts_with(
                "`[a-z]{12000}` brings the filter's patterns to more than 32 MiB together"
            ),
            "{x}"
        );
        let at = (x.column - 20) / (one.len() + 4);
        assert_eq!((x.column - 20) % (one.len() + 4), 0, "{x}");
        assert!((30..50).contains(&at), "refused at pattern {at}");
        // A few such patterns, and many small ones, are fine.
        assert!(Filter::compile(&[one; 4].join(" || ")).is_ok());
        let small = vec![r#"topic matches "^orders-[0-9]+$""#; 100].join(" || ");
        assert!(Filter::compile(&small).is_ok());
    }

    #[test]
    fn precedence_is_kept_when_running() {
        assert!(t("api == 0 && corr == 1 || corr == 7"));
        assert!(!t("api == 0 && (corr == 1 || corr == 7)"));
        assert!(t("!api == 0 && corr == 7"));
        assert!(!t("!(api == 3 && corr == 7)"));
    }

    #[test]
    fn compile_errors_say_what_and_where() {
        let x = e("laytency > 5ms");
        assert_eq!(
            x.to_string(),
            "column 1: unknown field `laytency`; did you mean `latency`?"
        );
        let x = e("api == Metdata");
        assert_eq!(
            (x.column, x.message.as_str()),
            (8, "unknown API `Metdata`; did you mean `Metadata`?")
        );
        let x = e("error == NOT_LEADER_OR_FOLOWER");
        assert!(
            x.message.contains("did you mean `NOT_LEADER_OR_FOLLOWER`"),
            "{x}"
        );
        let x = e("request && latency > 50");
        assert_eq!(x.column, 22);
        assert!(x.message.contains("needs a unit"), "{x}");
        assert!(e("version == abc").message.contains("expected an integer"));
        assert!(e("version == \"3\"")
            .message
            .contains("expected an integer"));
        assert!(e("request == yes").message.contains("`true` or `false`"));
        assert!(e("request < true").message.contains("needs an order"));
        assert!(e("partition contains 1").message.contains("needs text"));
        assert!(e("Metadata.Topics == 1").message.contains("test it bare"));
        assert!(e("Metadata.Topics[0].TopicId == orders")
            .message
            .contains("expected a UUID"));
        let x = e("topic matches \"a(b\"");
        assert_eq!(x.column, 17);
        assert_eq!(x.message, "in the pattern: unclosed group");
        let x = e(r#"topic matches "\w{1000}""#);
        assert_eq!(x.column, 16);
        assert!(
            x.message
                .contains("`\\w{1000}` compiles to more than 1024 KiB"),
            "{x}"
        );
        assert!(e("latency > 99999999999999h")
            .message
            .contains("out of range"));
        assert!(e("api == 40000").message.contains("out of range"));
        assert_eq!(e("Metadata.Topcs").column, 10);
    }

    #[test]
    fn literals_of_every_kind() {
        assert!(Filter::compile("latency >= 0").is_ok());
        assert!(Filter::compile("corr == -1 && corr != 0xff").is_ok());
        assert!(Filter::compile("topic == \"01a229ff-56de-74f2-931f-3b49a65ac33a\"").is_ok());
        assert!(Filter::compile("client_id == 123").is_ok());
        assert!(Filter::compile("Metadata.AllowAutoTopicCreation == true").is_ok());
        assert!(Filter::compile(
            "Metadata.Topics[*].TopicId == 01a229ff-56de-74f2-931f-3b49a65ac33a"
        )
        .is_ok());
        assert!(Filter::compile("ApiVersions.ApiKeys[*].ApiKey == Fetch").is_ok());
        assert!(Filter::compile("SaslAuthenticate.AuthBytes contains alice").is_ok());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Any text: an error or a filter, never a panic; a filter prints as text that
        /// compiles to the same filter.
        #[test]
        fn any_text_compiles_or_fails_cleanly(
            text in r#"[a-zA-Z_0-9 .\[\]*:()!&|=<>"'\\^$+?{}-]{0,40}|(api|error|topic|latency|corr|Metadata\.Topics\[\*\]\.Name|port) (==|!=|<|>=|contains|matches) [a-zA-Z0-9_.:\[\]"*^$-]{0,12}( (&&|\|\|) !?(request|error|partition == 1))?"#
        ) {
            if let Ok(f) = Filter::compile(&text) {
                let again = Filter::compile(&f.to_string()).unwrap();
                proptest::prop_assert_eq!(again.to_string(), f.to_string());
                let _ = f.matches(&fake());
            }
        }
    }

    #[test]
    fn uses_names_the_builtins_read() {
        let f = Filter::compile("api == Metadata && (latency > 5ms || !error)").unwrap();
        assert!(f.uses(Builtin::Latency) && f.uses(Builtin::Error) && f.uses(Builtin::Api));
        assert!(!f.uses(Builtin::Topic));
        assert!(!f.needs_tree());
        assert!(Filter::compile("!(corr == 1) || topic == x")
            .unwrap()
            .needs_tree());
        assert!(Filter::compile("corr == 1 && partition")
            .unwrap()
            .needs_tree());
        assert!(Filter::compile("Metadata").unwrap().needs_tree());
        assert_eq!(
            f.to_string(),
            "api == Metadata && (latency > 5ms || !error)"
        );
    }
}
