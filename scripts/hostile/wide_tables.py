#!/usr/bin/env python3
"""Hostile inputs for kdissect's tables (`--stats --analyses`), beside generate.py:

    scripts/hostile/wide_tables.py client-ids OUT [--clients N]
        N distinct client ids (default 30,000), each sending one Metadata v1 request that
        is answered, over one connection, none announcing its software: the versions table
        lists every one of them in one cell, and the fitting of that table once took time
        quadratic in the cell's width (minutes at 30,000).

    scripts/hostile/wide_tables.py hostile-names OUT [--from samples/ana-lag.pcap]
        A real capture (a Java producer and consumer in a group) with its topic, group,
        client ids and client software name replaced, byte for byte at the same lengths, by
        terminal controls (ESC [ 2J, OSC 52 ... BEL, BEL, the C1 CSI U+009B, CR LF and a
        forged table row) and wide characters (クライアン): every table of the analyses
        shows them, and none may reach the terminal raw.

Classic pcap (microsecond timestamps, Ethernet, IPv4, TCP, broker port 9092); OUT `-` writes
to standard output. Python 3 standard library only; the output is deterministic.
"""

import re
import struct
import sys

BROKER_PORT = 9092
FIN, SYN, PSH, ACK = 0x01, 0x02, 0x08, 0x10


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def string(s):
    b = s.encode()
    return i16(len(b)) + b


def frame(body):
    return i32(len(body)) + body


class Capture:
    """Packets of one TCP connection, client 10.0.0.2:40000 to broker 10.0.0.1:9092, written
    as a classic pcap as they come."""

    def __init__(self, out):
        self.out = out
        self.ts = 1_700_000_000_000_000  # microseconds
        self.ip_id = 0
        self.client = (bytes([10, 0, 0, 2]), 40000)
        self.broker = (bytes([10, 0, 0, 1]), BROKER_PORT)
        self.seq = [1000, 5000]  # the next byte each way: client, broker
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        self.packet(True, SYN, b"", seq=self.seq[0] - 1, ack=0)
        self.packet(False, SYN | ACK, b"", seq=self.seq[1] - 1, ack=self.seq[0])
        self.packet(True, ACK, b"")

    def packet(self, from_client, flags, payload, seq=None, ack=None):
        self.ts += 50
        self.ip_id = (self.ip_id + 1) & 0xFFFF
        (sip, sport), (dip, dport) = (
            (self.client, self.broker) if from_client else (self.broker, self.client)
        )
        d = 0 if from_client else 1
        seq = self.seq[d] if seq is None else seq
        ack = self.seq[1 - d] if ack is None else ack
        tcp = struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                          5 << 4, flags, 65535, 0, 0)
        total = 20 + len(tcp) + len(payload)
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, self.ip_id, 0x4000, 64, 6, 0, sip, dip)
        c = sum(struct.unpack(">10H", ip))
        c = (c & 0xFFFF) + (c >> 16)
        c = (c & 0xFFFF) + (c >> 16)
        ip = ip[:10] + struct.pack(">H", ~c & 0xFFFF) + ip[12:]
        eth = b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00"
        n = len(eth) + total
        self.out.write(struct.pack("<IIII", self.ts // 1_000_000, self.ts % 1_000_000, n, n))
        self.out.write(eth + ip + tcp + payload)

    def send(self, from_client, data):
        self.packet(from_client, PSH | ACK, data)
        self.seq[0 if from_client else 1] += len(data)


def metadata_v1_request(corr, client_id):
    """Metadata v1, all topics (a null list), request header v1."""
    return frame(i16(3) + i16(1) + i32(corr) + string(client_id) + i32(-1))


def metadata_v1_response(corr):
    """Metadata v1 answer: one broker (node 1, 10.0.0.1:9092, no rack), controller 1, no
    topic."""
    broker = i32(1) + string("10.0.0.1") + i32(BROKER_PORT) + i16(-1)
    return frame(i32(corr) + i32(1) + broker + i32(1) + i32(0))


def client_ids(out, n):
    cap = Capture(out)
    for i in range(n):
        cap.send(True, metadata_v1_request(i, "client-%05d" % i))
        cap.send(False, metadata_v1_response(i))


# Each replacement has the length in bytes of the name it replaces, so that every length
# prefix, frame size and TCP sequence number of the capture stays right. Record values in
# ana-lag.pcap start with the topic ("lag-events event 2 sent at ..."): those are left alone,
# as a replacement inside a record batch would break its CRC.
HOSTILE = [
    # The topic: an OSC 52 clipboard write, ended by BEL.
    (b"lag-events", b"\x1b]52;c;Y\x07t"),
    # The group: clear the screen, cursor home.
    (b"lag-group", b"\x1b[2J\x1b[Hg!"),
    # A client id: CR LF and a forged table row, and a BEL.
    (b"lag-consumer", "\r\n│ fake!\x07".encode()),
    # The other client id: the C1 CSI (U+009B) then wide characters.
    (b"lag-producer", "\u009b2Jクラab".encode()),
    # The client software name: wide characters, BEL, ESC.
    (b"apache-kafka-java", "クライアン\x07\x1b".encode()),
]


def hostile_names(out, source):
    data = open(source, "rb").read()
    for old, new in HOSTILE:
        assert len(old) == len(new), (old, new)
        data = re.sub(re.escape(old) + rb"(?! event )", lambda _: new, data)
    out.write(data)


def main(argv):
    if len(argv) < 3 or argv[1] not in ("client-ids", "hostile-names"):
        sys.exit(__doc__)
    kind, path = argv[1], argv[2]
    opts = dict(zip(argv[3::2], argv[4::2]))
    out = sys.stdout.buffer if path == "-" else open(path, "wb")
    with out:
        if kind == "client-ids":
            client_ids(out, int(opts.get("--clients", "30000")))
        else:
            hostile_names(out, opts.get("--from", "samples/ana-lag.pcap"))


if __name__ == "__main__":
    main(sys.argv)
