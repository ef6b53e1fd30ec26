#!/usr/bin/env python3
"""Deterministic damage for classic pcap captures of Kafka traffic.

Reads a classic pcap (microsecond or nanosecond; Ethernet, Linux cooked v1/v2, BSD NULL or
raw IP link layer), applies one edit and writes a classic pcap of the same kind. Every edit
names the frames it changed, numbered as in Wireshark (first frame is 1), and says where those
segments sit in the Kafka byte stream (which message, by correlation id, and which bytes of it).

    pcap_mangle.py describe IN              list the TCP data segments and their Kafka messages
    pcap_mangle.py pick IN                  print the frame number the edits pick by default
    pcap_mangle.py reorder IN OUT [--frame N]
        swap data segment N with the next data segment of the same direction
    pcap_mangle.py duplicate IN OUT [--frame N] [--gap K]
        insert an exact copy of data segment N after the K-th following packet (a retransmission)
    pcap_mangle.py drop IN OUT [--frame N]
        remove data segment N (a segment lost before the capture point)
    pcap_mangle.py merge-skew IN OUT [--count 50] [--max-gap 7] [--seed S]
        move COUNT data segments each after a later data segment of the same direction at most
        MAX-GAP packets on, the other direction's packets staying where they were: as in a
        capture merged from two taps, an answer and its ACK can come before the last segment
        of what it answers
    pcap_mangle.py readdress IN OUT --from ADDR:PORT --to ADDR:PORT
        give the endpoint FROM (IPv4) the address and port TO in every packet, both ways, with
        the IPv4 and TCP checksums recomputed: one node's capture made to look like another
        node's, so that captures of single nodes merge (mergecap) into one of several

Without --frame, the target is the middle segment of the largest multi-segment Kafka message
(the segment at index len//2 of its segments), so the edit lands inside one message.
Timestamps keep their positions: packets change places, the capture stays in time order, and
a duplicate gets the timestamp of the packet it follows. Only the Python standard library is
used.
"""

import argparse
import hashlib
import ipaddress
import struct
import sys

LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276

MAGICS = {
    b"\xd4\xc3\xb2\xa1": ("<", 1_000_000),
    b"\xa1\xb2\xc3\xd4": (">", 1_000_000),
    b"\x4d\x3c\xb2\xa1": ("<", 1_000_000_000),
    b"\xa1\xb2\x3c\x4d": (">", 1_000_000_000),
}


class Pcap:
    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] not in MAGICS:
            sys.exit(f"{path}: not a classic pcap file (convert pcapng with editcap -F pcap)")
        self.endian, self.ticks = MAGICS[data[:4]]
        self.header = data[:24]
        self.linktype = struct.unpack(self.endian + "I", data[20:24])[0] & 0x0FFFFFFF
        self.records = []  # [sec, frac, orig_len, bytes]
        off = 24
        while off + 16 <= len(data):
            sec, frac, incl, orig = struct.unpack(self.endian + "IIII", data[off : off + 16])
            self.records.append([sec, frac, orig, data[off + 16 : off + 16 + incl]])
            off += 16 + incl

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.header)
            for sec, frac, orig, pkt in self.records:
                f.write(struct.pack(self.endian + "IIII", sec, frac, len(pkt), orig))
                f.write(pkt)


def ip_offset(linktype, pkt):
    """Offset of the IP header in a packet, or None."""
    if linktype == LINKTYPE_ETHERNET:
        off, ethertype = 14, struct.unpack(">H", pkt[12:14])[0]
        while ethertype in (0x8100, 0x88A8) and len(pkt) >= off + 4:
            ethertype = struct.unpack(">H", pkt[off + 2 : off + 4])[0]
            off += 4
        return off if ethertype in (0x0800, 0x86DD) else None
    if linktype == LINKTYPE_LINUX_SLL:
        return 16 if struct.unpack(">H", pkt[14:16])[0] in (0x0800, 0x86DD) else None
    if linktype == LINKTYPE_LINUX_SLL2:
        return 20 if struct.unpack(">H", pkt[0:2])[0] in (0x0800, 0x86DD) else None
    if linktype == LINKTYPE_NULL:
        return 4
    if linktype == LINKTYPE_RAW:
        return 0
    return None


