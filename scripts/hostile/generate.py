#!/usr/bin/env python3
"""Generators of hostile inputs for kdissect: one per finding of the hostile-input run
(docs/robustness.md, "Hostile-input suite"), plus one capture that hits every limit at once.

    scripts/hostile/generate.py LIST                        # names, one a line, with what each is
    scripts/hostile/generate.py NAME OUT [--scale small|full|fuzz] [--mib N]
    scripts/hostile/generate.py all DIR [--scale small|full|fuzz]  # every input into DIR/NAME.EXT

OUT `-` writes to standard output. `--scale small` (the default) makes inputs of under about
1 MB that run in well under a second, for the tests (tests/hostile_inputs.rs); `--scale full`
makes them as the findings describe, for scripts/bench-memory.sh; `--scale fuzz` makes seeds
for the fuzz corpora (fuzz/seed): a few KB each, to fit the targets' -max_len, with the
compression bombs kept at 64 MiB (they are a few hundred bytes on the wire). `--mib N` sets
the size of the hex stream (`hex-stream`) in MiB.

Captures are classic pcap (microsecond timestamps, Ethernet, IPv4, TCP, broker port 9092);
`hex-*` inputs are hex text for `kdissect --hex`. Python 3 standard library only: the zstd
and LZ4 frames are built by hand (a zstd frame of RLE blocks is 4 bytes per 128 KiB of output;
an LZ4 frame of stored blocks needs only xxHash32 of its descriptor), record batches get
correct CRC-32C and legacy messages correct CRC-32, so that only the intended problem shows.
Output is deterministic: the same name and scale give the same bytes.
"""

import gzip
import io
import struct
import sys
import zlib

MiB = 1024 * 1024
BROKER_PORT = 9092

# ---------------------------------------------------------------------------------------------
# Checksums and compression framing


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC32C = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    t = _CRC32C
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def xxh32(data, seed=0):
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    m = 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & m

    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + p1 + p2) & m, (seed + p2) & m, seed & m, (seed - p1) & m]
        while i + 16 <= n:
            for j in range(4):
                (w,) = struct.unpack_from("<I", data, i + 4 * j)
                v[j] = (rotl((v[j] + w * p2) & m, 13) * p1) & m
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
    else:
        h = (seed + p5) & m
    h = (h + n) & m
    while i + 4 <= n:
        (w,) = struct.unpack_from("<I", data, i)
        h = (rotl((h + w * p3) & m, 17) * p4) & m
        i += 4
    while i < n:
        h = (rotl((h + data[i] * p5) & m, 11) * p1) & m
        i += 1
    h ^= h >> 15
    h = (h * p2) & m
    h ^= h >> 13
    h = (h * p3) & m
    h ^= h >> 16
    return h


def zstd_rle(n, byte=0):
    """A zstd frame that decompresses to `n` copies of `byte`: RLE blocks of 128 KiB, 4 bytes
    each (no content size, no checksum, window 128 KiB)."""
    out = bytearray(b"\x28\xb5\x2f\xfd")  # magic
    out += b"\x00"  # frame header descriptor: no FCS, not single segment, no checksum, no dict
    out += b"\x38"  # window descriptor: exponent 7 -> 2^17 bytes
    block = 128 * 1024
    left = n
    while True:
        size = min(left, block)
        left -= size
        last = 1 if left == 0 else 0
        hdr = (size << 3) | (1 << 1) | last  # block type 1 = RLE
        out += struct.pack("<I", hdr)[:3] + bytes([byte])
        if last:
            break
    return bytes(out)


def zstd_raw(data):
    """A zstd frame holding `data` in raw (stored) blocks."""
    out = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")
    block = 128 * 1024
    i = 0
    while True:
        chunk = data[i : i + block]
        i += len(chunk)
        last = 1 if i >= len(data) else 0
        out += struct.pack("<I", (len(chunk) << 3) | last)[:3] + chunk
        if last:
            break
    return bytes(out)


def zstd_blocks(data, zeros, window_descriptor):
    """A zstd frame with the given Window_Descriptor byte (no content size, no checksum):
    `data` in raw blocks, then `zeros` zero bytes in RLE blocks (4 bytes per 128 KiB)."""
    out = bytearray(b"\x28\xb5\x2f\xfd\x00") + bytes([window_descriptor])
    block = 128 * 1024
    pieces = [(0, data[i : i + block]) for i in range(0, len(data), block)]
    pieces += [(1, min(block, zeros - i)) for i in range(0, zeros, block)]
    for k, (kind, piece) in enumerate(pieces):
        last = 1 if k == len(pieces) - 1 else 0
        if kind == 0:
            out += struct.pack("<I", (len(piece) << 3) | last)[:3] + piece
        else:
            out += struct.pack("<I", (piece << 3) | (1 << 1) | last)[:3] + b"\x00"
    return bytes(out)


def lz4_frame(data, end_mark=True):
    """An LZ4 frame (the format Kafka's lz4 codec uses) holding `data` in stored blocks of
    64 KiB; without `end_mark`, the 4-byte end mark is left off."""
    flg = 0x60  # version 01, independent blocks, no checksums, no content size
    bd = 0x40  # block maximum size 64 KiB
    hc = (xxh32(bytes([flg, bd])) >> 8) & 0xFF
    out = bytearray(b"\x04\x22\x4d\x18" + bytes([flg, bd, hc]))
    for i in range(0, len(data), 64 * 1024):
        chunk = data[i : i + 64 * 1024]
        out += struct.pack("<I", len(chunk) | 0x80000000) + chunk
    if end_mark:
        out += b"\x00\x00\x00\x00"
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# Kafka encodings


def i8(v):
    return struct.pack(">b", v)


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def u32(v):
    return struct.pack(">I", v)


def i64(v):
    return struct.pack(">q", v)


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def varint(v):
    return uvarint((v << 1) ^ (v >> 63))


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return i16(len(b)) + b


NULL_STRING = i16(-1)


def compact_string(s):
    b = s.encode() if isinstance(s, str) else s
    return uvarint(len(b) + 1) + b


def frame(body):
    return i32(len(body)) + body


def request_header(api_key, version, corr, client_id="hostile", flexible=False):
    h = i16(api_key) + i16(version) + i32(corr) + string(client_id)
    return h + (b"\x00" if flexible else b"")


