//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod cli;

use kdissect::kafka::{Message, Node, NodeKind, Value};
use std::path::PathBuf;

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Bytes of a `tests/fixtures/vectors/*.hex` file.
pub fn vector(name: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(fixture(&format!("vectors/{name}"))).expect("vector file");
    kdissect::capture::hex::parse(&text).expect("vector hex")
}

/// Checks that every byte of the frame belongs to exactly one leaf, and that every group
/// spans exactly its children.
pub fn assert_tiles(msg: &Message) {
    let mut next = 0usize;
    for leaf in msg.root().leaves() {
        if leaf.kind == NodeKind::Error {
            assert_eq!(leaf.len, 0, "error node {} covers bytes", leaf.name);
            continue;
        }
        assert_eq!(
            leaf.offset, next,
            "leaf {} {} starts at 0x{:04x}, expected 0x{next:04x}",
            leaf.name, leaf.ty, leaf.offset
        );
        next = leaf.offset + leaf.len;
    }
    assert_eq!(
        next, msg.size,
        "leaves end at {next}, frame has {} bytes",
        msg.size
    );
    msg.root().walk(&mut |n, _| {
        if n.children.is_empty() {
            return;
        }
        // Children in another byte source (decompressed data) have their own offsets.
        let same: Vec<&Node> = n.children.iter().filter(|c| c.source == n.source).collect();
        if same.is_empty() {
            return;
        }
        let first = same.first().map(|c| c.offset).unwrap_or(n.offset);
        let last = same.iter().map(|c| c.end()).max().unwrap_or(n.offset);
        assert_eq!(
            first, n.offset,
            "group {} starts before its first child",
            n.name
        );
        assert_eq!(
            last,
            n.end(),
            "group {} [0x{:04x}, {}B] does not end with its children",
            n.name,
            n.offset,
            n.len
        );
    });
}

/// Follows a dotted path from the message body: `Brokers[1].Host`, `Topics[0].Partitions[2]`.
/// `X[i]` selects element i of array X.
pub fn get<'a>(msg: &'a Message, path: &str) -> &'a Node {
    try_get(msg, path).unwrap_or_else(|e| panic!("{e}"))
}

/// Like [`get`], but says what is missing instead of panicking.
pub fn try_get<'a>(msg: &'a Message, path: &str) -> Result<&'a Node, String> {
    let mut cur = msg
        .body()
        .ok_or_else(|| format!("no body in {}", msg.root().name))?;
    for part in path.split('.') {
        let (name, idx) = match part.split_once('[') {
            Some((n, rest)) => (
                n,
                Some(
                    rest.trim_end_matches(']')
                        .parse::<usize>()
                        .map_err(|e| format!("{path}: {e}"))?,
                ),
            ),
            None => (part, None),
        };
        cur = find_field(cur, name)
            .ok_or_else(|| format!("no {name} in {} (path {path})", cur.name))?;
        if let Some(i) = idx {
            cur = cur
                .children
                .iter()
                .find(|c| c.index == Some(i as u32))
                .ok_or_else(|| format!("no element {i} in {name} (path {path})"))?;
        }
    }
    Ok(cur)
}

/// A field by name among the children, looking through tagged-field wrappers.
fn find_field<'a>(n: &'a Node, name: &str) -> Option<&'a Node> {
    for c in n.children.iter().filter(|c| c.index.is_none()) {
        if c.name == name {
            if c.ty == "tagged_field" {
                return c.children.iter().find(|g| g.name == name);
            }
            return Some(c);
        }
    }
    None
}

pub fn has(msg: &Message, path: &str) -> bool {
    try_get(msg, path).is_ok()
}

pub fn int(msg: &Message, path: &str) -> i64 {
    match get(msg, path).value {
        Value::Int(i) => i,
        ref v => panic!("{path} is {v:?}, not an integer"),
    }
}

pub fn string(msg: &Message, path: &str) -> Option<String> {
    match &get(msg, path).value {
        Value::Str(s) => s.clone(),
        v => panic!("{path} is {v:?}, not a string"),
    }
}

pub fn boolean(msg: &Message, path: &str) -> bool {
    match get(msg, path).value {
        Value::Bool(b) => b,
        ref v => panic!("{path} is {v:?}, not a bool"),
    }
}

pub fn uuid(msg: &Message, path: &str) -> [u8; 16] {
    match get(msg, path).value {
        Value::Uuid(u) => u,
        ref v => panic!("{path} is {v:?}, not a uuid"),
    }
}

