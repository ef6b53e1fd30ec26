#!/usr/bin/env python3
"""Derive kdissect's message tables (schema/) from Kafka's JSON message specs.

Kafka keeps one JSON file per message in clients/src/main/resources/common/message of
apache/kafka. This script reads such a folder and writes, for every request and response, and
for the two headers (RequestHeader, ResponseHeader: "type": "header", no apiKey):

  schema/<Name>.json          the current versions
  schema/legacy/<Name>.json   versions a newer Kafka removed (Produce v0-2, Fetch v0-3, ...),
                              from an older copy of the folder, so old clients still decode
  schema/headers/...          the same for the two headers (RequestHeader v0, which only
                              ControlledShutdown v0 uses, is in schema/headers/legacy/), with
                              their own schema/headers/MANIFEST.txt
  schema/data/<Name>.json     the messages carried in other messages' bytes ("type": "data":
                              DefaultPrincipalData, the control records' keys and values...)
  schema/metadata/<Name>.json the records of the KRaft metadata log ("type": "metadata", their
                              apiKey the record type), from a kafka-metadata jar (--metadata;
                              it names no release, so the commit is that of the kafka-clients
                              jar of the same version)

Fields named in schema-src/content.json get a "content" key of ours: "sasl" (the bytes are a
SASL message, split into parts) or "secret" (masked in output unless secrets are asked for).
Integer fields named in schema-src/enums.json get an "enum" key: the name of the enumeration
(src/kafka/spec/names.rs) whose names their values have. An entry of either file that names no
field of any table is an error.

Header versions: Kafka 4.5's specs (trunk since KAFKA-20923) give every request and response
a "headerVersions" map from its versions to the header version each uses ({"0-8": "1",
"9+": "2"}); it is kept as given, after a check (ranges from 0, contiguous, the last one open,
header versions that never decrease and that the header tables have). Where a spec has none
(Kafka 4.4 and older), kdissect keeps Kafka's old rule: the flexible header in flexible
versions (src/kafka/spec/headers.rs).

What the next release's specs will say, and kdissect must read before its tables come from it,
is in schema-src/ahead.json: header version maps and header fields (request header v3 and its
ClientInstanceId, KIP-1313). The script applies an entry only where the source lacks it, notes
the overlay in the manifests, and says which entries a source has made redundant.

Kept: apiKey (not in headers), type, name, validVersions, flexibleVersions, headerVersions, and for each field name, type,
versions, nullableVersions, taggedVersions, tag, ignorable, default, entityType, mapKey,
flexibleVersions, nested fields, and commonStructs. Kafka's comments and descriptions are not
copied: descriptions come from schema-src/descriptions.json (the seed APIs' texts and our own),
and are otherwise left out. schema/MANIFEST.txt records the sources and a SHA-256 of every
output; a test checks the files against it, so a hand edit shows up.

Usage:
  scripts/gen-schemas.py --new KAFKA_MESSAGE_DIR_OR_JAR [--legacy OLDER_DIR_OR_JAR] \\
      [--new-label TEXT] [--legacy-label TEXT] [--out schema]

The sources may be kafka-clients jars: they carry the specs under common/message/ and name
their release and commit, which go into MANIFEST.txt. The committed tables were made with

  mvn dependency:copy -Dartifact=org.apache.kafka:kafka-clients:4.4.0 -DoutputDirectory=/tmp/k
  mvn dependency:copy -Dartifact=org.apache.kafka:kafka-clients:3.9.1 -DoutputDirectory=/tmp/k
  mvn dependency:copy -Dartifact=org.apache.kafka:kafka-metadata:4.4.0 -DoutputDirectory=/tmp/k
  scripts/gen-schemas.py --new /tmp/k/kafka-clients-4.4.0.jar \\
      --legacy /tmp/k/kafka-clients-3.9.1.jar --metadata /tmp/k/kafka-metadata-4.4.0.jar --out schema
  scripts/gen-schemas.py --check ...   (same arguments: compare instead of writing)

--require-descriptions Produce,Fetch,... (with either form) fails, listing the paths, when a
field of those APIs (request and response, every version, legacy ones too, nested, tagged and
common-struct fields) has no description, or when schema-src/descriptions.json holds a path for
them that names no field (a typo). Descriptions over 78 characters, which the tree cuts unless
--wide, are listed as warnings.
"""
import argparse
import hashlib
import json
import os
import re
import sys
import zipfile

