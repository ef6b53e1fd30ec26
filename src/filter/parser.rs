//! Tokens to an expression tree. Precedence, loosest first: `||`, `&&`, `!`; parentheses
//! group. Names are not looked up here: [`super::Filter::compile`] does that.

use super::lexer::{tokens, Tok, Token};
use super::FilterError;
use std::fmt;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
    Matches,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Contains => "contains",
            CmpOp::Matches => "matches",
        }
    }

    /// `<`, `<=`, `>`, `>=`: the ones that need an order.
    pub fn is_ordering(self) -> bool {
        matches!(self, CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge)
    }
}

/// A field as written, with its column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldName {
    pub text: String,
    pub column: usize,
}

/// A value as written: what it means depends on the field it is compared with, so it is kept
/// as text until compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub text: String,
    /// Written in quotes: always a string (or, for a UUID field, a UUID).
    pub quoted: bool,
    pub column: usize,
}

/// A member of a set: one value, or a range of values with both ends included (`3..19`), as
/// in Wireshark's `tcp.port in {80 443 8000..8080}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetMember {
    One(Literal),
    Range(Literal, Literal),
}

/// A parsed filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// `FIELD OP VALUE`, or a bare `FIELD` when `cmp` is `None`.
    Test {
        field: FieldName,
        cmp: Option<(CmpOp, Literal)>,
    },
    /// `FIELD in {A B C..D}`: any value of the field is one of the set's (`not in` is its
    /// negation).
    In {
        field: FieldName,
        set: Vec<SetMember>,
    },
}

/// Tokens in one filter: far more than any filter typed or generated, and few enough that
/// the tree (as deep as its operators are many) is walked recursively without risk.
const MAX_TOKENS: usize = 4096;

/// Parentheses and `!` nested deeper than this are refused, for the same reason.
const MAX_DEPTH: usize = 256;

/// Parses a filter expression.
pub fn parse(text: &str) -> Result<Expr, FilterError> {
    let toks = tokens(text)?;
    let end = text.chars().count() + 1;
    if let Some(t) = toks.get(MAX_TOKENS) {
        return Err(FilterError::new(
            t.column,
            format!("a filter may have at most {MAX_TOKENS} words and symbols"),
        ));
    }
    let mut p = Parser {
        toks,
        pos: 0,
        end,
        depth: 0,
    };
    if p.toks.is_empty() {
        return Err(FilterError::new(1, "empty filter expression"));
    }
    let e = p.or()?;
    match p.peek() {
        None => Ok(e),
        Some(t) => Err(FilterError::new(
            t.column,
            format!(
                "unexpected {} after a complete expression",
                describe(&t.tok)
            ),
        )),
    }
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// The column just past the text, for errors at the end.
    end: usize,
    /// Parentheses and `!` open around the current token.
    depth: usize,
}

/// A token as named in messages.
fn describe(t: &Tok) -> String {
    match t {
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::And => "`&&`".into(),
        Tok::Or => "`||`".into(),
        Tok::Not => "`!`".into(),
        Tok::Op(op) => format!("`{}`", op.as_str()),
        Tok::Word(w) => format!("`{w}`"),
        Tok::Quoted(s) => format!("string {s:?}"),
        Tok::In => "`in`".into(),
        Tok::LBrace => "`{`".into(),
        Tok::RBrace => "`}`".into(),
        Tok::Comma => "`,`".into(),
    }
}

/// What a set holds between its braces, before ranges are put together.
enum SetAtom {
    Value(Literal),
    /// `..`, at its column.
    To(usize),
}

/// A bare word of a set cut at its `..`s (`3..19` is one word to the lexer): the values and
/// the range marks, each with its column.
fn split_ranges(w: &str, column: usize, out: &mut Vec<SetAtom>) {
    let mut at = column;
    for (i, piece) in w.split("..").enumerate() {
        if i > 0 {
            out.push(SetAtom::To(at));
            at += 2;
        }
        if !piece.is_empty() {
            out.push(SetAtom::Value(Literal {
                text: piece.to_string(),
                quoted: false,
                column: at,
            }));
        }
        at += piece.chars().count();
    }
}

