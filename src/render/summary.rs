//! One line per Kafka message, like tshark's: frame, relative time, endpoints, stream, API,
//! direction, correlation id, and the essentials of the body.

use super::value::quote;
use crate::kafka::meaning::facts::{
    Detail, EssentialValue, FactField, Facts, Scalar, TopicList, TopicRef, MAX_TOPICS,
};
use crate::kafka::meaning::log::{Change, LogRecords};
use crate::kafka::problem::{ErrorEntry, Path, Step};
use crate::kafka::stream::Record;
use crate::kafka::EmbeddedMessage;
use crate::kafka::{names, Direction, Message};
use crate::tcp::EndKind;
use owo_colors::OwoColorize;
use std::fmt::Write;
use std::net::SocketAddr;

/// The words of a line, each written after a space straight into the line: no string per
/// word on the common path, no join.
struct Words<'a> {
    out: &'a mut String,
}

impl Words<'_> {
    /// The line, a space written, to write the next word into.
    fn word(&mut self) -> &mut String {
        self.out.push(' ');
        self.out
    }

    /// A word made elsewhere (the rare words, where one string does not matter).
    fn push(&mut self, w: String) {
        self.word().push_str(&w);
    }
}

/// Writes an integer in decimal.
pub use crate::text::latency_text;
use crate::text::{push_digits, write_latency};

fn int(out: &mut String, n: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// [`quote`] written into `out`: printable ASCII without quotes or backslashes (client ids,
/// topic names) as it is.
fn quote_into(out: &mut String, s: &str) {
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&quote(s));
    }
}

/// A name from the wire (a topic, a group, a SASL mechanism, a client library) bare when it
/// holds only the characters Kafka allows in topic names (letters, digits, `.`, `_`, `-`),
/// else quoted as [`quote`] does: a name can never forge a line, a list or a terminal escape.
fn name_into(out: &mut String, s: &str) {
    let bare = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if bare {
        out.push_str(s);
    } else {
        quote_into(out, s);
    }
}

/// The essentials of a message body, as `key=value` words.
pub fn essentials(msg: &Message) -> String {
    let mut s = String::new();
    write_essentials(&mut s, msg);
    // Each word was written after a space.
    s.split_off(1.min(s.len()))
}

/// The essentials, each word after a space, appended to `out`.
fn write_essentials(out: &mut String, msg: &Message) {
    let f = &msg.facts;
    let mut words = Words { out };
    if msg.direction == Direction::Request {
        match &msg.client_id {
            Some(Some(c)) => {
                let w = words.word();
                w.push_str("client_id=");
                quote_into(w, c);
            }
            // Header v3 leaves it null after a connection's first request: the one the
            // connection gave, marked as not in this frame.
            Some(None) => match &msg.carried_client_id {
                Some(c) => {
                    let w = words.word();
                    w.push_str("client_id=");
                    quote_into(w, c);
                    w.push_str(" (carried)");
                }
                None => words.word().push_str("client_id=null"),
            },
            None => {}
        }
    }
    if !msg.has_body {
        return;
    }
    head_words(f, &mut words);
    sasl_words(msg, &mut words);
    tail_words(f, &mut words);
    line_words(f, &mut words);
    let (records, bytes) = msg.records;
    if bytes > 0 {
        let w = words.word();
        w.push_str("records=");
        int(w, records);
        w.push_str(" (");
        int(w, bytes);
        w.push_str(" bytes)");
        w.push_str(&record_types_text(&msg.record_types));
    }
    if let Some(e) = &msg.embedded {
        embedded_words(e, &mut words);
    }
    if msg.direction == Direction::Response {
        // The embedded answer's errors are its own words, above.
        match msg.embedded.as_ref().map(|e| &e.field) {
            None => error_words(&msg.errors, f, &mut words),
            Some(field) => {
                let own: Vec<ErrorEntry> = msg
                    .errors
                    .iter()
                    .filter(|e| !e.path.passes_through(field))
                    .cloned()
                    .collect();
                error_words(&own, f, &mut words);
            }
        }
    }
}

/// `key=N` as a word.
fn int_word(words: &mut Words<'_>, key: &str, n: impl itoa::Integer) {
    let w = words.word();
    w.push_str(key);
    int(w, n);
}

/// The facts a summary names first: error, brokers, cluster, APIs, client software.
fn head_words(f: &Facts, words: &mut Words<'_>) {
    if let Some(e) = f.error {
        let w = words.word();
        w.push_str("error=");
        w.push_str(&error_name(e));
    } else if f.error_none {
        words.word().push_str("error=NONE");
    }
    if let Some(n) = f.brokers {
        int_word(words, "brokers=", n);
    }
    if let Some(c) = &f.cluster_id {
        let w = words.word();
        w.push_str("cluster_id=");
        quote_into(w, c);
    }
    if let Some(n) = f.api_count {
        int_word(words, "apis=", n);
    }
    if let Some((n, v)) = &f.software {
        let w = words.word();
        w.push_str("software=");
        name_into(w, n);
        w.push('/');
        name_into(w, v);
    }
}

/// `[a, b, c]`, each item written by `item`.
fn joined<T>(out: &mut String, items: &[T], item: impl Fn(&mut String, &T)) {
    out.push('[');
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        item(out, x);
    }
    out.push(']');
}

/// The facts a summary names after SASL: coordinators, identity, topics, cursors, resources,
/// partitions.
fn tail_words(f: &Facts, words: &mut Words<'_>) {
    if let Some(keys) = &f.coordinator_keys {
        let w = words.word();
        w.push_str("keys=");
        joined(w, keys, |w, k| quote_into(w, k));
    }
    if let Some(n) = f.coordinator {
        int_word(words, "coordinator=", n);
    }
    if let Some(list) = &f.coordinators {
        let w = words.word();
        w.push_str("coordinators=");
        joined(w, list, |w, n| int(w, *n));
    }
    // Written in place: most lines of a consumer group's traffic have two or three of them.
    for (label, v) in &f.identity {
        let w = words.word();
        w.push_str(label);
        w.push('=');
        match v {
            Scalar::Str(s) => quote_into(w, s),
            Scalar::Int(i) => int(w, *i),
        }
    }
    if let Some(t) = &f.topics {
        let w = words.word();
        w.push_str("topics=");
        write_list(w, t);
    }
    // DescribeTopicPartitions pages: where a request resumes and where the next page starts.
    for (c, label) in [(&f.cursor, "cursor"), (&f.next_cursor, "next_cursor")] {
        if let Some((topic, part)) = c {
            let w = words.word();
            w.push_str(label);
            w.push('=');
            name_into(w, topic);
            w.push('/');
            int(w, *part);
        }
    }
    if let Some(r) = &f.resources {
        let w = words.word();
        w.push_str("resources=");
        write_list(w, r);
    }
    if let Some(t) = &f.topic_names {
        let w = words.word();
        w.push_str("topics=");
        write_list(w, t);
    }
    if f.partitions > 0 {
        int_word(words, "partitions=", f.partitions);
    }
}