def response_header(corr, flexible=False):
    return i32(corr) + (b"\x00" if flexible else b"")


def metadata_request_v1(corr):
    """Metadata v1 request for all topics (null topic list)."""
    return frame(request_header(3, 1, corr) + i32(-1))


def metadata_request_v12(corr, topics=()):
    body = uvarint(len(topics) + 1)
    for t in topics:
        body += bytes(16) + compact_string(t) + b"\x00"
    body += b"\x00\x00\x00"  # allow auto creation, authorized ops, tags
    return frame(request_header(3, 12, corr, flexible=True) + body)


def metadata_response_v1(corr, n_topics, name=lambda i: "t%d" % i):
    """Metadata v1 response: one broker, controller 1, `n_topics` topics without partitions."""
    out = io.BytesIO()
    out.write(response_header(corr))
    out.write(i32(1) + i32(1) + string("broker") + i32(BROKER_PORT) + NULL_STRING)
    out.write(i32(1))  # controller id
    out.write(i32(n_topics))
    for i in range(n_topics):
        out.write(i16(0) + string(name(i)) + b"\x00" + i32(0))
    return frame(out.getvalue())


def api_versions_request(corr):
    return frame(request_header(18, 0, corr))


def api_versions_response(corr):
    return frame(response_header(corr) + i16(0) + i32(0))


def legacy_message(value, codec=0, magic=1, key=None, offset=0, ts=0):
    """A legacy message (magic 0 or 1) with its CRC-32; `codec` in the attributes."""
    body = i8(magic) + i8(codec)
    if magic == 1:
        body += i64(ts)
    body += i32(-1) if key is None else i32(len(key)) + key
    body += i32(-1) if value is None else i32(len(value)) + value
    crc = zlib.crc32(body) & 0xFFFFFFFF
    msg = u32(crc) + body
    return i64(offset) + i32(len(msg)) + msg


def record(value=b"v", key=None, offset_delta=0):
    body = b"\x00" + varint(0) + varint(offset_delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(0)  # headers
    return varint(len(body)) + body


_BATCH_CRC = {}


def record_batch(records_bytes, count, codec=0, base_offset=0, ts=1_700_000_000_000):
    """A record batch v2 (magic 2) around already encoded (possibly compressed) records, with
    a correct CRC-32C (cached, so identical batches cost one CRC)."""
    after_crc = (
        i16(codec)
        + i32(max(count - 1, 0))
        + i64(ts)
        + i64(ts)
        + i64(-1)
        + i16(-1)
        + i32(-1)
        + i32(count)
        + records_bytes
    )
    crc = _BATCH_CRC.get(after_crc)
    if crc is None:
        crc = crc32c(after_crc)
        if len(after_crc) < 64 * 1024:
            _BATCH_CRC[after_crc] = crc
    rest = i32(0) + i8(2) + u32(crc) + after_crc
    return i64(base_offset) + i32(len(rest)) + rest


def produce_request_v2(corr, records_field, topic="hostile"):
    """Produce v2 (message sets, magic 0/1): one topic, one partition."""
    body = i16(1) + i32(30000) + i32(1) + string(topic) + i32(1) + i32(0)
    body += i32(len(records_field)) + records_field
    return frame(request_header(0, 2, corr) + body)


def produce_response_v2(corr, topic="hostile"):
    body = i32(1) + string(topic) + i32(1) + i32(0) + i16(0) + i64(0) + i64(-1) + i32(0)
    return frame(response_header(corr) + body)


def produce_request_v8(corr, records_field, topic="hostile"):
    """Produce v8 (record batches v2, not flexible): one topic, one partition."""
    body = NULL_STRING + i16(1) + i32(30000) + i32(1) + string(topic) + i32(1) + i32(0)
    body += i32(len(records_field)) + records_field
    return frame(request_header(0, 8, corr) + body)


def produce_response_v8(corr, topic="hostile"):
    part = i32(0) + i16(0) + i64(0) + i64(-1) + i64(0) + i32(0) + NULL_STRING
    body = i32(1) + string(topic) + i32(1) + part + i32(0)
    return frame(response_header(corr) + body)


def create_topics_v5(corr, topics, configs):
    """CreateTopics v5 (flexible): `topics` topics of `configs` configs each (empty name,
    null value): three bytes per config, so the frame is ~3 bytes x topics x configs."""
    cfg = b"\x01\x00\x00"  # name "", value null, no tags
    out = io.BytesIO()
    out.write(request_header(19, 5, corr, flexible=True))
    out.write(uvarint(topics + 1))
    cfgs = uvarint(configs + 1) + cfg * configs
    for t in range(topics):
        out.write(compact_string("t%d" % t) + i32(1) + i16(1))
        out.write(b"\x01")  # assignments: empty
        out.write(cfgs)
        out.write(b"\x00")  # tags
    out.write(i32(30000) + b"\x00" + b"\x00")  # timeout, validate_only, tags
    return frame(out.getvalue())


# ---------------------------------------------------------------------------------------------
# pcap writing


class Pcap:
    """A classic pcap (microsecond timestamps, Ethernet) written as packets come."""

    def __init__(self, out):
        self.out = out
        self.ts = 1_700_000_000_000_000  # microseconds
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        self.ip_id = 0

    def packet(self, src, dst, sport, dport, seq, ack, flags, payload, ts=None):
        if ts is None:
            self.ts += 10
            ts = self.ts
        self.ip_id = (self.ip_id + 1) & 0xFFFF
        tcp = struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                          5 << 4, flags, 65535, 0, 0)
        total = 20 + len(tcp) + len(payload)
        iph = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, self.ip_id, 0x4000, 64, 6, 0, src, dst)
        c = sum(struct.unpack(">10H", iph))
        c = (c & 0xFFFF) + (c >> 16)
        c = (c & 0xFFFF) + (c >> 16)
        iph = iph[:10] + struct.pack(">H", ~c & 0xFFFF) + iph[12:]
        eth = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
        n = len(eth) + total
        self.out.write(struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, n, n))
        self.out.write(eth)
        self.out.write(iph)
        self.out.write(tcp)
        self.out.write(payload)


FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


