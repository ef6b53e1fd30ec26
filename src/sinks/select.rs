//! The exchange filter: which exchanges are shown, with the requests held until their
//! answer decides.

use crate::flags::Choice;
use kdissect::filter::{Builtin, ExchangeFields, FieldPath, FieldValue, Fields, RecordFields};
use kdissect::kafka::stream::{Notice, Record, RequestInfo};
use kdissect::kafka::{Direction, Message};
use kdissect::tcp::EndKind;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::net::SocketAddr;

/// Memory of the requests held for the exchange filters, their frames and decoded trees
/// together (`Held::cost`): past it the oldest held request is judged on its own. A small
/// request's tree costs some 80 times its bytes, so counting bytes alone would let 16 MiB of
/// requests take over a gigabyte.
const HELD_MEMORY: usize = 64 * 1024 * 1024;

/// What one node of a decoded tree costs, about (`--max-nodes` gives the same figure).
const NODE_COST: usize = 250;

/// How a record passed on belongs to what `-c` counts, and what only its exchange knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Part {
    /// For a request held for its answer: the frame of the response.
    pub(crate) response_frame: Option<u64>,
    /// The record ends a unit that `-c` counts: an exchange under an exchange filter (its
    /// request does not), every message otherwise.
    pub(crate) completes: bool,
    /// The oldest request the filter still holds once this record is passed on: a line dated
    /// after it waits for it, so that what is shown stays in frame order.
    pub(crate) held_from: Option<u64>,
}

/// Which exchanges to print, as the flags chose them ([`Choice`]), and the time of the
/// input's first packet that `time_relative` is measured from.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    choice: Choice,
    /// Time of the input's first packet, for `time_relative`.
    pub(crate) origin: Option<i64>,
}

impl Selection {
    pub(crate) fn new(choice: Choice) -> Selection {
        Selection {
            choice,
            origin: None,
        }
    }

    /// Whether `-c` counts exchanges: an exchange filter is given, without `--messages`.
    fn counts_exchanges(&self) -> bool {
        self.choice.filtered() && !self.choice.messages
    }

    /// Whether requests are held for their answer.
    pub(crate) fn active(&self) -> bool {
        self.choice.filtered() || self.choice.hold
    }

    /// Notices are shown only when no condition but the stream is given.
    pub(crate) fn shows_notice(&self, stream: Option<u32>) -> bool {
        self.choice.only_stream && self.choice.stream.is_none_or(|s| stream == Some(s))
    }

    /// Whether statistics limited to the selection count a notice: an unanswered request
    /// is judged on what is known of it, other notices go with their stream.
    pub(crate) fn counts_notice(&self, n: &Notice) -> bool {
        match n {
            Notice::Unanswered {
                stream, request, ..
            } => self.matches_request(*stream, request),
            other => self.shows_notice(super::notice_stream(other)),
        }
    }

    /// For a request known only by its pairing information (unanswered at the end).
    fn matches_request(&self, stream: u32, r: &RequestInfo) -> bool {
        let f = PairingFields {
            stream,
            request: r,
            origin: self.origin,
        };
        self.choice.flags.as_ref().is_none_or(|x| x.matches(&f))
            && self.choice.display.as_ref().is_none_or(|x| x.matches(&f))
    }

    /// Whether an exchange matches (either half may be missing): the flags judge both halves
    /// as one, `-Y` either half.
    fn matches(&self, req: Option<&Record<'_>>, resp: Option<&Record<'_>>) -> bool {
        let rf = resp.map(|r| r.frame);
        let q = req.map(|r| self.fields(r).with_response_frame(rf));
        let p = resp.map(|r| self.fields(r));
        let (q, p) = (q.as_ref(), p.as_ref());
        let flags = || {
            let both =
                ExchangeFields::new(q.map(|f| f as &dyn Fields), p.map(|f| f as &dyn Fields));
            self.choice.flags.as_ref().is_none_or(|x| x.matches(&both))
        };
        let display = || {
            self.choice
                .display
                .as_ref()
                .is_none_or(|x| q.is_some_and(|f| x.matches(f)) || p.is_some_and(|f| x.matches(f)))
        };
        flags() && display()
    }

    /// Whether one message matches on its own (`--messages`): the flags and `-Y` both judge
    /// it alone.
    fn matches_alone(&self, rec: &Record<'_>, response_frame: Option<u64>) -> bool {
        let f = self.fields(rec).with_response_frame(response_frame);
        self.choice.filters().all(|x| x.matches(&f))
    }

    fn fields<'r>(&self, rec: &'r Record<'r>) -> RecordFields<'r> {
        RecordFields::new(rec).with_origin(self.origin)
    }

    /// A message with no other half here (a request let go, a response without its request):
    /// judged as an exchange of one.
    fn matches_lone(&self, rec: &Record<'_>) -> bool {
        if self.choice.messages {
            return self.matches_alone(rec, None);
        }
        match rec.msg.direction {
            Direction::Request => self.matches(Some(rec), None),
            Direction::Response => self.matches(None, Some(rec)),
        }
    }
}