def parse_tcp(linktype, pkt):
    """(src, dst, seq, ack, flags, payload) of a TCP packet, or None. src/dst are (addr, port)."""
    off = ip_offset(linktype, pkt)
    if off is None or len(pkt) < off + 20:
        return None
    version = pkt[off] >> 4
    if version == 4:
        ihl = (pkt[off] & 0x0F) * 4
        total = struct.unpack(">H", pkt[off + 2 : off + 4])[0]
        if pkt[off + 9] != 6:
            return None
        src_ip = ".".join(str(b) for b in pkt[off + 12 : off + 16])
        dst_ip = ".".join(str(b) for b in pkt[off + 16 : off + 20])
        tcp, end = off + ihl, off + total
    elif version == 6:
        if len(pkt) < off + 40:
            return None
        plen = struct.unpack(">H", pkt[off + 4 : off + 6])[0]
        nxt = pkt[off + 6]
        src_ip = f"[{ipaddress.IPv6Address(bytes(pkt[off + 8 : off + 24]))}]"
        dst_ip = f"[{ipaddress.IPv6Address(bytes(pkt[off + 24 : off + 40]))}]"
        tcp, end = off + 40, off + 40 + plen
        while nxt in (0, 43, 60) and len(pkt) >= tcp + 8:  # hop-by-hop, routing, dest opts
            nxt, tcp = pkt[tcp], tcp + (pkt[tcp + 1] + 1) * 8
        if nxt != 6:
            return None
    else:
        return None
    if len(pkt) < tcp + 20:
        return None
    sport, dport, seq, ack = struct.unpack(">HHII", pkt[tcp : tcp + 12])
    doff = (pkt[tcp + 12] >> 4) * 4
    flags = pkt[tcp + 13]
    payload = pkt[tcp + doff : min(end, len(pkt))]
    return (src_ip, sport), (dst_ip, dport), seq, ack, flags, payload


API_NAMES = {
    0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit",
    9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat",
    13: "LeaveGroup", 14: "SyncGroup", 15: "DescribeGroups", 16: "ListGroups",
    17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics",
    22: "InitProducerId", 32: "DescribeConfigs", 36: "SaslAuthenticate",
    37: "CreatePartitions", 60: "DescribeCluster", 71: "GetTelemetrySubscriptions",
    72: "PushTelemetry", 75: "DescribeTopicPartitions",
}


class Segment:
    """One TCP data segment and the Kafka message bytes it carries."""

    def __init__(self, frame, src, dst, seq, length, ack=None):
        self.frame, self.src, self.dst, self.seq, self.length = frame, src, dst, seq, length
        self.ack = ack  # None when the ACK flag is off
        self.pieces = []  # (message, start, end): bytes [start, end) of message

    def where(self):
        parts = []
        for msg, start, end in self.pieces:
            parts.append(f"bytes {start}-{end - 1} of {msg.label()}")
        return "; ".join(parts) if parts else "no Kafka message located"


class Message:
    def __init__(self, direction, size, head):
        self.direction, self.size, self.head = direction, size, head
        self.segments = []

    def label(self):
        total = self.size + 4
        if len(self.head) < 8:
            return f"a {total}-byte Kafka message"
        if self.direction == "request" and len(self.head) >= 12:
            key, version, corr = struct.unpack(">hhi", self.head[4:12])
            name = API_NAMES.get(key, f"api key {key}")
            return f"the {name} v{version} request of correlation id {corr} ({total} bytes)"
        corr = struct.unpack(">i", self.head[4:8])[0]
        return f"the response of correlation id {corr} ({total} bytes)"


def add_piece(seg, msg, start, end):
    if seg.pieces and seg.pieces[-1][0] is msg and seg.pieces[-1][2] == start:
        seg.pieces[-1] = (msg, seg.pieces[-1][1], end)
    else:
        seg.pieces.append((msg, start, end))
    if seg not in msg.segments:
        msg.segments.append(seg)


