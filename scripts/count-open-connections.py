#!/usr/bin/env python3
"""Counts how many TCP connections a capture has open at once, to check the concurrency of the
benchmark mixes (scripts/make-big-capture --mix wide):

    scripts/count-open-connections.py FILE.pcap

A connection (its 4-tuple, either direction) opens at its first packet and closes at its first
RST, or once both sides have sent a FIN; one never closed stays open to the end. Prints the
connections seen, the most open at once and when, the mean over packets of the number open as
each packet is read, and how many are open at the end. Reads
classic little-endian microsecond pcaps of Ethernet/IPv4 (what make-big-capture writes).
"""
import struct
import sys


def packets(path):
    with open(path, "rb") as f:
        head = f.read(24)
        if head[:4] != b"\xd4\xc3\xb2\xa1":
            sys.exit(f"{path}: not a little-endian microsecond pcap")
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, usec, caplen, _ = struct.unpack("<IIII", rec)
            yield sec + usec / 1e6, f.read(caplen)


def main(path):
    state = {}  # key -> set of sides that sent FIN
    open_now = seen = best = 0
    best_at = 0.0
    total = npk = 0
    for ts, d in packets(path):
        if len(d) < 34 or d[12:14] != b"\x08\x00" or d[23] != 6:
            continue
        tcp = 14 + (d[14] & 0x0F) * 4
        if len(d) < tcp + 14:
            continue
        src, dst = d[26:30] + d[tcp:tcp + 2], d[30:34] + d[tcp + 2:tcp + 4]
        key = (src, dst) if src < dst else (dst, src)
        flags = d[tcp + 13]
        if key not in state:
            state[key] = set()
            open_now += 1
            seen += 1
            if open_now > best:
                best, best_at = open_now, ts
        total += open_now
        npk += 1
        fins = state[key]
        if fins is None:
            continue
        if flags & 0x04:  # RST
            state[key] = None
            open_now -= 1
        elif flags & 0x01:  # FIN
            fins.add(src)
            if len(fins) == 2:
                state[key] = None
                open_now -= 1
    mean = total / npk if npk else 0
    print(f"{path}: {seen} connections, at most {best} open at once (at {best_at:.6f}), "
          f"{mean:.0f} open on average over its packets, {open_now} open at the end")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