FIELD_KEYS = ["name", "type", "versions", "nullableVersions", "taggedVersions", "tag", "ignorable",
              "default", "entityType", "mapKey", "flexibleVersions"]


def strip_comments(text):
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("//"):
            continue
        # A trailing comment outside strings.
        in_str = False
        esc = False
        cut = None
        for i, ch in enumerate(line):
            if esc:
                esc = False
                continue
            if ch == "\\":
                esc = True
            elif ch == '"':
                in_str = not in_str
            elif not in_str and line[i:i + 2] == "//":
                cut = i
                break
        out.append(line if cut is None else line[:cut])
    return "\n".join(out)


def loose_bools(obj):
    """A few of Kafka's spec files write booleans as strings ("ignorable": "true"): make them
    real booleans so the tables have one form."""
    if isinstance(obj, dict):
        return {k: (v == "true" if k in BOOL_KEYS and v in ("true", "false") else loose_bools(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [loose_bools(v) for v in obj]
    return obj


BOOL_KEYS = {"ignorable", "latestVersionUnstable", "zeroCopy"}


def parse_versions(v):
    v = (v or "").strip()
    if v in ("", "none"):
        return None
    if v.endswith("+"):
        return (int(v[:-1]), None)
    if "-" in v:
        a, b = v.split("-")
        return (int(a), int(b))
    return (int(v), int(v))


class Ours:
    """Our own keys for one message's fields (schema-src/content.json, enums.json), by field
    path, and the paths that found their field, so that one naming no field is reported."""

    def __init__(self, name, content_all, enums_all):
        self.name = name
        self.content = content_all.get(name, {})
        self.enums = enums_all.get(name, {})
        self.used = set()

    def apply(self, path, f, g):
        if path in self.content:
            g["content"] = self.content[path]
            self.used.add(("content", path))
        if path in self.enums:
            if f["type"] not in INT_TYPES:
                sys.exit(f"enums.json: {self.name}: {path} is {f['type']}, not an integer")
            g["enum"] = self.enums[path]
            self.used.add(("enum", path))


INT_TYPES = {"int8", "int16", "int32", "int64", "uint16", "uint32"}


def clean_fields(fields, descs, prefix, ours=None):
    out = []
    for f in fields:
        g = {k: f[k] for k in FIELD_KEYS if k in f}
        path = prefix + f["name"]
        if path in descs:
            g["about"] = descs[path]
        if ours:
            ours.apply(path, f, g)
        if "fields" in f:
            g["fields"] = clean_fields(f["fields"], descs, path + ".", ours)
        out.append(g)
    return out


def clean_spec(d, descs, valid=None, ours=None):
    o = {"apiKey": d["apiKey"]} if "apiKey" in d else {}
    o.update({"type": d["type"], "name": d["name"],
              "validVersions": valid or d["validVersions"],
              "flexibleVersions": d.get("flexibleVersions", "none")})
    if d.get("latestVersionUnstable"):
        o["latestVersionUnstable"] = True
    if "headerVersions" in d:
        o["headerVersions"] = d["headerVersions"]
    o["fields"] = clean_fields(d.get("fields", []), descs, "", ours)
    if d.get("commonStructs"):
        o["commonStructs"] = [
            {"name": s["name"], "versions": s.get("versions", "0+"),
             "fields": clean_fields(s["fields"], descs, s["name"] + ".", ours)}
            for s in d["commonStructs"]]
    return o


class Source:
    """A folder of Kafka's message specs (clients/src/main/resources/common/message of a
    checkout), or a kafka-clients jar from Maven Central, which carries the same files under
    common/message/ and names its release and commit in kafka/kafka-version.properties."""

    def __init__(self, path, folder="common/message/", artifact="kafka-clients",
                 repo_path="clients/src/main/resources/common/message", release_of=None):
        self.path = path
        self.folder = folder
        self.artifact = artifact
        self.repo_path = repo_path
        self.version = self.commit = None
        self.sha256 = None
        if path.endswith(".jar"):
            with open(path, "rb") as f:
                self.sha256 = hashlib.sha256(f.read()).hexdigest()
            self.jar = zipfile.ZipFile(path)
            if "kafka/kafka-version.properties" in self.jar.namelist():
                props = self.jar.read("kafka/kafka-version.properties").decode()
                kv = dict(line.split("=", 1) for line in props.splitlines() if "=" in line)
                self.version, self.commit = kv.get("version"), kv.get("commitId")
            elif release_of is not None:
                # kafka-metadata names no release: its file name does, and the commit is that
                # of the kafka-clients jar of the same release.
                m = re.search(r"-(\d+\.\d+\.\d+)\.jar$", path)
                if not m or m.group(1) != release_of.version:
                    sys.exit(f"{path}: not the release of {release_of.path} ({release_of.version})")
                self.version, self.commit = release_of.version, release_of.commit
        else:
            self.jar = None

    def files(self):
        if self.jar:
            names = [n for n in self.jar.namelist() if n.startswith(self.folder) and n.endswith(".json")]
            return [(os.path.basename(n), self.jar.read(n).decode("utf-8")) for n in sorted(names)]
        return [(fn, open(os.path.join(self.path, fn), encoding="utf-8").read())
                for fn in sorted(os.listdir(self.path))]

    def label(self, given):
        """The manifest line: repository, tag and commit, so anyone can check the tables."""
        if given:
            return given
        if self.version and self.commit:
            return (f"repository=https://github.com/apache/kafka tag={self.version} "
                    f"commit={self.commit} path={self.repo_path} "
                    f"via=org.apache.kafka:{self.artifact}:{self.version} "
                    f"jar-sha256={self.sha256}")
        return self.path


def is_message(d):
    """A request or response body (with its API key), or one of the two headers."""
    if d.get("type") in ("request", "response"):
        return "apiKey" in d
    return d.get("type") == "header" and d.get("name") in ("RequestHeader", "ResponseHeader")


def messages(source):
    out = {}
    for fn, text in source.files():
        if not re.search(r"(Request|Response|Header)\.json$", fn):
            continue
        d = loose_bools(json.loads(strip_comments(text)))
        if not is_message(d):
            continue
        out[d["name"]] = d
    return out


def typed(source, kind):
    """The specs of one `"type"` in a folder: "data" (embedded messages such as
    DefaultPrincipalData and the control records' keys and values) or "metadata" (the records
    of the KRaft metadata log), by name."""
    out = {}
    for fn, text in source.files():
        d = loose_bools(json.loads(strip_comments(text)))
        if d.get("type") == kind:
            out[d["name"]] = d
    return out


def field_paths(spec):
    """(path, about) of every field of a generated table, paths spelled as descriptions.json
    keys them: nested fields joined by dots, common-struct fields under the struct's name."""
    out = []

    def walk(fields, prefix):
        for f in fields:
            out.append((prefix + f["name"], f.get("about")))
            walk(f.get("fields", []), prefix + f["name"] + ".")
    walk(spec.get("fields", []), "")
    for s in spec.get("commonStructs", []):
        walk(s["fields"], s["name"] + ".")
    return out


DESC_MAX = 78  # src/render/tree.rs cuts longer descriptions unless --wide


def missing_descriptions(files, apis, descs_all):
    """Problems with the descriptions of the named APIs: (missing, stray, long) lists of
    "Message: path" strings, and a list of API names with no table at all."""
    missing, stray, long, unknown = [], [], [], []
    for api in apis:
        found = False
        for msg in (api + "Request", api + "Response"):
            paths = {}
            for rel in (f"{msg}.json", f"legacy/{msg}.json"):
                if rel in files:
                    found = True
                    for path, about in field_paths(json.loads(files[rel])):
                        paths.setdefault(path, about)
            for path, about in paths.items():
                if not about:
                    missing.append(f"{msg}: {path}")
                elif len(about) > DESC_MAX:
                    long.append(f"{msg}: {path} ({len(about)} chars)")
            for path in descs_all.get(msg, {}):
                if path not in paths:
                    stray.append(f"{msg}: {path}")
        if not found:
            unknown.append(api)
    return missing, stray, long, unknown


def stray_ours(ours_of, content_all, enums_all):
    """"Message: path" of every content.json or enums.json entry that found no field."""
    out = []
    for what, table in (("content", content_all), ("enum", enums_all)):
        for msg, paths in table.items():
            if msg.startswith("_"):
                continue
            used = ours_of[msg].used if msg in ours_of else set()
            out.extend(f"{what} {msg}: {p}" for p in paths if (what, p) not in used)
    return out


def header_version_map(name, raw, header_versions):
    """A spec's "headerVersions", checked as Kafka's generator checks it: a non-empty map of
    version ranges to header versions, the ranges from 0 on without gap or overlap, the last
    one open ("9+"), header versions that never decrease and that the header tables have
    (header_versions: the versions of RequestHeader or ResponseHeader). Returns
    [(low, high or None, header version)] in order; exits with the problem otherwise."""
    def bad(why):
        sys.exit(f"{name}: headerVersions {json.dumps(raw)}: {why}")
    if not isinstance(raw, dict) or not raw:
        bad("not a map of version ranges to header versions")
    entries = []
    for k, v in raw.items():
        try:
            r = parse_versions(k)
            h = int(v)
        except ValueError:
            bad(f"{k!r}: {v!r} is not a version range and a header version")
        if r is None:
            bad(f"{k!r} is no version range")
        entries.append((r[0], r[1], h))
    entries.sort(key=lambda e: (e[0], e[1] if e[1] is not None else 1 << 16))
    expect = 0
    for i, (lo, hi, h) in enumerate(entries):
        last = i == len(entries) - 1
        if lo != expect:
            bad(f"versions {expect} to {lo - 1} have no header version" if lo > expect
                else f"version {lo} is mapped twice")
        if (hi is None) != last:
            bad("only the last range is open (\"9+\")" if not last else "the last range must be open (\"9+\")")
        if i and h < entries[i - 1][2]:
            bad("header versions decrease as versions grow")
        if h not in header_versions:
            bad(f"header version {h} is not in the header table")
        expect = (hi or lo) + 1
    return entries


def header_table_versions(d):
    """The versions a header spec has, as a set (its validVersions)."""
    r = parse_versions(d["validVersions"])
    return set(range(r[0], (r[1] if r[1] is not None else r[0]) + 1)) if r else set()


class Ahead:
    """schema-src/ahead.json: what a newer Kafka's specs hold that the source does not yet,
    applied where the source lacks it."""

    def __init__(self, path):
        self.data = json.load(open(path, encoding="utf-8")) if path and os.path.exists(path) else {}
        self.used = []
        self.stale = []

    def header(self, d):
        """A header spec with the versions and fields of ahead.json's "headers" entry that
        the source has not."""
        entry = self.data.get("headers", {}).get(d["name"])
        if not entry:
            return d
        d = json.loads(json.dumps(d))
        have = {f["name"] for f in d.get("fields", [])}
        added = [f for f in entry.get("fields", []) if f["name"] not in have]
        for f in entry.get("fields", []):
            if f["name"] in have:
                self.stale.append(f"headers.{d['name']}.{f['name']}")
        if added:
            d["fields"] = d.get("fields", []) + added
            lo, hi = parse_versions(d["validVersions"])
            want = parse_versions(entry["validVersions"])
            if hi is not None and want[1] is not None and want[1] > hi:
                d["validVersions"] = f"{lo}-{want[1]}"
            self.used.append((HEADERS, f"{d['name']} v{want[1]} ({', '.join(f['name'] for f in added)})"))
        return d

    def header_versions(self, d):
        """A request or response with ahead.json's header version map where it has none."""
        given = self.data.get("headerVersions", {}).get(d["name"])
        if given is None:
            return d
        if "headerVersions" in d:
            self.stale.append(f"headerVersions.{d['name']}")
            return d
        self.used.append(("", f"{d['name']} headerVersions"))
        return dict(d, headerVersions=given)

    def unused_names(self, names):
        """Entries that name no message of the source: typos."""
        out = []
        for section in ("headers", "headerVersions"):
            out.extend(f"{section}.{n}" for n in self.data.get(section, {})
                       if not n.startswith("_") and n not in names)
        return out


HEADERS = "headers/"
DATA = "data/"
METADATA = "metadata/"


def table_path(d, legacy=False):
    """Where a table goes under the output folder: headers apart from the message bodies, so
    that every file of schema/ and schema/legacy/ is one direction of one API."""
    folder = {"header": HEADERS, "data": DATA, "metadata": METADATA}.get(d["type"], "")
    return folder + ("legacy/" if legacy else "") + f"{d['name']}.json"


def render(obj):
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", required=True)
    ap.add_argument("--legacy")
    ap.add_argument("--metadata", help="kafka-metadata jar (or metadata/src/main/resources/common/metadata)")
    ap.add_argument("--metadata-label", default="")
    ap.add_argument("--new-label", default="")
    ap.add_argument("--legacy-label", default="")
    ap.add_argument("--out", default="schema")
    ap.add_argument("--descriptions", default="schema-src/descriptions.json")
    ap.add_argument("--content", default="schema-src/content.json")
    ap.add_argument("--enums", default="schema-src/enums.json")
    ap.add_argument("--ahead", default="schema-src/ahead.json",
                    help="what a newer Kafka's specs hold that the source has not yet ('' for none)")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--require-descriptions", default="", metavar="API,API,...",
                    help="fail when a field of these APIs (e.g. Produce,Fetch) has no description")
    ap.add_argument("--skip-keys", default="", help="API keys to leave out, e.g. 500-502 (a fork's own APIs)")
    a = ap.parse_args()

    descs_all = json.load(open(a.descriptions, encoding="utf-8"))
    content_all = json.load(open(a.content, encoding="utf-8"))
    enums_all = json.load(open(a.enums, encoding="utf-8"))
    skip = set()
    for part in filter(None, a.skip_keys.split(",")):
        lo, _, hi = part.partition("-")
        skip.update(range(int(lo), int(hi or lo) + 1))
    files = {}
    ours_of = {}

    def table(d, legacy=False, valid=None):
        name = d["name"]
        ours = ours_of.setdefault(name, Ours(name, content_all, enums_all))
        files[table_path(d, legacy)] = render(clean_spec(d, descs_all.get(name, {}), valid, ours))

    new_src = Source(a.new)
    legacy_src = Source(a.legacy) if a.legacy else None
    ahead = Ahead(a.ahead)
    new = {n: d for n, d in messages(new_src).items() if d.get("apiKey") not in skip}
    unused = ahead.unused_names(set(new))
    for m in unused:
        print(f"{a.ahead}: {m} names no message of the source", file=sys.stderr)
    new = {n: ahead.header(d) if d["type"] == "header" else ahead.header_versions(d)
           for n, d in new.items()}
    header_versions = {n: header_table_versions(d) for n, d in new.items() if d["type"] == "header"}
    for name, d in new.items():
        if "headerVersions" in d:
            which = "RequestHeader" if d["type"] == "request" else "ResponseHeader"
            header_version_map(name, d["headerVersions"], header_versions.get(which, set()))
    for m in ahead.stale:
        print(f"{a.ahead}: the source has {m} now: remove the entry", file=sys.stderr)
    for name, d in new.items():
        table(d)
    if a.legacy:
        for name, d in messages(legacy_src).items():
            if d.get("apiKey") in skip:
                continue
            if name not in new:
                # An API a newer Kafka removed altogether (LeaderAndIsr, ControlledShutdown...).
                table(d, legacy=True)
                continue
            old = parse_versions(d["validVersions"])
            cur = parse_versions(new[name]["validVersions"])
            if old and cur is None:
                # Still listed, with no valid version left: all its versions are legacy.
                table(d, legacy=True)
            elif old and cur and old[0] < cur[0]:
                valid = f"{old[0]}-{cur[0] - 1}" if cur[0] - 1 > old[0] else f"{old[0]}"
                table(d, legacy=True, valid=valid)
    # The embedded messages (type "data") of the current release, and the metadata records.
    for name, d in typed(new_src, "data").items():
        table(d)
    meta_src = None
    if a.metadata:
        meta_src = Source(a.metadata, "common/metadata/", "kafka-metadata",
                          "metadata/src/main/resources/common/metadata", new_src)
        for name, d in typed(meta_src, "metadata").items():
            table(d)
    stray_keys = stray_ours(ours_of, content_all, enums_all)
    for m in stray_keys:
        print(f"key for no field: {m}", file=sys.stderr)

    def manifest(what, rels, strip="", src=None, label=""):
        src = src or new_src
        lines = [f"# kdissect {what}, written by scripts/gen-schemas.py; do not edit by hand.",
                 f"# current: {src.label(label or a.new_label)}"]
        if a.legacy and src is new_src and strip in ("", HEADERS):
            lines.append(f"# legacy: {legacy_src.label(a.legacy_label)}")
        applied = [text for folder, text in ahead.used if folder == strip]
        if applied and src is new_src and strip in ("", HEADERS):
            lines.append(f"# ahead: {a.ahead}: {'; '.join(sorted(applied))}")
        for rel in sorted(rels):
            lines.append(f"{hashlib.sha256(files[rel].encode()).hexdigest()}  {rel[len(strip):]}")
        return "\n".join(lines) + "\n"

    folders = (HEADERS, DATA, METADATA)
    headers = [rel for rel in files if rel.startswith(HEADERS)]
    data = [rel for rel in files if rel.startswith(DATA)]
    records = [rel for rel in files if rel.startswith(METADATA)]
    bodies = [rel for rel in files if not rel.startswith(folders)]
    files["MANIFEST.txt"] = manifest("message tables", bodies)
    files[HEADERS + "MANIFEST.txt"] = manifest("header tables", headers, HEADERS)
    files[DATA + "MANIFEST.txt"] = manifest("embedded data tables", data, DATA)
    if meta_src:
        files[METADATA + "MANIFEST.txt"] = manifest("metadata record tables", records, METADATA,
                                                    meta_src, a.metadata_label)
    manifests = sum(1 for rel in files if rel.endswith("MANIFEST.txt"))

    required = [x.strip() for x in a.require_descriptions.split(",") if x.strip()]
    desc_problems = 0
    if required:
        missing, stray, long, unknown = missing_descriptions(files, required, descs_all)
        for api in unknown:
            print(f"--require-descriptions: no table for API {api}", file=sys.stderr)
        for m in missing:
            print(f"no description: {m}", file=sys.stderr)
        for m in stray:
            print(f"description for no field: {m}", file=sys.stderr)
        for m in long:
            print(f"warning: description over {DESC_MAX} characters: {m}", file=sys.stderr)
        desc_problems = len(unknown) + len(missing) + len(stray)
        print(f"descriptions of {len(required)} APIs checked: {len(missing)} missing, "
              f"{len(stray)} naming no field, {len(long)} over {DESC_MAX} characters")
    desc_problems += len(stray_keys) + len(unused)

    if a.check:
        bad = 0
        for rel, text in sorted(files.items()):
            p = os.path.join(a.out, rel)
            cur = open(p, encoding="utf-8").read() if os.path.exists(p) else None
            if not rel.endswith("MANIFEST.txt") and cur != text:
                print(f"differs: {p}")
                bad += 1
        print(f"{len(files) - manifests} tables checked, {bad} differ")
        return 1 if bad or desc_problems else 0
    for sub in ("", "legacy", HEADERS, HEADERS + "legacy", DATA) + ((METADATA,) if meta_src else ()):
        d = os.path.join(a.out, sub)
        os.makedirs(d, exist_ok=True)
        for rel in os.listdir(d):
            if rel.endswith(".json"):
                os.remove(os.path.join(d, rel))
    for rel, text in files.items():
        with open(os.path.join(a.out, rel), "w", encoding="utf-8") as f:
            f.write(text)
    print(f"wrote {len(files) - manifests} tables to {a.out}/")
    return 1 if desc_problems else 0


if __name__ == "__main__":
    sys.exit(main())
