//! What happened to the Kafka streams of a capture, counted once: the closing report, the
//! exit status and the statistics read the same counters.

use super::stream::{Notice, Record};
use crate::kafka::spec::schema::Direction;
use crate::tcp::EndKind;

/// Names of APIs not decoded, kept for the report: at most this many.
const UNDECODED_NAMES: usize = 16;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StreamHealth {
    pub messages: u64,
    /// Frames shown in part, the rest lost in a gap.
    pub partial: u64,
    pub malformed: u64,
    /// Messages of APIs or versions without tables: header shown, body raw.
    pub undecoded: u64,
    /// Their API names (the first few).
    pub undecoded_apis: Vec<String>,
    /// Responses whose request was not captured.
    pub unmatched_responses: u64,
    /// Responses timestamped before their request (clocks of merged captures, reordering).
    pub backwards: u64,
    /// Frames lost in gaps.
    pub gaps: u64,
    pub retransmissions: u64,
    /// Retransmitted bytes that differ from the first copy.
    pub conflicting_overlaps: u64,
    pub resyncs: u64,
    /// Kafka connections the capture began inside (a direction's start not captured),
    /// whether or not bytes had to be skipped to a frame boundary.
    pub midstream_pickups: u64,
    /// Bytes skipped while looking for frame boundaries.
    pub skipped_bytes: u64,
    /// Size prefixes that cannot start a frame.
    pub bad_sizes: u64,
    /// Frames their stream ended inside: the connection was reset or closed, or the capture
    /// ended (or stopped following it).
    pub ended_in_frame: u64,
    /// Those the capture is to blame for: it ended, or let go of the connection, inside the
    /// frame. A reset or a close inside a frame is what the traffic did, all of it captured.
    pub ended_by_capture: u64,
    /// Requests without a response in the capture.
    pub unanswered: u64,
    /// Requests no longer waited for (too many pending on a connection).
    pub pending_dropped: u64,
    /// Frames still arriving let go to keep within the memory budget of the Kafka layer.
    pub frames_dropped: u64,
}

impl StreamHealth {
    pub fn message(&mut self, rec: &Record<'_>) {
        self.messages += 1;
        let m = &rec.msg;
        if rec.partial {
            self.partial += 1;
        } else if m.is_malformed() {
            self.malformed += 1;
        } else if m.is_unknown_api() {
            self.undecoded += 1;
            let name = m.api_name();
            if self.undecoded_apis.len() < UNDECODED_NAMES
                && !self.undecoded_apis.iter().any(|n| *n == name)
            {
                self.undecoded_apis.push(name.into_owned());
            }
        }
        if m.direction == Direction::Response {
            match rec.latency_nanos() {
                None => self.unmatched_responses += 1,
                Some(l) if l < 0 => self.backwards += 1,
                Some(_) => {}
            }
        }
    }

    pub fn notice(&mut self, n: &Notice) {
        match n {
            Notice::LostInGap { .. } => self.gaps += 1,
            Notice::Retransmission { .. } => self.retransmissions += 1,
            Notice::ConflictingOverlap { .. } => self.conflicting_overlaps += 1,
            Notice::Resync { skipped, .. } => {
                self.resyncs += 1;
                self.skipped_bytes += *skipped as u64;
            }
            Notice::PickedUp { .. } => self.midstream_pickups += 1,
            Notice::BadSize { .. } => self.bad_sizes += 1,
            Notice::EndedInFrame { end, .. } => {
                self.ended_in_frame += 1;
                if matches!(end, EndKind::CaptureEnd | EndKind::Evicted) {
                    self.ended_by_capture += 1;
                }
            }
            Notice::Unanswered { .. } => self.unanswered += 1,
            Notice::PendingDropped { .. } => self.pending_dropped += 1,
            Notice::FrameDropped { .. } => self.frames_dropped += 1,
            // A capture's `BadSize` and `Resync` in one.
            Notice::InputSkipped { skipped, .. } => {
                self.bad_sizes += 1;
                self.resyncs += 1;
                self.skipped_bytes += *skipped;
            }
            Notice::Connection { .. } => {}
        }
    }

    /// Damage to the streams other than whole malformed messages: overlaps that disagree,
    /// frames the capture ended inside, size prefixes that cannot be frames, frames dropped
    /// for memory.
    pub fn other_damage(&self) -> u64 {
        self.conflicting_overlaps + self.ended_by_capture + self.bad_sizes + self.frames_dropped
    }

    /// Anything that could not be decoded as a whole message (counted in its own units:
    /// messages, frames, bytes): zero for a clean capture.
    pub fn damaged(&self) -> u64 {
        self.malformed + self.gaps + self.skipped_bytes + self.other_damage()
    }
}
