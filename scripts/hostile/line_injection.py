#!/usr/bin/env python3
"""A capture whose wire text tries to forge summary lines and take over the terminal
(issue 35, item 18): every text a summary line, a notice or the TLS line prints (topic names
in requests and answers, ApiVersions' ClientSoftwareName and ClientSoftwareVersion, SASL
mechanisms, config resources, DeleteTopics' names, DescribeTopicPartitions' cursor, group
ids, members, transactional ids, client ids, a TLS ClientHello's SNI and ALPN) holds
newlines, ESC (CSI and OSC sequences), BEL, DEL and C1 controls (U+009B CSI, U+009D OSC as
UTF-8), and a fake summary line after each newline.

    scripts/hostile/line_injection.py OUT.pcap

tests/line_injection.rs runs it and checks that no raw control byte reaches the summary,
-V, --json or -T fields views, and that no forged line appears. Python 3 standard library
only; deterministic output.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate as g  # noqa: E402

# A line that looks like kdissect's own, after a newline; then an OSC title change ended by
# BEL, a CSI that clears the screen, DEL, and the C1 forms of CSI and OSC.
FAKE = "     1    0.000000 6.6.6.6:6666 → 10.0.0.1:9092 [0] Metadata v1 Response corr=1 FORGED"
# Then the invisible characters that turn or hide text without being controls: a
# right-to-left override (the rest would print backwards), a zero-width space, an isolate.
EVIL = ("\n" + FAKE + "\x1b]0;owned\x07\x1b[2J\r\x7f\u009b31m\u009d0;t\u0007\x00end"
        "\u202egnp.exe\u200b\u2066")


def evil(tag):
    """A text with every control, tagged with where it goes."""
    return (tag + EVIL).encode()


def api_versions_v3(corr):
    body = g.compact_string(evil("software")) + g.compact_string(evil("1.0")) + b"\x00"
    return g.frame(g.request_header(18, 3, corr, client_id=evil("client"), flexible=True) + body)


def api_versions_v3_response(corr):
    # ApiVersions answers always use header v0; v3 body: error, one API, throttle, no tags.
    body = g.i16(0) + g.uvarint(2) + g.i16(3) + g.i16(0) + g.i16(12) + b"\x00"
    body += g.i32(0) + b"\x00"
    return g.frame(g.response_header(corr) + body)


def metadata_request_v1(corr):
    names = [evil("topic-req"), b"plain"]
    body = g.i32(len(names)) + b"".join(g.string(n) for n in names)
    return g.frame(g.request_header(3, 1, corr) + body)


def metadata_response_v1(corr):
    return g.metadata_response_v1(corr, 2, name=lambda i: evil("topic-resp%d" % i))


def sasl_handshake(corr):
    return g.frame(g.request_header(17, 1, corr) + g.string(evil("mech")))


def sasl_handshake_response(corr):
    mechs = [evil("offered"), b"PLAIN"]
    body = g.i16(33) + g.i32(len(mechs)) + b"".join(g.string(m) for m in mechs)
    return g.frame(g.response_header(corr) + body)


def describe_configs_v1(corr):
    body = g.i32(1) + g.i8(2) + g.string(evil("resource")) + g.i32(-1) + b"\x00"
    return g.frame(g.request_header(32, 1, corr) + body)


def delete_topics_v1(corr):
    body = g.i32(1) + g.string(evil("deleted")) + g.i32(30000)
    return g.frame(g.request_header(20, 1, corr) + body)


def describe_topic_partitions(corr):
    body = g.uvarint(2) + g.compact_string(evil("dtp")) + b"\x00"
    body += g.i32(100)
    body += g.i8(1) + g.compact_string(evil("cursor")) + g.i32(0) + b"\x00"
    body += b"\x00"
    return g.frame(g.request_header(75, 0, corr, flexible=True) + body)


def join_group_v1(corr):
    body = g.string(evil("group")) + g.i32(10000) + g.i32(30000) + g.string(evil("member"))
    body += g.string("consumer") + g.i32(1) + g.string(evil("protocol")) + g.i32(0)
    return g.frame(g.request_header(11, 1, corr) + body)


def list_groups_response_v0(corr):
    groups = [(evil("listed"), b"consumer")]
    body = g.i16(0) + g.i32(len(groups))
    for gid, proto in groups:
        body += g.string(gid) + g.string(proto)
    return g.frame(g.response_header(corr) + body)


def describe_groups_v0(corr):
    return g.frame(g.request_header(15, 0, corr) + g.i32(1) + g.string(evil("described")))


def init_producer_id_v1(corr):
    body = g.string(evil("txn")) + g.i32(60000)
    return g.frame(g.request_header(22, 1, corr) + body)


def client_hello(sni, alpn):
    """A TLS 1.2 ClientHello record with an SNI and an ALPN list, each as given."""
    exts = b""
    name = sni
    sni_list = b"\x00" + struct.pack(">H", len(name)) + name
    exts += struct.pack(">HH", 0, len(sni_list) + 2) + struct.pack(">H", len(sni_list)) + sni_list
    protos = b"".join(bytes([len(p)]) + p for p in alpn)
    exts += struct.pack(">HH", 16, len(protos) + 2) + struct.pack(">H", len(protos)) + protos
    hello = b"\x03\x03" + bytes(range(32)) + b"\x00" + struct.pack(">H", 2) + b"\xc0\x2f"
    hello += b"\x01\x00" + struct.pack(">H", len(exts)) + exts
    hs = b"\x01" + len(hello).to_bytes(3, "big") + hello
    return b"\x16\x03\x01" + struct.pack(">H", len(hs)) + hs


def gen(out):
    cap = g.Pcap(out)
    c = g.Conn(cap, 0)
    exchanges = [
        (api_versions_v3(1), api_versions_v3_response(1)),
        (metadata_request_v1(2), metadata_response_v1(2)),
        (sasl_handshake(3), sasl_handshake_response(3)),
        (describe_configs_v1(4), None),
        (delete_topics_v1(5), None),
        (describe_topic_partitions(6), None),
        (join_group_v1(7), None),
        (g.frame(g.request_header(16, 0, 8)), list_groups_response_v0(8)),
        (describe_groups_v0(9), None),
        (init_producer_id_v1(10), None),
    ]
    for req, resp in exchanges:
        c.send(True, req)
        if resp is not None:
            c.send(False, resp)
    c.fin()
    # A TLS connection on the broker port: its line names the SNI and ALPN, keys or not.
    t = g.Conn(cap, 1)
    t.send(True, client_hello(evil("sni"), [evil("alpn"), b"kafka"]))
    t.fin()


def main(argv):
    if len(argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[0], "wb") as fh:
        gen(fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
