//! `--fields`: which fields of each message `--json` prints, named as display filters name
//! them (a built-in such as `corr` or `topic`, or a schema path such as
//! `Metadata.Topics[*].Name`), checked once against the schema.

use super::alias::{find, Render};
use super::fields::{resolve, FieldRef, FieldValue, Fields};
use super::parser::{parse, Expr};
use super::FilterError;

/// The fields to print, in the order given.
#[derive(Debug, Clone)]
pub struct Projection {
    fields: Vec<(String, FieldRef)>,
    /// How `-T fields` writes each (a Wireshark name may ask for tshark's notation).
    renders: Vec<Render>,
}

impl Projection {
    /// Reads a comma-separated list of field names. A name that is not a field, or an
    /// expression rather than a name, is an error whose column counts in the whole list.
    pub fn compile(list: &str) -> Result<Projection, FilterError> {
        let mut fields = Vec::new();
        let mut column = 1;
        for part in list.split(',') {
            let name = part.trim();
            let lead = part.chars().take_while(|c| c.is_whitespace()).count();
            if !name.is_empty() {
                let field = one(name).map_err(|e| FilterError {
                    column: column + lead + e.column - 1,
                    message: e.message,
                })?;
                fields.push((name.to_string(), field));
            }
            column += part.chars().count() + 1;
        }
        Projection::of(fields)
    }

    /// One field per name, as tshark's `-e` takes them: an error's column counts in its name.
    pub fn from_names(names: &[String]) -> Result<Projection, (usize, FilterError)> {
        let mut fields = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let name = n.trim();
            fields.push((name.to_string(), one(name).map_err(|e| (i, e))?));
        }
        Projection::of(fields).map_err(|e| (0, e))
    }

    fn of(fields: Vec<(String, FieldRef)>) -> Result<Projection, FilterError> {
        if fields.is_empty() {
            return Err(FilterError::new(1, "no field named"));
        }
        let renders = fields
            .iter()
            .map(|(name, _)| find(name).map(|a| a.render).unwrap_or_default())
            .collect();
        Ok(Projection { fields, renders })
    }

    /// How `-T fields` writes each field, in order.
    pub fn renders(&self) -> &[Render] {
        &self.renders
    }

    /// The names as given, in order.
    pub fn names(&self) -> Vec<&str> {
        self.fields.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Each field's name as given and its values in a message (none when the message has
    /// no such field).
    pub fn values<'p>(&'p self, f: &dyn Fields) -> Vec<(&'p str, Vec<FieldValue>)> {
        self.fields
            .iter()
            .map(|(name, field)| (name.as_str(), field.values(f)))
            .collect()
    }

    /// Whether a built-in field is printed (`response_frame` needs requests held for their
    /// answer).
    pub fn uses(&self, b: super::Builtin) -> bool {
        self.fields.iter().any(|(_, f)| f.reads(b))
    }

    /// Whether a field looks below the levels a summary keeps (a schema path, topics or
    /// partitions), so that messages must be decoded whole.
    pub fn needs_tree(&self) -> bool {
        self.fields.iter().any(|(_, f)| f.needs_tree())
    }
}

/// One field name: parsed as a filter, which must be the bare field.
fn one(name: &str) -> Result<FieldRef, FilterError> {
    match parse(name)? {
        Expr::Test { field, cmp: None } => Ok(resolve(&field)?.0),
        _ => Err(FilterError::new(1, "a field name, not an expression")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_builtins_and_paths_and_rejects_the_rest() {
        let p = Projection::compile("corr, topic,Metadata.Topics[*].Name").unwrap();
        let names: Vec<&str> = p.fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["corr", "topic", "Metadata.Topics[*].Name"]);
        assert!(p.needs_tree());
        assert!(!Projection::compile("api,corr").unwrap().needs_tree());
        let e = Projection::compile("corr, laytency").unwrap_err();
        assert_eq!(e.column, 7, "{e:?}");
        assert!(e.message.contains("did you mean `latency`"), "{e:?}");
        let e = Projection::compile("corr == 1").unwrap_err();
        assert!(e.message.contains("not an expression"), "{e:?}");
        assert!(Projection::compile(" , ").is_err());
    }
}