/// Element count of an array, `None` when null.
pub fn count(msg: &Message, path: &str) -> Option<usize> {
    match get(msg, path).value {
        Value::Array(n) => Some(n),
        Value::Null => None,
        ref v => panic!("{path} is {v:?}, not an array"),
    }
}

/// Integer elements of an array of ints.
pub fn ints(msg: &Message, path: &str) -> Option<Vec<i64>> {
    let n = get(msg, path);
    match n.value {
        Value::Null => None,
        Value::Array(_) => Some(
            n.children
                .iter()
                .filter(|c| c.kind != NodeKind::Length)
                .map(|c| match c.value {
                    Value::Int(i) => i,
                    ref v => panic!("{path} element is {v:?}"),
                })
                .collect(),
        ),
        ref v => panic!("{path} is {v:?}, not an array"),
    }
}

/// Builds capture files for tests: Ethernet/IPv4/TCP packets in a classic pcap.
pub mod pcapgen {
    use etherparse::PacketBuilder;

    pub const CLIENT: [u8; 4] = [10, 0, 0, 1];
    pub const BROKER: [u8; 4] = [10, 0, 0, 2];

    /// One TCP segment to write.
    #[derive(Debug, Clone)]
    pub struct Seg {
        pub from_client: bool,
        pub seq: u32,
        pub ack: u32,
        pub syn: bool,
        pub fin: bool,
        pub payload: Vec<u8>,
    }

    pub fn packet(s: &Seg, client_port: u16, broker_port: u16) -> Vec<u8> {
        vlan_packet(s, client_port, broker_port, 0)
    }

    /// The IP packet of a segment, without a link layer (IPv4, or IPv6 with `v6`).
    pub fn ip_packet(s: &Seg, client_port: u16, broker_port: u16, v6: bool) -> Vec<u8> {
        let (sp, dp) = if s.from_client {
            (client_port, broker_port)
        } else {
            (broker_port, client_port)
        };
        let mut out = Vec::new();
        let mut c6 = [0u8; 16];
        c6[15] = 1;
        let mut b6 = [0u8; 16];
        b6[15] = 2;
        let (src6, dst6) = if s.from_client { (c6, b6) } else { (b6, c6) };
        let (src4, dst4) = if s.from_client {
            (CLIENT, BROKER)
        } else {
            (BROKER, CLIENT)
        };
        macro_rules! finish {
            ($b:expr) => {{
                let mut b = $b.tcp(sp, dp, s.seq, 65535);
                if s.syn {
                    b = b.syn();
                }
                if s.fin {
                    b = b.fin();
                }
                if !(s.syn && s.from_client) {
                    b = b.ack(s.ack);
                }
                b.write(&mut out, &s.payload).expect("build packet");
            }};
        }
        if v6 {
            finish!(PacketBuilder::ipv6(src6, dst6, 64));
        } else {
            finish!(PacketBuilder::ipv4(src4, dst4, 64));
        }
        out
    }

    /// Ethernet with no, one (`tags` = 1) or two (QinQ) 802.1Q tags.
    pub fn vlan_packet(s: &Seg, client_port: u16, broker_port: u16, tags: usize) -> Vec<u8> {
        use etherparse::VlanId;
        let eth = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let (src, dst, sp, dp) = if s.from_client {
            (CLIENT, BROKER, client_port, broker_port)
        } else {
            (BROKER, CLIENT, broker_port, client_port)
        };
        let vid = |v| VlanId::try_new(v).expect("vlan id");
        let ip = match tags {
            0 => eth.ipv4(src, dst, 64),
            1 => eth.single_vlan(vid(100)).ipv4(src, dst, 64),
            _ => eth.double_vlan(vid(100), vid(200)).ipv4(src, dst, 64),
        };
        let mut b = ip.tcp(sp, dp, s.seq, 65535);
        if s.syn {
            b = b.syn();
        }
        if s.fin {
            b = b.fin();
        }
        if !(s.syn && s.from_client) {
            b = b.ack(s.ack);
        }
        let mut out = Vec::new();
        b.write(&mut out, &s.payload).expect("build packet");
        out
    }

