//! Problems in words: the paths, and the details the decoder records as data.

use crate::kafka::problem::{Detail, HeaderOnly, Path, Step, Tried};
use crate::kafka::ReadError;
use crate::kafka::{DecodeError, Diagnosis};
use std::fmt;

/// `Topics[0].Partitions[2].ErrorCode`: field names joined by dots, element indices in
/// brackets.
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for s in self.steps() {
            match s {
                Step::Field(id) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(id.name())?;
                }
                Step::SizePrefix => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str("size")?;
                }
                Step::Index(i) => write!(f, "[{i}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

/// `Topics[0].Name at 0x0012: string length 9 exceeds the 4 bytes left`.
impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "at 0x{:04x}: {}", self.offset, self.detail)
        } else {
            write!(f, "{} at 0x{:04x}: {}", self.path, self.offset, self.detail)
        }
    }
}

/// `Topics[0]: presence byte 3 is neither 1 nor -1`.
impl fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{}", self.detail)
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at 0x{:04x}: {}", self.offset, self.detail)
    }
}

impl fmt::Display for HeaderOnly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderOnly::NoRequest { correlation_id } => write!(
                f,
                "no request with correlation_id {correlation_id} came before this response"
            ),
            HeaderOnly::NotARequest { correlation_id } => write!(
                f,
                "not a request kdissect knows, and no request with correlation_id \
                 {correlation_id} came before it"
            ),
            HeaderOnly::TooShort => f.write_str("frame too short for a request or response header"),
            HeaderOnly::LostInGap => f.write_str("the rest of this frame was lost in a gap"),
            HeaderOnly::StreamEnded => {
                f.write_str("the stream ended before the rest of this frame")
            }
            HeaderOnly::NoGuess => f.write_str(
                "no request with this correlation_id was captured, and no known API and version \
                 decodes this body cleanly",
            ),
        }
    }
}