class Conn:
    """One TCP connection from a client to the broker, its sequence numbers tracked."""

    def __init__(self, cap, index, handshake=True, client_isn=1000, broker_isn=5000):
        self.cap = cap
        a, b = divmod(index, 250 * 60000)
        b, port = divmod(b, 60000)
        self.cip = bytes([10, 1 + a % 250, 1 + b % 250, 1 + (b // 250) % 250])
        self.bip = bytes([10, 0, 0, 1])
        self.cport = 1024 + port
        self.seq = [client_isn, broker_isn]  # next byte of client, broker
        if handshake:
            self.cap.packet(self.cip, self.bip, self.cport, BROKER_PORT, self.seq[0] - 1, 0, SYN, b"")
            self.cap.packet(self.bip, self.cip, BROKER_PORT, self.cport, self.seq[1] - 1, self.seq[0],
                            SYN | ACK, b"")
            self.cap.packet(self.cip, self.bip, self.cport, BROKER_PORT, self.seq[0], self.seq[1], ACK, b"")

    def seg(self, from_client, offset, payload, flags=PSH | ACK, ts=None):
        """A segment at `offset` bytes after the direction's current position (not advanced)."""
        d = 0 if from_client else 1
        if from_client:
            self.cap.packet(self.cip, self.bip, self.cport, BROKER_PORT, self.seq[0] + offset,
                            self.seq[1], flags, payload, ts)
        else:
            self.cap.packet(self.bip, self.cip, BROKER_PORT, self.cport, self.seq[1] + offset,
                            self.seq[0], flags, payload, ts)
        return d

    def send(self, from_client, data, mss=1448, ts=None):
        d = 0 if from_client else 1
        mv = memoryview(data)
        for i in range(0, len(data), mss):
            chunk = bytes(mv[i : i + mss])
            self.seg(from_client, 0, chunk, ts=ts)
            self.seq[d] += len(chunk)

    def skip(self, from_client, n):
        """Advances the direction by `n` bytes that are never sent (a hole)."""
        self.seq[0 if from_client else 1] += n

    def fin(self):
        self.cap.packet(self.cip, self.bip, self.cport, BROKER_PORT, self.seq[0], self.seq[1], FIN | ACK, b"")
        self.cap.packet(self.bip, self.cip, BROKER_PORT, self.cport, self.seq[1], self.seq[0] + 1,
                        FIN | ACK, b"")
        self.seq[0] += 1
        self.seq[1] += 1


def big(scale, small, full, fuzz=None):
    """The size for the scale: `fuzz` sizes fit the fuzz targets' -max_len (fuzz/run.sh) and
    keep what makes the input hostile (the bombs stay 64 MiB: they are small on the wire)."""
    if scale == "full":
        return full
    if scale == "fuzz" and fuzz is not None:
        return fuzz
    return small


# ---------------------------------------------------------------------------------------------
# The generators. Each takes (out, scale, opts) and writes its input to the binary file `out`.


def nested_bomb_frame(zeros, corr=1):
    """Produce v2 whose message set is a magic-1 gzip wrapper holding a magic-1 zstd wrapper
    whose value inflates to `zeros` zero bytes: every 12 of them read as a legacy message of
    size 0. The whole frame is ~160 bytes at 64 MiB (the inner zstd frame of RLE blocks is
    2 KiB of a repeated 4-byte pattern, which gzip folds to a few dozen bytes)."""
    inner = legacy_message(zstd_rle(zeros), codec=4, magic=1)
    outer = legacy_message(gzip.compress(inner, 9, mtime=0), codec=1, magic=1)
    return produce_request_v2(corr, outer, topic="b")


def gen_nested_bomb(out, scale, opts):
    """Item 1: a ~163-byte Produce v2 frame: gzip wrapper > zstd wrapper > 64 MiB of zeros
    (small: 1 MiB), which read as millions of zero-size legacy messages."""
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, nested_bomb_frame(big(scale, 1 * MiB, 64 * MiB, 64 * MiB)))
    c.send(False, produce_response_v2(1, topic="b"))
    c.fin()


def gen_zero_message_set(out, scale, opts):
    """Item 1b: a Produce v2 frame whose message set is 8 MiB of zeros (small: 256 KiB),
    uncompressed: a zero-size legacy message every 12 bytes."""
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, produce_request_v2(1, bytes(big(scale, 256 * 1024, 8 * MiB, 12 * 1024))), mss=65000)
    c.send(False, produce_response_v2(1))
    c.fin()


def bomb_batches(n, zeros):
    return b"".join(
        record_batch(zstd_rle(zeros), 1, codec=4, base_offset=i) for i in range(n)
    )


def gen_batch_bombs(out, scale, opts):
    """Item 2: one ~34 KB Produce v8 request of 16 record batches, each a zstd bomb of 64 MiB
    of zeros (small: 1 MiB each): --max-decompressed is per batch."""
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, produce_request_v8(1, bomb_batches(big(scale, 16, 16, 7), big(scale, 1 * MiB, 64 * MiB, 64 * MiB))))
    c.send(False, produce_response_v8(1))
    c.fin()


def gen_nested_arrays(out, scale, opts):
    """Item 3: a valid CreateTopics v5 request of 100 topics x 10 000 configs, 3 MB (small:
    20 x 2 000, 120 KB): the tree costs ~320 bytes per wire byte."""
    t, n = big(scale, (20, 2000), (100, 10000), (3, 1000))
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, create_topics_v5(1, t, n), mss=65000)
    c.fin()


def gen_hex_stream(out, scale, opts):
    """Item 4: hex text, lines of "00 00 ... 00" (16 bytes a line), N MiB of text (default
    1024 MiB full, 512 KiB small; --mib N): --hex reads all of it before parsing."""
    mib = opts.get("mib") or big(scale, 0.5, 1024, 1 / 128)
    line = b"00 " * 15 + b"00\n"
    per_block = MiB // len(line)
    block = line * per_block
    lines = int(mib * MiB) // len(line)  # whole lines only
    while lines > 0:
        k = min(lines, per_block)
        out.write(block if k == per_block else line * k)
        lines -= k


def gen_many_connections(out, scale, opts):
    """Item 5: 200 000 short connections (small: 2 000), each a handshake, an ApiVersions
    request and its response, never closed: past --max-connections every new one evicts."""
    n = big(scale, 2000, 200_000, 40)
    cap = Pcap(out)
    req = api_versions_request(1)
    resp = api_versions_response(1)
    for i in range(n):
        c = Conn(cap, i)
        c.send(True, req)
        c.send(False, resp)