/// What the line of this API says beyond the common facts (`essentials::picks`).
fn line_words(f: &Facts, words: &mut Words<'_>) {
    for e in &f.line {
        let w = words.word();
        w.push_str(e.label);
        match &e.value {
            EssentialValue::Flag => {}
            EssentialValue::Int(n) => {
                w.push('=');
                int(w, *n);
            }
            EssentialValue::Count(n) => {
                w.push('=');
                int(w, *n);
            }
            EssentialValue::Text(Some(s)) => {
                w.push('=');
                quote_into(w, s);
            }
            EssentialValue::Text(None) => w.push_str("=null"),
            EssentialValue::Name(n) => {
                w.push('=');
                w.push_str(n);
            }
            EssentialValue::Uuid(u) => {
                w.push('=');
                crate::text::uuid_into(w, u);
            }
            EssentialValue::List(l) => {
                w.push('=');
                write_list(w, l);
            }
        }
    }
}

/// What an embedded request or response (an Envelope's) is about: its correlation id and
/// client, its facts and its errors, as a message of its own would say them.
fn embedded_words(e: &EmbeddedMessage, words: &mut Words<'_>) {
    if let Some(c) = e.correlation_id {
        words.push(format!("inner_corr={c}"));
    }
    match &e.client_id {
        Some(Some(c)) => words.push(format!("inner_client_id={}", quote(c))),
        Some(None) => words.push("inner_client_id=null".to_string()),
        None => {}
    }
    head_words(&e.facts, words);
    tail_words(&e.facts, words);
    line_words(&e.facts, words);
    if e.direction == Some(Direction::Response) {
        error_words(&e.errors, &e.facts, words);
    }
}

/// Changes of the metadata log a line names; the rest are counted.
const LINE_CHANGES: usize = 3;

/// ` [PartitionChange orders-0 leader=3 isr=[1,3], +8 more, NoOpRecord×2]`: what the
/// records of a log whose values have types (the KRaft metadata log) change, the first few,
/// then the other records by type, most first; empty for other records.
fn record_types_text(log: &LogRecords) -> String {
    if log.is_empty() {
        return String::new();
    }
    // Brokers first, then topics, then the rest, partitions last: a broker fenced says more
    // than the eighteen partitions it leaves (in log order within each).
    let mut ranked: Vec<&Change> = log.changes.iter().map(|c| &c.what).collect();
    ranked.sort_by_key(|c| change_rank(c));
    let mut items: Vec<String> = ranked
        .into_iter()
        .take(LINE_CHANGES)
        .map(change_text)
        .collect();
    let more = (log.changes.len().saturating_sub(LINE_CHANGES) as u64) + u64::from(log.dropped);
    if more > 0 {
        items.push(format!("+{more} more"));
    }
    // The types no change was told for: counted as before.
    let told: u32 = log.changes.len() as u32 + log.dropped;
    let others: Vec<&(&str, u32)> = if told == 0 {
        log.types.iter().collect()
    } else {
        log.types
            .iter()
            .filter(|(t, _)| !crate::kafka::records::metadata::told(t))
            .collect()
    };
    let shown = others.len().min(MAX_TOPICS);
    items.extend(others.iter().take(shown).map(|(t, n)| format!("{t}×{n}")));
    if others.len() > shown {
        items.push(format!("+{} more types", others.len() - shown));
    }
    format!(" [{}]", items.join(", "))
}

/// Which changes a line names first: brokers and controllers, topics, the rest, partitions.
fn change_rank(c: &Change) -> u8 {
    match c {
        Change::BrokerRegistered { .. }
        | Change::BrokerUnregistered { .. }
        | Change::BrokerChanged { .. }
        | Change::Controller { .. } => 0,
        Change::TopicCreated { .. } | Change::TopicDeleted { .. } => 1,
        Change::PartitionCreated { .. } | Change::PartitionChanged { .. } => 3,
        _ => 2,
    }
}

/// A topic by name, or by id when no name is known.
fn topic_into(out: &mut String, id: &[u8; 16], name: Option<&str>) {
    match name {
        Some(n) => name_into(out, n),
        None => crate::text::uuid_into(out, id),
    }
}

/// `[1, 2, 3]`.
fn ids_into(out: &mut String, ids: &[i32]) {
    out.push('[');
    for (i, b) in ids.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        int(out, *b);
    }
    out.push(']');
}

/// What one metadata record changed, as a line says it. Long: one arm per kind of change.
fn change_text(c: &Change) -> String {
    let mut s = String::new();
    match c {
        Change::BrokerRegistered {
            broker,
            epoch,
            fenced,
            shutting_down,
        } => {
            let _ = write!(s, "RegisterBroker broker={broker} epoch={epoch}");
            if *fenced {
                s.push_str(" fenced");
            }
            if *shutting_down {
                s.push_str(" shutting_down");
            }
        }
        Change::BrokerUnregistered { broker, .. } => {
            let _ = write!(s, "UnregisterBroker broker={broker}");
        }
        Change::BrokerChanged {
            broker,
            epoch,
            fenced,
            shutting_down,
        } => {
            let _ = write!(s, "BrokerRegistrationChange broker={broker} epoch={epoch}");
            match fenced {
                Some(true) => s.push_str(" unfenced→fenced"),
                Some(false) => s.push_str(" fenced→unfenced"),
                None => {}
            }
            if *shutting_down {
                s.push_str(" shutting_down");
            }
        }
        Change::Controller {
            controller,
            registered,
        } => {
            let what = if *registered {
                "Register"
            } else {
                "Unregister"
            };
            let _ = write!(s, "{what}Controller controller={controller}");
        }
        Change::TopicCreated { name, .. } => {
            s.push_str("Topic created ");
            name_into(&mut s, name);
        }
        Change::TopicDeleted { topic, name } => {
            s.push_str("Topic deleted ");
            topic_into(&mut s, topic, name.as_deref());
        }
        Change::PartitionCreated {
            topic,
            name,
            partition,
            leader,
            isr,
            ..
        } => {
            s.push_str("Partition created ");
            topic_into(&mut s, topic, name.as_deref());
            let _ = write!(s, "-{partition} leader={leader} isr=");
            ids_into(&mut s, isr);
        }
        Change::PartitionChanged {
            topic,
            name,
            partition,
            leader,
            isr,
            replicas,
        } => {
            s.push_str("PartitionChange ");
            topic_into(&mut s, topic, name.as_deref());
            let _ = write!(s, "-{partition}");
            if let Some(l) = leader {
                let _ = write!(s, " leader={l}");
            }
            if let Some(i) = isr {
                s.push_str(" isr=");
                ids_into(&mut s, i);
            }
            if let Some(r) = replicas {
                s.push_str(" replicas=");
                ids_into(&mut s, r);
            }
        }
        Change::Config {
            resource_type,
            resource,
            name,
            value,
        } => {
            let _ = write!(s, "Config {resource_type}:");
            name_into(&mut s, resource);
            s.push(' ');
            name_into(&mut s, name);
            match value {
                Some(v) => {
                    s.push('=');
                    name_into(&mut s, v);
                }
                None => s.push_str(" deleted"),
            }
        }
        Change::Feature { name, level } => {
            s.push_str("FeatureLevel ");
            name_into(&mut s, name);
            let _ = write!(s, "={level}");
        }
        Change::Quota {
            entity,
            key,
            removed,
        } => {
            s.push_str("ClientQuota ");
            quote_into(&mut s, entity);
            s.push(' ');
            name_into(&mut s, key);
            s.push_str(if *removed { " removed" } else { " set" });
        }
        Change::ScramUser {
            user,
            mechanism,
            removed,
        } => {
            s.push_str(if *removed {
                "RemoveUserScramCredential "
            } else {
                "UserScramCredential "
            });
            quote_into(&mut s, user);
            s.push(' ');
            s.push_str(mechanism);
        }
        Change::Acl { principal, added } => {
            s.push_str(if *added { "Acl added" } else { "Acl removed" });
            if let Some(p) = principal {
                s.push(' ');
                quote_into(&mut s, p);
            }
        }
    }
    s
}

