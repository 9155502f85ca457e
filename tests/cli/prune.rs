//! `dss prune`: the grammar pruned to a request, and after lines already written.

use super::*;

/// `dss prune --format lark` writes the pruned grammar as Lark, with the rules of its GBNF:
/// the chart the request names is in it, the others are not; `compile -o` writes
/// `shorthand.lark` as the library prints it.
#[test]
fn prune_writes_the_pruned_grammar_as_lark() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/viz");
    let request = "average profit per month as a line chart";
    let gbnf = run_ok(&["prune", "--spec", spec, request], None).stdout;
    let lark = run_ok(
        &["prune", "--spec", spec, request, "--format", "lark"],
        None,
    )
    .stdout;
    for (name, _) in gbnf.lines().filter_map(|l| l.split_once(" ::= ")) {
        let name = name.replace('-', "_");
        let (rule, lexeme) = (
            format!("\nr_{}: ", name.to_ascii_lowercase()),
            format!("\nT_{}: ", name.to_ascii_uppercase()),
        );
        assert!(
            lark.contains(&rule) || lark.contains(&lexeme),
            "GBNF rule {name} is not in the Lark:\n{lark}"
        );
    }
    assert!(lark.contains("start: r_root"), "{lark}");
    assert!(lark.contains("\"line\""), "{lark}");
    assert!(!lark.contains("\"scatterplot\""), "{lark}");
    let f = Fixture::new();
    let spec = std::fs::read_to_string(f.spec_dir().join("spec.json")).expect("spec.json");
    let spec = dss_compiler::CompiledSpec::from_json(&spec).expect("loads");
    let lark = std::fs::read_to_string(f.spec_dir().join("shorthand.lark")).expect("lark");
    assert_eq!(lark, spec.grammar_lark().expect("prints"));
}

/// `dss prune` on a tool definition that leaves `additionalProperties` out (as OpenAI-style
/// function parameters do): the grammar offers no undeclared property, unless
/// `--allow-undeclared`; one that allows them explicitly keeps them.
#[test]
fn prune_offers_no_undeclared_property_a_tool_does_not_allow() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = |extra: Value| {
        let mut params = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]}
            },
            "required": ["city"]
        });
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        json!([{"type": "function", "function": {"name": "get_weather", "parameters": params}}])
    };
    let implicit = dir.path().join("implicit.json");
    let explicit = dir.path().join("explicit.json");
    std::fs::write(&implicit, tools(json!({})).to_string()).expect("write");
    std::fs::write(
        &explicit,
        tools(json!({"additionalProperties": true})).to_string(),
    )
    .expect("write");
    let request = "the weather in Oslo in celsius";
    let prune = |spec: &Path, more: &[&str]| {
        let mut args = vec!["prune", "--spec", path_str(spec), request];
        args.extend_from_slice(more);
        run_ok(&args, None).stdout
    };
    let narrow = prune(&implicit, &[]);
    let allowed = prune(&implicit, &["--allow-undeclared"]);
    // Pruned either way: the unit nobody named is gone.
    for g in [&narrow, &allowed] {
        assert!(g.contains("celsius") && !g.contains("fahrenheit"), "{g}");
    }
    assert!(!narrow.contains("-more"), "{narrow}");
    assert!(allowed.contains("-more"), "{allowed}");
    let explicit = prune(&explicit, &[]);
    assert!(explicit.contains("-more"), "{explicit}");
    // The published grammar keeps them.
    let out = dir.path().join("out");
    run_ok(
        &["compile", path_str(&implicit), "-o", path_str(&out)],
        None,
    );
    let published = std::fs::read_to_string(out.join("shorthand.gbnf")).expect("gbnf");
    assert!(published.contains("-more"), "{published}");
}

