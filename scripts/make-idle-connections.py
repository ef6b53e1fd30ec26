#!/usr/bin/env python3
"""N Kafka connections that each open (handshake), exchange one ApiVersions request and its
response, and then stay open and idle to the end of the capture: what kdissect holds for an
idle connection is (RSS at N - RSS at M) / (N - M). scripts/bench-memory.sh uses it.

    scripts/make-idle-connections.py N OUT.pcap
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile"))
import generate  # noqa: E402


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    with open(out, "wb") as f:
        cap = generate.Pcap(f)
        req = generate.api_versions_request(1)
        resp = generate.api_versions_response(1)
        for i in range(n):
            c = generate.Conn(cap, i)
            c.send(True, req)
            c.send(False, resp)


if __name__ == "__main__":
    main()