/// An error's name, or for a code Kafka does not define, `unknown error N`: its number, as
/// tshark shows a value it cannot name.
fn error_name(code: i16) -> std::borrow::Cow<'static, str> {
    match names::error_name(code) {
        Some(n) => n.into(),
        None => format!("unknown error {code}").into(),
    }
}

/// `[orders, payments(UNKNOWN_TOPIC_OR_PARTITION), +3 more]`, or `all`, written into `out`.
fn write_list(out: &mut String, t: &TopicList) {
    if t.all {
        out.push_str("all");
        return;
    }
    out.push('[');
    for (i, e) in t.first.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match &e.topic {
            TopicRef::Name(n) => name_into(out, n),
            // An id whose name an earlier message gave reads as the name.
            TopicRef::Id(_, Some(n)) => name_into(out, n),
            TopicRef::Id(u, None) => crate::text::uuid_into(out, u),
            TopicRef::Unnamed => out.push('?'),
        }
        if e.error.is_none() && e.details.is_empty() {
            continue;
        }
        out.push('(');
        if let Some(code) = e.error {
            out.push_str(&error_name(code));
        }
        for (j, d) in e.details.iter().enumerate() {
            if j > 0 || e.error.is_some() {
                out.push_str(", ");
            }
            detail_into(out, d);
        }
        out.push(')');
    }
    if t.total > t.first.len() {
        if !t.first.is_empty() {
            out.push_str(", ");
        }
        out.push('+');
        int(out, t.total - t.first.len());
        out.push_str(" more");
    }
    out.push(']');
}

/// What a line says of a listed entry: `Stable`, `3 members`, `COMMIT`.
fn detail_into(out: &mut String, d: &Detail) {
    match d {
        Detail::Text(t) => name_into(out, t),
        Detail::Count(n, what) => {
            int(out, *n);
            out.push(' ');
            out.push_str(what);
        }
        Detail::Name(n) => out.push_str(n),
    }
}

/// SASL: the mechanism asked for or offered, and the login step with its user.
fn sasl_words(msg: &Message, words: &mut Words<'_>) {
    let f = &msg.facts;
    if let Some(m) = &f.mechanism {
        let w = words.word();
        w.push_str("mechanism=");
        name_into(w, m);
    }
    if let Some(list) = &f.mechanisms {
        let w = words.word();
        w.push_str("mechanisms=[");
        for (i, m) in list.iter().enumerate() {
            if i > 0 {
                w.push_str(", ");
            }
            name_into(w, m);
        }
        w.push(']');
    }
    if let Some(sasl) = &msg.sasl {
        words.push(format!("sasl={}", quote(sasl.step.short())));
        if let Some(u) = &sasl.user {
            words.push(format!("user={}", quote(u)));
        }
    }
}

/// The errors a line has not named yet: every non-zero error code of the body is named once,
/// beside the entry of a list it belongs to (`topics=[a(UNKNOWN_TOPIC_OR_PARTITION)]`), as
/// the top-level `error=`, or here: one level down in `errors=[NAME(where)]` (FindCoordinator
/// v4+'s Coordinators[], an entry past the first few listed, an entry's second error code),
/// deeper ones (partitions) counted with their names.
fn error_words(errors: &[ErrorEntry], f: &Facts, words: &mut Words<'_>) {
    let mut nested: Vec<String> = Vec::new();
    for e in errors.iter().filter(|e| e.path.fields() <= 2) {
        if told(e, f) {
            continue;
        }
        let steps = e.path.steps();
        // The item the error is about: the path up to its last field.
        let last = steps
            .iter()
            .rposition(|s| matches!(s, Step::Field(_)))
            .unwrap_or(0);
        let item = Path(steps.get(..last).unwrap_or_default().to_vec());
        if item.is_empty() {
            nested.push(error_name(e.code).into_owned());
        } else {
            nested.push(format!("{}({item})", error_name(e.code)));
        }
    }
    if !nested.is_empty() {
        let more = nested.len().saturating_sub(MAX_TOPICS);
        nested.truncate(MAX_TOPICS);
        if more > 0 {
            nested.push(format!("+{more} more"));
        }
        words.push(format!("errors=[{}]", nested.join(", ")));
    }
    let deeper: Vec<i16> = errors
        .iter()
        .filter(|e| e.path.fields() >= 3)
        .map(|e| e.code)
        .collect();
    if !deeper.is_empty() {
        let mut names_seen: Vec<std::borrow::Cow<'static, str>> = Vec::new();
        for c in &deeper {
            let n = error_name(*c);
            if !names_seen.contains(&n) {
                names_seen.push(n);
            }
        }
        words.push(format!(
            "partition_errors={}({})",
            deeper.len(),
            names_seen.join(",")
        ));
    }
}

/// Whether the line names the error `e` already: the top-level error code as `error=`, an
/// entry's error code beside the entry in a list.
fn told(e: &ErrorEntry, f: &Facts) -> bool {
    let is_error_code = |s: &Step| match s {
        Step::Field(id) => id.spec().fact == FactField::ErrorCode,
        _ => false,
    };
    match e.path.steps() {
        [field] => is_error_code(field) && f.error == Some(e.code),
        [Step::Field(list), Step::Index(i), field] if is_error_code(field) => f.lists().any(|l| {
            l.field == Some(*list)
                && l.first
                    .get(*i as usize)
                    .is_some_and(|t| t.error == Some(e.code))
        }),
        _ => false,
    }
}

/// `n` right-aligned in `width` columns.
fn push_padded(out: &mut String, n: impl itoa::Integer, width: usize) {
    let mut buf = itoa::Buffer::new();
    let s = buf.format(n);
    for _ in s.len()..width {
        out.push(' ');
    }
    out.push_str(s);
}

/// How the time column reads, as tshark's `-t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeFormat {
    /// Seconds since the first packet (`r`).
    #[default]
    Relative,
    /// Local time of day (`a`), with the date (`ad`).
    Absolute,
    AbsoluteDate,
    /// Seconds since the previous packet (`d`), since the previous message shown (`dd`).
    Delta,
    DeltaShown,
    /// Seconds since 1970 (`e`).
    Epoch,
    /// UTC time of day (`u`), with the date (`ud`).
    Utc,
    UtcDate,
}

impl std::str::FromStr for TimeFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "r" => TimeFormat::Relative,
            "a" => TimeFormat::Absolute,
            "ad" => TimeFormat::AbsoluteDate,
            "d" => TimeFormat::Delta,
            "dd" => TimeFormat::DeltaShown,
            "e" => TimeFormat::Epoch,
            "u" => TimeFormat::Utc,
            "ud" => TimeFormat::UtcDate,
            other => {
                return Err(format!(
                    "{other:?} is not a time format: r, a, ad, d, dd, e, u or ud (as tshark -t)"
                ))
            }
        })
    }
}