def analyse(cap):
    """Follows every TCP direction in capture order and maps data segments to Kafka messages.

    Assumes the capture holds each direction's bytes in order from the connection's start
    (true of an undamaged capture); a direction whose SYN is missing is assumed to start at a
    message boundary in its first data segment.
    """
    servers = set()
    flows = {}
    segments = []
    for index, (_, _, _, pkt) in enumerate(cap.records):
        tcp = parse_tcp(cap.linktype, pkt)
        if tcp is None:
            continue
        src, dst, seq, ack, flags, payload = tcp
        if flags & 0x02 and not flags & 0x10:  # SYN without ACK: dst is the server
            servers.add(dst)
        st = flows.setdefault((src, dst), {"next": None, "msg": None, "lenbuf": b"",
                                           "lensegs": [], "done": 0, "broken": False})
        if flags & 0x02:
            st["next"] = (seq + 1) & 0xFFFFFFFF
            continue
        if not payload:
            continue
        seg = Segment(index + 1, src, dst, seq, len(payload), ack if flags & 0x10 else None)
        segments.append(seg)
        if st["broken"] or (st["next"] is not None and seq != st["next"]):
            continue  # retransmission, gap or garbage: not mapped
        st["next"] = (seq + len(payload)) & 0xFFFFFFFF
        direction = "response" if src in servers else "request"
        pos = 0
        while pos < len(payload):
            if st["msg"] is None:
                chunk = payload[pos : pos + 4 - len(st["lenbuf"])]
                st["lensegs"].append((seg, len(st["lenbuf"]), len(st["lenbuf"]) + len(chunk)))
                st["lenbuf"] += chunk
                pos += len(chunk)
                if len(st["lenbuf"]) < 4:
                    break
                size = struct.unpack(">i", st["lenbuf"])[0]
                if size < 0 or size > 100 * 1024 * 1024:
                    st["broken"] = True
                    break
                msg = Message(direction, size, st["lenbuf"])
                for s, a, b in st["lensegs"]:
                    add_piece(s, msg, a, b)
                st.update(msg=msg, done=4, lenbuf=b"", lensegs=[])
            msg = st["msg"]
            take = min(msg.size + 4 - st["done"], len(payload) - pos)
            add_piece(seg, msg, st["done"], st["done"] + take)
            if len(msg.head) < 16:
                msg.head += payload[pos : pos + take][: 16 - len(msg.head)]
            st["done"] += take
            pos += take
            if st["done"] >= msg.size + 4:
                st["msg"] = None
    return segments