/// What is known of a request that got no answer: its pairing information and stream. Other
/// fields have no values, so tests of them do not hold.
struct PairingFields<'a> {
    stream: u32,
    request: &'a RequestInfo,
    origin: Option<i64>,
}

impl Fields for PairingFields<'_> {
    fn builtin(&self, field: Builtin) -> Vec<FieldValue> {
        let r = self.request;
        match field {
            Builtin::Api => vec![FieldValue::Int(i64::from(r.api_key))],
            Builtin::Version => vec![FieldValue::Int(i64::from(r.api_version))],
            Builtin::Corr => vec![FieldValue::Int(i64::from(r.correlation_id))],
            Builtin::Request => vec![FieldValue::Bool(true)],
            Builtin::Response => vec![FieldValue::Bool(false)],
            Builtin::Stream => vec![FieldValue::Int(i64::from(self.stream))],
            Builtin::Frame => vec![FieldValue::Int(r.frame as i64)],
            Builtin::Time => vec![FieldValue::Time(r.ts_nanos)],
            Builtin::TimeRelative => self
                .origin
                .map(|o| FieldValue::Duration(r.ts_nanos - o))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }
    fn path(&self, _: &FieldPath) -> Vec<FieldValue> {
        Vec::new()
    }
}

/// A request kept until its exchange is complete: the pipeline lends its records, so a held
/// one is copied once, and given back as a record when its answer comes.
pub(crate) struct Held {
    stream: u32,
    frame: u64,
    first_frame: u64,
    last_frame: u64,
    ts_nanos: i64,
    src: SocketAddr,
    dst: SocketAddr,
    msg: Message,
    bytes: Vec<u8>,
    request: Option<RequestInfo>,
    assumed: bool,
    partial: bool,
    ended: Option<EndKind>,
    tls: bool,
    input_offset: Option<u64>,
    /// Memory it takes, as `HELD_MEMORY` counts it: frame bytes and tree nodes.
    pub(crate) cost: usize,
}

impl Held {
    /// What holding the record would cost: its frame bytes and its tree's nodes.
    pub(crate) fn cost_of(r: &Record<'_>) -> usize {
        let mut nodes = 0usize;
        r.msg.root().walk(&mut |_, _| nodes += 1);
        r.bytes.len() + nodes.saturating_mul(NODE_COST)
    }

    pub(crate) fn of(r: &Record<'_>, cost: usize) -> Held {
        Held {
            cost,
            stream: r.stream,
            frame: r.frame,
            first_frame: r.first_frame,
            last_frame: r.last_frame,
            ts_nanos: r.ts_nanos,
            src: r.src,
            dst: r.dst,
            msg: r.msg.clone(),
            bytes: r.bytes.to_vec(),
            request: r.request,
            assumed: r.assumed,
            partial: r.partial,
            ended: r.ended,
            tls: r.tls,
            input_offset: r.input_offset,
        }
    }

    /// The record again, its message moved rather than copied.
    pub(crate) fn with_record<T>(self, f: impl FnOnce(&Record<'_>) -> T) -> T {
        let Held { msg, bytes, .. } = self;
        f(&Record {
            stream: self.stream,
            frame: self.frame,
            first_frame: self.first_frame,
            last_frame: self.last_frame,
            ts_nanos: self.ts_nanos,
            src: self.src,
            dst: self.dst,
            msg,
            bytes: &bytes,
            request: self.request,
            assumed: self.assumed,
            partial: self.partial,
            ended: self.ended,
            tls: self.tls,
            input_offset: self.input_offset,
        })
    }
}

/// The filter over exchanges: passes every message through when nothing is selected,
/// otherwise holds requests until their answer and passes both halves of the exchanges that
/// match.
#[derive(Default)]
pub(crate) struct Exchanges {
    pub(crate) selection: Selection,
    /// Requests waiting for their response, by (stream, correlation id).
    waiting: HashMap<(u32, i32), Held>,
    /// The order they came in; keys already answered are skipped when met.
    waiting_order: VecDeque<(u32, i32)>,
    /// Memory held in `waiting` (`Held::cost`): past `HELD_MEMORY` the oldest is let go.
    waiting_cost: usize,
    /// The frames of the requests in `waiting`, oldest first: lines dated after the oldest
    /// wait for it (`Part::held_from`).
    held_frames: BTreeSet<(u64, (u32, i32))>,
    /// The same requests by stream, to let go of a connection's when it ends.
    held_streams: BTreeSet<(u32, i32)>,
}

impl Exchanges {
    pub(crate) fn new(selection: Selection) -> Exchanges {
        Exchanges {
            selection,
            ..Exchanges::default()
        }
    }

    /// The frame of the oldest request held for its answer.
    pub(crate) fn oldest_held(&self) -> Option<u64> {
        self.held_frames.first().map(|(f, _)| *f)
    }

    /// A record that is a unit of its own.
    fn whole(&self) -> Part {
        Part {
            response_frame: None,
            completes: true,
            held_from: self.oldest_held(),
        }
    }