/// The time column: the format, and the times it is counted from.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    pub format: TimeFormat,
    /// Digits of a second shown: 6, or 9 for nanosecond captures.
    pub precision: u8,
    pub first_ts: i64,
    /// The packet before the current one, and the last message shown.
    pub prev_packet_ts: Option<i64>,
    pub prev_shown_ts: Option<i64>,
}

impl Clock {
    /// The column for a packet at `ts` (nanoseconds since 1970), right-aligned as tshark's.
    pub fn text(&self, ts: i64) -> String {
        let mut s = String::new();
        self.write(&mut s, ts);
        s
    }

    /// [`Clock::text`], written into `out`.
    pub fn write(&self, out: &mut String, ts: i64) {
        let digits = if self.precision >= 9 { 9 } else { 6 };
        match self.format {
            TimeFormat::Relative => write_secs(out, ts - self.first_ts, digits),
            TimeFormat::Delta => write_secs(out, self.prev_packet_ts.map_or(0, |p| ts - p), digits),
            TimeFormat::DeltaShown => {
                write_secs(out, self.prev_shown_ts.map_or(0, |p| ts - p), digits)
            }
            TimeFormat::Epoch => {
                let frac = ts.rem_euclid(1_000_000_000);
                let frac = if digits == 9 { frac } else { frac / 1000 };
                let _ = write!(out, "{}.{frac:0digits$}", ts.div_euclid(1_000_000_000));
            }
            TimeFormat::Absolute
            | TimeFormat::AbsoluteDate
            | TimeFormat::Utc
            | TimeFormat::UtcDate => out.push_str(&wall_clock(ts, self.format, digits)),
        }
    }
}

/// `n` nanoseconds as seconds with `digits` decimals, right-aligned in `5 + digits` columns:
/// the digits formatting `n / 1e9` as a float gives. Integers give the same wherever the float
/// is within half a unit of the last digit of `n`'s exact value and `n` holds no finer digit
/// (below 2^52 nanoseconds, 52 days; for 6 digits, whole microseconds); elsewhere the float
/// is formatted as before.
fn write_secs(out: &mut String, n: i64, digits: usize) {
    let width = 5 + digits;
    let unit: u64 = if digits == 9 { 1 } else { 1000 };
    let abs = n.unsigned_abs();
    if abs >= 1 << 52 || abs % unit != 0 {
        let v = n as f64 / 1e9;
        let _ = write!(out, "{v:>width$.digits$}");
        return;
    }
    let scale = if digits == 9 {
        1_000_000_000
    } else {
        1_000_000
    };
    let q = abs / unit;
    let mut buf = itoa::Buffer::new();
    let whole = buf.format(q / scale);
    let len = usize::from(n < 0) + whole.len() + 1 + digits;
    for _ in len..width {
        out.push(' ');
    }
    if n < 0 {
        out.push('-');
    }
    out.push_str(whole);
    out.push('.');
    push_digits(out, q % scale, digits);
}

/// `HH:MM:SS.ffffff`, with the date before it for `ad`/`ud`; local time for `a`/`ad`.
fn wall_clock(ts: i64, format: TimeFormat, digits: usize) -> String {
    use chrono::{DateTime, Local, Utc};
    let Some(utc) = DateTime::<Utc>::from_timestamp(
        ts.div_euclid(1_000_000_000),
        ts.rem_euclid(1_000_000_000) as u32,
    ) else {
        return ts.to_string();
    };
    let frac = ts.rem_euclid(1_000_000_000);
    let frac = if digits == 9 { frac } else { frac / 1000 };
    let (date, time) = match format {
        TimeFormat::Absolute | TimeFormat::AbsoluteDate => {
            let l = utc.with_timezone(&Local);
            (
                l.format("%Y-%m-%d").to_string(),
                l.format("%H:%M:%S").to_string(),
            )
        }
        _ => (
            utc.format("%Y-%m-%d").to_string(),
            utc.format("%H:%M:%S").to_string(),
        ),
    };
    match format {
        TimeFormat::AbsoluteDate | TimeFormat::UtcDate => format!("{date} {time}.{frac:0digits$}"),
        _ => format!("{time}.{frac:0digits$}"),
    }
}

/// The columns every line about a capture starts with, as tshark's: frame number, time,
/// endpoints and TCP stream, `     7    1.500000 10.0.0.1:40000 → 10.0.0.2:9092 [3]`.
pub fn prefix(
    clock: &Clock,
    frame: u64,
    ts_nanos: i64,
    src: &SocketAddr,
    dst: &SocketAddr,
    stream: u32,
) -> String {
    let mut s = String::new();
    write_frame_and_time(&mut s, clock, frame, ts_nanos);
    write_endpoints(&mut s, (src, dst), stream);
    s
}

/// The frame number and time of [`prefix`], each followed by a space.
fn write_frame_and_time(out: &mut String, clock: &Clock, frame: u64, ts_nanos: i64) {
    push_padded(out, frame, 6);
    out.push(' ');
    clock.write(out, ts_nanos);
    out.push(' ');
}

/// `10.0.0.1:40000 → 10.0.0.2:9092 [3]`.
fn write_endpoints(out: &mut String, (src, dst): (&SocketAddr, &SocketAddr), stream: u32) {
    write_addr(out, src);
    out.push_str(" → ");
    write_addr(out, dst);
    out.push_str(" [");
    int(out, stream);
    out.push(']');
}

/// Slots of [`Endpoints`]: a connection's two directions take two, so this many directions
/// of the connections met last are kept (about 100 bytes each).
const ENDPOINT_SLOTS: usize = 512;

/// The endpoints of a summary line, kept as text for the connections met last, so that a
/// line copies them instead of formatting two addresses (a sixth of the line's cost). A
/// direct-mapped table: a direction's slot is found from its stream and which port is lower,
/// and holds the last direction that mapped there, checked before it is used.
#[derive(Default)]
pub struct Endpoints {
    slots: Vec<Option<EndpointText>>,
    /// The API words of the lines met last.
    apis: ApiTexts,
}

/// Slots of [`ApiTexts`]: a capture speaks a few dozen (API, version, direction)s.
const API_SLOTS: usize = 256;

/// `Metadata v13 Request` for the (API, version, direction)s met last, kept as text so that a
/// line copies it rather than look the API's name up and write the version (a tenth of the
/// line's cost); direct-mapped as [`Endpoints`], each slot checked before it is used.
#[derive(Default)]
struct ApiTexts {
    slots: Vec<Option<(i16, i16, Direction, String)>>,
}

impl ApiTexts {
    /// Writes [`write_api`]'s text of `msg` into `out`, from its slot if the slot holds it.
    fn write(&mut self, out: &mut String, msg: &Message) {
        // An Envelope's line names what it carries too: written each time.
        let (Some(key), Some(version), None) = (msg.api_key, msg.api_version, &msg.embedded) else {
            return write_api(out, msg);
        };
        if self.slots.is_empty() {
            self.slots.resize_with(API_SLOTS, || None);
        }
        let id = (u32::from(key as u16) << 17)
            | (u32::from(version as u16) << 1)
            | u32::from(msg.direction == Direction::Response);
        let at = (id.wrapping_mul(0x9e37_79b1) >> 24) as usize % API_SLOTS;
        let Some(slot) = self.slots.get_mut(at) else {
            return write_api(out, msg);
        };
        let held = slot
            .as_ref()
            .is_some_and(|(k, v, d, _)| (*k, *v, *d) == (key, version, msg.direction));
        if !held {
            // The slot's string is reused for the text that takes it over.
            let mut text = slot.take().map(|e| e.3).unwrap_or_default();
            text.clear();
            write_api(&mut text, msg);
            *slot = Some((key, version, msg.direction, text));
        }
        if let Some((.., text)) = slot {
            out.push_str(text);
        }
    }
}