def gen_tiny_pieces(out, scale, opts):
    """Item 7: one connection whose client sends 1 000 000 one-byte segments (small: 10 000),
    each after a hole, so that none can be delivered: 1 MB of payload, far more of memory."""
    n = big(scale, 10_000, 1_000_000, 150)
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, api_versions_request(1))
    c.send(False, api_versions_response(1))
    for i in range(n):
        c.seg(True, 1 + 2 * i, b"\x00")
    c.fin()


def gen_bogus_prefix(out, scale, opts):
    """Item 9 (capture): a request, then a size prefix of 90 MiB (under --max-frame) with a
    plausible Metadata header, then 5 requests (full: 50) that the broker answers, as does it
    the first: the frames after the prefix must be shown."""
    n = big(scale, 5, 50)
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, metadata_request_v12(1))
    c.send(False, metadata_response_v1_like(1))
    bogus = i32(90 * MiB) + i16(3) + i16(12) + i32(2) + string("hostile") + b"\x00" * 8
    c.send(True, bogus)
    for k in range(n):
        corr = 3 + k
        c.send(True, metadata_request_v12(corr))
        c.send(False, metadata_response_v1_like(corr))
    c.fin()


def gen_frames_in_progress(out, scale, opts):
    """Frames still arriving on several connections at once: 5 connections each send a
    Metadata request header with a size prefix of 100 MiB (small: 512 KiB) and all but the
    last KiB of its zeros, one connection after the other, so that all five are held at once
    (500 MiB; small: 2.5 MiB, past `--max-frames-total 1M`). Then each frame is finished and
    followed by an answered request: those must be shown whatever was let go."""
    size = big(scale, 512 * 1024, 100 * MiB, fuzz=4096)
    cap = Pcap(out)
    conns = []
    for i in range(5):
        c = Conn(cap, i)
        c.send(True, metadata_request_v12(1))
        c.send(False, metadata_response_v1_like(1))
        conns.append(c)
    head = i16(3) + i16(12) + i32(2) + string("hostile") + b"\x00" * 8
    body = head + bytes(size - len(head))
    for c in conns:
        c.send(True, i32(size) + body[:-1024], mss=65000)
    for c in conns:
        c.send(True, body[-1024:])
        c.send(True, metadata_request_v12(3))
        c.send(False, metadata_response_v1_like(3))
        c.fin()


def gen_big_frame_while_waiting(out, scale, opts):
    """One connection's request waits for its answer while another connection sends a frame
    bigger than the whole --max-frames-total (small: 3 MiB; full: 100 MiB): letting go of the
    big frame must not take the waiting request with it."""
    size = big(scale, 3 * MiB, 100 * MiB, fuzz=4096)
    cap = Pcap(out)
    a, b = Conn(cap, 0), Conn(cap, 1)
    a.send(True, metadata_request_v12(1))
    head = i16(3) + i16(12) + i32(2) + string("hostile") + b"\x00" * 8
    b.send(True, i32(size) + head + bytes(size - len(head)), mss=65000)
    b.send(True, metadata_request_v12(3))
    a.send(False, metadata_response_v1_like(1))


def gen_big_request_while_waiting(out, scale, opts):
    """A request waits for its answer while another connection sends a CreateTopics request
    whose tree alone (300 000 nodes at the default --max-nodes, 75 MB) passes what the
    exchange filters may hold: holding it must not let go of the waiting one."""
    t, n = big(scale, (30, 3000), (30, 3000), (2, 100))
    cap = Pcap(out)
    a, b = Conn(cap, 0), Conn(cap, 1)
    a.send(True, metadata_request_v12(1))
    b.send(True, create_topics_v5(1, t, n), mss=65000)
    a.send(False, metadata_response_v1_like(1))


def metadata_response_v1_like(corr):
    """A Metadata v12 response (flexible): no brokers, no topics."""
    body = response_header(corr, flexible=True)
    body += i32(0)  # throttle
    body += b"\x01"  # brokers: empty
    body += b"\x00"  # cluster id: null
    body += i32(-1)  # controller
    body += b"\x01"  # topics: empty
    body += b"\x00"  # tags
    return frame(body)


def hex_text(data, comment=None):
    lines = []
    if comment:
        lines.append("# " + comment)
    for i in range(0, len(data), 16):
        lines.append(" ".join("%02x" % b for b in data[i : i + 16]))
    return ("\n".join(lines) + "\n").encode()


def gen_hex_bogus_prefix(out, scale, opts):
    """Item 9 (hex): a Metadata request, a frame whose size prefix is over --max-frame
    (0x7ffffff0) followed by a few bytes, then 3 (full: 30) more requests: they must be shown."""
    n = big(scale, 3, 30)
    data = metadata_request_v12(1)
    data += i32(0x7FFFFFF0) + i16(3) + i16(12) + i32(2) + b"\xff" * 6
    for k in range(n):
        data += metadata_request_v12(3 + k, ["after-%d" % k])
    out.write(hex_text(data))


def gen_junk(out, scale, opts):
    """Item 10a: a connection whose client sends 2 MiB of junk (0xff bytes: every size prefix
    negative; small: 1 MiB + 64 KiB, just past the 1 MiB search window) before a valid request:
    the skipped-byte count must be the junk's size exactly."""
    n = big(scale, MiB + 64 * 1024, 2 * MiB, 8 * 1024)
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, b"\xff" * n)
    c.send(True, metadata_request_v12(1, ["after-junk"]))
    c.send(False, metadata_response_v1_like(1))
    c.fin()


def gen_many_topics(out, scale, opts):
    """Item 10b: a Metadata v1 response naming 2 000 000 topics (small: 20 000), after its
    request: the summary must count them all ("+N more")."""
    n = big(scale, 20_000, 2_000_000, 1000)
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, metadata_request_v1(1))
    c.send(False, metadata_response_v1(1, n), mss=65000)
    c.fin()


def gen_many_batches(out, scale, opts):
    """Item 10c: a Produce v8 request of 20 000 record batches (small: 12 000) of one record
    each: the summary must say records=20000."""
    n = big(scale, 12_000, 20_000, 150)
    rec = record(b"v")
    data = b"".join(record_batch(rec, 1, base_offset=i) for i in range(n))
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, produce_request_v8(1, data), mss=65000)
    c.send(False, produce_response_v8(1))
    c.fin()