/// Values and ranges from the atoms: `A .. B` is a range, every other value one member.
fn set_members(atoms: Vec<SetAtom>, open: usize) -> Result<Vec<SetMember>, FilterError> {
    let mut out = Vec::new();
    let mut it = atoms.into_iter().peekable();
    while let Some(a) = it.next() {
        let lo = match a {
            SetAtom::Value(v) => v,
            SetAtom::To(col) => {
                return Err(FilterError::new(
                    col,
                    "`..` needs a value before it: write a range as `3..19`",
                ))
            }
        };
        let Some(SetAtom::To(col)) = it.peek() else {
            out.push(SetMember::One(lo));
            continue;
        };
        let col = *col;
        it.next();
        match it.next() {
            Some(SetAtom::Value(hi)) => out.push(SetMember::Range(lo, hi)),
            _ => {
                return Err(FilterError::new(
                    col,
                    "`..` needs a value after it: write a range as `3..19`",
                ))
            }
        }
    }
    if out.is_empty() {
        return Err(FilterError::new(
            open,
            "an empty set: put the values between the braces, as in `{3 19}`",
        ));
    }
    Ok(out)
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn eat(&mut self, want: &Tok) -> bool {
        let hit = self.peek().is_some_and(|t| &t.tok == want);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn or(&mut self) -> Result<Expr, FilterError> {
        let mut e = self.and()?;
        while self.eat(&Tok::Or) {
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, FilterError> {
        let mut e = self.unary()?;
        while self.eat(&Tok::And) {
            e = Expr::And(Box::new(e), Box::new(self.unary()?));
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Expr, FilterError> {
        if self.eat(&Tok::Not) {
            let inner = self.nested(Parser::unary)?;
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.primary()
    }

    /// Runs `f` one level deeper, refusing past [`MAX_DEPTH`].
    fn nested(
        &mut self,
        f: fn(&mut Parser) -> Result<Expr, FilterError>,
    ) -> Result<Expr, FilterError> {
        if self.depth >= MAX_DEPTH {
            let at = self.peek().map_or(self.end, |t| t.column);
            return Err(FilterError::new(
                at,
                format!("`(` and `!` nest at most {MAX_DEPTH} deep"),
            ));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn primary(&mut self) -> Result<Expr, FilterError> {
        let Some(t) = self.next() else {
            return Err(FilterError::new(
                self.end,
                "expected a field, `!` or `(` here",
            ));
        };
        match t.tok {
            Tok::LParen => {
                let e = self.nested(Parser::or)?;
                if self.eat(&Tok::RParen) {
                    return Ok(e);
                }
                let at = self.peek().map_or(self.end, |t| t.column);
                Err(FilterError::new(
                    at,
                    format!("expected `)` to close the `(` at column {}", t.column),
                ))
            }
            Tok::Word(w) => self.test(FieldName {
                text: w,
                column: t.column,
            }),
            other => Err(FilterError::new(
                t.column,
                format!("expected a field, `!` or `(`, found {}", describe(&other)),
            )),
        }
    }

    /// After a field: an operator and a value, `in` and a set, or nothing (a bare field).
    fn test(&mut self, field: FieldName) -> Result<Expr, FilterError> {
        if self.eat(&Tok::In) {
            return self.set(field);
        }
        let not_in = matches!(self.toks.get(self.pos..self.pos + 2), Some([a, b]) if a.tok == Tok::Not && b.tok == Tok::In);
        if not_in {
            self.pos += 2;
            return Ok(Expr::Not(Box::new(self.set(field)?)));
        }
        let Some(Tok::Op(op)) = self.peek().map(|t| t.tok.clone()) else {
            return Ok(Expr::Test { field, cmp: None });
        };
        let op_col = self.peek().map_or(self.end, |t| t.column);
        self.pos += 1;
        let value = match self.next() {
            Some(Token {
                tok: Tok::Word(w),
                column,
            }) => Literal {
                text: w,
                quoted: false,
                column,
            },
            Some(Token {
                tok: Tok::Quoted(s),
                column,
            }) => Literal {
                text: s,
                quoted: true,
                column,
            },
            Some(t) => {
                return Err(FilterError::new(
                    t.column,
                    format!(
                        "expected a value after `{}`, found {}",
                        op.as_str(),
                        describe(&t.tok)
                    ),
                ))
            }
            None => {
                return Err(FilterError::new(
                    self.end,
                    format!(
                        "expected a value after `{}` at column {op_col}",
                        op.as_str()
                    ),
                ))
            }
        };
        self.no_chain()?;
        Ok(Expr::Test {
            field,
            cmp: Some((op, value)),
        })
    }

    /// A comparison is followed by logic or the end, never by another comparison.
    fn no_chain(&self) -> Result<(), FilterError> {
        match self
            .peek()
            .filter(|t| matches!(t.tok, Tok::Op(_) | Tok::In))
        {
            Some(t) => Err(FilterError::new(
                t.column,
                "comparisons do not chain: join them with `&&` or `||`",
            )),
            None => Ok(()),
        }
    }

    /// After `in`: `{`, values, ranges (`3..19`), separated by spaces or commas, and `}`.
    fn set(&mut self, field: FieldName) -> Result<Expr, FilterError> {
        let open = match self.next() {
            Some(Token {
                tok: Tok::LBrace,
                column,
            }) => column,
            Some(t) => {
                return Err(FilterError::new(
                    t.column,
                    format!(
                        "expected `{{` after `in`, found {}: a set is written `{{3 19}}`",
                        describe(&t.tok)
                    ),
                ))
            }
            None => {
                return Err(FilterError::new(
                    self.end,
                    "expected `{` after `in`: a set is written `{3 19}`",
                ))
            }
        };
        let mut atoms = Vec::new();
        loop {
            match self.next() {
                Some(Token {
                    tok: Tok::RBrace, ..
                }) => break,
                Some(Token {
                    tok: Tok::Comma, ..
                }) => {}
                Some(Token {
                    tok: Tok::Word(w),
                    column,
                }) => split_ranges(&w, column, &mut atoms),
                Some(Token {
                    tok: Tok::Quoted(text),
                    column,
                }) => atoms.push(SetAtom::Value(Literal {
                    text,
                    quoted: true,
                    column,
                })),
                Some(t) => {
                    return Err(FilterError::new(
                        t.column,
                        format!(
                            "expected a value or `}}` in the set opened at column {open}, found {}",
                            describe(&t.tok)
                        ),
                    ))
                }
                None => {
                    return Err(FilterError::new(
                        self.end,
                        format!("expected `}}` to close the `{{` at column {open}"),
                    ))
                }
            }
        }
        let set = set_members(atoms, open)?;
        self.no_chain()?;
        Ok(Expr::In { field, set })
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.quoted {
            return f.write_str(&self.text);
        }
        f.write_str("\"")?;
        for c in self.text.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\t' => f.write_str("\\t")?,
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}

/// The canonical text: operators as symbols, a binary operand that is itself a binary
/// operation in parentheses, so that precedence shows.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn operand(e: &Expr, same: fn(&Expr) -> bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match e {
                Expr::Or(..) | Expr::And(..) if !same(e) => write!(f, "({e})"),
                _ => write!(f, "{e}"),
            }
        }
        match self {
            Expr::Or(a, b) => {
                let is_or = |e: &Expr| matches!(e, Expr::Or(..));
                operand(a, is_or, f)?;
                f.write_str(" || ")?;
                operand(b, |_| false, f)
            }
            Expr::And(a, b) => {
                let is_and = |e: &Expr| matches!(e, Expr::And(..));
                operand(a, is_and, f)?;
                f.write_str(" && ")?;
                operand(b, |_| false, f)
            }
            Expr::Not(e) => match e.as_ref() {
                Expr::Test { cmp: None, .. } | Expr::Not(_) => write!(f, "!{e}"),
                _ => write!(f, "!({e})"),
            },
            Expr::Test { field, cmp: None } => f.write_str(&field.text),
            Expr::Test {
                field,
                cmp: Some((op, v)),
            } => write!(f, "{} {} {v}", field.text, op.as_str()),
            Expr::In { field, set } => {
                write!(f, "{} in {{", field.text)?;
                for (i, m) in set.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    match m {
                        SetMember::One(v) => write!(f, "{v}")?,
                        SetMember::Range(lo, hi) => write!(f, "{lo}..{hi}")?,
                    }
                }
                f.write_str("}")
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        parse(s).unwrap().to_string()
    }

    fn err(s: &str) -> (usize, String) {
        let e = parse(s).unwrap_err();
        (e.column, e.message)
    }

    #[test]
    fn every_operator() {
        for (src, op) in [
            ("a == 1", CmpOp::Eq),
            ("a != 1", CmpOp::Ne),
            ("a < 1", CmpOp::Lt),
            ("a <= 1", CmpOp::Le),
            ("a > 1", CmpOp::Gt),
            ("a >= 1", CmpOp::Ge),
            ("a contains 1", CmpOp::Contains),
            ("a matches 1", CmpOp::Matches),
            ("a eq 1", CmpOp::Eq),
            ("a ne 1", CmpOp::Ne),
            ("a lt 1", CmpOp::Lt),
            ("a le 1", CmpOp::Le),
            ("a gt 1", CmpOp::Gt),
            ("a ge 1", CmpOp::Ge),
        ] {
            match parse(src).unwrap() {
                Expr::Test {
                    field,
                    cmp: Some((got, v)),
                } => {
                    assert_eq!((field.text.as_str(), got, v.text.as_str()), ("a", op, "1"));
                    assert_eq!((field.column, v.column), (1, src.len()));
                }
                other => panic!("{src}: {other:?}"),
            }
        }
        assert_eq!(canon("a"), "a");
        assert_eq!(canon("!a"), "!a");
        assert_eq!(canon("not a"), "!a");
        assert_eq!(canon("a and b"), "a && b");
        assert_eq!(canon("a or b"), "a || b");
        assert_eq!(canon("a eq \"x y\""), "a == \"x y\"");
    }

    #[test]
    fn precedence_not_and_or() {
        assert_eq!(canon("a || b && c"), "a || (b && c)");
        assert_eq!(canon("a && b || c"), "(a && b) || c");
        assert_eq!(canon("!a && b"), "!a && b");
        assert_eq!(canon("!a || b && !c"), "!a || (b && !c)");
        assert_eq!(canon("a || b || c"), "a || b || c");
        assert_eq!(canon("a && b && c"), "a && b && c");
        assert_eq!(canon("not a == 1 or b"), "!(a == 1) || b");
        assert_eq!(canon("!!a"), "!!a");
        match parse("a || b && c").unwrap() {
            Expr::Or(a, b) => {
                assert!(matches!(*a, Expr::Test { .. }));
                assert!(matches!(*b, Expr::And(..)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parentheses() {
        assert_eq!(canon("(a || b) && c"), "(a || b) && c");
        assert_eq!(canon("a && (b || c)"), "a && (b || c)");
        assert_eq!(canon("!(a && b)"), "!(a && b)");
        assert_eq!(canon("((a))"), "a");
        assert_eq!(canon("(a)&&(b==2)"), "a && b == 2");
    }

    #[test]
    fn errors_name_the_column() {
        assert_eq!(err(""), (1, "empty filter expression".into()));
        assert_eq!(err("   ").0, 1);
        assert_eq!(err("a &&").0, 5);
        assert_eq!(err("a && || b").0, 6);
        assert_eq!(err("(a || b").0, 8);
        assert!(err("(a || b").1.contains("close the `(` at column 1"));
        assert_eq!(err("a b").0, 3);
        assert_eq!(err("a == 1)").0, 7);
        assert_eq!(err("a ==").0, 5);
        assert!(err("a ==").1.contains("expected a value after `==`"));
        assert_eq!(err("a == )").0, 6);
        assert_eq!(err("a == 1 == 2").0, 8);
        assert_eq!(err("== 1").0, 1);
        assert_eq!(err("a == (b)").0, 6);
        assert_eq!(err("\"a\" == 1").0, 1);
    }

    #[test]
    fn size_limits_are_errors_not_overflows() {
        let deep = format!("{}a{}", "(".repeat(1000), ")".repeat(1000));
        assert!(err(&deep).1.contains("nest at most"));
        assert!(err(&"!".repeat(1000)).1.contains("nest at most"));
        assert!(err(&"(".repeat(100_000)).1.contains("at most 4096"));
        let long = vec!["a"; 5000].join(" && ");
        assert!(err(&long).1.contains("at most 4096"));
        let ok = vec!["a"; 2000].join(" && ");
        assert!(parse(&ok).is_ok());
        let nested = format!("{}a{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(parse(&nested).unwrap().to_string(), "a");
    }

    #[test]
    fn sets_of_values_and_ranges() {
        assert_eq!(canon("kafka.api_key in {3 19}"), "kafka.api_key in {3 19}");
        assert_eq!(canon("api in {3,19}"), "api in {3 19}");
        assert_eq!(canon("api in { 3 , 19 }"), "api in {3 19}");
        assert_eq!(
            canon("port in {9092 9093..9095}"),
            "port in {9092 9093..9095}"
        );
        assert_eq!(canon("port in {9093 .. 9095}"), "port in {9093..9095}");
        assert_eq!(
            canon("client_id in {\"a b\" 'c'} && x"),
            "client_id in {\"a b\" \"c\"} && x"
        );
        assert_eq!(canon("api not in {3}"), "!(api in {3})");
        assert_eq!(canon("!api in {3} || a"), "!(api in {3}) || a");
        match parse("port in {1 2..5}").unwrap() {
            Expr::In { field, set } => {
                assert_eq!(field.text, "port");
                let cols: Vec<(usize, Option<usize>)> = set
                    .iter()
                    .map(|m| match m {
                        SetMember::One(v) => (v.column, None),
                        SetMember::Range(lo, hi) => (lo.column, Some(hi.column)),
                    })
                    .collect();
                assert_eq!(cols, vec![(10, None), (12, Some(15))]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            err("api in {}").1,
            "an empty set: put the values between the braces, as in `{3 19}`"
        );
        assert_eq!(err("api in {}").0, 8);
        assert_eq!(err("api in {3 19").0, 13);
        assert!(err("api in {3 19").1.contains("close the `{` at column 8"));
        assert_eq!(err("api in 3").0, 8);
        assert_eq!(err("api in {3 ..}").0, 11);
        assert_eq!(err("api in {..3}").0, 9);
        assert_eq!(err("api in {1..2..3}").0, 13);
        assert_eq!(err("api in {(}").0, 9);
        assert_eq!(err("api in {3} == 3").0, 12);
        assert_eq!(err("api in {3} in {4}").0, 12);
        assert_eq!(err("api == 3 in {4}").0, 10);
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "api == Metadata && latency > 50ms",
            "(a || b) && !c",
            "client_id == \"say \\\"hi\\\"\"",
            "Metadata.Topics[*].Partitions[*].ErrorCode != 0",
            "api in {3 19..20 \"x y\"} && !(port in {1})",
        ] {
            let e = parse(s).unwrap();
            assert_eq!(parse(&e.to_string()).unwrap().to_string(), e.to_string());
        }
    }
}