struct EndpointText {
    stream: u32,
    src: SocketAddr,
    dst: SocketAddr,
    text: String,
}

impl Endpoints {
    /// Writes [`write_endpoints`]' text of the direction into `out`, from its slot if the
    /// slot holds it.
    fn write(&mut self, out: &mut String, (src, dst): (&SocketAddr, &SocketAddr), stream: u32) {
        if self.slots.is_empty() {
            self.slots.resize_with(ENDPOINT_SLOTS, || None);
        }
        let at = (stream as usize)
            .wrapping_mul(2)
            .wrapping_add(usize::from(src.port() < dst.port()))
            % ENDPOINT_SLOTS;
        let Some(slot) = self.slots.get_mut(at) else {
            return write_endpoints(out, (src, dst), stream);
        };
        let held = slot
            .as_ref()
            .is_some_and(|e| e.stream == stream && e.src == *src && e.dst == *dst);
        if !held {
            // The slot's string is reused for the direction that takes it over.
            let mut text = slot.take().map(|e| e.text).unwrap_or_default();
            text.clear();
            write_endpoints(&mut text, (src, dst), stream);
            *slot = Some(EndpointText {
                stream,
                src: *src,
                dst: *dst,
                text,
            });
        }
        if let Some(e) = slot {
            out.push_str(&e.text);
        }
    }
}

/// An endpoint as `SocketAddr` displays it. IPv4 a digit at a time: pushed as its nine
/// pieces, each a call and a copy, an address cost as much as the rest of the line's prefix,
/// and a capture of thousands of connections formats two for most lines (their texts do not
/// all fit in [`Endpoints`]).
fn write_addr(out: &mut String, a: &SocketAddr) {
    let SocketAddr::V4(v4) = a else {
        return super::value::endpoint_pieces(a, |p| out.push_str(p));
    };
    // `255.255.255.255:65535`
    out.reserve(21);
    for (i, o) in v4.ip().octets().into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        push_decimal(out, u32::from(o));
    }
    out.push(':');
    push_decimal(out, u32::from(v4.port()));
}

/// `n` in decimal, a digit at a time (for the few digits of an address's numbers).
fn push_decimal(out: &mut String, n: u32) {
    let mut unit = 1;
    while unit <= n / 10 {
        unit *= 10;
    }
    while unit > 0 {
        out.push(char::from(b'0' + (n / unit % 10) as u8));
        unit /= 10;
    }
}

/// The summary line of a message found in a capture.
pub fn line(rec: &Record<'_>, clock: &Clock) -> String {
    line_styled(rec, clock, false)
}

/// Latencies at or above this read as slow (yellow), and at or above `VERY_SLOW` red.
const SLOW_NANOS: i64 = 100_000_000;
const VERY_SLOW_NANOS: i64 = 1_000_000_000;

/// [`line`], coloured for a terminal when `color`: the API in bold cyan, errors and `!!` in
/// red, slow latencies in yellow or red.
pub fn line_styled(rec: &Record<'_>, clock: &Clock, color: bool) -> String {
    let mut s = String::new();
    let mut ends = Endpoints::default();
    write_line(&mut s, rec, clock, color, &mut ends);
    s
}

/// [`line_styled`], appended to `s` (a buffer the caller reuses from line to line), with the
/// endpoints' texts the caller keeps.
pub fn write_line(
    s: &mut String,
    rec: &Record<'_>,
    clock: &Clock,
    color: bool,
    endpoints: &mut Endpoints,
) {
    let msg = &rec.msg;
    write_frame_and_time(s, clock, rec.frame, rec.ts_nanos);
    endpoints.write(s, (&rec.src, &rec.dst), rec.stream);
    if rec.tls {
        s.push_str(" tls");
    }
    s.push(' ');
    if color {
        s.push_str(&api_text(msg, color));
    } else {
        endpoints.apis.write(s, msg);
    }
    if let Some(c) = msg.correlation_id {
        s.push_str(" corr=");
        int(s, c);
    }
    if color {
        let ess = essentials(msg);
        if !ess.is_empty() {
            s.push(' ');
            s.push_str(&redden_errors(&ess));
        }
    } else {
        write_essentials(s, msg);
    }
    if rec.assumed {
        s.push_str(" [API assumed: request not captured]");
    }
    if let Some(v) = msg.assumed_version {
        let _ = write!(s, " [assumed_version: read with the v{v} layout]");
    }
    push_latency(s, rec, color);
    push_trouble(s, rec, color);
}

/// `text` painted by `f` when colour is on.
fn paint(color: bool, text: String, f: fn(&str) -> String) -> String {
    if color {
        f(&text)
    } else {
        text
    }
}

fn red(t: &str) -> String {
    t.red().to_string()
}

/// `Metadata v13 Request`, or `Unknown Request` when the header did not give the API.
fn api_text(msg: &Message, color: bool) -> String {
    let mut api = String::new();
    write_api(&mut api, msg);
    paint(color, api, |t| t.cyan().bold().to_string())
}

/// [`api_text`] without colour, written into `out`.
fn write_api(out: &mut String, msg: &Message) {
    let dir = match msg.direction {
        Direction::Request => "Request",
        Direction::Response => "Response",
    };
    match (msg.api_key, msg.api_version) {
        (Some(_), Some(v)) => {
            out.push_str(&msg.api_name());
            if msg.embedded.is_some() {
                out.push_str(&embedded_api(msg));
            }
            out.push_str(" v");
            int(out, v);
            out.push(' ');
        }
        _ => out.push_str("Unknown "),
    }
    out.push_str(dir);
}

/// `[IncrementalAlterConfigs v1]` after an Envelope's API: the API and version it carries.
fn embedded_api(msg: &Message) -> String {
    match msg
        .embedded
        .as_ref()
        .and_then(|e| e.api_key.zip(e.api_version))
    {
        Some((k, v)) => format!("[{} v{v}]", crate::kafka::message::api_display_name(k)),
        None => String::new(),
    }
}

/// The essentials with their error words in red: `error=`, `errors=`, `partition_errors=`, and
/// lists whose items carry an error name (`topics=[a(UNKNOWN_TOPIC_OR_PARTITION)]`).
fn redden_errors(essentials: &str) -> String {
    let words: Vec<String> = essentials
        .split(' ')
        .map(|w| {
            let bad = (w.starts_with("error=") && w != "error=NONE")
                || w.starts_with("errors=")
                || w.starts_with("partition_errors=")
                || (w.contains('(') && w.contains('_') && w.ends_with(")]"));
            if bad {
                red(w)
            } else {
                w.to_string()
            }
        })
        .collect();
    words.join(" ")
}

