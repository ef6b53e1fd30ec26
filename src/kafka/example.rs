//! `kdissect example`: the smallest legal instance of any message, built from its spec the way
//! the specification pages build theirs: numeric fields zero, strings and bytes empty, every
//! array with one sample element, nullable structs present, no tagged fields, and a records
//! field holding one empty 61-byte RecordBatch v2 (or, in the versions that predate batches,
//! Produce v0-2 and Fetch v0-3, one empty 26-byte legacy message).

use crate::kafka::spec::schema::{Direction, FieldSpec, FieldType, MessageSpec};
use crate::kafka::walk::message::{request_header_version, response_header_version};

struct Enc {
    out: Vec<u8>,
    version: i16,
    flexible: bool,
    /// Records are legacy message sets in this version.
    message_sets: bool,
}

impl Enc {
    fn uvarint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    /// A length prefix: compact (n+1) in flexible versions, else int16 or int32.
    fn len_prefix(&mut self, n: usize, int16: bool) {
        if self.flexible {
            self.uvarint(n as u32 + 1);
        } else if int16 {
            self.out.extend((n as i16).to_be_bytes());
        } else {
            self.out.extend((n as i32).to_be_bytes());
        }
    }

    fn fields(&mut self, fields: &[FieldSpec]) {
        for f in fields {
            if !f.versions.contains(self.version)
                || (self.flexible && f.tagged_versions.contains(self.version))
            {
                continue;
            }
            self.field(f);
        }
        if self.flexible {
            self.uvarint(0);
        }
    }

    fn field(&mut self, f: &FieldSpec) {
        let nullable = f.nullable_versions.contains(self.version);
        self.value(&f.ty, f, nullable);
    }

    fn value(&mut self, ty: &FieldType, f: &FieldSpec, nullable: bool) {
        match ty {
            FieldType::Bool | FieldType::Int8 => self.out.push(0),
            FieldType::Int16 | FieldType::Uint16 => self.out.extend([0; 2]),
            FieldType::Int32 | FieldType::Uint32 => self.out.extend([0; 4]),
            FieldType::Int64 | FieldType::Float64 => self.out.extend([0; 8]),
            FieldType::Uuid => self.out.extend([0; 16]),
            FieldType::String => self.len_prefix(0, true),
            FieldType::Bytes => self.len_prefix(0, false),
            FieldType::Records => {
                let batch = if self.message_sets {
                    empty_message()
                } else {
                    empty_batch()
                };
                self.len_prefix(batch.len(), false);
                self.out.extend(batch);
            }
            FieldType::Struct(_) => {
                if nullable {
                    self.out.push(1);
                }
                self.fields(f.fields);
            }
            FieldType::Array(inner) => {
                self.len_prefix(1, false);
                match inner {
                    FieldType::Struct(_) => self.fields(f.fields),
                    other => self.value(other, f, false),
                }
            }
        }
    }
}

/// One empty RecordBatch v2 (61 bytes): all fields zero, magic 2, no records, CRC computed.
pub fn empty_batch() -> Vec<u8> {
    let mut b = Vec::with_capacity(61);
    b.extend(0i64.to_be_bytes()); // baseOffset
    b.extend(49i32.to_be_bytes()); // batchLength: the bytes after this field
    b.extend(0i32.to_be_bytes()); // partitionLeaderEpoch
    b.push(2); // magic
    b.extend([0; 4]); // crc, filled below
    let crc_from = b.len();
    b.extend(0i16.to_be_bytes()); // attributes
    b.extend(0i32.to_be_bytes()); // lastOffsetDelta
    b.extend(0i64.to_be_bytes()); // baseTimestamp
    b.extend(0i64.to_be_bytes()); // maxTimestamp
    b.extend(0i64.to_be_bytes()); // producerId
    b.extend(0i16.to_be_bytes()); // producerEpoch
    b.extend(0i32.to_be_bytes()); // baseSequence
    b.extend(0i32.to_be_bytes()); // recordsCount
    let crc = crc32c::crc32c(b.get(crc_from..).unwrap_or_default());
    if let Some(slot) = b.get_mut(crc_from - 4..crc_from) {
        slot.copy_from_slice(&crc.to_be_bytes());
    }
    b
}

/// One empty legacy message v0 (26 bytes): offset 0, null key, empty value, CRC computed.
pub fn empty_message() -> Vec<u8> {
    let mut m = Vec::with_capacity(26);
    m.extend(0i64.to_be_bytes()); // offset
    m.extend(14i32.to_be_bytes()); // messageSize: the bytes after this field
    m.extend([0; 4]); // crc, filled below
    m.push(0); // magic
    m.push(0); // attributes
    m.extend((-1i32).to_be_bytes()); // key: null
    m.extend(0i32.to_be_bytes()); // value: empty
    let crc = crc32fast::hash(m.get(16..).unwrap_or_default());
    if let Some(slot) = m.get_mut(12..16) {
        slot.copy_from_slice(&crc.to_be_bytes());
    }
    m
}

/// The body of the smallest instance of `spec` at `version` (no size prefix, no header).
pub fn body(spec: &MessageSpec, version: i16) -> Vec<u8> {
    let mut e = Enc {
        out: Vec::new(),
        version,
        flexible: spec.is_flexible(version),
        message_sets: crate::kafka::records::carries_message_sets(
            spec.api_key,
            spec.direction,
            version,
        ),
    };
    e.fields(spec.fields);
    e.out
}

/// The whole frame: size prefix, header (correlation id 0, empty client_id), body.
pub fn frame(spec: &MessageSpec, version: i16) -> Vec<u8> {
    let mut f = vec![0u8; 4];
    match spec.direction {
        Direction::Request => {
            let hv = request_header_version(spec.api_key, version);
            f.extend(spec.api_key.to_be_bytes());
            f.extend(version.to_be_bytes());
            f.extend(0i32.to_be_bytes());
            if hv >= 1 {
                f.extend(0i16.to_be_bytes());
            }
            if hv >= 2 {
                f.push(0);
            }
        }
        Direction::Response => {
            f.extend(0i32.to_be_bytes());
            if response_header_version(spec.api_key, version) >= 1 {
                f.push(0);
            }
        }
    }
    f.extend(body(spec, version));
    let n = (f.len() - 4) as i32;
    if let Some(slot) = f.get_mut(0..4) {
        slot.copy_from_slice(&n.to_be_bytes());
    }
    f
}