    /// A classic pcap of the given link type, packets 1 ms apart.
    pub fn pcap_with(linktype: u32, big_endian: bool, nanos: bool, packets: &[Vec<u8>]) -> Vec<u8> {
        let w32 = |out: &mut Vec<u8>, v: u32| {
            out.extend_from_slice(&if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        let w16 = |out: &mut Vec<u8>, v: u16| {
            out.extend_from_slice(&if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        let mut out = Vec::new();
        w32(&mut out, if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
        w16(&mut out, 2);
        w16(&mut out, 4);
        w32(&mut out, 0);
        w32(&mut out, 0);
        w32(&mut out, 65535);
        w32(&mut out, linktype);
        for (i, p) in packets.iter().enumerate() {
            let us = 1_000 * i as u64;
            w32(&mut out, 1_700_000_000u32 + (us / 1_000_000) as u32);
            let frac = (us % 1_000_000) as u32;
            w32(&mut out, if nanos { frac * 1000 } else { frac });
            w32(&mut out, p.len() as u32);
            w32(&mut out, p.len() as u32);
            out.extend_from_slice(p);
        }
        out
    }

    fn ng_block(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
        let pad = (4 - body.len() % 4) % 4;
        let len = (12 + body.len() + pad) as u32;
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(body);
        out.extend(std::iter::repeat_n(0u8, pad));
        out.extend_from_slice(&len.to_le_bytes());
    }

    /// A little-endian pcapng: interfaces (link type, if_tsresol), then packets (interface,
    /// microseconds since the epoch, data); timestamps are written in each interface's unit.
    pub fn pcapng(ifaces: &[(u16, u8)], packets: &[(u32, u64, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut shb = Vec::new();
        shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        ng_block(&mut out, 0x0a0d_0d0a, &shb);
        for (lt, res) in ifaces {
            let mut idb = Vec::new();
            idb.extend_from_slice(&lt.to_le_bytes());
            idb.extend_from_slice(&0u16.to_le_bytes());
            idb.extend_from_slice(&0u32.to_le_bytes());
            // if_tsresol option (code 9, length 1), padded, then end of options.
            idb.extend_from_slice(&9u16.to_le_bytes());
            idb.extend_from_slice(&1u16.to_le_bytes());
            idb.extend_from_slice(&[*res, 0, 0, 0]);
            idb.extend_from_slice(&[0, 0, 0, 0]);
            ng_block(&mut out, 1, &idb);
        }
        for (iface, us, data) in packets {
            let res = ifaces[*iface as usize].1;
            let units: u64 = if res == 9 { us * 1000 } else { *us };
            let mut epb = Vec::new();
            epb.extend_from_slice(&iface.to_le_bytes());
            epb.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
            epb.extend_from_slice(&(units as u32).to_le_bytes());
            epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
            epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
            epb.extend_from_slice(data);
            epb.extend(std::iter::repeat_n(0u8, (4 - data.len() % 4) % 4));
            ng_block(&mut out, 6, &epb);
        }
        out
    }

    /// A classic little-endian microsecond pcap of Ethernet packets, 1 ms apart.
    pub fn pcap(packets: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&4u16.to_le_bytes());
        out.extend_from_slice(&0i32.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&65535u32.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        for (i, p) in packets.iter().enumerate() {
            let us = 1_000 * i as u64;
            out.extend_from_slice(&(1_700_000_000u32 + (us / 1_000_000) as u32).to_le_bytes());
            out.extend_from_slice(&((us % 1_000_000) as u32).to_le_bytes());
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            out.extend_from_slice(p);
        }
        out
    }

    /// A whole conversation: handshake, then each (request, response) pair with the given
    /// segment sizes (cycled), then FIN both ways. ISNs are chosen near 2^32 so that sequence
    /// numbers wrap.
    pub fn conversation(exchanges: &[(Vec<u8>, Vec<u8>)], seg_sizes: &[usize]) -> Vec<Seg> {
        let mut segs = Vec::new();
        let (mut cseq, mut bseq) = (u32::MAX - 300, u32::MAX - 5000);
        segs.push(Seg {
            from_client: true,
            seq: cseq,
            ack: 0,
            syn: true,
            fin: false,
            payload: vec![],
        });
        segs.push(Seg {
            from_client: false,
            seq: bseq,
            ack: cseq.wrapping_add(1),
            syn: true,
            fin: false,
            payload: vec![],
        });
        cseq = cseq.wrapping_add(1);
        bseq = bseq.wrapping_add(1);
        segs.push(Seg {
            from_client: true,
            seq: cseq,
            ack: bseq,
            syn: false,
            fin: false,
            payload: vec![],
        });
        let mut k = 0;
        let mut next_size = || {
            let s = seg_sizes[k % seg_sizes.len()].max(1);
            k += 1;
            s
        };
        for (req, resp) in exchanges {
            for (from_client, data) in [(true, req), (false, resp)] {
                let mut i = 0;
                while i < data.len() {
                    let n = next_size().min(data.len() - i);
                    let chunk = data[i..i + n].to_vec();
                    let (seq, ack) = if from_client {
                        (cseq, bseq)
                    } else {
                        (bseq, cseq)
                    };
                    segs.push(Seg {
                        from_client,
                        seq,
                        ack,
                        syn: false,
                        fin: false,
                        payload: chunk,
                    });
                    if from_client {
                        cseq = cseq.wrapping_add(n as u32);
                    } else {
                        bseq = bseq.wrapping_add(n as u32);
                    }
                    i += n;
                }
            }
        }
        segs.push(Seg {
            from_client: true,
            seq: cseq,
            ack: bseq,
            syn: false,
            fin: true,
            payload: vec![],
        });
        segs.push(Seg {
            from_client: false,
            seq: bseq,
            ack: cseq.wrapping_add(1),
            syn: false,
            fin: true,
            payload: vec![],
        });
        segs
    }
}

/// Runs the capture pipeline over in-memory pcap bytes and collects what it found.
pub mod collect {
    use kdissect::kafka::stream::{Notice, Record, RequestInfo, Sink};
    use kdissect::pipeline::{run, CaptureSink, Health, Options};

    /// (stream, correlation_id, api_key, api_version, direction, clean, assumed)
    pub type Row = (u32, i32, i16, i16, &'static str, bool, bool);

    #[derive(Default)]
    pub struct Collected {
        pub rows: Vec<Row>,
        pub notices: Vec<Notice>,
        pub latencies: Vec<Option<i64>>,
        pub frames: Vec<u64>,
        pub partial: Vec<bool>,
        pub unknown: Vec<bool>,
        /// For a response: the request it was paired with.
        pub requests: Vec<Option<RequestInfo>>,
    }

    impl Sink for Collected {
        fn message(&mut self, rec: &Record<'_>) {
            let m = &rec.msg;
            self.rows.push((
                rec.stream,
                m.correlation_id.unwrap_or(i32::MIN),
                m.api_key.unwrap_or(-1),
                m.api_version.unwrap_or(-1),
                m.direction.as_str(),
                m.is_clean(),
                rec.assumed,
            ));
            self.latencies.push(rec.latency_nanos());
            self.frames.push(rec.frame);
            self.partial.push(rec.partial);
            self.unknown.push(m.is_unknown_api() && !m.is_malformed());
            self.requests.push(rec.request);
            if !rec.partial {
                super::assert_tiles(m);
            }
        }
        fn notice(&mut self, n: &Notice) {
            self.notices.push(n.clone());
        }
    }

    impl CaptureSink for Collected {}

    pub fn run_bytes(pcap: &[u8], opts: &Options) -> (Collected, Health, Option<String>) {
        let mut c = Collected::default();
        let mut h = Health::default();
        let err = run(pcap, opts, &mut c, &mut h).err().map(|e| e.to_string());
        (c, h, err)
    }

    pub fn run_file(path: &std::path::Path, opts: &Options) -> (Collected, Health, Option<String>) {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        run_bytes(&bytes, opts)
    }
}

/// Frames built with the `kafka-protocol` crate, an encoder independent of kdissect.
pub mod kp {
    use bytes::BytesMut;
    use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
    use kafka_protocol::protocol::{Encodable, StrBytes};

    /// A request header and body as a broker receives them (no size prefix).
    pub fn request_payload<B: Encodable>(
        key: ApiKey,
        v: i16,
        corr: i32,
        client: &str,
        body: &B,
    ) -> Vec<u8> {
        let header = RequestHeader::default()
            .with_request_api_key(key as i16)
            .with_request_api_version(v)
            .with_correlation_id(corr)
            .with_client_id(Some(StrBytes::from_string(client.to_string())));
        let mut buf = BytesMut::new();
        header
            .encode(&mut buf, key.request_header_version(v))
            .expect("header");
        body.encode(&mut buf, v).expect("body");
        buf.to_vec()
    }

    /// A response header and body (no size prefix).
    pub fn response_payload<B: Encodable>(key: ApiKey, v: i16, corr: i32, body: &B) -> Vec<u8> {
        let mut buf = BytesMut::new();
        ResponseHeader::default()
            .with_correlation_id(corr)
            .encode(&mut buf, key.response_header_version(v))
            .expect("header");
        body.encode(&mut buf, v).expect("body");
        buf.to_vec()
    }

    /// A payload with its size prefix: a whole frame.
    pub fn sized(payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(payload);
        f
    }

    pub fn request<B: Encodable>(key: ApiKey, v: i16, corr: i32, body: &B) -> Vec<u8> {
        sized(&request_payload(key, v, corr, "kdissect-test", body))
    }

    pub fn response<B: Encodable>(key: ApiKey, v: i16, corr: i32, body: &B) -> Vec<u8> {
        sized(&response_payload(key, v, corr, body))
    }
}

/// The summary's and the statistics' three ways to a message's facts: read back from the
/// nodes of the body's first two levels, gathered while the spec is interpreted as the body
/// is walked, and gathered by the walk generated from the spec (src/kafka/walk/generated.rs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Way {
    Tree,
    Interpreted,
    Generated,
}

pub const WAYS: [Way; 3] = [Way::Tree, Way::Interpreted, Way::Generated];

/// Two levels kept, records not decoded, as the summary decodes, the facts gathered `way`.
pub fn summary_options(way: Way) -> kdissect::kafka::DecodeOptions {
    kdissect::kafka::DecodeOptions {
        keep_depth: 2,
        facts_only: true,
        walk_facts: way != Way::Tree,
        generated_walk: way == Way::Generated,
        records: false,
        ..kdissect::kafka::DecodeOptions::default()
    }
}

/// What a message leaves for the views that print its facts, in one comparable text: its
/// facts (topic names noted), error codes, record counts and batches, secrets, problems,
/// verdict, record types, assumed version and header values.
pub fn summary_left(m: &Message) -> String {
    format!(
        "facts {:?}\nerrors {:?}\nrecords {:?} {:?}\nsecrets {:?}\ndiagnoses {:?}\nerror {:?}\ntypes {:?}\nassumed {:?}\nheader {:?} {:?} {:?} {:?}\nbody {}",
        m.facts,
        m.errors,
        m.records,
        m.batches,
        m.secrets,
        m.diagnoses,
        m.error,
        m.record_types,
        m.assumed_version,
        m.api_key,
        m.api_version,
        m.correlation_id,
        m.client_id,
        m.has_body
    )
}

/// Decodes `frame` (a request, or the response of `response`'s API and version) the three
/// ways with `opts` changed by `limits`, asserts they leave the same, and says which ways
/// took a walk (whose messages carry their topic pairs).
pub fn walks_agree_with(
    frame: &[u8],
    response: Option<(i16, i16)>,
    limits: impl Fn(kdissect::kafka::DecodeOptions) -> kdissect::kafka::DecodeOptions,
    what: &str,
) -> [bool; 3] {
    use kdissect::kafka::message::{decode_request_with, decode_response_with};
    let decode = |way: Way| {
        let opts = limits(summary_options(way));
        match response {
            Some((k, v)) => decode_response_with(frame, k, v, opts),
            None => decode_request_with(frame, opts),
        }
    };
    let [tree, interpreted, generated] = WAYS.map(decode);
    // The tree's way keeps its tree, and the tree has a body node where the message says so;
    // a way that gathered its facts while walking keeps none.
    assert_eq!(tree.has_body, tree.body().is_some(), "body node: {what}");
    for m in [&tree, &interpreted, &generated] {
        assert_eq!(
            m.tree.is_none(),
            m.topic_pairs.is_some(),
            "tree kept: {what}"
        );
    }
    let want = summary_left(&tree);
    assert_eq!(want, summary_left(&interpreted), "interpreted walk: {what}");
    assert_eq!(want, summary_left(&generated), "generated walk: {what}");
    [&tree, &interpreted, &generated].map(|m| m.topic_pairs.is_some())
}

/// [`walks_agree_with`] at the default limits.
pub fn walks_agree(frame: &[u8], response: Option<(i16, i16)>, what: &str) -> [bool; 3] {
    walks_agree_with(frame, response, |o| o, what)
}

/// Every sample capture (samples/ and tests/fixtures/samples/), sorted: what the
/// differential tests of the walks run through the whole pipeline.
pub fn sample_captures() -> Vec<PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v: Vec<PathBuf> = ["samples", "tests/fixtures/samples"]
        .iter()
        .filter_map(|d| std::fs::read_dir(root.join(d)).ok())
        .flat_map(|d| d.filter_map(|e| e.ok().map(|e| e.path())))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("pcap" | "pcapng")
            )
        })
        .collect();
    v.sort();
    v
}

/// The capture at `path` through the whole pipeline with these decoding options, into a new
/// `S`. Damaged captures end with an error: what they gave up to there is compared.
pub fn run_sample<S>(path: &std::path::Path, decode: kdissect::kafka::DecodeOptions) -> S
where
    S: kdissect::pipeline::CaptureSink + Default,
{
    let opts = kdissect::pipeline::Options {
        kafka: kdissect::kafka::stream::Config {
            decode,
            ..Default::default()
        },
        ..Default::default()
    };
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut sink = S::default();
    let _ = kdissect::pipeline::run(
        &bytes[..],
        &opts,
        &mut sink,
        &mut kdissect::pipeline::Health::default(),
    );
    sink
}