/// `dss prune --after LINES` prints the grammar of the rest of the document after lines
/// already written, with what they used consumed; lines that do not read are an error
/// that says where.
#[test]
fn prune_after_lines_prints_the_grammar_of_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "required": ["city"], "properties": {
            "city": {"type": "string"},
            "unit": {"enum": ["celsius", "fahrenheit"]}}}}}]);
    let path = tools_file(&dir, &tools);
    let request = "the weather in Oslo and in Bergen, in celsius";
    let spec = path_str(&path);
    let first = run_ok(&["prune", "--spec", spec, request], None).stdout;
    assert!(
        first.contains("Oslo") && first.contains("Bergen"),
        "{first}"
    );
    let after = |lines: &str| run(&["prune", "--spec", spec, request, "--after", lines], None);
    let rest = after("get_weather city \"Oslo\" unit celsius\n");
    assert_eq!(rest.code, 0, "{}", rest.stderr);
    // The city written is used up; the other city is left, and a second call is offered
    // for it (`Oslo and in Bergen` joins them), with the unit said once for both.
    assert!(rest.stdout.contains("Bergen"), "{}", rest.stdout);
    assert!(!rest.stdout.contains("Oslo"), "{}", rest.stdout);
    assert!(
        rest.stdout.contains("unit ::= \"celsius\""),
        "{}",
        rest.stdout
    );
    assert!(
        rest.stdout.contains("root ::= (item-body"),
        "{}",
        rest.stdout
    );
    let done = after("get_weather city \"Oslo\" unit celsius\nget_weather city \"Bergen\"\n");
    assert!(done.stdout.contains("root ::= \"\""), "{}", done.stdout);
    let bad = after("get_wether Oslo\n");
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("--after"), "{}", bad.stderr);
}

/// A tool the request names is offered although nothing of it was found, beside a tool
/// kept for a number the request gives; a tool it neither names nor gives a value for is
/// not.
#[test]
fn prune_offers_the_tool_a_request_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([
        {"type": "function", "function": {"name": "search_web",
            "description": "Look up pages about a topic.",
            "parameters": {"type": "object", "required": ["query"], "properties": {
                "query": {"type": "string"},
                "engine": {"enum": ["alpha", "beta"]}}}}},
        {"type": "function", "function": {"name": "resize_photo",
            "description": "Scale a picture to a width in pixels.",
            "parameters": {"type": "object", "required": ["path"], "properties": {
                "path": {"type": "string"},
                "width": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "translate_text",
            "description": "Put a passage into another language.",
            "parameters": {"type": "object", "required": ["passage"], "properties": {
                "passage": {"type": "string"},
                "target": {"enum": ["fr", "de"]}}}}}]);
    let path = tools_file(&dir, &tools);
    let request = "Search the web for tide tables of Porto published after 2021";
    let grammar = run_ok(&["prune", "--spec", path_str(&path), request], None).stdout;
    assert!(grammar.contains("\"search_web "), "{grammar}");
    // Kept for the number, as before; the unnamed tool with nothing found is not offered.
    assert!(grammar.contains("\"resize_photo "), "{grammar}");
    assert!(!grammar.contains("translate_text"), "{grammar}");
}

/// After a call, numbers left that repeat the labels of the numbers it used (`3 kg … 7
/// kg`) ask for another call of their own; once they are used, nothing more is offered.
#[test]
fn prune_after_a_call_offers_another_where_numbers_repeat_their_labels() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([{"type": "function", "function": {"name": "shipping_cost",
        "parameters": {"type": "object", "required": ["weight_kg", "distance_km"],
            "properties": {
                "weight_kg": {"type": "number"},
                "distance_km": {"type": "integer"}}}}}]);
    let path = tools_file(&dir, &tools);
    let spec = path_str(&path);
    let request = "What would it cost to ship 3 kg over 120 km, and 7 kg over 40 km?";
    let after = |lines: &str| run_ok(&["prune", "--spec", spec, request, "--after", lines], None);
    let rest = after("shipping_cost (weight_kg 3 distance_km 120)\n").stdout;
    assert!(rest.contains("root ::= (item-body"), "{rest}");
    // Each number offered as a literal of its own or at the end of one (`"weight_kg 7"`).
    let offers = |n: &str| rest.contains(&format!("\"{n}\"")) || rest.contains(&format!(" {n}\""));
    assert!(offers("7") && offers("40"), "{rest}");
    let done = after(
        "shipping_cost (weight_kg 3 distance_km 120)\nshipping_cost (weight_kg 7 distance_km 40)\n",
    )
    .stdout;
    assert!(done.contains("root ::= \"\""), "{done}");
}

