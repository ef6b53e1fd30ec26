//! The two words of the spec language every reader of the specs needs: version ranges and
//! field types. Kept free of the crate's other modules, because the code generator (codegen/,
//! which writes the spec tables of src/kafka/spec/tables/ and the walks of
//! src/kafka/walk/generated/walks/) reads the specs too and includes this file as it is.

/// An inclusive version range as written in the specs: `0+`, `3-5`, `7`, `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Versions {
    pub min: i16,
    /// `None` means "and every later version".
    pub max: Option<i16>,
    pub none: bool,
}

impl Versions {
    pub const NONE: Versions = Versions {
        min: 0,
        max: None,
        none: true,
    };

    /// `min+`: every version from `min` on.
    pub const fn from(min: i16) -> Versions {
        Versions {
            min,
            max: None,
            none: false,
        }
    }

    /// `min-max`, both included (`min` alone when they are equal).
    pub const fn between(min: i16, max: i16) -> Versions {
        Versions {
            min,
            max: Some(max),
            none: false,
        }
    }

    pub fn parse(s: &str) -> Result<Versions, String> {
        let s = s.trim();
        if s.is_empty() || s == "none" {
            return Ok(Versions::NONE);
        }
        let num = |t: &str| {
            t.trim()
                .parse::<i16>()
                .map_err(|_| format!("bad version range {s:?}"))
        };
        if let Some(min) = s.strip_suffix('+') {
            return Ok(Versions {
                min: num(min)?,
                max: None,
                none: false,
            });
        }
        if let Some((a, b)) = s.split_once('-') {
            return Ok(Versions {
                min: num(a)?,
                max: Some(num(b)?),
                none: false,
            });
        }
        let v = num(s)?;
        Ok(Versions {
            min: v,
            max: Some(v),
            none: false,
        })
    }

    pub fn contains(&self, v: i16) -> bool {
        !self.none && v >= self.min && self.max.is_none_or(|m| v <= m)
    }

    /// Highest version in the range, given the highest version the message has.
    pub fn highest(&self, valid_max: i16) -> i16 {
        self.max.unwrap_or(valid_max).min(valid_max)
    }
}

/// The primitive and composite types of the spec language. Held by the static spec tables,
/// so a struct's name and an array's element are `'static`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint16,
    Uint32,
    Float64,
    String,
    Bytes,
    Uuid,
    Records,
    /// A struct, by its type name (inline `fields` or a common struct).
    Struct(&'static str),
    Array(&'static FieldType),
}

impl FieldType {
    /// Bytes a fixed-size type takes; `None` for the others.
    pub fn fixed_width(&self) -> Option<usize> {
        Some(match self {
            FieldType::Bool | FieldType::Int8 => 1,
            FieldType::Int16 | FieldType::Uint16 => 2,
            FieldType::Int32 | FieldType::Uint32 => 4,
            FieldType::Int64 | FieldType::Float64 => 8,
            FieldType::Uuid => 16,
            _ => return None,
        })
    }

    /// The type written `s`. The tables are generated (codegen/), so this runs only where
    /// specs are read as JSON: the generator and tests. A struct's name and
    /// an array of structs are leaked, to be `'static` as the tables' are.
    pub fn parse(s: &str) -> FieldType {
        if let Some(inner) = s.strip_prefix("[]") {
            let inner = FieldType::parse(inner);
            return FieldType::Array(match inner {
                FieldType::Struct(_) | FieldType::Array(_) => Box::leak(Box::new(inner)),
                primitive => primitive.as_static(),
            });
        }
        match s {
            "bool" => FieldType::Bool,
            "int8" => FieldType::Int8,
            "int16" => FieldType::Int16,
            "int32" => FieldType::Int32,
            "int64" => FieldType::Int64,
            "uint16" => FieldType::Uint16,
            "uint32" => FieldType::Uint32,
            "float64" => FieldType::Float64,
            "string" => FieldType::String,
            "bytes" => FieldType::Bytes,
            "uuid" => FieldType::Uuid,
            "records" => FieldType::Records,
            other => FieldType::Struct(Box::leak(other.to_string().into_boxed_str())),
        }
    }

    /// A primitive type as a `'static` reference (an array's element); a struct or array as
    /// it is leaked.
    fn as_static(self) -> &'static FieldType {
        match self {
            FieldType::Bool => &FieldType::Bool,
            FieldType::Int8 => &FieldType::Int8,
            FieldType::Int16 => &FieldType::Int16,
            FieldType::Int32 => &FieldType::Int32,
            FieldType::Int64 => &FieldType::Int64,
            FieldType::Uint16 => &FieldType::Uint16,
            FieldType::Uint32 => &FieldType::Uint32,
            FieldType::Float64 => &FieldType::Float64,
            FieldType::String => &FieldType::String,
            FieldType::Bytes => &FieldType::Bytes,
            FieldType::Uuid => &FieldType::Uuid,
            FieldType::Records => &FieldType::Records,
            other => Box::leak(Box::new(other)),
        }
    }

    /// The name used in the tree: `int32`, `[]MetadataRequestTopic`, `Cursor`.
    pub fn display(&self) -> std::string::String {
        match self {
            FieldType::Bool => "bool".into(),
            FieldType::Int8 => "int8".into(),
            FieldType::Int16 => "int16".into(),
            FieldType::Int32 => "int32".into(),
            FieldType::Int64 => "int64".into(),
            FieldType::Uint16 => "uint16".into(),
            FieldType::Uint32 => "uint32".into(),
            FieldType::Float64 => "float64".into(),
            FieldType::String => "string".into(),
            FieldType::Bytes => "bytes".into(),
            FieldType::Uuid => "uuid".into(),
            FieldType::Records => "records".into(),
            FieldType::Struct(n) => n.to_string(),
            FieldType::Array(inner) => format!("[]{}", inner.display()),
        }
    }
}
