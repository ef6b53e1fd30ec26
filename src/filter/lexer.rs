//! Filter text to tokens, each with its 1-based column in characters.

use super::parser::CmpOp;
use super::FilterError;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    LParen,
    RParen,
    And,
    Or,
    Not,
    Op(CmpOp),
    /// A bare word: a field, a path, a number, a name, a duration, a UUID, `ip:port`.
    Word(String),
    /// A quoted string, escapes resolved.
    Quoted(String),
    /// `in`: membership in a set, as Wireshark's `tcp.port in {80 443}`.
    In,
    /// `{` and `}` around a set.
    LBrace,
    RBrace,
    /// `,` between a set's members.
    Comma,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub column: usize,
}

/// Characters a bare word may hold. Paths need `.`, `[`, `]` and `*`; API names `-`;
/// `ip:port` `:`; times `+` (a zone, `2026-11-30T13:00:00+01:00`) and `@` (`@1796040000`).
/// No arithmetic exists, so `-` and `+` inside a word are never signs.
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '[' | ']' | '*' | '+' | '@')
}

/// Words with a meaning of their own; to use one as a value, quote it.
fn keyword(w: &str) -> Option<Tok> {
    Some(match w {
        "and" => Tok::And,
        "or" => Tok::Or,
        "not" => Tok::Not,
        "in" => Tok::In,
        "contains" => Tok::Op(CmpOp::Contains),
        "matches" => Tok::Op(CmpOp::Matches),
        "eq" => Tok::Op(CmpOp::Eq),
        "ne" => Tok::Op(CmpOp::Ne),
        "lt" => Tok::Op(CmpOp::Lt),
        "le" => Tok::Op(CmpOp::Le),
        "gt" => Tok::Op(CmpOp::Gt),
        "ge" => Tok::Op(CmpOp::Ge),
        _ => return None,
    })
}

pub(crate) fn tokens(text: &str) -> Result<Vec<Token>, FilterError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let column = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let (tok, next) = match c {
            '(' => (Tok::LParen, i + 1),
            ')' => (Tok::RParen, i + 1),
            '{' => (Tok::LBrace, i + 1),
            '}' => (Tok::RBrace, i + 1),
            ',' => (Tok::Comma, i + 1),
            '"' | '\'' => quoted(&chars, i)?,
            c if word_char(c) => {
                let end = (i..chars.len())
                    .find(|&j| !chars.get(j).copied().is_some_and(word_char))
                    .unwrap_or(chars.len());
                let w: String = chars.get(i..end).unwrap_or_default().iter().collect();
                (keyword(&w).unwrap_or(Tok::Word(w)), end)
            }
            _ => symbol(&chars, i)?,
        };
        out.push(Token { tok, column });
        i = next;
    }
    Ok(out)
}

/// Operators made of symbols: `&& || ! == != < <= > >=`.
fn symbol(chars: &[char], i: usize) -> Result<(Tok, usize), FilterError> {
    let c = chars.get(i).copied().unwrap_or(' ');
    let next = chars.get(i + 1).copied();
    let two = |t| Ok((t, i + 2));
    let one = |t| Ok((t, i + 1));
    match (c, next) {
        ('&', Some('&')) => two(Tok::And),
        ('|', Some('|')) => two(Tok::Or),
        ('!', Some('=')) => two(Tok::Op(CmpOp::Ne)),
        ('=', Some('=')) => two(Tok::Op(CmpOp::Eq)),
        ('<', Some('=')) => two(Tok::Op(CmpOp::Le)),
        ('>', Some('=')) => two(Tok::Op(CmpOp::Ge)),
        ('!', _) => one(Tok::Not),
        ('<', _) => one(Tok::Op(CmpOp::Lt)),
        ('>', _) => one(Tok::Op(CmpOp::Gt)),
        ('&', _) => Err(FilterError::new(i + 1, "`&` alone: write `&&` or `and`")),
        ('|', _) => Err(FilterError::new(i + 1, "`|` alone: write `||` or `or`")),
        ('=', _) => Err(FilterError::new(i + 1, "`=` alone: write `==` to compare")),
        (c, _) => Err(FilterError::new(
            i + 1,
            format!("unexpected character `{c}`"),
        )),
    }
}