def gen_backwards_time(out, scale, opts):
    """Item 10d: a request answered by a response whose timestamp is 5 s before the request's
    (full: 100 such exchanges): a negative latency must come with a notice."""
    n = big(scale, 1, 100)
    cap = Pcap(out)
    c = Conn(cap, 0)
    for k in range(n):
        t = cap.ts + 10_000_000
        c.send(True, metadata_request_v12(1 + k), ts=t)
        c.send(False, metadata_response_v1_like(1 + k), ts=t - 5_000_000)
        cap.ts = t
    c.fin()


def gen_lz4_no_end_mark(out, scale, opts):
    """Item 11a: a Produce v8 request whose lz4 batch is an LZ4 frame without its end mark."""
    recs = b"".join(record(b"value-%d" % i, offset_delta=i) for i in range(3))
    batch = record_batch(lz4_frame(recs, end_mark=False), 3, codec=3)
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, produce_request_v8(1, batch))
    c.send(False, produce_response_v8(1))
    c.fin()


def gen_lz4_trailing(out, scale, opts):
    """Item 11b: a Produce v8 request whose lz4 batch has 16 bytes after its LZ4 frame."""
    recs = b"".join(record(b"value-%d" % i, offset_delta=i) for i in range(3))
    batch = record_batch(lz4_frame(recs) + b"\xa5" * 16, 3, codec=3)
    cap = Pcap(out)
    c = Conn(cap, 0)
    c.send(True, produce_request_v8(1, batch))
    c.send(False, produce_response_v8(1))
    c.fin()


def gen_zstd_window(out, scale, opts):
    """Item 17: a .pcap.zst whose zstd frame declares a 2 GiB window (window log 31, as `zstd
    --long=31` writes into a stream of unknown size): a pcap of a Metadata exchange in raw
    blocks, then zeros (empty packet records) in RLE blocks, 2.5 GiB decompressed in all
    (small: 1 MiB). A decoder that keeps the declared window grows to 2 GiB on the ~80 KB
    file; kdissect refuses the frame unless --max-zstd-window allows 2G."""
    zeros = big(scale, 1 * MiB, 2560 * MiB, 64 * 1024)
    pcap = io.BytesIO()
    cap = Pcap(pcap)
    c = Conn(cap, 0)
    c.send(True, metadata_request_v12(1))
    c.send(False, metadata_response_v1_like(1))
    c.fin()
    out.write(zstd_blocks(pcap.getvalue(), zeros, 21 << 3))


# The sizes of `everything`: full scale hits the default limits; small scale hits the limits
# that tests/hostile_inputs.rs passes (EVERYTHING_SMALL_LIMITS there).
EVERYTHING = {
    "full": dict(max_frame=100 * MiB, bomb=64 * MiB, nested_bombs=64, batch_bombs=512,
                 create_topics=(100, 10000), topics=2_000_000, junk=2 * MiB, pending=10_001,
                 held=16 * MiB, piece=60000, tiny=1_000_000, conns=110_000),
    "fuzz": dict(max_frame=8 * 1024, bomb=64 * MiB, nested_bombs=2, batch_bombs=2,
                 create_topics=(2, 100), topics=100, junk=1024, pending=20,
                 held=4096, piece=500, tiny=100, conns=20),
    "small": dict(max_frame=256 * 1024, bomb=256 * 1024, nested_bombs=4, batch_bombs=16,
                  create_topics=(10, 300), topics=2_000, junk=8 * 1024, pending=301,
                  held=32 * 1024, piece=1000, tiny=2_000, conns=600),
}


def gen_everything(out, scale, opts):
    """Every limit at once, in one capture (full: ~330 MB; small: the same shape scaled down,
    for limits scaled down as well):
    - a frame of exactly --max-frame (100 MiB), Produce v2: 64 nested gzip > zstd bombs of
      64 MiB each, then zeros (zero-size legacy messages) to the end of the frame;
    - a Produce v8 request of 512 zstd record batch bombs of 64 MiB each (1 MB on the wire);
    - CreateTopics v5 of 100 x 10 000 configs (--max-elements in nested arrays), and a
      Metadata response of 2 000 000 topics;
    - 2 MiB of junk before a frame (the search window), then a bogus 90 MiB size prefix
      followed by answered requests;
    - 10 001 requests waiting on one connection (--max-pending);
    - both directions of one connection holding --max-buffered (16 MiB) out of order behind a
      hole, and one million 1-byte pieces behind holes on another;
    - 110 000 connections never closed (--max-connections 100 000), opened last so that the
      buffers above are held while they come."""
    z = EVERYTHING[scale]
    cap = Pcap(out)
    idx = [0]

    def conn(**kw):
        c = Conn(cap, idx[0], **kw)
        idx[0] += 1
        return c

    # 1. The biggest frame allowed, full of nested bombs and zero-size messages.
    max_frame = z["max_frame"]
    bomb = legacy_message(
        gzip.compress(legacy_message(zstd_rle(z["bomb"]), codec=4), 9, mtime=0), codec=1
    )
    head = produce_request_v2(1, b"")  # the frame without records, to size the message set
    room = max_frame + 4 - len(head)  # the size prefix is then exactly max_frame
    ms = bomb * z["nested_bombs"]
    ms += bytes(room - len(ms))
    f = produce_request_v2(1, ms)
    assert len(f) == max_frame + 4
    c = conn()
    c.send(True, f, mss=65000)
    c.send(False, produce_response_v2(1))
    # 2. Record batch bombs.
    c.send(True, produce_request_v8(2, bomb_batches(z["batch_bombs"], z["bomb"])), mss=65000)
    c.send(False, produce_response_v8(2))
    # 3. Nested arrays and a huge topic list.
    c.send(True, create_topics_v5(3, *z["create_topics"]), mss=65000)
    c.send(True, metadata_request_v1(4))
    c.send(False, metadata_response_v1(4, z["topics"]), mss=65000)
    # 4. Junk, then a bogus prefix, then answered requests.
    j = conn()
    j.send(True, b"\xff" * z["junk"], mss=65000)
    j.send(True, metadata_request_v12(1))
    j.send(False, metadata_response_v1_like(1))
    j.send(True, i32(90 * MiB) + i16(3) + i16(12) + i32(2) + string("x") + bytes(8))
    for k in range(5):
        j.send(True, metadata_request_v12(3 + k))
        j.send(False, metadata_response_v1_like(3 + k))
    # 5. Requests that wait.
    p = conn()
    for k in range(z["pending"]):
        p.send(True, api_versions_request(k))
    # 6. Buffers held behind holes: --max-buffered a direction in big pieces, then tiny pieces.
    b = conn()
    b.send(True, api_versions_request(1))
    b.send(False, api_versions_response(1))
    held, piece = z["held"], z["piece"]
    for from_client in (True, False):
        for off in range(1, held - piece, piece):
            b.seg(from_client, off, bytes(piece - 1))
    t = conn()
    t.send(True, api_versions_request(1))
    for i in range(z["tiny"]):
        t.seg(True, 1 + 2 * i, b"\x00")
    # 7. Connections past --max-connections, each with an exchange, never closed.
    req, resp = api_versions_request(1), api_versions_response(1)
    for _ in range(z["conns"]):
        x = conn()
        x.send(True, req)
        x.send(False, resp)