def pick_default(segments):
    """Middle segment of the message spread over the most segments."""
    best = None
    for seg in segments:
        for msg, _, _ in seg.pieces:
            if best is None or len(msg.segments) > len(best.segments):
                best = msg
    if best is None or len(best.segments) < 3:
        sys.exit("no Kafka message spans three or more segments: give --frame")
    return best.segments[len(best.segments) // 2]


def find_segment(segments, frame):
    for seg in segments:
        if seg.frame == frame:
            return seg
    sys.exit(f"frame {frame} is not a TCP segment with data")


def fmt_flow(seg):
    return f"{seg.src[0]}:{seg.src[1]} -> {seg.dst[0]}:{seg.dst[1]}"


def describe(cap, segments):
    print(f"{len(cap.records)} packets, link type {cap.linktype}")
    for seg in segments:
        print(f"frame {seg.frame}: {fmt_flow(seg)} seq {seg.seq} len {seg.length}: {seg.where()}")


def target(args, segments):
    return find_segment(segments, args.frame) if args.frame else pick_default(segments)


def seq_at_or_after(a, b):
    """Whether 32-bit sequence number a is at or after b, wrapping."""
    return (a - b) & 0xFFFFFFFF < 0x80000000


def acknowledges(peer, seg):
    """Whether data segment peer (or None) goes the other way and acknowledges all of seg."""
    end = (seg.seq + seg.length) & 0xFFFFFFFF
    return bool(peer and peer.src == seg.dst and peer.dst == seg.src and peer.ack is not None
                and seq_at_or_after(peer.ack, end))


def answered_between(seg, by_index, i, j):
    """Whether a data segment between record indexes i and j answers seg: moving seg past it
    puts the answer first."""
    return any(acknowledges(by_index.get(k), seg) for k in range(i + 1, j))


def skew_candidate(seg, by_index, max_gap):
    """(seg, target, answered) for moving seg after target, or None. The target is a later data
    segment of the same direction at most max_gap packets on: the nearest one that puts an
    answer before seg if there is one, else the nearest."""
    i = seg.frame - 1
    later = [by_index[k] for k in range(i + 1, i + max_gap + 1)
             if k in by_index and by_index[k].src == seg.src and by_index[k].dst == seg.dst]
    for t in later:
        if answered_between(seg, by_index, i, t.frame - 1):
            return seg, t, True
    return (seg, later[0], False) if later else None


def skew_moves(segments, n_records, count, max_gap, seed):
    """Picks count moves and applies them, in turn, to the packet order. Each data segment is
    moved at most once and each target used once, and a move's target must be at most max_gap
    packets after the segment in the order as it is then, so no segment ends up more than
    max_gap packets later than it was (a later move can only take a packet from before a moved
    segment to after it). Moves that put an answer before their segment are tried first, in an
    order shuffled by the seed; then the others, likewise. Returns the new order (original
    record indexes) and the moves in the order applied."""
    by_index = {s.frame - 1: s for s in segments}
    cands = [c for c in (skew_candidate(s, by_index, max_gap) for s in segments) if c]

    def order_key(c):
        # A hash of seed and frame, not the random module: every Python gives the same order.
        return not c[2], hashlib.sha256(f"{seed}:{c[0].frame}".encode()).digest()

    cands.sort(key=order_key)
    order = list(range(n_records))
    moves, used = [], set()
    for seg, t, _ in cands:
        i, j = seg.frame - 1, t.frame - 1
        if i in used or j in used:
            continue
        pi, pj = order.index(i), order.index(j)
        if not 0 < pj - pi <= max_gap:
            continue
        order.insert(pj, order.pop(pi))
        used |= {i, j}
        moves.append((seg, t))
        if len(moves) == count:
            break
    if len(moves) < count:
        sys.exit(f"only {len(moves)} moves fit in this capture, not {count}")
    return order, moves


def answered_before(seg, order, by_index):
    """Whether, in the new order, a data segment that answers seg comes before it."""
    return any(acknowledges(by_index.get(k), seg) for k in order[: order.index(seg.frame - 1)])


def merge_skew(cap, segments, args):
    order, moves = skew_moves(segments, len(cap.records), args.count, args.max_gap, args.seed)
    stamps = [(r[0], r[1]) for r in cap.records]
    records = cap.records
    cap.records = [records[k] for k in order]
    for k, (sec, frac) in enumerate(stamps):
        cap.records[k][0], cap.records[k][1] = sec, frac
    by_index = {s.frame - 1: s for s in segments}
    answered = 0
    for seg, t in sorted(moves, key=lambda m: m[0].frame):
        now = order.index(seg.frame - 1) + 1
        note = ""
        if answered_before(seg, order, by_index):
            answered += 1
            note = "; an answer acknowledging it now comes before it"
        print(f"frame {seg.frame} ({fmt_flow(seg)} seq {seg.seq} len {seg.length}, "
              f"{seg.where()}) moved after frame {t.frame}: now frame {now}{note}")
    print(f"merge-skew: {len(moves)} data segments moved, each at most {args.max_gap} packets "
          f"later; {answered} of them behind an answer that acknowledges them (seed {args.seed})")


def checksum(data):
    """The Internet checksum (RFC 1071) of data."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f">{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def endpoint(text):
    """("1.2.3.4", 9092) from "1.2.3.4:9092"."""
    addr, _, port = text.rpartition(":")
    return str(ipaddress.IPv4Address(addr)), int(port)


def readdress_packet(linktype, pkt, old, new):
    """pkt with the IPv4 endpoint old replaced by new on either side; the count replaced."""
    off = ip_offset(linktype, pkt)
    if off is None or len(pkt) < off + 20 or pkt[off] >> 4 != 4 or pkt[off + 9] != 6:
        return pkt, 0
    pkt = bytearray(pkt)
    ihl = (pkt[off] & 0x0F) * 4
    total = struct.unpack(">H", pkt[off + 2 : off + 4])[0]
    tcp = off + ihl
    if len(pkt) < off + total or len(pkt) < tcp + 20:
        return bytes(pkt), 0  # cut by the snap length: the checksum cannot be recomputed
    hits = 0
    for ip_at, port_at in ((off + 12, tcp), (off + 16, tcp + 2)):
        ip = str(ipaddress.IPv4Address(bytes(pkt[ip_at : ip_at + 4])))
        port = struct.unpack(">H", pkt[port_at : port_at + 2])[0]
        if (ip, port) == old:
            pkt[ip_at : ip_at + 4] = ipaddress.IPv4Address(new[0]).packed
            pkt[port_at : port_at + 2] = struct.pack(">H", new[1])
            hits += 1
    if hits:
        pkt[off + 10 : off + 12] = b"\0\0"
        pkt[off + 10 : off + 12] = struct.pack(">H", checksum(bytes(pkt[off : off + ihl])))
        segment = bytes(pkt[tcp : off + total])
        pseudo = bytes(pkt[off + 12 : off + 20]) + struct.pack(">BBH", 0, 6, len(segment))
        zeroed = segment[:16] + b"\0\0" + segment[18:]
        pkt[tcp + 16 : tcp + 18] = struct.pack(">H", checksum(pseudo + zeroed))
    return bytes(pkt), hits


def readdress(cap, args):
    old, new = endpoint(args.old), endpoint(args.new)
    changed = 0
    for rec in cap.records:
        rec[3], hits = readdress_packet(cap.linktype, rec[3], old, new)
        changed += hits > 0
    print(f"readdress: {args.old} became {args.new} in {changed} of {len(cap.records)} packets")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in ("describe", "pick"):
        p = sub.add_parser(name)
        p.add_argument("input")
    for name in ("reorder", "duplicate", "drop"):
        p = sub.add_parser(name)
        p.add_argument("input")
        p.add_argument("output")
        p.add_argument("--frame", type=int, help="frame number (1-based) of a data segment")
        if name == "duplicate":
            p.add_argument("--gap", type=int, default=2,
                           help="insert the copy after this many following packets (default 2)")
    p = sub.add_parser("merge-skew")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--count", type=int, default=50, help="data segments to move (default 50)")
    p.add_argument("--max-gap", type=int, default=7,
                   help="move each at most this many packets later (default 7)")
    p.add_argument("--seed", type=int, default=1, help="orders the choice of segments (default 1)")
    p = sub.add_parser("readdress")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--from", dest="old", required=True, help="endpoint to replace, ADDR:PORT")
    p.add_argument("--to", dest="new", required=True, help="its new address and port, ADDR:PORT")
    args = parser.parse_args()

    if args.cmd == "readdress":
        cap = Pcap(args.input)
        readdress(cap, args)
        cap.write(args.output)
        return

    cap = Pcap(args.input)
    segments = analyse(cap)
    if args.cmd == "describe":
        describe(cap, segments)
        return
    if args.cmd == "pick":
        print(pick_default(segments).frame)
        return
    if args.cmd == "merge-skew":
        merge_skew(cap, segments, args)
        cap.write(args.output)
        return

    seg = target(args, segments)
    i = seg.frame - 1
    stamps = [(r[0], r[1]) for r in cap.records]
    if args.cmd == "reorder":
        later = [s for s in segments if s.frame > seg.frame and s.src == seg.src and s.dst == seg.dst]
        if not later:
            sys.exit(f"frame {seg.frame} has no later data segment in the same direction")
        other = later[0]
        j = other.frame - 1
        cap.records[i], cap.records[j] = cap.records[j], cap.records[i]
        for k, (sec, frac) in enumerate(stamps):
            cap.records[k][0], cap.records[k][1] = sec, frac
        print(f"reorder: frames {seg.frame} and {other.frame} swapped ({fmt_flow(seg)}); "
              f"frame {seg.frame} now holds the segment with seq {other.seq} ({other.where()}), "
              f"frame {other.frame} the segment with seq {seg.seq} ({seg.where()})")
    elif args.cmd == "duplicate":
        j = min(i + args.gap, len(cap.records) - 1)
        copy = list(cap.records[i])
        copy[0], copy[1] = cap.records[j][0], cap.records[j][1]
        cap.records.insert(j + 1, copy)
        print(f"duplicate: a copy of frame {seg.frame} ({fmt_flow(seg)} seq {seg.seq} "
              f"len {seg.length}, {seg.where()}) inserted as frame {j + 2}; "
              f"frames after it are numbered one higher")
    elif args.cmd == "drop":
        del cap.records[i]
        print(f"drop: frame {seg.frame} removed ({fmt_flow(seg)} seq {seg.seq} len {seg.length}, "
              f"{seg.where()}); frames after it are numbered one lower")
    cap.write(args.output)


if __name__ == "__main__":
    main()
