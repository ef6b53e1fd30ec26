//! What kind of problem a diagnosis reports, as Wireshark's expert info does: a stable code
//! for JSON and filters, beside the message that explains it.

/// The kinds of problem kdissect reports in a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// The frame is shorter than its size prefix says.
    Truncated,
    /// Bytes after the end of the body (wrong version, or a field the version lacks).
    TrailingBytes,
    /// A length or count that is negative or larger than the bytes left.
    LengthOutOfRange,
    /// An API key kdissect has no table for.
    UnknownApi,
    /// A version outside the tables, whose body did not fit the newest layout.
    UnknownVersion,
    /// A newer version read with the newest known layout (a notice: every byte fits).
    AssumedVersion,
    /// The body does not decode as its version but does as another one.
    WrongVersionLayout,
    /// A null where the schema does not allow one in this version.
    NullNotNullable,
    /// A nullable struct's presence byte other than 1 or -1.
    BadPresence,
    /// A nullable struct written without its presence byte.
    MissingPresence,
    /// Tagged fields out of order, or sized unlike their content.
    TaggedFields,
    /// A record batch or legacy message whose checksum does not match its bytes.
    CrcMismatch,
    /// Compressed data that does not decompress, or whose framing is damaged.
    Decompression,
    /// Decompressed data cut at the message's budget.
    DecompressionLimit,
    /// A record batch or message set that does not hold together: bad magic, lengths too
    /// short, a records count the bytes do not hold.
    BatchFormat,
    /// Bytes a client of this version cannot read (record batch v2 in an old Produce/Fetch).
    Interop,
    /// A response whose request is not in the input: its API and version are unknown.
    Unpaired,
    /// More problems in the message than are listed.
    TooManyProblems,
    /// Anything else that stopped or spoiled decoding.
    Malformed,
}

impl ProblemKind {
    /// Every kind, for documentation and tests.
    pub const ALL: [ProblemKind; 19] = [
        ProblemKind::Truncated,
        ProblemKind::TrailingBytes,
        ProblemKind::LengthOutOfRange,
        ProblemKind::UnknownApi,
        ProblemKind::UnknownVersion,
        ProblemKind::AssumedVersion,
        ProblemKind::WrongVersionLayout,
        ProblemKind::NullNotNullable,
        ProblemKind::BadPresence,
        ProblemKind::MissingPresence,
        ProblemKind::TaggedFields,
        ProblemKind::CrcMismatch,
        ProblemKind::Decompression,
        ProblemKind::DecompressionLimit,
        ProblemKind::BatchFormat,
        ProblemKind::Interop,
        ProblemKind::Unpaired,
        ProblemKind::TooManyProblems,
        ProblemKind::Malformed,
    ];

    /// The stable code JSON carries (`"kind": "crc_mismatch"`).
    pub fn code(self) -> &'static str {
        match self {
            ProblemKind::Truncated => "truncated",
            ProblemKind::TrailingBytes => "trailing_bytes",
            ProblemKind::LengthOutOfRange => "length_out_of_range",
            ProblemKind::UnknownApi => "unknown_api",
            ProblemKind::UnknownVersion => "unknown_version",
            ProblemKind::AssumedVersion => "assumed_version",
            ProblemKind::WrongVersionLayout => "wrong_version_layout",
            ProblemKind::NullNotNullable => "null_not_nullable",
            ProblemKind::BadPresence => "bad_presence",
            ProblemKind::MissingPresence => "missing_presence",
            ProblemKind::TaggedFields => "tagged_fields",
            ProblemKind::CrcMismatch => "crc_mismatch",
            ProblemKind::Decompression => "decompression",
            ProblemKind::DecompressionLimit => "decompression_limit",
            ProblemKind::BatchFormat => "batch_format",
            ProblemKind::Interop => "interop",
            ProblemKind::Unpaired => "unpaired",
            ProblemKind::TooManyProblems => "too_many_problems",
            ProblemKind::Malformed => "malformed",
        }
    }
}

use super::schema::FieldId;

/// One step of a path into a message body: a field of the spec tables, or an element index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Field(FieldId),
    Index(u32),
}

/// Where in a body something was found: the fields and element indices from the body down
/// (`Topics[0].ErrorCode` as three steps). Names are looked up only when it is printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(pub Vec<Step>);

impl Path {
    pub fn steps(&self) -> &[Step] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many of the steps are fields (element indices left out).
    pub fn fields(&self) -> usize {
        self.0
            .iter()
            .filter(|s| matches!(s, Step::Field(_)))
            .count()
    }

    /// A path through `p` and on to a field below it.
    pub fn passes_through(&self, p: &Path) -> bool {
        self.0.get(..p.0.len()) == Some(&p.0[..])
            && matches!(self.0.get(p.0.len()), Some(Step::Field(_)))
    }

    /// The path without its first `n` steps (inside a message embedded at depth `n`).
    pub fn below(&self, n: usize) -> Path {
        Path(self.0.get(n..).unwrap_or(&self.0).to_vec())
    }
}

/// A non-zero error code met in a body, where it was met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorEntry {
    pub path: Path,
    pub code: i16,
}