def metadata_response_v12_ids(corr, n_topics, name_len):
    """Metadata v12 response naming `n_topics` topic ids (ids 1..n), names `name_len` bytes."""
    out = io.BytesIO()
    out.write(response_header(corr, flexible=True))
    out.write(i32(0) + b"\x01" + b"\x00" + i32(-1))  # throttle, no brokers, cluster id, controller
    out.write(uvarint(n_topics + 1))
    for i in range(n_topics):
        tid = bytes(12) + u32(i + 1)
        nm = ("t%d-" % i).encode().ljust(name_len, b"x")
        out.write(i16(0) + compact_string(nm) + tid + b"\x00" + b"\x01" + i32(0) + b"\x00")
    out.write(b"\x00")
    return frame(out.getvalue())


# The sizes of `worst-case`: full scale fills every memory budget of docs/robustness.md at its
# default at the same moment; small is the same shape for small limits (tests).
WORST = {
    "full": dict(conns=19_990, recent=2048, recent_bytes=33 * 1024, ooo_conns=9,
                 ooo=16 * MiB - 256 * 1024, piece=60000, in_progress=2, max_frame=100 * MiB,
                 pending=10_000, topics=100_000, name_len=249, bomb=64 * MiB,
                 nested_bombs=64),
    "small": dict(conns=300, recent=40, recent_bytes=33 * 1024, ooo_conns=2,
                  ooo=256 * 1024, piece=1000, in_progress=2, max_frame=256 * 1024,
                  pending=300, topics=500, name_len=249, bomb=256 * 1024, nested_bombs=4),
}
WORST["fuzz"] = dict(conns=20, recent=4, recent_bytes=1024, ooo_conns=2, ooo=8 * 1024,
                     piece=500, in_progress=2, max_frame=8 * 1024, pending=20, topics=20,
                     name_len=249, bomb=64 * MiB, nested_bombs=2)


def gen_worst_case(out, scale, opts):
    """Every memory budget full at the same moment (full: ~720 MB), the moment a 100 MiB
    frame of decompression bombs is decoded. In order, nothing ever closed:
    - 19 990 connections with one exchange each (connection state, --max-connections), the
      last 2048 of them also with 33 KiB each way (the copies kept for the retransmission
      check, 2048 x 64 KiB);
    - a Metadata v12 response naming 100 000 topic ids with 249-byte names (the names kept);
    - 9 connections holding just under 16 MiB each way out of order behind a hole, 18
      directions of 16 MiB against --max-buffered-total (256 MiB);
    - 10 000 requests waiting on one connection (--max-pending, and --max-frames-total);
    - 2 frames of 100 MiB still arriving, 1 KiB short (--max-frames-total);
    - then a Produce v2 frame of exactly --max-frame, 64 nested gzip > zstd bombs of 64 MiB
      and zero-size messages (--max-decompressed, --max-nodes), and its response."""
    z = WORST[scale]
    cap = Pcap(out)
    idx = [0]

    def conn():
        c = Conn(cap, idx[0])
        idx[0] += 1
        return c

    req, resp = api_versions_request(1), api_versions_response(1)
    pad = lambda n: frame(request_header(18, 0, 2) + bytes(n))
    for i in range(z["conns"]):
        c = conn()
        c.send(True, req)
        c.send(False, resp)
        if i >= z["conns"] - z["recent"]:
            c.send(True, pad(z["recent_bytes"]), mss=65000)
            c.send(False, frame(response_header(2) + bytes(z["recent_bytes"])), mss=65000)
    m = conn()
    m.send(True, metadata_request_v12(1))
    m.send(False, metadata_response_v12_ids(1, z["topics"], z["name_len"]), mss=65000)
    ooo, piece = z["ooo"], z["piece"]
    for _ in range(z["ooo_conns"]):
        b = conn()
        b.send(True, req)
        b.send(False, resp)
        for from_client in (True, False):
            for off in range(1, ooo - piece, piece):
                b.seg(from_client, off, bytes(piece - 1))
    p = conn()
    for k in range(z["pending"]):
        p.send(True, api_versions_request(k))
    head = i16(3) + i16(12) + i32(2) + string("hostile") + b"\x00" * 8
    body = head + bytes(z["max_frame"] - len(head))
    for _ in range(z["in_progress"]):
        f = conn()
        f.send(True, metadata_request_v12(1))
        f.send(True, i32(z["max_frame"]) + body[:-1024], mss=65000)
    bomb = legacy_message(
        gzip.compress(legacy_message(zstd_rle(z["bomb"]), codec=4), 9, mtime=0), codec=1
    )
    head = produce_request_v2(1, b"")
    room = z["max_frame"] + 4 - len(head)
    ms = bomb * z["nested_bombs"]
    ms += bytes(room - len(ms))
    last = conn()
    last.send(True, produce_request_v2(1, ms), mss=65000)
    last.send(False, produce_response_v2(1))


# name, file extension, item of the issue, what it is (one line).
# ---------------------------------------------------------------------------------------------
# Consumer groups (issue 35, items 16 and 17): a huge JoinGroup answer, endless rebalances.


def consumer_subscription(topics=("t",)):
    """ConsumerProtocolSubscription v0: the topics, no user data."""
    out = i16(0) + i32(len(topics))
    for t in topics:
        out += string(t)
    return out + i32(-1)


