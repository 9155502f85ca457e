#!/usr/bin/env python3
"""Checks grammars with XGrammar's own parser and matcher (tests/engines.rs runs it).

Reads one JSON object per line on stdin: {"name": str, "grammar": EBNF text, "texts": [str]}.
Writes one JSON object per line: {"name": str, "error": null or the parser's message,
"rejected": [indices of the texts the grammar does not accept as complete sentences]}.

The grammar is read by `xgrammar.Grammar.from_ebnf(text, root_rule_name="root")`, the call
vLLM and SGLang make for a request's EBNF grammar, compiled with an empty vocabulary (only
strings are matched, no tokens), and each text must be accepted and end the grammar.
"""

import json
import sys

import xgrammar as xgr


def main() -> None:
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo([]), cache_enabled=False)
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        out = {"name": job["name"], "error": None, "rejected": []}
        try:
            grammar = xgr.Grammar.from_ebnf(job["grammar"], root_rule_name="root")
            compiled = compiler.compile_grammar(grammar)
        except Exception as e:  # the parser's error, reported to the test
            out["error"] = f"{type(e).__name__}: {e}"
        else:
            for i, text in enumerate(job["texts"]):
                matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
                if not (matcher.accept_string(text) and matcher.is_terminated()):
                    out["rejected"].append(i)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