impl fmt::Display for Detail {
    // Long: the words of every detail, one arm each, a flat table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::kafka::message::api_display_name;
        match self {
            Detail::Short { what, need, left } => {
                write!(f, "{what} needs {need} bytes, only {left} left")
            }
            Detail::OutOfRange => f.write_str("out of range"),
            Detail::UvarintPastEnd => f.write_str("unsigned varint runs past the end"),
            Detail::UvarintTooLong => f.write_str("unsigned varint longer than 5 bytes"),
            Detail::VarintTooLong { what } => write!(f, "{what}: varint longer than 10 bytes"),
            Detail::BadLength { what, n, left } => {
                if *n < 0 {
                    write!(f, "{what} length {n} is negative")
                } else {
                    write!(f, "{what} length {n} exceeds the {left} bytes left")
                }
            }
            Detail::LengthMisfit { what, n, left } => {
                write!(f, "{what} length {n} does not fit the {left} bytes left")
            }
            Detail::CountMisfit { what, n, left } => {
                write!(f, "{what} count {n} does not fit the {left} bytes left")
            }
            Detail::RecordLeavesUnread { n, unread } => {
                write!(f, "record length {n} leaves {unread} bytes unread")
            }
            Detail::NotFixedSize { ty } => write!(f, "{ty} is not a fixed-size type"),
            Detail::TaggedFieldsCount(inner) => write!(f, "tagged_fields count: {inner}"),
            Detail::TaggedCountMisfit { count, left } => {
                write!(
                    f,
                    "{count} tagged fields cannot fit in the {left} bytes left"
                )
            }
            Detail::TagOrder { tag } => write!(f, "tag {tag} is not in ascending order"),
            Detail::TaggedSizeMisfit { tag, size, left } => {
                write!(
                    f,
                    "tagged field {tag} claims {size} bytes, only {left} left"
                )
            }
            Detail::TaggedExtra { field, extra } => write!(
                f,
                "tagged field {} has {extra} bytes more than its value",
                field.name()
            ),
            Detail::NoStructSpec => f.write_str("struct without a field spec"),
            Detail::NoStructArraySpec => f.write_str("struct array without a field spec"),
            Detail::NullNotNullable { what } => write!(
                f,
                "null {what} in a field that is not nullable in this version"
            ),
            Detail::BadPresence { byte } => {
                write!(f, "presence byte {byte} is neither 1 nor -1")
            }
            Detail::MissingPresence { sname } => write!(
                f,
                "{sname}: the int8 presence byte that Kafka writes before a nullable struct \
                 (1 present, -1 null) is missing; without it the frame decodes cleanly, so \
                 it was written by an encoder that leaves the presence byte out"
            ),
            Detail::Interop {
                api_key,
                version,
                response,
                last_legacy,
            } => {
                let api = if *api_key == 0 { "Produce" } else { "Fetch" };
                write!(
                    f,
                    "interop: record batch v2 (magic 2) in a {api} v{version} {}: {api} \
                     v0-{last_legacy} carries only message sets (magic 0 and 1), so a client \
                     of this version cannot read it{}",
                    if *response { "response" } else { "request" },
                    if *response {
                        " (the broker did not down-convert)"
                    } else {
                        ""
                    }
                )
            }
            Detail::SizePrefixShort { have } => write!(
                f,
                "a frame needs a 4-byte size prefix, only {have} bytes present"
            ),
            Detail::SizePrefixNegative { size } => write!(f, "size prefix {size} is negative"),
            Detail::FrameTruncated { size, present } => write!(
                f,
                "size prefix says {size} bytes follow, only {present} are present: the frame \
                 is truncated"
            ),
            Detail::TrailingBody { n } => write!(
                f,
                "{n} bytes after the end of the message body (wrong version, or a field this \
                 version does not have)"
            ),
            Detail::UnknownApi { key } => write!(
                f,
                "API key {key} ({}) is not known to kdissect: body shown raw",
                api_display_name(*key)
            ),
            Detail::UnknownVersion {
                name,
                min,
                max,
                version,
                tried,
            } => {
                write!(f, "{name} has versions {min}-{max}, not {version}")?;
                match tried {
                    Tried::Nothing => {}
                    Tried::Stopped { newest, error } => {
                        write!(f, " (read with the v{newest} layout: {error})")?
                    }
                    Tried::LeftOver { newest, n } => write!(
                        f,
                        " (read with the v{newest} layout, {n} bytes are left over)"
                    )?,
                    Tried::DoesNotFit { newest } => {
                        write!(f, " (read with the v{newest} layout, it does not fit)")?
                    }
                }
                f.write_str(": body shown raw")
            }
            Detail::TooManyProblems { n } => {
                write!(f, "and {n} more problems in this message, not listed")
            }
            Detail::NoHeaderTable => f.write_str("kdissect has no table for this header version"),
            Detail::WrongVersionLayout { asked, name, fits } => write!(
                f,
                "the request asked for v{asked}, and the body does not decode as {name} \
                 v{asked}; it decodes cleanly as v{fits}: the broker answered in the v{fits} \
                 layout"
            ),
            Detail::HeaderOnly(h) => write!(f, "{h}"),
            Detail::DecompressionLimit { max } => write!(
                f,
                "decompressed data passes the {max} bytes the batches of one message may \
                 decompress to: the rest is not shown"
            ),
            Detail::NegativeBatchLength { len } => write!(f, "batch length {len} is negative"),
            Detail::BatchLengthShort { len, min, magic } => write!(
                f,
                "batch length {len} is shorter than the {min} bytes a magic-{magic} header takes"
            ),
            Detail::BadMagic { magic } => {
                write!(f, "record batch magic {magic} is not 0, 1 or 2")
            }
            Detail::CrcMismatch {
                castagnoli,
                stored,
                computed,
            } => write!(
                f,
                "{} 0x{stored:08x} does not match its bytes (0x{computed:08x})",
                if *castagnoli {
                    "batch CRC-32C"
                } else {
                    "message CRC-32"
                }
            ),
            Detail::DoesNotDecompress {
                codec,
                message_set,
                error,
            } => {
                let what = if *message_set { "message set" } else { "data" };
                write!(f, "{codec} {what} does not decompress: {error}")
            }
            Detail::Lz4NoEndMark => {
                f.write_str("lz4 frame ends without its end mark: the data was cut")
            }
            Detail::Lz4CutInChecksum => f.write_str("lz4 frame ends inside its content checksum"),
            Detail::Lz4Trailing { n } => write!(f, "{n} bytes after the end of the lz4 frame"),
            Detail::TrailingDecompressed { n } => write!(
                f,
                "{n} bytes after the last record in the decompressed data"
            ),
            Detail::RecordsCountMisfit { count, left } => write!(
                f,
                "records count {count} does not fit the {left} bytes of records"
            ),
            Detail::RecordsCountMismatch { count, held } => {
                write!(f, "the batch says {count} records, its bytes hold {held}")
            }
            Detail::NestedTooDeep => f.write_str("compressed messages nested too deep"),
            Detail::InRecord { part, path, inner } => {
                write!(f, "record {part}: ")?;
                if !path.is_empty() {
                    write!(f, "{path}: ")?;
                }
                write!(f, "{inner}")
            }
            Detail::EmbeddedTrailing { n } => {
                write!(f, "{n} bytes after the end of the embedded message")
            }
            Detail::Embedded { inner, detail } => {
                f.write_str("embedded: ")?;
                if !inner.is_empty() {
                    write!(f, "{inner}: ")?;
                }
                write!(f, "{detail}")
            }
            Detail::NotInTables { key, version } => write!(
                f,
                "{} v{version} is not in kdissect's tables",
                api_display_name(*key)
            ),
            Detail::NoVersion { name, version } => write!(f, "{name} has no version {version}"),
            Detail::MetadataFrameVersion { frame } => {
                write!(f, "metadata record frame version {frame}: Kafka writes 1")
            }
            Detail::MetadataTypeUnknown { ty } => {
                write!(f, "metadata record type {ty} is not in kdissect's tables")
            }
            Detail::NoTableFor { name } => write!(f, "kdissect has no table for {name}"),
        }
    }
}