/// Parallel calls of one tool: each name of a list (`Lyon, Le Mans and Metz`, a name of
/// two words between the others) and each number whose words after it read as a used
/// one's (`12 liters to gallons, and 3 cups to milliliters`) asks for a call of its own.
#[test]
fn prune_after_a_call_offers_one_for_each_item_the_request_lists() {
    // The grammar of the rest after `lines`, for `tools` and `request`.
    let rest = |tools: &Value, request: &str, lines: &str| {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = tools_file(&dir, tools);
        run_ok(
            &[
                "prune",
                "--spec",
                path_str(&path),
                request,
                "--after",
                lines,
            ],
            None,
        )
        .stdout
    };
    let weather = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string"}}}}}]);
    let rest_of_list = rest(
        &weather,
        "Check the weather in Lyon, Le Mans and Metz.",
        "get_weather (city \"Lyon\")\n",
    );
    assert!(
        rest_of_list.contains("root ::= (item-body"),
        "{rest_of_list}"
    );
    assert!(
        rest_of_list.contains("Le Mans") && rest_of_list.contains("Metz"),
        "{rest_of_list}"
    );

    let convert = json!([{"type": "function", "function": {"name": "convert_volume",
        "parameters": {"type": "object", "required": ["amount", "from", "to"],
            "properties": {
                "amount": {"type": "number"},
                "from": {"type": "string"},
                "to": {"type": "string"}}}}}]);
    let rest_of_numbers = rest(
        &convert,
        "Convert 12 liters to gallons, and 3 cups to milliliters.",
        "convert_volume (amount 12 from \"liters\" to \"gallons\")\n",
    );
    assert!(
        rest_of_numbers.contains("root ::= (item-body"),
        "{rest_of_numbers}"
    );
    assert!(rest_of_numbers.contains("amount 3"), "{rest_of_numbers}");
}

/// A choice said once beside a list of names holds for each name's call: after the first
/// call it is offered again, and asks for no call of its own; where the request gives
/// another value of it, that one is offered instead.
#[test]
fn prune_after_a_call_offers_a_choice_said_once_for_every_name_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([{"type": "function", "function": {"name": "forecast",
        "parameters": {"type": "object", "required": ["town"],
            "properties": {
                "town": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}}]);
    let path = tools_file(&dir, &tools);
    let spec = path_str(&path);
    let after = |request: &str, lines: &str| {
        run_ok(&["prune", "--spec", spec, request, "--after", lines], None).stdout
    };
    let request = "Forecast for Tartu and for Narva, in fahrenheit";
    let rest = after(request, "forecast town \"Tartu\" unit fahrenheit\n");
    assert!(rest.contains("root ::= (item-body"), "{rest}");
    assert!(rest.contains("unit ::= \"fahrenheit\""), "{rest}");
    let done = after(
        request,
        "forecast town \"Tartu\" unit fahrenheit\nforecast town \"Narva\" unit fahrenheit\n",
    );
    assert!(done.contains("root ::= \"\""), "{done}");
    let rest = after(
        "Forecast for Tartu in fahrenheit and for Narva in celsius",
        "forecast town \"Tartu\" unit fahrenheit\n",
    );
    assert!(rest.contains("unit ::= \"celsius\""), "{rest}");
}

/// A request that names two tools, each with a value of its own, asks for a call of the
/// other after a call of one, and that line is a call of the tool named; a place named
/// nowhere near the other tool's name asks for nothing.
#[test]
fn prune_after_a_call_offers_the_other_tool_the_request_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([
        {"type": "function", "function": {"name": "get_weather",
            "description": "Current conditions in a city.",
            "parameters": {"type": "object", "required": ["city"], "properties": {
                "city": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]}}}}},
        {"type": "function", "function": {"name": "shipping_cost",
            "description": "Price of sending a parcel.",
            "parameters": {"type": "object", "required": ["weight_kg", "distance_km"],
                "properties": {
                    "weight_kg": {"type": "number"},
                    "distance_km": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "stock_quote",
            "description": "Latest price of a share.",
            "parameters": {"type": "object", "required": ["symbol"], "properties": {
                "symbol": {"type": "string"}}}}}]);
    let path = tools_file(&dir, &tools);
    let spec = path_str(&path);
    let after = |request: &str, lines: &str| {
        run_ok(&["prune", "--spec", spec, request, "--after", lines], None).stdout
    };
    let request = "How is the weather in Tromso, and what does shipping 6 kg over 250 km cost?";
    let grammar = run_ok(&["prune", "--spec", spec, request], None).stdout;
    assert!(grammar.contains("\"shipping_cost "), "{grammar}");
    let shipped = "shipping_cost (weight_kg 6 distance_km 250)\n";
    let rest = after(request, shipped);
    assert!(rest.contains("root ::= (item-body"), "{rest}");
    assert!(
        rest.contains("\"get_weather ") && rest.contains("Tromso"),
        "{rest}"
    );
    let done = after(request, &format!("{shipped}get_weather city \"Tromso\"\n"));
    assert!(done.contains("root ::= \"\""), "{done}");
    // The weather tool is not named: the town is where the parcel goes, not a call.
    let rest = after(
        "What does shipping 6 kg over 250 km to Tromso cost?",
        shipped,
    );
    assert!(rest.contains("root ::= \"\""), "{rest}");
    // Asked for by the weather tool's name alone, the line is a weather call: the quote
    // tool written, which could take `Madrid` too, is not offered again.
    let rest = after(
        "Get me a stock quote for TSLA; also, how is the weather in Madrid?",
        "stock_quote (symbol \"TSLA\")\n",
    );
    assert!(
        rest.contains("\"get_weather ") && rest.contains("Madrid"),
        "{rest}"
    );
    assert!(!rest.contains("\"stock_quote "), "{rest}");
}

