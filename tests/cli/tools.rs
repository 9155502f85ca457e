//! Tool definitions and the schema lint.

use super::*;

/// Every input form compiles, says what it read, and maps the same calls the same way.
#[test]
fn tool_definitions_compile_as_they_are() {
    let f = Fixture::new();
    let tools = openai_tools();
    let defs: Vec<Value> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"].clone())
        .collect();
    let anthropic: Vec<Value> = defs
        .iter()
        .map(|d| json!({"name": d["name"], "description": d["description"], "input_schema": d.get("parameters").cloned().unwrap_or(json!({"type": "object", "additionalProperties": false}))}))
        .collect();
    let mcp: Vec<Value> = defs
        .iter()
        .map(|d| json!({"name": d["name"], "inputSchema": d.get("parameters").cloned().unwrap_or(json!({"type": "object", "additionalProperties": false}))}))
        .collect();
    let forms = [
        (
            "openai.json",
            tools.clone(),
            "read an OpenAI tools array: 3 tools",
        ),
        (
            "anthropic.json",
            json!(anthropic),
            "read an Anthropic tools array: 3 tools",
        ),
        (
            "mcp.json",
            json!({"tools": mcp}),
            "read an MCP tools/list result: 3 tools",
        ),
        (
            "rpc.json",
            json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": mcp}}),
            "read an MCP tools/list response: 3 tools",
        ),
    ];
    let calls = tool_calls().to_string();
    let mut texts = Vec::new();
    for (name, input, said) in forms {
        let path = f.write(name, &input.to_string());
        let out = f.path(&format!("{name}.spec"));
        let r = run_ok(&["compile", path_str(&path), "-o", path_str(&out)], None);
        assert!(r.stderr.contains(said), "{name}: {}", r.stderr);
        assert!(!r.stderr.contains("warning"), "{name}: {}", r.stderr);
        let text = run_ok(&["compress", "--spec", path_str(&out)], Some(&calls)).stdout;
        assert_eq!(text.lines().count(), 3, "{name}: one call per line\n{text}");
        let back = run_ok(
            &["expand", "--spec", path_str(&out), "--compact"],
            Some(&text),
        )
        .stdout;
        assert!(json_eq(&parse_json(&back), &tool_calls()), "{name}: {back}");
        texts.push(text);
    }
    assert!(texts.iter().all(|t| t == &texts[0]), "{texts:?}");
    assert!(
        // Tools take the named style: every argument is written with its keyword.
        texts[0].starts_with("get_weather city Paris unit celsius\n"),
        "{}",
        texts[0]
    );
    // The readable grammar documents each call by its tool's description.
    let bnf = run_ok(
        &["compile", path_str(&f.write("t.json", &tools.to_string()))],
        None,
    )
    .stdout;
    assert!(
        bnf.contains("Book a table") && bnf.contains("get_time"),
        "{bnf}"
    );
}

