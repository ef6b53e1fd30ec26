#!/bin/sh
# samples/merged-three-nodes.pcap: three real captures of single nodes merged as if they were
# taken on one host talking to three nodes, each answering ApiVersions with its own API list:
#   127.0.0.1:9092  tansu 0.6.0 with kafka-python 3.0 (samples/kafka-python-admin.pcap)
#   127.0.0.2:9092  Apache Kafka 4.4.0 with its Java Admin (samples/ak44-admin.pcap), its
#                   timestamps moved to start 4 ms after the first file's
#   127.0.0.3:9092  tansu 0.6.0 with kcat 1.7.1, which sends no ApiVersions request
#                   (samples/kcat-metadata-v0.pcap)
# The server endpoint of the second and third is rewritten by scripts/pcap_mangle.py readdress
# (IPv4 and TCP checksums recomputed); nothing else changes. Needs editcap and mergecap.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 scripts/pcap_mangle.py readdress samples/ak44-admin.pcap "$tmp/ak44.pcap" \
    --from 127.0.0.1:9092 --to 127.0.0.2:9092
# 2026-11-30 12:43:08.267131 becomes 01:08:49.470000.
editcap -F pcap -t -41658.797131 "$tmp/ak44.pcap" "$tmp/ak44-moved.pcap"
python3 scripts/pcap_mangle.py readdress samples/kcat-metadata-v0.pcap "$tmp/kcat.pcap" \
    --from 127.0.0.1:9092 --to 127.0.0.3:9092
mergecap -F pcap -w samples/merged-three-nodes.pcap samples/kafka-python-admin.pcap \
    "$tmp/ak44-moved.pcap" "$tmp/kcat.pcap"