def consumer_assignment(topic, partitions):
    """ConsumerProtocolAssignment v0: one topic's partitions, no user data."""
    out = i16(0) + i32(1) + string(topic) + i32(len(partitions))
    for p in partitions:
        out += i32(p)
    return out + i32(-1)


def join_group_request_v5(corr, group, member, client_id="hostile"):
    body = string(group) + i32(6000) + i32(30000) + string(member) + NULL_STRING
    body += string("consumer") + i32(1) + string("range")
    sub = consumer_subscription()
    body += i32(len(sub)) + sub
    return frame(request_header(11, 5, corr, client_id) + body)


def join_group_response_v5(corr, generation, leader, member, members):
    """JoinGroup v5 answer; `members` (the leader's answer) each with a subscription."""
    out = io.BytesIO()
    out.write(response_header(corr) + i32(0) + i16(0) + i32(generation))
    out.write(string("range") + string(leader) + string(member))
    out.write(i32(len(members)))
    sub = consumer_subscription()
    for m in members:
        out.write(string(m) + NULL_STRING + i32(len(sub)) + sub)
    return frame(out.getvalue())


def sync_group_request_v3(corr, group, generation, member, assignments):
    body = string(group) + i32(generation) + string(member) + NULL_STRING
    body += i32(len(assignments))
    for m, a in assignments:
        body += string(m) + i32(len(a)) + a
    return frame(request_header(14, 3, corr) + body)


def sync_group_response_v3(corr, assignment):
    return frame(response_header(corr) + i32(0) + i16(0) + i32(len(assignment)) + assignment)


def gen_big_join(out, scale, opts):
    """Item 16: one JoinGroup answer listing 12 000 members (small: 2 500), then the
    leader's SyncGroup giving each a partition: the group timeline must index its members
    (one such answer took 94 s) and list at most 1 000 of them per generation."""
    n = big(scale, 2_500, 12_000, 200)
    cap = Pcap(out)
    c = Conn(cap, 0)
    members = ["member-%06d" % i for i in range(n)]
    c.send(True, join_group_request_v5(1, "big-group", ""))
    c.send(False, join_group_response_v5(1, 1, members[0], members[0], members))
    assignments = [(m, consumer_assignment("t", [i])) for i, m in enumerate(members)]
    c.send(True, sync_group_request_v3(2, "big-group", 1, members[0], assignments))
    c.send(False, sync_group_response_v3(2, assignments[0][1]))
    c.fin()


def gen_rebalances(out, scale, opts):
    """Items 16 and 17: 40 000 rebalances (small: 600), each by a member with a new member
    id, alone in its generation: the timeline must keep its newest generations and events
    only (40 MB of rebalances took 2.4 GiB) and find each member without scanning every
    generation (227 s)."""
    n = big(scale, 600, 40_000, 20)
    cap = Pcap(out)
    c = Conn(cap, 0)
    corr = 0
    for g in range(1, n + 1):
        m = "member-%06d" % g
        corr += 1
        c.send(True, join_group_request_v5(corr, "churning-group", ""))
        c.send(False, join_group_response_v5(corr, g, m, m, [m]))
        a = consumer_assignment("t", [0])
        corr += 1
        c.send(True, sync_group_request_v3(corr, "churning-group", g, m, [(m, a)]))
        c.send(False, sync_group_response_v3(corr, a))
    c.fin()


# ---------------------------------------------------------------------------------------------
# Tables (issue 35, item 16): one cell listing every client id of a capture.


def gen_client_ids(out, scale, opts):
    """Item 16: 30 000 distinct client ids (small: 2 000), each sending one answered
    Metadata v1 request over one connection, none announcing its software: the versions
    table lists them all in one cell, whose fitting was quadratic in the cell's width (more
    than 15 minutes at 30 000, deaf to SIGTERM); the tables must be fitted in time linear in
    their cells."""
    n = big(scale, 2_000, 30_000, 20)
    cap = Pcap(out)
    c = Conn(cap, 0)
    for i in range(n):
        c.send(True, frame(request_header(3, 1, i, "client-%05d" % i) + i32(-1)))
        c.send(False, metadata_response_v1(i, 0))
    c.fin()


def produce_request_v8_wide(corr, n, topic="wide"):
    """Produce v8 of one topic and `n` partitions, one batch of one record each."""
    batch = record_batch(record(b"v"), 1)
    parts = b"".join(i32(p) + i32(len(batch)) + batch for p in range(n))
    body = NULL_STRING + i16(-1) + i32(30000) + i32(1) + string(topic) + i32(n) + parts
    return frame(request_header(0, 8, corr) + body)


def produce_response_v8_wide(corr, n, base, topic="wide"):
    """Its answer: partition p's record at offset `base`."""
    part = lambda p: i32(p) + i16(0) + i64(base) + i64(-1) + i64(0) + i32(0) + NULL_STRING
    body = i32(1) + string(topic) + i32(n) + b"".join(part(p) for p in range(n)) + i32(0)
    return frame(response_header(corr) + body)


def offset_commit_v2_wide(corr, n, offset, topic="wide", group="wide-group"):
    """OffsetCommit v2 of `n` partitions of one topic at `offset`."""
    parts = b"".join(i32(p) + i64(offset) + NULL_STRING for p in range(n))
    body = string(group) + i32(1) + string("member-1") + i64(-1)
    body += i32(1) + string(topic) + i32(n) + parts
    return frame(request_header(8, 2, corr) + body)


def offset_commit_response_v2_wide(corr, n, topic="wide"):
    body = i32(1) + string(topic) + i32(n) + b"".join(i32(p) + i16(0) for p in range(n))
    return frame(response_header(corr) + body)


def gen_wide_exchange(out, scale, opts):
    """Item 16: exchanges of 80 000 partitions (small: 3 000): a Produce of one record to
    each, answered, then two commits of them all. Each answer's partitions must be found in
    its request by partition, not by a search of the request (one such exchange took 37 s).
    Partition p's records are at offsets 0 and 1 (two Produce exchanges); the commits are at
    offsets 1 then 2: committed lag 1, then 0."""
    n = big(scale, 3_000, 80_000, 50)
    cap = Pcap(out)
    c = Conn(cap, 0)
    for corr, base in [(1, 0), (2, 1)]:
        c.send(True, produce_request_v8_wide(corr, n))
        c.send(False, produce_response_v8_wide(corr, n, base))
    for corr, offset in [(3, 1), (4, 2)]:
        c.send(True, offset_commit_v2_wide(corr, n, offset))
        c.send(False, offset_commit_response_v2_wide(corr, n))
    c.fin()


