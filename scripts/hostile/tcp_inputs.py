#!/usr/bin/env python3
"""Hostile captures for kdissect's TCP reassembly, at full size.

    tcp_inputs.py OUTDIR [--connections 200000] [--pieces 1000000]
                         [--spread-connections 1000] [--spread-pieces 1000]

writes three classic pcap files (Ethernet, IPv4, microsecond timestamps) into OUTDIR:

many-connections.pcap
    CONNECTIONS short connections to a broker on 10.0.0.2:9092, none of them closed: a client
    SYN, the broker's SYN-ACK, then one Metadata v13 request (37 bytes) from the client. Past
    --max-connections (100 000 by default) every new connection evicts the one idle longest;
    an eviction that scans every connection makes this quadratic.
one-byte-holes.pcap
    One connection whose client sends PIECES 1-byte segments with a 1-byte hole before each:
    nothing can go in order, so each piece waits in the out-of-order buffer. 1 MB of payload
    costs far more in bookkeeping; --max-buffered must count that.
spread-holes.pcap
    SPREAD-CONNECTIONS connections, each with SPREAD-PIECES 1-byte pieces with holes, sent in
    turn: every direction stays under --max-buffered while together they pass any modest
    --max-buffered-total.

Measure with, for example:

    /usr/bin/time -f '%e s %M KiB' target/release/kdissect OUTDIR/many-connections.pcap >/dev/null
    /usr/bin/time -f '%e s %M KiB' target/release/kdissect OUTDIR/one-byte-holes.pcap >/dev/null
    /usr/bin/time -f '%e s %M KiB' target/release/kdissect --max-buffered-total 32M \\
        OUTDIR/spread-holes.pcap >/dev/null

Output is deterministic. Only the Python standard library is used.
"""

import argparse
import os
import struct
import sys

BROKER_IP = bytes([10, 0, 0, 2])
BROKER_PORT = 9092
SYN, ACK = 0x02, 0x10
CLIENT_ISN, BROKER_ISN = 1000, 5000

# The smallest Metadata v13 request (README.md's example), correlation id patched per connection.
METADATA_V13 = bytes.fromhex(
    "00000021" "0003000d" "00000000" "0000" "00" "02" + "00" * 16 + "01" "00" "00" "00" "00"
)
assert len(METADATA_V13) == 37


def checksum(data):
    """The Internet checksum (RFC 1071) of `data`."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f">{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def tcp_packet(src, dst, seq, ack, flags, payload):
    """An Ethernet frame carrying one IPv4 TCP segment, with valid IP and TCP checksums.
    `src` and `dst` are (4-byte address, port)."""
    (sip, sport), (dip, dport) = src, dst
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0)
    pseudo = sip + dip + struct.pack(">BBH", 0, 6, len(tcp) + len(payload))
    tcp = tcp[:16] + struct.pack(">H", checksum(pseudo + tcp + payload)) + tcp[18:]
    total = 20 + len(tcp) + len(payload)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0, sip, dip)
    ip = ip[:10] + struct.pack(">H", checksum(ip)) + ip[12:]
    eth = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00"
    return eth + ip + tcp + payload


class Writer:
    """A classic pcap file; each packet 1 microsecond after the one before."""

    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        self.n = 0

    def packet(self, data):
        sec, usec = divmod(self.n, 1_000_000)
        self.f.write(struct.pack("<IIII", 1_700_000_000 + sec, usec, len(data), len(data)))
        self.f.write(data)
        self.n += 1

    def close(self):
        self.f.close()


def client(i):
    """The i-th client endpoint: addresses in 10.1.0.0/16, ports 1024-64023."""
    host, port = divmod(i, 63000)
    return bytes([10, 1, host // 256, host % 256]), 1024 + port


def many_connections(path, count):
    """Connections that each ask one question and never close."""
    w = Writer(path)
    broker = (BROKER_IP, BROKER_PORT)
    for i in range(count):
        c = client(i)
        request = METADATA_V13[:8] + struct.pack(">i", i % 2**31) + METADATA_V13[12:]
        w.packet(tcp_packet(c, broker, CLIENT_ISN - 1, 0, SYN, b""))
        w.packet(tcp_packet(broker, c, BROKER_ISN - 1, CLIENT_ISN, SYN | ACK, b""))
        w.packet(tcp_packet(c, broker, CLIENT_ISN, BROKER_ISN, ACK, request))
    w.close()
    return w.n


def handshake(w, c):
    """A connection's SYN and SYN-ACK."""
    broker = (BROKER_IP, BROKER_PORT)
    w.packet(tcp_packet(c, broker, CLIENT_ISN - 1, 0, SYN, b""))
    w.packet(tcp_packet(broker, c, BROKER_ISN - 1, CLIENT_ISN, SYN | ACK, b""))


def piece(w, c, k):
    """The client's k-th 1-byte piece: stream offset 2k+1, so a 1-byte hole precedes it. The
    ACK stays at the broker's first byte, so no hole reads as acknowledged."""
    broker = (BROKER_IP, BROKER_PORT)
    w.packet(tcp_packet(c, broker, CLIENT_ISN + 2 * k + 1, BROKER_ISN, ACK, b"\x00"))


def one_byte_holes(path, pieces):
    """One connection, `pieces` 1-byte pieces with a hole before each."""
    w = Writer(path)
    c = client(0)
    handshake(w, c)
    for k in range(pieces):
        piece(w, c, k)
    w.close()
    return w.n


def spread_holes(path, conns, pieces):
    """`conns` connections with `pieces` 1-byte pieces each, the connections taking turns."""
    w = Writer(path)
    cs = [client(i) for i in range(conns)]
    for c in cs:
        handshake(w, c)
    for k in range(pieces):
        for c in cs:
            piece(w, c, k)
    w.close()
    return w.n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--connections", type=int, default=200_000)
    ap.add_argument("--pieces", type=int, default=1_000_000)
    ap.add_argument("--spread-connections", type=int, default=1000)
    ap.add_argument("--spread-pieces", type=int, default=1000)
    a = ap.parse_args()
    if a.connections > 63000 * 65536:
        sys.exit("--connections: at most 4128768000")
    os.makedirs(a.outdir, exist_ok=True)
    jobs = [
        ("many-connections.pcap", lambda p: many_connections(p, a.connections)),
        ("one-byte-holes.pcap", lambda p: one_byte_holes(p, a.pieces)),
        ("spread-holes.pcap", lambda p: spread_holes(p, a.spread_connections, a.spread_pieces)),
    ]
    for name, make in jobs:
        path = os.path.join(a.outdir, name)
        n = make(path)
        print(f"{path}: {n} packets, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
