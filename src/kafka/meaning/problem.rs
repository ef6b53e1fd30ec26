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

use crate::kafka::spec::schema::FieldId;

/// One step of a path into a message body: a field of the spec tables, or an element index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Field(FieldId),
    Index(u32),
    /// The frame's size prefix (not a field of any table).
    SizePrefix,
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

/// What exactly is wrong, as data: the numbers and names a problem's words are made of. The
/// words are written when it is printed (src/render/problem.rs).
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    // Reading primitives.
    /// `what` needs `need` bytes, fewer are left.
    Short {
        what: &'static str,
        need: usize,
        left: usize,
    },
    OutOfRange,
    UvarintPastEnd,
    UvarintTooLong,
    VarintTooLong {
        what: &'static str,
    },
    /// A length that is negative or longer than the bytes left.
    BadLength {
        what: &'static str,
        n: i64,
        left: usize,
    },
    /// A length (`what` length) or count (`what` count) that does not fit the bytes left.
    LengthMisfit {
        what: &'static str,
        n: i64,
        left: usize,
    },
    CountMisfit {
        what: &'static str,
        n: i64,
        left: usize,
    },
    RecordLeavesUnread {
        n: i64,
        unread: usize,
    },
    NotFixedSize {
        ty: String,
    },
    // Bodies.
    TaggedFieldsCount(Box<Detail>),
    TaggedCountMisfit {
        count: u32,
        left: usize,
    },
    TagOrder {
        tag: u32,
    },
    TaggedSizeMisfit {
        tag: u32,
        size: usize,
        left: usize,
    },
    TaggedExtra {
        field: FieldId,
        extra: usize,
    },
    NoStructSpec,
    NoStructArraySpec,
    NullNotNullable {
        what: &'static str,
    },
    BadPresence {
        byte: i8,
    },
    MissingPresence {
        sname: String,
    },
    /// Record batch v2 in a Produce or Fetch version that carries only message sets.
    Interop {
        api_key: i16,
        version: i16,
        response: bool,
        last_legacy: i16,
    },
    // Frames and versions.
    SizePrefixShort {
        have: usize,
    },
    SizePrefixNegative {
        size: i32,
    },
    FrameTruncated {
        size: i32,
        present: usize,
    },
    TrailingBody {
        n: usize,
    },
    UnknownApi {
        key: i16,
    },
    UnknownVersion {
        name: &'static str,
        min: i16,
        max: i16,
        version: i16,
        tried: Tried,
    },
    TooManyProblems {
        n: usize,
    },
    NoHeaderTable,
    WrongVersionLayout {
        asked: i16,
        name: &'static str,
        fits: i16,
    },
    /// Why a response was decoded no further than its header.
    HeaderOnly(HeaderOnly),
    // Record batches.
    DecompressionLimit {
        max: usize,
    },
    NegativeBatchLength {
        len: i32,
    },
    BatchLengthShort {
        len: i32,
        min: usize,
        magic: i8,
    },
    BadMagic {
        magic: i8,
    },
    CrcMismatch {
        castagnoli: bool,
        stored: u32,
        computed: u32,
    },
    DoesNotDecompress {
        codec: &'static str,
        message_set: bool,
        error: String,
    },
    Lz4NoEndMark,
    Lz4CutInChecksum,
    Lz4Trailing {
        n: usize,
    },
    TrailingDecompressed {
        n: usize,
    },
    RecordsCountMisfit {
        count: i64,
        left: usize,
    },
    RecordsCountMismatch {
        count: i64,
        held: usize,
    },
    NestedTooDeep,
    /// A problem in a record's key or value read with a layout, at `path` inside it.
    InRecord {
        part: &'static str,
        path: Path,
        inner: Box<Detail>,
    },
    // Embedded messages.
    EmbeddedTrailing {
        n: usize,
    },
    /// Decoding of an embedded message stopped, at `inner` inside it.
    Embedded {
        inner: Path,
        detail: Box<Detail>,
    },
    NotInTables {
        key: i16,
        version: i16,
    },
    NoVersion {
        name: String,
        version: i16,
    },
    MetadataFrameVersion {
        frame: u32,
    },
    MetadataTypeUnknown {
        ty: u32,
    },
    NoTableFor {
        name: String,
    },
}

/// A version outside the tables read with the newest layout, and how that went.
#[derive(Debug, Clone, PartialEq)]
pub enum Tried {
    /// No layout was tried.
    Nothing,
    /// Decoding stopped.
    Stopped {
        newest: i16,
        error: Box<DecodeError>,
    },
    LeftOver {
        newest: i16,
        n: usize,
    },
    DoesNotFit {
        newest: i16,
    },
}

/// Why a response shows only its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderOnly {
    /// No request with this correlation id came before it.
    NoRequest {
        correlation_id: i32,
    },
    /// Not a known request either, and no request with this correlation id came before it.
    NotARequest {
        correlation_id: i32,
    },
    /// Too short for a request or response header.
    TooShort,
    LostInGap,
    StreamEnded,
    /// No request captured, and no known API and version decodes the body cleanly.
    NoGuess,
}

/// What kind of stop: damage in the bytes, or an API or version kdissect has no table for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorKind {
    #[default]
    Malformed,
    UnknownApi,
    UnknownVersion,
    /// A response whose request is not in the input, so its API and version are unknown.
    Unpaired,
}

impl ErrorKind {
    /// The problem kind this stop is reported as.
    pub fn problem(self) -> ProblemKind {
        match self {
            ErrorKind::Malformed => ProblemKind::Malformed,
            ErrorKind::UnknownApi => ProblemKind::UnknownApi,
            ErrorKind::UnknownVersion => ProblemKind::UnknownVersion,
            ErrorKind::Unpaired => ProblemKind::Unpaired,
        }
    }

    /// The stop a read error of this problem kind is (damage, unless it says otherwise).
    pub fn of(kind: ProblemKind) -> ErrorKind {
        match kind {
            ProblemKind::UnknownApi => ErrorKind::UnknownApi,
            ProblemKind::UnknownVersion => ErrorKind::UnknownVersion,
            ProblemKind::Unpaired => ErrorKind::Unpaired,
            _ => ErrorKind::Malformed,
        }
    }
}

/// Why decoding stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    pub kind: ErrorKind,
    /// Offset in the frame where the offending item starts.
    pub offset: usize,
    /// The field being decoded: `Topics[0].Name`.
    pub path: Path,
    pub detail: Detail,
}

impl std::error::Error for DecodeError {}

/// A problem that did not stop decoding (a null where the schema forbids one, a tagged field
/// whose size disagrees with its content).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    pub kind: ProblemKind,
    pub offset: usize,
    /// The field it is about (empty for the frame, a batch, the message as a whole).
    pub path: Path,
    pub detail: Detail,
}