/// `dss prune` and `dss extract` learn from the spec's worked examples as `dss generate`
/// does (here: that a clause names one call, so a clause's values go to the call that takes
/// the most of them and the call its words name), and `--no-examples` learns nothing.
#[test]
fn prune_learns_from_the_worked_examples_as_generate_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let call = |fields: &[&str]| {
        let props: serde_json::Map<String, Value> = fields
            .iter()
            .map(|f| {
                let values = if *f == "airline" {
                    json!(["delta", "united"])
                } else {
                    json!(["boston", "denver", "dallas"])
                };
                (f.to_string(), json!({ "enum": values }))
            })
            .collect();
        json!({"type": "object", "properties": props, "additionalProperties": false})
    };
    let calls = [
        ("flight", call(&["airline", "departure_city"])),
        ("day_name", call(&["airline", "departure_city"])),
        ("ground_service", call(&["city"])),
    ];
    let schema = json!({"type": "array", "maxItems": 3, "items": {"oneOf": calls
        .iter()
        .map(|(name, body)| json!({"type": "object", "properties": {*name: body},
            "required": [name], "additionalProperties": false}))
        .collect::<Vec<_>>()}});
    let schema_path = dir.path().join("schema.json");
    std::fs::write(&schema_path, schema.to_string()).expect("write schema");
    let spec_dir = dir.path().join("spec");
    run_ok(
        &["compile", path_str(&schema_path), "-o", path_str(&spec_dir)],
        None,
    );
    std::fs::write(
        spec_dir.join("examples.jsonl"),
        concat!(
            r#"{"request": "united flights from dallas, and taxis in denver", "output": "#,
            r#"[{"flight": {"airline": "united", "departure_city": "dallas"}}, "#,
            r#"{"ground_service": {"city": "denver"}}]}"#,
            "\n"
        ),
    )
    .expect("write examples");
    let spec = path_str(&spec_dir);
    let request = "what day does delta leave from boston";
    let learned = run_ok(&["prune", "--spec", spec, request], None).stdout;
    assert!(learned.contains("\"day_name \""), "{learned}");
    assert!(!learned.contains("\"flight \""), "{learned}");
    let plain = run_ok(&["prune", "--spec", spec, request, "--no-examples"], None).stdout;
    assert!(plain.contains("\"day_name \""), "{plain}");
    assert!(plain.contains("\"flight \""), "{plain}");
    // `dss extract` reports the same: the readings ruled out are not candidates.
    let a: Value =
        serde_json::from_str(&run_ok(&["extract", "--spec", spec, request], None).stdout)
            .expect("extract prints JSON");
    let at = |site: &str| {
        a["candidates"][site]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(at("/*/day_name/airline"), [json!("delta")], "{a}");
    assert!(at("/*/flight/airline").is_empty(), "{a}");
}