GENERATORS = [
    ("nested-bomb", "pcap", "1", gen_nested_bomb,
     "163-byte Produce v2: gzip wrapper > zstd wrapper > 64 MiB of zeros (zero-size messages)"),
    ("zero-message-set", "pcap", "1b", gen_zero_message_set,
     "Produce v2 with an uncompressed 8 MiB message set of zeros"),
    ("batch-bombs", "pcap", "2", gen_batch_bombs,
     "34 KB Produce v8 of 16 zstd record batches of 64 MiB of zeros each"),
    ("nested-arrays", "pcap", "3", gen_nested_arrays,
     "valid 3 MB CreateTopics v5: 100 topics x 10 000 configs"),
    ("hex-stream", "hex", "4", gen_hex_stream,
     "N MiB of '00 00 ...' hex lines (1 GiB full; --mib N; OUT - to pipe it)"),
    ("many-connections", "pcap", "5", gen_many_connections,
     "200 000 short connections, never closed (eviction past --max-connections)"),
    ("tiny-pieces", "pcap", "7", gen_tiny_pieces,
     "1 000 000 one-byte segments behind holes (--max-buffered counts payload only)"),
    ("bogus-prefix", "pcap", "9", gen_bogus_prefix,
     "a 90 MiB size prefix, then answered requests that must still be shown"),
    ("big-frame-while-waiting", "pcap", "mem", gen_big_frame_while_waiting,
     "a frame larger than --max-frames-total while another connection waits for an answer"),
    ("big-request-while-waiting", "pcap", "mem", gen_big_request_while_waiting,
     "a request whose tree passes what the exchange filters hold, while another waits"),
    ("frames-in-progress", "pcap", "mem", gen_frames_in_progress,
     "5 frames of 100 MiB arriving at once on 5 connections (--max-frames-total)"),
    ("hex-bogus-prefix", "hex", "9", gen_hex_bogus_prefix,
     "hex: a size prefix over --max-frame, then frames that must still be shown"),
    ("junk", "pcap", "10", gen_junk,
     "2 MiB of junk before a frame: the skipped-byte count must be exact"),
    ("many-topics", "pcap", "10", gen_many_topics,
     "Metadata v1 response of 2 000 000 topics: the summary must count them all"),
    ("many-batches", "pcap", "10", gen_many_batches,
     "Produce v8 of 20 000 batches: the summary must say records=20000"),
    ("backwards-time", "pcap", "10", gen_backwards_time,
     "a response timestamped before its request: negative latency needs a notice"),
    ("lz4-no-end-mark", "pcap", "11", gen_lz4_no_end_mark,
     "lz4 batch whose LZ4 frame has no end mark"),
    ("lz4-trailing", "pcap", "11", gen_lz4_trailing,
     "lz4 batch with 16 bytes after its LZ4 frame"),
    ("zstd-window", "pcap.zst", "17", gen_zstd_window,
     "80 KB .pcap.zst declaring a 2 GiB zstd window, 2.5 GiB of zeros (refused by default)"),
    ("worst-case", "pcap", "mem", gen_worst_case,
     "every memory budget full at once when a 100 MiB bomb frame is decoded (~720 MB)"),
    ("big-join", "pcap", "16", gen_big_join,
     "JoinGroup answer of 12 000 members: members indexed, 1 000 listed a generation"),
    ("rebalances", "pcap", "16", gen_rebalances,
     "40 000 rebalances with new member ids: newest generations and events kept, the rest counted"),
    ("client-ids", "pcap", "16", gen_client_ids,
     "30 000 client ids in one versions cell: tables fitted in time linear in their cells"),
    ("wide-exchange", "pcap", "16", gen_wide_exchange,
     "Produce and OffsetCommit exchanges of 80 000 partitions: answers found by partition"),
    ("everything", "pcap", "all", gen_everything,
     "one capture hitting every limit at once (worst case; ~330 MB full)"),
]


def usage():
    sys.stderr.write(__doc__)
    sys.exit(2)


def main(argv):
    if not argv:
        usage()
    if argv[0] == "LIST":
        for name, ext, item, _, what in GENERATORS:
            print("%-17s %-8s item %-3s  %s" % (name, ext, item, what))
        return 0
    args = list(argv)
    scale = "small"
    opts = {}
    if "--scale" in args:
        i = args.index("--scale")
        scale = args[i + 1] if i + 1 < len(args) else ""
        del args[i : i + 2]
    if "--mib" in args:
        i = args.index("--mib")
        opts["mib"] = float(args[i + 1])
        del args[i : i + 2]
    if scale not in ("small", "full", "fuzz") or len(args) != 2:
        usage()
    name, dest = args
    table = {n: (e, f) for n, e, _, f, _ in GENERATORS}
    if name == "all":
        import os

        os.makedirs(dest, exist_ok=True)
        for n, e, _, f, _ in GENERATORS:
            if n == "hex-stream" and scale == "full" and "mib" not in opts:
                continue  # a gigabyte of text: stream it from the generator instead
            with open(os.path.join(dest, "%s.%s" % (n, e)), "wb") as fh:
                w = io.BufferedWriter(fh, 1 << 20)
                f(w, scale, opts)
                w.flush()
        return 0
    if name not in table:
        sys.stderr.write("unknown generator %r; `%s LIST` lists them\n" % (name, sys.argv[0]))
        return 2
    _, fn = table[name]
    try:
        if dest == "-":
            w = io.BufferedWriter(sys.stdout.buffer.raw, 1 << 20) if hasattr(sys.stdout.buffer, "raw") else sys.stdout.buffer
            fn(w, scale, opts)
            w.flush()
        else:
            with open(dest, "wb") as fh:
                w = io.BufferedWriter(fh, 1 << 20)
                fn(w, scale, opts)
                w.flush()
    except BrokenPipeError:
        # The reader stopped (e.g. `| head`): not an error of the generator.
        try:
            sys.stdout = None
        except Exception:
            pass
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
