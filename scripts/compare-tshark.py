#!/usr/bin/env python3
"""Compare kdissect with tshark on the sample captures.

For every Kafka PDU tshark finds, kdissect must report a message at the same frame with the
same relative time (to the microsecond), correlation id, API key and version. For messages
tshark fully decodes (no malformed/unsupported/unknown marks), topic names, broker hosts and
ports, and error codes must match too. tshark is not available in CI; run this by hand:

    python3 scripts/compare-tshark.py [--kdissect target/release/kdissect] [samples/*.pcap]
"""
import argparse
import glob
import re
import subprocess
import sys
from collections import defaultdict

NAMES_RS = "src/kafka/spec/names.rs"


def api_names():
    text = open(NAMES_RS).read()
    block = text[text.index("API_NAMES"):text.index("];", text.index("API_NAMES"))]
    return {name: int(key) for key, name in re.findall(r"\((\d+), \"(\w+)\"\)", block)}


def port_of(path):
    return "19092" if "19092" in path else "9092"


def tshark_rows(path):
    fields = ["frame.number", "frame.time_relative", "kafka.correlation_id", "kafka.api_key",
              "kafka.api_version", "kafka.request_frame", "kafka.topic_name", "kafka.host",
              "kafka.port", "kafka.error", "_ws.expert.message"]
    cmd = ["tshark", "-r", path, "-d", f"tcp.port=={port_of(path)},kafka", "-Y", "kafka",
           "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        cols = line.split("\t")
        cols += [""] * (len(fields) - len(cols))
        rows.append(dict(zip(fields, cols)))
    return rows


def kdissect_messages(binary, path):
    out = subprocess.run([binary, "-V", "--color", "never", "-p", port_of(path), path],
                         capture_output=True, text=True).stdout
    msgs = {}
    cur = None
    head = re.compile(r"^\s*(\d+)\s+([\d.]+) (\S+) → (\S+) \[(\d+)\] (\w+) v(\d+) (Request|Response) corr=(-?\d+)")
    for line in out.splitlines():
        m = head.match(line)
        if m:
            frame = int(m.group(1))
            cur = {"time": m.group(2), "api": m.group(6), "version": int(m.group(7)),
                   "dir": m.group(8), "corr": int(m.group(9)), "line": line,
                   "topics": [], "hosts": [], "ports": [], "errors": []}
            msgs.setdefault(frame, []).append(cur)
            continue
        if cur is None:
            continue
        t = re.search(r"\+-- (\w+) (\S+) = (.*?) \[0x", line)
        if not t:
            continue
        name, ty, val = t.groups()
        if name in ("Name", "TopicName", "Topic") and ty == "string" and "MetadataResponseBroker" not in line:
            s = re.match(r'"(.*)"', val)
            if s:
                cur["topics"].append(s.group(1))
        elif name == "Host" and ty == "string":
            cur["hosts"].append(re.match(r'"(.*)"', val).group(1))
        elif name == "Port" and ty == "int32":
            cur["ports"].append(val.split()[0])
        elif name == "ErrorCode" and ty == "int16":
            cur["errors"].append(val.split()[0])
    return msgs


def split(v):
    return [x for x in re.split(r"[|,]", v) if x != ""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kdissect", default="target/release/kdissect")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files or sorted(glob.glob("samples/*.pcap") + glob.glob("samples/*.pcapng"))
    names = api_names()
    problems = 0
    compared = 0
    values = 0
    skipped = 0
    for path in files:
        ours = kdissect_messages(a.kdissect, path)
        for r in tshark_rows(path):
            try:
                frame = int(r["frame.number"])
            except ValueError:
                # tshark's field output broken by bytes it printed raw (seen on an LZ4 sample).
                skipped += 1
                continue
            corrs = split(r["kafka.correlation_id"])
            expert = r["_ws.expert.message"].lower()
            if not corrs:
                continue
            if "limited during capture" in expert or "unreassembled" in expert:
                # tshark reads a snap-length-cut packet's continuation as a new PDU (its
                # "correlation id" is payload); kdissect reports the loss instead.
                skipped += 1
                continue
            cands = ours.get(frame, [])
            corr = int(corrs[0])
            match = [m for m in cands if m["corr"] == corr]
            if not match and "missing" in expert and "snaplen" in path:
                # A continuation segment of a cut frame that tshark takes for a response.
                skipped += 1
                continue
            if not match:
                print(f"{path}: frame {frame}: tshark has corr {corr}, kdissect has {[m['corr'] for m in cands]}")
                problems += 1
                continue
            m = match[0]
            compared += 1
            t_ts = f"{float(r['frame.time_relative']):.6f}"
            if t_ts != f"{float(m['time']):.6f}":  # nanosecond captures print 9 digits
                print(f"{path}: frame {frame}: time {t_ts} (tshark) vs {m['time']} (kdissect)")
                problems += 1
            key = split(r["kafka.api_key"])
            if key and names.get(m["api"]) != int(key[0]):
                print(f"{path}: frame {frame}: api key {key[0]} (tshark) vs {m['api']}")
                problems += 1
            ver = split(r["kafka.api_version"])
            if ver and int(ver[0]) != m["version"]:
                print(f"{path}: frame {frame}: version {ver[0]} (tshark) vs {m['version']}")
                problems += 1
            if any(w in expert for w in ("malformed", "unsupported", "unknown", "missing")):
                continue
            if "[body not decoded" in m["line"]:
                continue
            for field, ours_key in (("kafka.topic_name", "topics"), ("kafka.host", "hosts"),
                                    ("kafka.port", "ports")):
                theirs = split(r[field])
                # tshark gives one row per packet: several messages in one packet pool their values.
                pooled = [x for mm in cands for x in mm[ours_key]]
                if theirs and sorted(theirs) != sorted(pooled):
                    print(f"{path}: frame {frame}: {field} {theirs} (tshark) vs {pooled}")
                    problems += 1
                elif theirs:
                    values += len(theirs)
    print(f"compared {compared} messages and {values} field values with tshark: {problems} differences"
          f" ({skipped} snap-length-cut packets tshark misreads skipped)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