/// ` (2.50 ms after frame 7)` for a response whose request was captured; a response stamped
/// before its request says the clock went backwards.
fn push_latency(s: &mut String, rec: &Record<'_>, color: bool) {
    let (Some(lat), Some(req)) = (rec.latency_nanos(), rec.request) else {
        return;
    };
    s.push_str(" (");
    if color && lat >= SLOW_NANOS {
        let text = latency_text(lat);
        let text = if lat >= VERY_SLOW_NANOS {
            text.red().bold().to_string()
        } else {
            text.yellow().to_string()
        };
        s.push_str(&text);
    } else {
        write_latency(s, lat);
    }
    s.push_str(" after frame ");
    int(s, req.frame);
    s.push(')');
    if lat < 0 {
        let m = " !! timestamped before its request: the capture's clock went backwards";
        s.push_str(&paint(color, m.to_string(), red));
    }
}

/// What kept the message from being read whole: a gap that cut it, an API or version without
/// tables, or damage (in red).
fn push_trouble(s: &mut String, rec: &Record<'_>, color: bool) {
    let msg = &rec.msg;
    if rec.partial {
        let rest = match rec.ended {
            None => "the rest lost in a gap",
            Some(EndKind::CaptureEnd) => "the capture ended before the rest",
            Some(_) => "the connection ended before the rest",
        };
        let _ = write!(
            s,
            " [partial: {} of {} bytes captured, {rest}]",
            rec.bytes.len(),
            frame_size(rec.bytes)
        );
    } else if let Some(e) = msg.error.as_ref().filter(|_| msg.is_unknown_api()) {
        let _ = write!(
            s,
            " [body not decoded: {}]",
            super::with_hint(&e.detail.to_string(), e.kind.problem())
        );
    } else if let Some(m) = malformed_text(msg) {
        s.push_str(&paint(color, m, red));
    }
}

/// ` !! malformed: ...` where decoding stopped, else ` !! malformed at 0x...: ...` for the
/// first problem found on the way; `None` for a sound message.
fn malformed_text(msg: &Message) -> Option<String> {
    let Some(e) = &msg.error else {
        let d = msg.diagnoses.first()?;
        return Some(format!(
            " !! malformed at 0x{:04x}: {}",
            d.offset,
            super::with_hint(&d.to_string(), d.kind)
        ));
    };
    let mut m = format!(
        " !! malformed: {}",
        super::with_hint(&e.to_string(), e.kind.problem())
    );
    // When another version's layout fits, that is the news: say it on the line too.
    if let Some(h) = msg
        .diagnoses
        .iter()
        .find(|d| d.kind == crate::kafka::ProblemKind::WrongVersionLayout)
    {
        let _ = write!(m, "; {h}");
    }
    Some(m)
}