/// A string in double or single quotes. `\"`, `\'`, `\\`, `\n` and `\t` are escapes; any
/// other backslash is kept with its character, so that `matches` patterns such as `"a\.b"`
/// reach the pattern as written.
fn quoted(chars: &[char], start: usize) -> Result<(Tok, usize), FilterError> {
    let q = chars.get(start).copied().unwrap_or('"');
    let mut s = String::new();
    let mut i = start + 1;
    loop {
        match chars.get(i).copied() {
            None => {
                return Err(FilterError::new(
                    start + 1,
                    format!("string not closed: `{q}` expected before the end"),
                ))
            }
            Some(c) if c == q => return Ok((Tok::Quoted(s), i + 1)),
            Some('\\') => {
                match chars.get(i + 1).copied() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some(e @ ('"' | '\'' | '\\')) => s.push(e),
                    Some(e) => {
                        s.push('\\');
                        s.push(e);
                    }
                    None => s.push('\\'),
                }
                i += 2;
            }
            Some(c) => {
                s.push(c);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<(Tok, usize)> {
        tokens(s)
            .unwrap()
            .into_iter()
            .map(|t| (t.tok, t.column))
            .collect()
    }

    #[test]
    fn symbols_words_and_columns() {
        assert_eq!(
            toks("a==1&&!(b)"),
            vec![
                (Tok::Word("a".into()), 1),
                (Tok::Op(CmpOp::Eq), 2),
                (Tok::Word("1".into()), 4),
                (Tok::And, 5),
                (Tok::Not, 7),
                (Tok::LParen, 8),
                (Tok::Word("b".into()), 9),
                (Tok::RParen, 10),
            ]
        );
        assert_eq!(
            toks("Metadata.Topics[*].Name != 127.0.0.1:9092")[2],
            (Tok::Word("127.0.0.1:9092".into()), 28)
        );
    }

    #[test]
    fn keywords_and_quotes() {
        let t = toks(r#"x contains "a\"b\.c" or not y matches 'q'"#);
        assert_eq!(t[1].0, Tok::Op(CmpOp::Contains));
        assert_eq!(t[2].0, Tok::Quoted("a\"b\\.c".into()));
        assert_eq!(t[3].0, Tok::Or);
        assert_eq!(t[4].0, Tok::Not);
        assert_eq!(t[6].0, Tok::Op(CmpOp::Matches));
        assert_eq!(t[7].0, Tok::Quoted("q".into()));
    }

    #[test]
    fn sets() {
        let t = toks("api in {3 19,\"x\"} and a not in {1..5}");
        let kinds: Vec<Tok> = t.into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            kinds,
            vec![
                Tok::Word("api".into()),
                Tok::In,
                Tok::LBrace,
                Tok::Word("3".into()),
                Tok::Word("19".into()),
                Tok::Comma,
                Tok::Quoted("x".into()),
                Tok::RBrace,
                Tok::And,
                Tok::Word("a".into()),
                Tok::Not,
                Tok::In,
                Tok::LBrace,
                Tok::Word("1..5".into()),
                Tok::RBrace,
            ]
        );
    }

    #[test]
    fn bad_characters_name_their_column() {
        assert_eq!(tokens("a & b").unwrap_err().column, 3);
        assert_eq!(tokens("a | b").unwrap_err().column, 3);
        assert_eq!(tokens("a = b").unwrap_err().column, 3);
        assert_eq!(tokens("a == \"b").unwrap_err().column, 6);
        assert_eq!(tokens("a == $").unwrap_err().column, 6);
        // Columns count characters, not bytes.
        assert_eq!(tokens("\"é\" $").unwrap_err().column, 5);
    }
}
