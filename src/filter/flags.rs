//! The exchange flags (`--api`, `--errors`, `--topic`, `--stream`, `--correlation-id`,
//! `--client-id`) as a filter expression.

use crate::kafka::names::api_name;

/// The expression that selects what the flags select, when evaluated on an exchange as a
/// whole (see [`super::ExchangeFields`]: the flags judge a request together with its
/// response). Every given flag must hold, so the parts are joined with `&&`; several APIs
/// are alternatives. Empty when no flag is given.
pub fn from_flags(
    apis: &[i16],
    errors: bool,
    topic: Option<&str>,
    stream: Option<u32>,
    corr: Option<i32>,
    client_id: Option<&str>,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    let alts: Vec<String> = apis
        .iter()
        .map(|k| match api_name(*k) {
            Some(n) => format!("api == {n}"),
            None => format!("api == {k}"),
        })
        .collect();
    match alts.len() {
        0 => {}
        1 => parts.extend(alts),
        _ => parts.push(format!("({})", alts.join(" || "))),
    }
    if errors {
        parts.push("error".into());
    }
    if let Some(t) = topic {
        parts.push(format!("topic == {}", quote(t)));
    }
    if let Some(s) = stream {
        parts.push(format!("stream == {s}"));
    }
    if let Some(c) = corr {
        parts.push(format!("corr == {c}"));
    }
    if let Some(c) = client_id {
        parts.push(format!("client_id == {}", quote(c)));
    }
    parts.join(" && ")
}

/// A string literal, always quoted: a quoted value is never read as a keyword, a number or a
/// topic id, just as the flags take their argument as a name.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::filter::{parse, Expr, Filter};

    #[test]
    fn each_flag() {
        assert_eq!(from_flags(&[], false, None, None, None, None), "");
        assert_eq!(
            from_flags(&[3], false, None, None, None, None),
            "api == Metadata"
        );
        assert_eq!(
            from_flags(&[3, 60, 1001], false, None, None, None, None),
            "(api == Metadata || api == DescribeCluster || api == 1001)"
        );
        assert_eq!(from_flags(&[], true, None, None, None, None), "error");
        assert_eq!(
            from_flags(&[], false, Some("orders"), None, None, None),
            "topic == \"orders\""
        );
        assert_eq!(
            from_flags(&[], false, None, Some(2), None, None),
            "stream == 2"
        );
        assert_eq!(
            from_flags(&[], false, None, None, Some(-5), None),
            "corr == -5"
        );
        assert_eq!(
            from_flags(&[], false, None, None, None, Some("say \"hi\"\\")),
            "client_id == \"say \\\"hi\\\"\\\\\""
        );
        assert_eq!(
            from_flags(&[3, 60], true, Some("orders"), Some(1), Some(7), Some("admin")),
            "(api == Metadata || api == DescribeCluster) && error && topic == \"orders\" && stream == 1 && corr == 7 && client_id == \"admin\""
        );
    }

    #[test]
    fn every_expression_compiles_and_keeps_its_strings() {
        for name in [
            "orders",
            "and",
            "a b",
            "q\"uote",
            "back\\slash",
            "tab\there",
            "01a229ff-56de-74f2-931f-3b49a65ac33a",
        ] {
            let e = from_flags(
                &[0, 94, -7],
                true,
                Some(name),
                Some(0),
                Some(i32::MIN),
                Some(name),
            );
            Filter::compile(&e).unwrap();
            let mut texts = Vec::new();
            collect(&parse(&e).unwrap(), &mut texts);
            assert_eq!(texts, vec![name.to_string(), name.to_string()]);
        }
    }

    fn collect(e: &Expr, out: &mut Vec<String>) {
        match e {
            Expr::Or(a, b) | Expr::And(a, b) => {
                collect(a, out);
                collect(b, out);
            }
            Expr::Not(a) => collect(a, out),
            Expr::Test {
                cmp: Some((_, lit)),
                ..
            } if lit.quoted => out.push(lit.text.clone()),
            Expr::Test { .. } | Expr::In { .. } => {}
        }
    }
}