/// The frame's size from its size prefix (plus the prefix's 4 bytes), `?` without one.
fn frame_size(b: &[u8]) -> String {
    match b.get(0..4).and_then(|p| <[u8; 4]>::try_from(p).ok()) {
        Some(p) => (i64::from(i32::from_be_bytes(p)) + 4).to_string(),
        None => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::stream::RequestInfo;
    use crate::kafka::{decode_request, decode_response, Diagnosis, ProblemKind};
    use crate::render::test_frames;

    const CLIENT: &str = "10.0.0.1:40000";
    const BROKER: &str = "10.0.0.2:9092";

    #[test]
    fn endpoints_are_written_as_socket_addr_displays_them() {
        for a in [
            "0.0.0.0:0",
            "255.255.255.255:65535",
            "10.0.0.1:9092",
            "127.0.0.1:40000",
            "192.168.100.7:5",
            "1.2.3.4:5",
            "100.20.3.199:10",
            "9.99.199.0:65000",
            "[::1]:9092",
            "[fe80::1%2]:80",
        ] {
            let a: std::net::SocketAddr = a.parse().expect("address");
            let mut out = String::from("x");
            write_addr(&mut out, &a);
            assert_eq!(out, format!("x{a}"));
        }
    }

    /// The kept endpoint texts are what formatting them gives, whichever directions share
    /// a slot or take it over, and with IPv6 and equal ports.
    #[test]
    fn kept_endpoints_read_as_formatted_ones() {
        let ends = [
            (addr("10.0.0.8:44774"), addr("127.0.0.1:9092")),
            (addr("127.0.0.1:9092"), addr("10.0.0.8:44774")),
            (addr("10.0.0.9:9092"), addr("10.0.0.10:9092")),
            (addr("[fe80::1]:40000"), addr("[fe80::2]:9092")),
        ];
        let mut kept = Endpoints::default();
        for round in 0..3u32 {
            for stream in [0, 1, 7, 256, 512, 513, 1024 + 7, u32::MAX] {
                for (i, (src, dst)) in ends.iter().enumerate() {
                    let stream = stream.wrapping_add(round * (i as u32));
                    let mut want = String::from(">");
                    write_endpoints(&mut want, (src, dst), stream);
                    let mut got = String::from(">");
                    kept.write(&mut got, (src, dst), stream);
                    assert_eq!(got, want);
                }
            }
        }
    }

    /// API texts kept per (API, version, direction) read as written each time, however
    /// many share a slot.
    #[test]
    fn kept_api_texts_read_as_written() {
        let (_, mut m) = test_frames::metadata_request();
        let mut kept = ApiTexts::default();
        for round in 0..3 {
            for key in [0i16, 3, 18, 75, 1001, -1, i16::MAX] {
                for version in [0i16, 1, 13, 255, -1] {
                    for direction in [Direction::Request, Direction::Response] {
                        m.api_key = Some(key);
                        m.api_version = Some(version);
                        m.direction = direction;
                        let mut want = String::from(">");
                        write_api(&mut want, &m);
                        let mut got = String::from(">");
                        kept.write(&mut got, &m);
                        assert_eq!(got, want, "{key} v{version} {direction:?}, round {round}");
                    }
                }
            }
        }
        m.api_version = None;
        let mut got = String::new();
        kept.write(&mut got, &m);
        assert_eq!(got, "Unknown Response");
    }

    fn addr(s: &str) -> std::net::SocketAddr {
        s.parse()
            .unwrap_or_else(|_| std::net::SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// A request sent by the client in frame 7, 1.5 s into the capture, on stream 3.
    fn request_record(msg: Message, bytes: &[u8]) -> Record<'_> {
        Record {
            stream: 3,
            frame: 7,
            first_frame: 7,
            last_frame: 7,
            ts_nanos: 1_500_000_000,
            src: addr(CLIENT),
            dst: addr(BROKER),
            msg,
            bytes,
            request: None,
            assumed: false,
            partial: false,
            ended: None,
            tls: false,
            input_offset: None,
        }
    }

    /// The broker's answer in frame 8, `latency` nanoseconds after the request above.
    fn response_record(msg: Message, bytes: &[u8], latency: i64) -> Record<'_> {
        let info = RequestInfo {
            frame: 7,
            ts_nanos: 1_500_000_000,
            api_key: msg.api_key.unwrap_or(-1),
            api_version: msg.api_version.unwrap_or(-1),
            correlation_id: msg.correlation_id.unwrap_or(-1),
            embedded: None,
        };
        Record {
            stream: 3,
            frame: 8,
            first_frame: 8,
            last_frame: 8,
            ts_nanos: 1_500_000_000 + latency,
            src: addr(BROKER),
            dst: addr(CLIENT),
            msg,
            bytes,
            request: Some(info),
            assumed: false,
            partial: false,
            ended: None,
            tls: false,
            input_offset: None,
        }
    }

    fn text(rec: &Record<'_>) -> String {
        line(rec, &Clock::default())
    }

    /// Times and latencies written from integers read exactly as the float formatting they
    /// replace: near zero, at digit boundaries, at ties, near 2^52 and 2^53, and at random.
    #[test]
    fn integer_times_and_latencies_read_as_float_formatting_did() {
        let float_secs = |n: i64, digits: usize| {
            let v = n as f64 / 1e9;
            format!("{v:>w$.digits$}", w = 5 + digits)
        };
        let float_latency = |n: i64| {
            if n.abs() < 10_000 {
                format!("{} µs", n / 1000)
            } else {
                format!("{:.2} ms", n as f64 / 1e6)
            }
        };
        let mut values: Vec<i64> = vec![0, 1, 999, 1000, 5_000, 9_999, 10_000, 15_000, 25_000];
        values.extend([
            999_999_999,
            1_000_000_000,
            99_999_999_999_500,
            1 << 52,
            (1 << 52) - 1000,
        ]);
        values.extend([(1 << 53) - 5_000, 1 << 53, (1 << 53) + 10_000, i64::MAX / 2]);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..20_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Spread over magnitudes from nanoseconds to years; every other one whole microseconds.
            let v = (x >> (x % 50 + 6)) as i64;
            values.push(if i % 2 == 0 { v / 1000 * 1000 } else { v });
        }
        for v in values.clone() {
            values.push(-v);
        }
        for n in values {
            for digits in [6, 9] {
                let mut s = String::new();
                write_secs(&mut s, n, digits);
                assert_eq!(s, float_secs(n, digits), "{n} ns, {digits} digits");
            }
            assert_eq!(latency_text(n), float_latency(n), "latency {n} ns");
        }
    }

    /// The Metadata v13 response vector with error codes set: the topic's to 3
    /// (UNKNOWN_TOPIC_OR_PARTITION), its partition's to 9 (REPLICA_NOT_AVAILABLE) and the
    /// top level's to 41 (NOT_CONTROLLER).
    fn metadata_response_with_errors() -> Vec<u8> {
        let mut f = test_frames::bytes(test_frames::METADATA_V13_RESPONSE);
        for (at, code) in [(0x1f, 3u8), (0x34, 9), (0x57, 41)] {
            if let Some(b) = f.get_mut(at + 1) {
                *b = code;
            }
        }
        f
    }

    #[test]
    fn the_prefix_is_frame_time_endpoints_and_stream() {
        let clock = Clock {
            first_ts: 1_000,
            ..Clock::default()
        };
        let (c, b) = (addr(CLIENT), addr("[2001:db8::1]:9092"));
        assert_eq!(
            prefix(&clock, 1_234_567, 2_000_001_000, &c, &b, 42),
            "1234567    2.000000 10.0.0.1:40000 → [2001:db8::1]:9092 [42]"
        );
        assert_eq!(
            prefix(&clock, 9, 1_000, &b, &c, 0),
            "     9    0.000000 [2001:db8::1]:9092 → 10.0.0.1:40000 [0]"
        );
    }

    #[test]
    fn a_request_line() {
        let (f, m) = test_frames::metadata_request();
        assert_eq!(
            text(&request_record(m, &f)),
            "     7    1.500000 10.0.0.1:40000 → 10.0.0.2:9092 [3] Metadata v13 Request corr=0 \
             client_id=\"\" topics=[00000000-0000-0000-0000-000000000000]"
        );
    }

    #[test]
    fn a_response_line_ends_with_its_latency() {
        let (f, m) = test_frames::metadata_response();
        assert_eq!(
            text(&response_record(m, &f, 2_500_000)),
            "     8    1.502500 10.0.0.2:9092 → 10.0.0.1:40000 [3] Metadata v13 Response corr=0 \
             brokers=1 cluster_id=\"\" topics=[00000000-0000-0000-0000-000000000000] \
             partitions=1 (2.50 ms after frame 7)"
        );
    }

    #[test]
    fn errors_show_at_the_top_beside_topics_and_counted_below() {
        let f = metadata_response_with_errors();
        let m = decode_response(&f, 3, 13);
        assert_eq!(
            text(&response_record(m, &f, 7_000)),
            "     8    1.500007 10.0.0.2:9092 → 10.0.0.1:40000 [3] Metadata v13 Response corr=0 \
             error=NOT_CONTROLLER brokers=1 cluster_id=\"\" \
             topics=[00000000-0000-0000-0000-000000000000(UNKNOWN_TOPIC_OR_PARTITION)] \
             partitions=1 partition_errors=1(REPLICA_NOT_AVAILABLE) (7 µs after frame 7)"
        );
    }

    #[test]
    fn a_response_before_its_request_says_the_clock_went_backwards() {
        let (f, m) = test_frames::metadata_response();
        let line = text(&response_record(m, &f, -3_000_000));
        assert!(
            line.ends_with(
                " partitions=1 (-3.00 ms after frame 7) !! timestamped before its request: the \
                 capture's clock went backwards"
            ),
            "{line}"
        );
    }

    #[test]
    fn a_response_whose_api_was_assumed_says_so() {
        let (f, m) = test_frames::metadata_response();
        let mut rec = response_record(m, &f, 20_000);
        rec.assumed = true;
        assert!(
            text(&rec).ends_with(
                " partitions=1 [API assumed: request not captured] (0.02 ms after frame 7)"
            ),
            "{}",
            text(&rec)
        );
    }

    #[test]
    fn a_partial_frame_says_how_much_was_captured() {
        let f = test_frames::bytes(test_frames::METADATA_V13_RESPONSE);
        let cut = f.get(..20).unwrap_or_default();
        let m = decode_response(cut, 3, 13);
        let mut rec = response_record(m, cut, 1_000_000);
        rec.partial = true;
        assert_eq!(
            text(&rec),
            "     8    1.501000 10.0.0.2:9092 → 10.0.0.1:40000 [3] Metadata v13 Response corr=0 \
             brokers=1 (1.00 ms after frame 7) [partial: 20 of 90 bytes captured, the rest lost in a gap]"
        );
    }

    #[test]
    fn a_malformed_message_says_where_and_why() {
        // The request vector without its last byte (the body's tagged-field count).
        let mut f = test_frames::bytes(test_frames::METADATA_V13_REQUEST);
        f.pop();
        if let Some(size) = f.get_mut(3) {
            *size -= 1;
        }
        let m = decode_request(&f);
        assert_eq!(
            text(&request_record(m, &f)),
            "     7    1.500000 10.0.0.1:40000 → 10.0.0.2:9092 [3] Metadata v13 Request corr=0 \
             client_id=\"\" topics=[00000000-0000-0000-0000-000000000000] !! malformed: at \
             0x0024: tagged_fields count: unsigned varint runs past the end"
        );
    }

    #[test]
    fn a_diagnosis_without_an_error_is_malformed_at_its_offset() {
        let (f, mut m) = test_frames::metadata_request();
        m.diagnoses.push(Diagnosis {
            kind: ProblemKind::NullNotNullable,
            offset: 0x20,
            path: Default::default(),
            detail: crate::kafka::problem::Detail::NullNotNullable { what: "string" },
        });
        assert!(text(&request_record(m, &f)).ends_with(
            " !! malformed at 0x0020: null string in a field that is not nullable in this version"
        ));
    }

    #[test]
    fn an_api_without_tables_is_shown_undecoded() {
        let f = test_frames::request(1000, 0, 9, &[1, 2, 3]);
        let m = decode_request(&f);
        assert_eq!(
            text(&request_record(m, &f)),
            "     7    1.500000 10.0.0.1:40000 → 10.0.0.2:9092 [3] ApiKey1000 v0 Request corr=9 \
             client_id=\"t\" [body not decoded: API key 1000 (ApiKey1000) is not known to \
             kdissect: body shown raw]"
        );
    }

    #[test]
    fn an_unpaired_response_hints_at_the_flags() {
        let (f, _) = test_frames::metadata_response();
        let m = crate::kafka::message::decode_response_header_only(
            &f,
            crate::kafka::ErrorKind::Unpaired,
            crate::kafka::problem::HeaderOnly::NoGuess,
        );
        let mut rec = response_record(m, &f, 0);
        rec.request = None;
        assert_eq!(
            text(&rec),
            "     8    1.500000 10.0.0.2:9092 → 10.0.0.1:40000 [3] Unknown Response corr=0 \
             [body not decoded: no request with this correlation_id was captured, and no known \
             API and version decodes this body cleanly: to decode it as a response, \
             give --api-key K --api-version V]"
        );
    }

    #[test]
    fn a_newer_version_read_with_an_older_layout_says_which() {
        let newest = crate::kafka::registry()
            .get(18, crate::kafka::Direction::Request)
            .map_or(0, |s| s.max_version());
        // ApiVersions in the v5 layout: software "a" version "b", ClusterId null, NodeId -1.
        let body = [2, b'a', 2, b'b', 0, 0xff, 0xff, 0xff, 0xff, 0];
        let f = test_frames::request(18, newest + 1, 4, &body);
        let m = decode_request(&f);
        assert_eq!(m.assumed_version, Some(newest));
        assert_eq!(
            text(&request_record(m, &f)),
            format!(
                "     7    1.500000 10.0.0.1:40000 → 10.0.0.2:9092 [3] ApiVersions v{} Request \
                 corr=4 client_id=\"t\" software=a/b [assumed_version: read with the v{newest} \
                 layout]",
                newest + 1
            )
        );
    }

    #[test]
    fn colour_marks_the_api_errors_and_slow_latencies() {
        let f = metadata_response_with_errors();
        let m = decode_response(&f, 3, 13);
        let rec = response_record(m, &f, 1_200_000_000);
        assert_eq!(
            line_styled(&rec, &Clock::default(), true),
            "     8    2.700000 10.0.0.2:9092 → 10.0.0.1:40000 [3] \
             \u{1b}[1m\u{1b}[36mMetadata v13 Response\u{1b}[39m\u{1b}[0m corr=0 \
             \u{1b}[31merror=NOT_CONTROLLER\u{1b}[39m brokers=1 cluster_id=\"\" \
             \u{1b}[31mtopics=[00000000-0000-0000-0000-000000000000(UNKNOWN_TOPIC_OR_PARTITION)]\u{1b}[39m \
             partitions=1 \u{1b}[31mpartition_errors=1(REPLICA_NOT_AVAILABLE)\u{1b}[39m \
             (\u{1b}[1m\u{1b}[31m1200.00 ms\u{1b}[39m\u{1b}[0m after frame 7)"
        );
        // Slow but under a second: yellow. Without colour, the same words and no escapes.
        let (f, m) = test_frames::metadata_response();
        let slow = response_record(m, &f, 150_000_000);
        assert!(line_styled(&slow, &Clock::default(), true)
            .ends_with(" (\u{1b}[33m150.00 ms\u{1b}[39m after frame 7)"));
        assert!(!line_styled(&slow, &Clock::default(), false).contains('\u{1b}'));
        // Malformed: the whole `!!` part red.
        let (f, mut m) = test_frames::metadata_request();
        m.diagnoses.push(Diagnosis {
            kind: ProblemKind::Malformed,
            offset: 4,
            path: Default::default(),
            detail: crate::kafka::problem::Detail::OutOfRange,
        });
        assert!(line_styled(&request_record(m, &f), &Clock::default(), true)
            .ends_with("]\u{1b}[31m !! malformed at 0x0004: out of range\u{1b}[39m"));
    }

    #[test]
    fn sasl_words_name_the_step_and_user_and_never_the_password() {
        let (_, m) = test_frames::sasl_plain();
        assert_eq!(essentials(&m), r#"client_id="t" sasl="PLAIN" user="alice""#);
        // A null client_id reads `null`. Metadata v13: header v2 with client_id null, Topics
        // null (all topics), AllowAutoTopicCreation true.
        let header = [0, 3, 0, 13, 0, 0, 0, 1, 0xff, 0xff, 0];
        let body = [0, 1, 0, 0];
        let mut f = ((header.len() + body.len()) as i32).to_be_bytes().to_vec();
        f.extend_from_slice(&header);
        f.extend_from_slice(&body);
        let m = decode_request(&f);
        assert_eq!(essentials(&m), "client_id=null topics=all");
    }

    #[test]
    fn latencies_are_microseconds_below_a_hundredth_of_a_millisecond() {
        assert_eq!(latency_text(0), "0 µs");
        assert_eq!(latency_text(9_999), "9 µs");
        assert_eq!(latency_text(-9_999), "-9 µs");
        assert_eq!(latency_text(10_000), "0.01 ms");
        assert_eq!(latency_text(1_234_567), "1.23 ms");
        assert_eq!(latency_text(2_000_000_000), "2000.00 ms");
    }

    #[test]
    fn time_columns_as_tshark_prints_them() {
        let ts = 1_764_464_353_123_456_789;
        let clock = |format, precision| Clock {
            format,
            precision,
            first_ts: ts - 2_000_000_000,
            prev_packet_ts: Some(ts - 1_000),
            prev_shown_ts: None,
        };
        assert_eq!(clock(TimeFormat::Relative, 6).text(ts), "   2.000000");
        assert_eq!(clock(TimeFormat::Relative, 9).text(ts), "   2.000000000");
        assert_eq!(clock(TimeFormat::Delta, 9).text(ts), "   0.000001000");
        assert_eq!(clock(TimeFormat::DeltaShown, 6).text(ts), "   0.000000");
        assert_eq!(clock(TimeFormat::Epoch, 6).text(ts), "1764464353.123456");
        assert_eq!(clock(TimeFormat::Epoch, 9).text(ts), "1764464353.123456789");
        assert_eq!(clock(TimeFormat::Utc, 6).text(ts), "00:59:13.123456");
        assert_eq!(
            clock(TimeFormat::UtcDate, 9).text(ts),
            "2025-11-30 00:59:13.123456789"
        );
    }

    #[test]
    fn time_formats_are_tsharks_letters() {
        assert_eq!("ud".parse::<TimeFormat>(), Ok(TimeFormat::UtcDate));
        assert_eq!("dd".parse::<TimeFormat>(), Ok(TimeFormat::DeltaShown));
        assert_eq!(
            "x".parse::<TimeFormat>(),
            Err("\"x\" is not a time format: r, a, ad, d, dd, e, u or ud (as tshark -t)".into())
        );
    }
}