/// `--calls one`: a document is one call; a single function without its wrapper reads too.
#[test]
fn one_call_or_a_list_of_calls() {
    let f = Fixture::new();
    let tools = f.write("tools.json", &openai_tools().to_string());
    let out = f.path("one");
    let r = run_ok(
        &[
            "compile",
            path_str(&tools),
            "--calls",
            "one",
            "-o",
            path_str(&out),
        ],
        None,
    );
    assert!(r.stderr.contains("(one call)"), "{}", r.stderr);
    let call = json!({"book": {"at": {"day": "monday", "hour": 12}}});
    let text = run_ok(
        &["compress", "--spec", path_str(&out)],
        Some(&call.to_string()),
    )
    .stdout;
    assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    let back = run_ok(
        &["expand", "--spec", path_str(&out), "--compact"],
        Some(&text),
    )
    .stdout;
    assert!(json_eq(&parse_json(&back), &call), "{back}");
    let r = run(
        &["compress", "--spec", path_str(&out)],
        Some(&tool_calls().to_string()),
    );
    assert_eq!(r.code, 1, "a list is not one call: {}", r.stdout);

    let single = f.write("f.json", &openai_tools()[0]["function"].to_string());
    let r = run_ok(&["compile", path_str(&single), "--calls", "one"], None);
    assert!(
        r.stderr
            .contains("read an OpenAI function: 1 tool (one call)"),
        "{}",
        r.stderr
    );
    let r = run(&["compile", path_str(&single), "--calls", "some"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// Tool definitions that cannot be read are errors naming where.
#[test]
fn bad_tool_definitions_name_where() {
    let f = Fixture::new();
    for (input, expected) in [
        (
            json!([{"type": "function", "function": {"description": "no name", "parameters": {}}}]),
            "/0/function",
        ),
        (
            json!([{"name": "a", "parameters": {}}, {"name": "a", "parameters": {}}]),
            "already the name of the tool at /0",
        ),
        (
            json!([{"name": "a", "parameters": {"type": "array"}}]),
            "/0/parameters: its parameters must be an object schema",
        ),
        (
            json!({"tools": [{"name": "a", "inputSchema": {"properties": {"x": {"type": "strin"}}}}]}),
            "/tools/0/inputSchema/properties/x/type: malformed \"type\"",
        ),
    ] {
        let path = f.write("bad.json", &input.to_string());
        let r = run(&["compile", path_str(&path)], None);
        assert_eq!(r.code, 1, "{input}");
        assert!(r.stderr.contains(expected), "{input}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}

/// Malformed keyword values are errors (with `--lenient`, warnings saying what the grammar
/// makes of them); near misses of keywords, data documents and tools given as a schema are
/// reported.
#[test]
fn the_schema_lint() {
    let f = Fixture::new();
    let bad = f.write(
        "bad.json",
        r#"{"type": "object", "properties": {"x": {"propertes": {}}, "y": {"type": "integr"}, "z": {"required": "a"}}}"#,
    );
    let r = run(&["compile", path_str(&bad)], None);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("/properties/y/type")
            && r.stderr.contains("did you mean \"integer\"?")
            && r.stderr.contains("--lenient"),
        "{}",
        r.stderr
    );
    let r = run_ok(&["compile", "--lenient", path_str(&bad)], None);
    for said in [
        "/properties/x: unknown keyword \"propertes\"; did you mean \"properties\"?",
        "/properties/y/type: ignored malformed \"type\"",
        "so this schema admits every JSON type",
        "/properties/z/required: ignored malformed \"required\"",
        "so none of its properties is required",
    ] {
        assert!(r.stderr.contains(said), "{said}\n{}", r.stderr);
    }
    // The lenient spec ignores what it warned about, in its grammar and when compressing.
    let out = f.path("lenient");
    run_ok(
        &["compile", "--lenient", path_str(&bad), "-o", path_str(&out)],
        None,
    );
    run_ok(
        &["compress", "--spec", path_str(&out)],
        Some(r#"{"y": [1, "a"], "z": {}}"#),
    );

    let data = f.write("bob.json", r#"{"name": "Bob", "age": 3}"#);
    let r = run_ok(&["compile", path_str(&data)], None);
    assert!(
        r.stderr.contains("(root): ") && r.stderr.contains("is this a data document?"),
        "{}",
        r.stderr
    );
    let map = f.write(
        "map.json",
        r#"{"city": {"type": "string"}, "days": {"type": "integer"}}"#,
    );
    let r = run_ok(&["compile", path_str(&map)], None);
    assert!(
        r.stderr.contains("is this a `properties` map?"),
        "{}",
        r.stderr
    );

    let nested = json!({"type": "object", "properties": {"f": openai_tools()[0]}});
    let path = f.write("nested.json", &nested.to_string());
    let r = run(&["compile", path_str(&path)], None);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("/properties/f")
            && r.stderr.contains("OpenAI tool, not a JSON Schema")
            && r.stderr.contains("/properties/f/function/parameters"),
        "{}",
        r.stderr
    );
}

/// Vega-Lite's references with `[]` (`#/definitions/MarkPropDef<number[]>`) are read as the
/// references they are: no "ignored malformed keyword" warning.
#[test]
fn references_with_brackets_are_not_malformed() {
    let f = Fixture::new();
    let schema = json!({
        "definitions": {"List<number[]>": {"type": "array", "items": {"type": "number"}}},
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/List<number[]>"}}
    });
    let path = f.write("brackets.json", &schema.to_string());
    let r = run_ok(&["compile", path_str(&path)], None);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let r = run(
        &["compress", "--spec", path_str(&path)],
        Some(r#"{"a": ["x"]}"#),
    );
    assert_eq!(r.code, 1, "the reference is followed: {}", r.stdout);
}
