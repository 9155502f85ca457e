#!/usr/bin/env bash
# Groups the crash inputs of fuzz/artifacts/<target>/ by what fails: each input is run again
# through its target's binary, and its panic location and message (digits and quoted text
# blanked) are its signature. Prints one line per group: count, signature, first input.
# `--keep` copies each group's shortest input to fuzz/findings/<target>/ with a `.txt` note
# holding the panic message. Usage: fuzz/triage.sh [--keep] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"

keep=
if [ "${1:-}" = --keep ]; then
    keep=1
    shift
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(compile compress expand spec_load roundtrip)
fi
bin_dir=${FUZZ_TARGET_DIR:-$PWD/target}/x86_64-unknown-linux-gnu/release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in "${targets[@]}"; do
    [ -d "artifacts/$t" ] || continue
    : >"$tmp/$t.sig"
    for f in "artifacts/$t"/crash-* "artifacts/$t"/timeout-* "artifacts/$t"/oom-*; do
        [ -f "$f" ] || continue
        out=$(timeout 60 "$bin_dir/$t" "$f" 2>&1 || true)
        where=$(grep -m1 -o "panicked at [^ ]*" <<<"$out" || true)
        what=$(grep -m1 -A1 "panicked at" <<<"$out" | tail -n1 || true)
        if [ -z "$where" ]; then
            where=$(grep -m1 -oE "ERROR: libFuzzer: [a-z -]+|deadly signal|stack overflow" <<<"$out" \
                || echo "no failure on re-run")
            what=$(basename "$f" | cut -d- -f1)
        fi
        sig=$(sed -E 's/"[^"]*"/"…"/g; s/`[^`]*`/`…`/g; s/[0-9]+/N/g' <<<"$where | $what" | cut -c1-200)
        printf '%s\t%s\t%s\n' "$sig" "$(wc -c <"$f")" "$f" >>"$tmp/$t.sig"
        printf '%s\n%s\n' "$where" "$what" >"$tmp/$(basename "$f").msg"
    done
    echo "== $t"
    sort -t$'\t' -k1,1 -k2,2n "$tmp/$t.sig" | awk -F'\t' '
        $1 != last { if (n) print n "\t" last "\t" first; last = $1; first = $3; n = 0 }
        { n++ } END { if (n) print n "\t" last "\t" first }' | tee "$tmp/$t.groups"
    if [ -n "$keep" ]; then
        mkdir -p "findings/$t"
        while IFS=$'\t' read -r _ _ f; do
            name=$(basename "$f")
            cp "$f" "findings/$t/$name"
            cp "$tmp/$name.msg" "findings/$t/$name.txt"
        done <"$tmp/$t.groups"
    fi
done