    /// Takes a message; `show` gets each record to be shown, in order.
    pub(crate) fn message(&mut self, rec: &Record<'_>, show: &mut dyn FnMut(&Record<'_>, Part)) {
        if !self.selection.active() {
            return show(rec, self.whole());
        }
        match (rec.msg.direction, rec.msg.correlation_id) {
            (Direction::Request, Some(c)) => self.hold((rec.stream, c), rec, show),
            (Direction::Response, Some(c)) if rec.request.is_some() => {
                let req = self.take_held((rec.stream, c));
                self.answer(req, rec, show);
            }
            _ => self.lone(rec, show),
        }
    }

    /// The request held under `key`, no longer held (its place in the order is skipped when
    /// met).
    fn take_held(&mut self, key: (u32, i32)) -> Option<Held> {
        let held = self.waiting.remove(&key)?;
        self.waiting_cost = self.waiting_cost.saturating_sub(held.cost);
        self.held_frames.remove(&(held.frame, key));
        self.held_streams.remove(&key);
        Some(held)
    }

    /// A connection ended: no answer comes to the requests it holds, which are judged alone
    /// now (in frame order) rather than keep later lines waiting to the end of the input.
    pub(crate) fn closed(&mut self, stream: u32, show: &mut dyn FnMut(&Record<'_>, Part)) {
        let mut keys: Vec<(u64, (u32, i32))> = self
            .held_streams
            .range((stream, i32::MIN)..=(stream, i32::MAX))
            .filter_map(|k| self.waiting.get(k).map(|h| (h.frame, *k)))
            .collect();
        keys.sort_unstable();
        for (_, key) in keys {
            self.let_go(key, show);
        }
    }

    /// A message shown or not on its own.
    fn lone(&self, rec: &Record<'_>, show: &mut dyn FnMut(&Record<'_>, Part)) {
        if self.selection.matches_lone(rec) {
            show(rec, self.whole());
        }
    }

    /// A response with the request held for it (if any): both shown when they match, or
    /// with `--messages` each that matches.
    fn answer(
        &self,
        req: Option<Held>,
        resp: &Record<'_>,
        show: &mut dyn FnMut(&Record<'_>, Part),
    ) {
        let Some(held) = req else {
            return self.lone(resp, show);
        };
        let sel = &self.selection;
        let first = Part {
            response_frame: Some(resp.frame),
            completes: !sel.counts_exchanges(),
            held_from: self.oldest_held(),
        };
        held.with_record(|q| {
            if sel.choice.messages {
                if sel.matches_alone(q, Some(resp.frame)) {
                    show(q, first);
                }
                if sel.matches_alone(resp, None) {
                    show(resp, self.whole());
                }
            } else if sel.matches(Some(q), Some(resp)) {
                show(q, first);
                show(resp, self.whole());
            }
        })
    }

    /// Shows the requests still waiting (unanswered) that match on their own, in frame order.
    pub(crate) fn flush(&mut self, show: &mut dyn FnMut(&Record<'_>, Part)) {
        while let Some((_, key)) = self.held_frames.first().copied() {
            self.let_go(key, show);
        }
        self.waiting_order.clear();
    }

    /// Stops holding a request: shown now if it matches on its own.
    fn let_go(&mut self, key: (u32, i32), show: &mut dyn FnMut(&Record<'_>, Part)) {
        if let Some(held) = self.take_held(key) {
            held.with_record(|r| self.lone(r, show));
        }
    }

    /// Holds a request until its answer (filters judge whole exchanges), within `HELD_MEMORY`:
    /// past it the oldest held request is judged on its own, so memory does not follow how
    /// many requests a capture leaves unanswered.
    fn hold(&mut self, key: (u32, i32), rec: &Record<'_>, show: &mut dyn FnMut(&Record<'_>, Part)) {
        let cost = Held::cost_of(rec);
        if cost > HELD_MEMORY {
            // Holding it would let go of every other request held: it alone is judged on its
            // own (its answer will be too), the others stay.
            return self.lone(rec, show);
        }
        let held = Held::of(rec, cost);
        self.waiting_cost += held.cost;
        self.held_frames.insert((held.frame, key));
        self.held_streams.insert(key);
        if let Some(old) = self.waiting.insert(key, held) {
            // A request that reused a correlation id still waiting: the earlier one is no
            // longer held (as before, it is never shown).
            self.waiting_cost = self.waiting_cost.saturating_sub(old.cost);
            if old.frame != rec.frame {
                self.held_frames.remove(&(old.frame, key));
            }
        } else {
            self.waiting_order.push_back(key);
        }
        // Answered keys linger in the order until met: drop them now and then (amortised).
        if self.waiting_order.len() > 2 * self.waiting.len() + 1024 {
            let held = &self.waiting;
            self.waiting_order.retain(|k| held.contains_key(k));
        }
        while self.waiting_cost > HELD_MEMORY {
            let Some(oldest) = self.waiting_order.pop_front() else {
                break;
            };
            self.let_go(oldest, show);
        }
    }
}
