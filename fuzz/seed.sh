#!/usr/bin/env bash
# Builds the fuzz targets' seed corpora, fuzz/corpus/<target>/, from the repository's files
# and, when present, from the data directory ($DSS_DATA_DIR, default ../shared/data):
#   compile    JSON Schemas: specs/, the MaskBench and JSON-Schema-Test-Suite fixtures (and
#              the full corpora), the APIMix schemas;
#   compress   JSON instances: the viz examples, grammars/*/examples.jsonl, MaskBench tests;
#   expand,    shorthands: those instances compressed (`dss compress`) under the fixed specs
#   roundtrip  of fuzz/src/lib.rs;
#   spec_load  spec.json files: grammars/*/spec.json and the fixed specs compiled (`dss compile`).
# Files are named by the SHA-1 of their content (as libFuzzer names them), so running it again
# only adds. FUZZ_SEED_MAX (default 300; 0: all) caps the data directory's MaskBench files
# taken. The `dss` binary is $DSS, else target/debug/dss (or $CARGO_TARGET_DIR's), else
# built with --no-default-features. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."

data=${DSS_DATA_DIR:-../shared/data}
out=fuzz/corpus
if [ -z "${DSS:-}" ]; then
    DSS="${CARGO_TARGET_DIR:-target}/debug/dss"
    if [ ! -x "$DSS" ]; then
        cargo build --quiet --no-default-features --bin dss
    fi
fi
mkdir -p "$out"/{compile,compress,expand,roundtrip,spec_load}

# The fixed specs' schemas: keep in step with SOURCES in fuzz/src/lib.rs.
fixed=(
    specs/viz.schema.json
    tests/fixtures/maskbench/data/Github_easy---o65465.json
    tests/fixtures/maskbench/data/Github_medium---o10079.json
    tests/fixtures/maskbench/data/MCPspec---ClientNotification.json
    tests/fixtures/maskbench/data/Github_easy---o44234.json
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Schemas and instances. A seed larger than 64 KB is left out: it would raise libFuzzer's
# input size limit for the whole run (the Vega-Lite schema is 1.5 MB).
python3 - "$out" "$data" "$tmp" "${fixed[@]}" <<'EOF'
import glob, hashlib, json, os, sys

out, data, tmp, fixed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
MAX = 64 * 1024

def put(target, text):
    b = text.encode() if isinstance(text, str) else text
    if len(b) > MAX:
        return
    with open(os.path.join(out, target, hashlib.sha1(b).hexdigest()), "wb") as f:
        f.write(b)

def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def dump(v):
    return json.dumps(v, ensure_ascii=False)

roots = ["tests/fixtures"] + ([data] if os.path.isdir(data) else [])
# At most FUZZ_SEED_MAX MaskBench files from the data directory (every k-th, by name; 0: all),
# so a brief CI run is not spent reading its seeds.
limit = int(os.environ.get("FUZZ_SEED_MAX", "300"))

def files(root, pattern):
    fs = sorted(glob.glob(f"{root}/{pattern}"))
    if root != "tests/fixtures" and limit and len(fs) > limit:
        fs = fs[:: -(-len(fs) // limit)]
    return fs

# compile: schemas.
for p in glob.glob("specs/*.json"):
    put("compile", open(p, encoding="utf-8").read())
for root in roots:
    for p in files(root, "maskbench/data/*.json"):
        d = load(p)
        if isinstance(d, dict) and "schema" in d:
            put("compile", dump(d["schema"]))
            for t in d.get("tests", []):
                put("compress", dump(t.get("data")))
    for p in glob.glob(f"{root}/json-schema-test-suite/tests/*/*.json"):
        d = load(p)
        for g in d if isinstance(d, list) else []:
            put("compile", dump(g.get("schema")))
            for t in g.get("tests", []):
                put("compress", dump(t.get("data")))
    for p in glob.glob(f"{root}/APIMix*/*_schema.json"):
        put("compile", open(p, encoding="utf-8").read())

# compress: instances of the viz spec.
for p in glob.glob("examples/viz/*.json"):
    put("compress", open(p, encoding="utf-8").read())
for p in glob.glob("grammars/*/examples.jsonl"):
    for line in open(p, encoding="utf-8"):
        if line.strip():
            put("compress", dump(json.loads(line)["output"]))

# Per fixed spec: its schema and its instances as JSONL, for `dss compress` below.
for i, p in enumerate(fixed):
    d = load(p)
    schema, instances = d, []
    if "schema" in d:
        schema = d["schema"]
        instances = [t["data"] for t in d.get("tests", []) if t.get("valid")]
    if p.startswith("specs/viz"):
        instances = [load(q) for q in glob.glob("examples/viz/*.json")]
        for q in glob.glob("grammars/viz/examples.jsonl"):
            instances += [json.loads(l)["output"] for l in open(q) if l.strip()]
    with open(f"{tmp}/{i}.schema.json", "w") as f:
        f.write(dump(schema))
    with open(f"{tmp}/{i}.jsonl", "w") as f:
        for x in instances:
            f.write(dump(x) + "\n")
EOF

# expand, roundtrip: the shorthands; spec_load: the compiled specs.
for i in "${!fixed[@]}"; do
    "$DSS" compile "$tmp/$i.schema.json" -o "$tmp/spec$i" >/dev/null
    "$DSS" compress --spec "$tmp/spec$i" --jsonl --keep-going "$tmp/$i.jsonl" \
        >"$tmp/$i.out" 2>/dev/null || true
done
python3 - "$out" "$tmp" "${#fixed[@]}" <<'EOF'
import glob, hashlib, json, os, sys

out, tmp, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def put(target, b):
    with open(os.path.join(out, target, hashlib.sha1(b).hexdigest()), "wb") as f:
        f.write(b)

for i in range(n):
    for line in open(f"{tmp}/{i}.out", encoding="utf-8"):
        if line.strip():
            s = json.loads(line).encode()
            put("expand", s)
            put("roundtrip", s)
    put("spec_load", open(f"{tmp}/spec{i}/spec.json", "rb").read())
for p in glob.glob("grammars/*/spec.json"):
    put("spec_load", open(p, "rb").read())
EOF

for t in compile compress expand roundtrip spec_load; do
    echo "seed: $out/$t: $(find "$out/$t" -type f | wc -l) files"
done
