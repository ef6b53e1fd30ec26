#!/usr/bin/env python3
"""A hostile input for kdissect's tables (`--stats --analyses`) made from a sample, beside
generate.py (whose `client-ids` makes the capture of 30,000 client ids):

    scripts/hostile/wide_tables.py hostile-names OUT [--from samples/ana-lag.pcap]
        A real capture (a Java producer and consumer in a group) with its topic, group,
        client ids and client software name replaced, byte for byte at the same lengths, by
        terminal controls (ESC [ 2J, OSC 52 ... BEL, BEL, the C1 CSI U+009B, CR LF and a
        forged table row) and wide characters (クライアン): every table of the analyses
        shows them, and none may reach the terminal raw.

OUT `-` writes to standard output. Python 3 standard library only; the output is
deterministic.
"""

import re
import sys

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
    if len(argv) < 3 or argv[1] != "hostile-names":
        sys.exit(__doc__)
    path = argv[2]
    opts = dict(zip(argv[3::2], argv[4::2]))
    out = sys.stdout.buffer if path == "-" else open(path, "wb")
    with out:
        hostile_names(out, opts.get("--from", "samples/ana-lag.pcap"))


if __name__ == "__main__":
    main(sys.argv)
