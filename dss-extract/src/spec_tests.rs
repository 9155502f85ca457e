use super::*;
use dss_compiler::prune::{Consume, Resume};
use dss_compiler::{compile, CompileOptions};
use serde_json::json;

/// Whether some mention reads as a record ([`Restriction::record_reading`]).
fn has_record_readings(r: &Restriction) -> bool {
    r.readings.iter().flatten().any(|(_, v)| v.is_null())
}

fn viz() -> CompiledSpec {
    compile(
            &json!({"type": "object", "properties": {
                "fields": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
                    "fieldName": {"type": "string"},
                    "aggregate": {"enum": ["sum", "mean", "count"]}
                }, "required": ["fieldName"]}}
            }, "required": ["fields"]}),
            &CompileOptions::default(),
        )
        .expect("compiles")
}

fn catalogs() -> Catalogs {
    let mut c = Catalogs::default();
    c.values.insert(
        "/fields/*/fieldName".into(),
        vec![
            json!("Order Date"),
            json!("Sales"),
            json!("Profit"),
            json!("Region"),
        ],
    );
    c.aliases
        .push(Entry::new("*", json!("mean")).with_aliases(["average"]));
    c
}

#[test]
fn a_field_that_asks_for_dates_takes_the_request_s_dates_written_as_it_asks() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "city": {"type": "string"},
                "day": {"type": "string", "description": "The day, in the format of 'YYYY-MM-DD'."}
            }, "required": ["city"], "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze("a picnic in Lyon on June 3rd 2025", ExtractMode::Full, 0);
    let r = &a.restriction;
    assert_eq!(r.dates, vec![json!("2025-06-03")]);
    let g = spec.pruned_grammar(r, Resume::Start).to_gbnf();
    assert!(g.contains("day \\\"2025-06-03\\\""), "{g}");
    // The date's words are the date's: no span of them, at the date or anywhere else.
    for never in ["\"June", "\"3rd", "2025\""] {
        assert!(!g.contains(never), "{never} in {g}");
    }
    let date_words = r
        .spans
        .words
        .iter()
        .filter(|w| ["June", "3rd", "2025"].contains(&w.text.as_str()));
    assert_eq!(date_words.clone().count(), 3);
    assert!(date_words.clone().all(|w| w.used), "{:?}", r.spans.words);
    // No date in the request: the optional field is left out.
    let a = ix.analyze("a picnic in Lyon", ExtractMode::Full, 0);
    let g = spec.pruned_grammar(&a.restriction, Resume::Start).to_gbnf();
    assert!(g.contains("Lyon") && !g.contains("day"), "{g}");
    // Written, the date is used up.
    let rest = r.consumed(&[("/day".to_string(), json!("2025-06-03"))], Consume::Class);
    assert!(rest.dates.is_empty(), "{:?}", rest.dates);
}

#[test]
fn a_numeric_date_with_a_time_range_gives_two_moments_on_that_date() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "room": {"type": "integer"},
                "start": {"type": "string", "description": "Start, as 'YYYY-MM-DD HH:mm:ss'."},
                "end": {"type": "string", "description": "End, as 'YYYY-MM-DD HH:mm:ss'."}
            }, "required": ["room"], "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze(
        "book room 4 on 21/05/2025 09:30 - 11:00",
        ExtractMode::Full,
        0,
    );
    let r = &a.restriction;
    assert_eq!(
        r.dates,
        [json!("2025-05-21T09:30:00"), json!("2025-05-21T11:00:00")]
    );
    // The date's digits are no numbers of their own.
    assert_eq!(r.numbers, [json!(4)]);
    // Nothing says which part is the day: both readings, each with the time.
    let a = ix.analyze("book room 4 on 06/05/2025 at 09:30", ExtractMode::Full, 0);
    assert_eq!(
        a.restriction.dates,
        [json!("2025-05-06T09:30:00"), json!("2025-06-05T09:30:00")]
    );
}

#[test]
fn date_and_time_fields_take_the_request_s_moments_in_their_own_forms() {
    let spec = compile(
            &json!({"type": "object", "properties": {
                "from": {"type": "string", "description": "Where from, such as 'Oslo'."},
                "leave": {"type": "string", "description": "Departure in the format 'dd/mm/yyyy HH:MM'."},
                "back": {"type": "string", "description": "Return day, such as '21/07/2024'."},
                "meet": {"type": "string", "description": "Meeting time, in 24-hour format, such as '18:45'."},
                "seats": {"type": "integer"}
            }, "required": ["from", "leave"], "additionalProperties": false}),
            &CompileOptions::default(),
        )
        .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze(
        "fly 2 of us from Oslo on the 9th of August 2024 at 7 in the evening, back on \
             August 19th; meet at 5 pm",
        ExtractMode::Full,
        0,
    );
    let r = &a.restriction;
    // The date next to a time is one moment; the day without a year takes the year
    // of the request's date; the time alone is one.
    assert_eq!(
        r.dates,
        [
            json!("2024-08-09T19:00:00"),
            json!("2024-08-19"),
            json!("17:00:00")
        ]
    );
    let g = spec.pruned_grammar(r, Resume::Start).to_gbnf();
    for offered in ["09/08/2024 19:00", "19/08/2024", "17:00"] {
        assert!(g.contains(offered), "{offered} in {g}");
    }
    // A time's numbers are the time's: 2 is a number, 7 and 5 are not.
    assert_eq!(r.numbers, [json!(2)]);
    for never in ["\"August", "\"evening", "\"pm"] {
        assert!(!g.contains(never), "{never} in {g}");
    }
    // Written as a date, a moment leaves its time.
    let rest = r.consumed(
        &[("/back".to_string(), json!("09/08/2024"))],
        Consume::Class,
    );
    assert_eq!(
        rest.dates,
        [json!("19:00:00"), json!("2024-08-19"), json!("17:00:00")]
    );

    // Days named from the date given as today.
    let a = ix.analyze(
        "from Oslo next friday at noon, today is Tuesday, May 7th 2024",
        ExtractMode::Full,
        0,
    );
    assert_eq!(a.restriction.dates, [json!("2024-05-10T12:00:00")]);
    let a = ix.analyze(
        "from Oslo tomorrow at 09:30; today is 2024-12-31",
        ExtractMode::Full,
        0,
    );
    assert_eq!(a.restriction.dates, [json!("2025-01-01T09:30:00")]);
    // Today's date with no day counted from it is the date asked for.
    let a = ix.analyze("from Oslo; today is May 7th 2024", ExtractMode::Full, 0);
    assert_eq!(a.restriction.dates, [json!("2024-05-07")]);
    // Without today's date, a weekday is no date.
    let a = ix.analyze("from Oslo next friday", ExtractMode::Full, 0);
    assert!(a.restriction.dates.is_empty(), "{:?}", a.restriction.dates);
}

#[test]
fn a_word_that_names_the_tool_or_a_field_asks_for_no_other_call() {
    let spec = compile(
        &json!({"type": "array", "items": {"type": "object", "properties": {
                "taxi.book": {"type": "object", "properties": {
                    "pickup_url": {"type": "string"},
                    "note": {"type": "string"}
                }, "required": ["pickup_url"], "additionalProperties": false}
            }, "required": ["taxi.book"], "additionalProperties": false}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    assert_eq!(name_keys("maxResults"), ["maxresults", "max", "results"]);
    let a = ix.analyze(
        "get me a Taxi from the pickup URL https://x.example/p please",
        ExtractMode::Full,
        0,
    );
    let words = &a.restriction.spans.words;
    let named: Vec<&str> = words
        .iter()
        .filter(|w| w.names_schema)
        .map(|w| w.text.as_str())
        .collect();
    assert_eq!(named, ["Taxi", "pickup", "URL"]);
    // Once the address is written, the names left ask for no other call.
    let mut r = a.restriction.clone();
    r.spans.consume("https://x.example/p");
    assert!(!r.spans.marked_left(), "{:?}", r.spans.words);
    // A quoted word is a value, whatever it spells.
    let a = ix.analyze("book a taxi with the note 'URL'", ExtractMode::Full, 0);
    assert!(a
        .restriction
        .spans
        .words
        .iter()
        .all(|w| w.text != "URL" || !w.names_schema));
}

#[test]
fn a_call_with_a_choice_found_is_not_written_empty() {
    // Every parameter optional: one a choice the request names, one free text.
    let spec = compile(
        &json!([{"name": "films.find", "description": "Finds films.", "parameters": {
                "type": "object", "properties": {
                    "genre": {"type": "string", "enum": ["Drama", "Western"]},
                    "cast": {"type": "string", "description": "Lead actors."}
                }, "required": []}}]),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze("any western starring Ada Smith?", ExtractMode::Full, 0);
    let g = spec.pruned_grammar(&a.restriction, Resume::Start).to_gbnf();
    assert!(g.contains("Western"), "{g}");
    assert!(!g.contains("\"()\""), "{g}");
    // With nothing found for it, a call without arguments stays possible.
    let a = ix.analyze("list some films", ExtractMode::Full, 0);
    let g = spec.pruned_grammar(&a.restriction, Resume::Start).to_gbnf();
    assert!(g.contains("()\""), "{g}");
}

#[test]
fn a_choice_written_as_a_path_is_named_by_its_last_part() {
    assert_eq!(leaf_name("America/New_York").as_deref(), Some("New York"));
    assert_eq!(leaf_name("sports/tennis").as_deref(), Some("tennis"));
    for none in [
        "UTC",
        "https://a.example/x",
        "v1/items",
        "a/b",
        "/root",
        "2024/05",
    ] {
        assert_eq!(leaf_name(none), None, "{none}");
    }
    let spec = compile(
        &json!({"type": "object", "properties": {
                "zone": {"enum": ["Asia/Seoul", "America/Los_Angeles", "UTC"]}
            }, "required": ["zone"], "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze("a call at 9 Los Angeles time", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/zone"), [json!("America/Los_Angeles")]);
}

#[test]
fn a_choice_written_as_an_abbreviation_is_named_by_its_word() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "order": {"enum": ["ASC", "DESC"]},
                "stat": {"enum": ["min", "max", "avg"]}
            }, "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze(
        "the average price, newest first in descending order",
        ExtractMode::Full,
        0,
    );
    assert_eq!(a.restriction.at("/order"), [json!("DESC")]);
    assert_eq!(a.restriction.at("/stat"), [json!("avg")]);
    assert_eq!(abbreviated_word("Desc"), Some("descending"));
    assert_eq!(abbreviated_word("description"), None);
}

#[test]
fn a_choice_of_language_tags_is_named_by_the_languages() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "from": {"enum": ["en", "de", "it"]},
                "voice": {"enum": ["nl-NL", "pt_BR", "xx-YY"]}
            }, "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze("read this German text aloud in Dutch", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/from"), [json!("de")]);
    assert_eq!(a.restriction.at("/voice"), [json!("nl-NL")]);
    let a = ix.analyze("a voice in Brazilian Portuguese", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/voice"), [json!("pt_BR")]);
    // Two letters alone are no list of languages.
    assert_eq!(
        language_names(&[json!("ok"), json!("no-go")]),
        vec![None, None]
    );
}

#[test]
fn a_string_code_the_description_explains_is_offered_for_its_phrase() {
    let spec = compile(
        &json!([{"name": "ship.quote", "description": "Quotes a shipment.", "parameters": {
                "type": "object", "properties": {
                    "country": {"type": "string",
                        "description": "Two letters, such as 'NO' for Norway or 'SE' for Sweden."},
                    "kg": {"type": "number"}
                }, "required": ["country", "kg"]}}]),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let site = "/*/ship.quote/country";
    let a = ix.analyze("ship 4 kg to Sweden", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at(site), [json!("SE")], "{:?}", a.restriction);
    let g = spec.pruned_grammar(&a.restriction, Resume::Start).to_gbnf();
    assert!(g.contains("SE"), "{g}");
    // The code's letters alone name nothing.
    let a = ix.analyze("ship 4 kg to se", ExtractMode::Full, 0);
    assert!(a.restriction.at(site).is_empty(), "{:?}", a.restriction);
}

#[test]
fn a_code_the_description_explains_is_named_by_its_phrase_not_its_digits() {
    let spec = compile(
            &json!([{"name": "route.plan", "description": "Plans a route.", "parameters": {
                "type": "object", "properties": {
                    "mode": {"type": "integer",
                        "description": "How to travel, e.g. 1 for walking, 2 for cycling, 3 for driving."},
                    "people": {"type": "integer", "description": "How many travel."}
                }, "required": ["mode"]}}]),
            &CompileOptions::default(),
        )
        .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let site = "/*/route.plan/mode";
    let a = ix.analyze("plan a cycling trip for 3 people", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at(site), [json!(2)], "{:?}", a.restriction);
    let g = spec.pruned_grammar(&a.restriction, Resume::Start).to_gbnf();
    // The code named, or the request's number (then used: no people left).
    assert!(g.contains("\"mode 2\"") && g.contains("\"mode 3\""), "{g}");
    // Digits alone name no code: `3 people` is no drive.
    let a = ix.analyze("plan a trip for 3 people", ExtractMode::Full, 0);
    assert!(a.restriction.at(site).is_empty(), "{:?}", a.restriction);
    // Written, the code is used.
    let a = ix.analyze("plan a walking trip", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at(site), [json!(1)]);
    let rest = a
        .restriction
        .consumed(&[(site.to_string(), json!(1))], Consume::Class);
    assert!(rest.at(site).is_empty());
}

#[test]
fn calendar_arithmetic() {
    assert_eq!(add_days((2024, 2, 28), 1), (2024, 2, 29));
    assert_eq!(add_days((2023, 12, 31), 1), (2024, 1, 1));
    assert_eq!(add_days((2024, 3, 1), -1), (2024, 2, 29));
    assert_eq!(weekday_of((2024, 5, 7)), 2, "a Tuesday");
    assert_eq!(weekday_of((2000, 1, 1)), 6, "a Saturday");
}

#[test]
fn open_sites_take_spans_numbers_and_dates_and_closed_catalogs_only_their_values() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "city": {"type": "string"},
                "airline": {"type": "string"},
                "seats": {"type": "integer", "minimum": 1},
                "day": {"type": "string", "format": "date"}
            }, "required": ["city"], "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut c = Catalogs::default();
    c.values.insert("/city".into(), vec![json!("lisbon")]);
    c.values.insert("/airline".into(), vec![json!("tap")]);
    c.closed.push("/airline".into());
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let request = "three seats to porto on 2025-03-14 with easyjet";
    let a = ix.analyze(request, ExtractMode::Full, 0);
    let r = &a.restriction;
    assert!(
        r.span_sites.contains("/city"),
        "an open catalog takes spans too"
    );
    assert!(!r.span_sites.contains("/airline"), "a closed one does not");
    assert!(r.number_sites.contains("/seats"));
    assert_eq!(r.numbers, vec![json!(3)]);
    assert_eq!(r.dates, vec![json!("2025-03-14")]);
    let g = spec.pruned_grammar(r, Resume::Start).to_gbnf();
    // The city must be written and its open catalog found nothing: the request's spans.
    assert!(g.contains("\"porto\""), "{g}");
    assert!(g.contains("2025-03-14"), "{g}");
    // The closed airline found nothing: it is left out, easyjet never offered there.
    assert!(!g.contains("airline"), "{g}");
    // The paper's matcher keeps the closed world.
    let p = ix.analyze(request, ExtractMode::Paper, 0);
    assert!(p.restriction.span_sites.is_empty() && p.restriction.numbers.is_empty());
}

#[test]
fn a_state_or_country_the_request_names_is_a_value_of_a_field_named_for_one() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "state": {"type": "string"},
                "country": {"type": "string"},
                "switch_state": {"type": "string"},
                "note": {"type": "string"}
            }, "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut c = Catalogs::default();
    c.values
        .insert("/state".into(), vec![json!("oregon"), json!("nevada")]);
    c.values
        .insert("/country".into(), vec![json!("peru"), json!("kenya")]);
    // A catalog of another kind says the name means something else.
    c.values
        .insert("/switch_state".into(), vec![json!("on"), json!("off")]);
    c.values.insert("/note".into(), vec![json!("urgent")]);
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let r = ix
        .analyze(
            "ship the order to a warehouse in new mexico, then one to sri lanka",
            ExtractMode::Full,
            0,
        )
        .restriction;
    assert_eq!(r.at("/state"), [json!("new mexico")]);
    assert_eq!(r.at("/country"), [json!("sri lanka")]);
    assert!(r.at("/switch_state").is_empty());
    assert!(r.at("/note").is_empty());
    // A listed state keeps its catalog's value; a two-letter code that is a word counts
    // only capitalized, or after `in` at a clause's end.
    let r = ix
        .analyze(
            "is it ok to drive from nevada to Salem, OR",
            ExtractMode::Full,
            0,
        )
        .restriction;
    assert_eq!(r.at("/state"), [json!("nevada"), json!("OR")]);
    // A closed catalog lists every value.
    let mut c = c.clone();
    c.closed.push("/country".into());
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let r = ix
        .analyze("flights to sri lanka", ExtractMode::Full, 0)
        .restriction;
    assert!(r.at("/country").is_empty());
}

#[test]
fn a_city_the_request_names_is_a_value_of_a_city_field_whose_catalog_is_open() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "departure_city": {"type": "string"},
                "hotel_city": {"type": "string"},
                "airline": {"type": "string"}
            }, "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut c = Catalogs::default();
    for site in ["/departure_city", "/hotel_city", "/airline"] {
        c.values.insert(site.into(), vec![json!("boston")]);
    }
    c.closed.push("/hotel_city".into());
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let a = ix.analyze("fares from denver to boston", ExtractMode::Full, 0);
    let r = &a.restriction;
    assert_eq!(r.at("/departure_city"), [json!("denver"), json!("boston")]);
    // A closed catalog lists every value; a field named for no city takes none.
    assert_eq!(r.at("/hotel_city"), [json!("boston")]);
    assert_eq!(r.at("/airline"), [json!("boston")]);
    // A value found over part of a city's name is what the words name.
    let mut c = c.clone();
    c.values
        .insert("/airline".into(), vec![json!("virginia city air")]);
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let a = ix.analyze("fares on virginia city air to boston", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/departure_city"), [json!("boston")]);
    // A city a catalog lists stays at the fields that list it.
    let spec = compile(
        &json!({"type": "object", "properties": {
                "flight": {"type": "object", "properties": {
                    "from_city": {"type": "string"}, "to_city": {"type": "string"}
                }, "additionalProperties": false},
                "hotel": {"type": "object", "properties": {
                    "city": {"type": "string"}
                }, "additionalProperties": false}
            }, "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut c = Catalogs::default();
    c.values
        .insert("/flight/to_city".into(), vec![json!("boston")]);
    c.values
        .insert("/flight/from_city".into(), vec![json!("austin")]);
    c.values.insert("/hotel/city".into(), vec![json!("austin")]);
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let r = ix
        .analyze("fly from boston to denver", ExtractMode::Full, 0)
        .restriction;
    assert_eq!(r.at("/flight/from_city"), [json!("denver")]);
    assert_eq!(r.at("/flight/to_city"), [json!("boston"), json!("denver")]);
    let at = |request: &str, site: &str| {
        ix.analyze(request, ExtractMode::Full, 0)
            .restriction
            .at(site)
            .to_vec()
    };
    assert_eq!(at("a stay in denver", "/hotel/city"), [json!("denver")]);
    assert!(at("a stay in boston", "/hotel/city").is_empty());
}

#[test]
fn values_of_one_site_named_in_one_clause_are_alternatives() {
    let spec = compile(
        &json!({"type": "array", "items": {"type": "object", "properties": {
                "dish": {"enum": ["soup", "salad", "stew"]}
            }, "additionalProperties": false}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let alternatives = |request: &str| {
        ix.analyze(request, ExtractMode::Full, 0)
            .restriction
            .alternatives
            .iter()
            .map(|((_, a), (_, b))| (a.clone(), b.clone()))
            .collect::<Vec<_>>()
    };
    let one = alternatives("change the soup to a salad please");
    assert!(one.contains(&(json!("soup"), json!("salad"))), "{one:?}");
    assert!(one.contains(&(json!("salad"), json!("soup"))), "{one:?}");
    // Joined by `and`, a comma or a sentence's end, or a count between them: two
    // values, no alternatives.
    assert!(alternatives("a soup and a salad").is_empty());
    assert!(alternatives("one soup two salads").is_empty());
    assert!(alternatives("a soup, then a salad").is_empty());
    assert!(alternatives("a soup. A salad too").is_empty());
}

#[test]
fn a_short_catalog_is_known_to_the_restriction_and_a_long_one_is_not() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "number": {"type": "integer", "minimum": 1},
                "drink": {"enum": ["iced_tea", "milk"]},
                "note": {"type": "string"}
            }, "required": ["number"], "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut c = Catalogs::default();
    c.values
        .insert("/number".into(), vec![json!("1"), json!("2"), json!("3")]);
    c.values.insert(
        "/note".into(),
        (0..=KNOWN_MAX).map(|i| json!(format!("n{i}"))).collect(),
    );
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let a = ix.analyze("milk", ExtractMode::Full, 0);
    // Numbers as numbers; the long catalog is bound, and not offered whole.
    assert_eq!(
        a.restriction.known.get("/number"),
        Some(&vec![json!(1), json!(2), json!(3)])
    );
    assert!(a.restriction.bound.contains("/note"));
    assert!(!a.restriction.known.contains_key("/note"));
    // Nothing found for the count: the pruned grammar writes one of the known counts.
    let g = spec.pruned_grammar(&a.restriction, Resume::Start).to_gbnf();
    assert!(g.contains(r#""3""#) && !g.contains("[1-9]"), "{g}");
    // Values withheld (leave-one-out) are not known either.
    c.withheld = vec![("/number".into(), "2".into())];
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let a = ix.analyze("milk", ExtractMode::Full, 0);
    assert_eq!(
        a.restriction.known.get("/number"),
        Some(&vec![json!(1), json!(3)])
    );
}

#[test]
fn a_number_sites_catalog_and_aliases_give_numbers() {
    // FoodOrdering's NUMBER aliases are text (`1: [a, an, one]`): they are numbers, so
    // that the value written (1) matches and consumes them.
    let spec = compile(
        &json!({"type": "object", "properties": {
                "number": {"type": "integer", "minimum": 1},
                "drink": {"enum": ["iced_tea", "milk"]}
            }, "required": ["number"], "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut c = Catalogs::default();
    c.values
        .insert("/number".into(), vec![json!("1"), json!("2")]);
    c.aliases
        .push(Entry::new("/number", json!("1")).with_aliases(["an", "one"]));
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let a = ix.analyze("an iced tea", ExtractMode::Full, 0);
    assert_eq!(
        a.restriction.at("/number"),
        [json!(1)],
        "{:?}",
        a.restriction
    );
    let rest = a
        .restriction
        .consumed(&[("/number".to_string(), json!(1))], Consume::Class);
    assert!(rest.at("/number").is_empty());
}

#[test]
fn values_of_one_record_in_one_clause_go_together() {
    // Two cities at the two fields of a flight: named in one clause they are paired;
    // across a comma or `and` they are not.
    let spec = compile(
        &json!({"type": "array", "items": {"oneOf": [
            {"type": "object", "properties": {"flight": {"type": "object", "properties": {
                "from": {"enum": ["reno", "fresno", "denver"]},
                "to": {"enum": ["reno", "fresno", "denver"]}
            }, "additionalProperties": false}}, "required": ["flight"],
            "additionalProperties": false}
        ]}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze("flights from reno to fresno", ExtractMode::Full, 0);
    let pair = (
        ("/*/flight/to".to_string(), json!("fresno")),
        ("/*/flight/from".to_string(), json!("reno")),
    );
    assert!(
        a.restriction.together.contains(&pair),
        "{:?}",
        a.restriction.together
    );
    let apart = ix.analyze("flights from reno, and to fresno", ExtractMode::Full, 0);
    assert!(
        !apart.restriction.together.contains(&pair),
        "{:?}",
        apart.restriction.together
    );
    // A value is never paired with itself at two fields.
    assert!(a.restriction.together.iter().all(|((_, x), (_, y))| x != y));
}

#[test]
fn learned_context_words_choose_the_listed_field() {
    let spec = compile(
        &json!({"type": "array", "items": {"oneOf": [
            {"type": "object", "properties": {"flight": {"type": "object", "properties": {
                "departure_city": {"enum": ["reno", "fresno", "boston", "denver"]},
                "destination_city": {"enum": ["reno", "fresno", "boston", "denver"]}
            }, "additionalProperties": false}}, "required": ["flight"],
            "additionalProperties": false}
        ]}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let before = ix.analyze("flights from reno to fresno", ExtractMode::Full, 0);
    assert_eq!(before.items().len(), 4, "{:?}", before.items());
    let out = json!([{"flight": {"departure_city": "boston", "destination_city": "denver"}}]);
    assert_eq!(
        ix.learn_contexts(&spec, [("a flight from boston to denver", &out)]),
        2
    );
    let a = ix.analyze("flights from reno to fresno", ExtractMode::Full, 0);
    assert_eq!(
        a.items(),
        ["reno (departure_city)", "fresno (destination_city)"]
    );
    // The reading the word rules out is no candidate either.
    assert!(!a
        .restriction
        .at("/*/flight/destination_city")
        .contains(&json!("reno")));
    assert!(a
        .restriction
        .at("/*/flight/departure_city")
        .contains(&json!("reno")));
    // No learned word before a value: every reading is listed.
    let b = ix.analyze("reno or fresno", ExtractMode::Full, 0);
    assert_eq!(b.items().len(), 4, "{:?}", b.items());
}

#[test]
fn a_clause_of_one_record_keeps_its_values_in_a_record_that_takes_them_all() {
    let call = |name: &str, fields: &[&str]| {
        let props: serde_json::Map<String, Value> = fields
            .iter()
            .map(|f| {
                let values = match *f {
                    "airline" => json!(["delta", "british airways"]),
                    "aircraft" => json!(["320", "m80"]),
                    _ => json!(["boston", "denver", "dallas"]),
                };
                (f.to_string(), json!({ "enum": values }))
            })
            .collect();
        json!({"type": "object", "properties": {name: {"type": "object",
                "properties": props, "additionalProperties": false}},
                "required": [name], "additionalProperties": false})
    };
    let spec = compile(
        &json!({"type": "array", "items": {"oneOf": [
            call("flight_no", &["airline", "departure_city"]),
            call("flight", &["airline"]),
            call("quantity", &["airline", "aircraft"]),
            call("capacity", &["aircraft"]),
            call("ground_service", &["city"]),
            call("ground_fare", &["city"]),
            call("day_name", &["departure_city", "airline"]),
            call("order", &["city", "airline"]),
        ]}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let request = "how many british airways flights use aircraft 320 and a taxi in boston";
    let airline_at = |a: &Analysis, call: &str| {
        a.restriction
            .at(&format!("/*/{call}/airline"))
            .contains(&json!("british airways"))
    };
    // Nothing learned: every reading stays.
    let before = ix.analyze(request, ExtractMode::Full, 0);
    assert!(airline_at(&before, "flight_no") && airline_at(&before, "quantity"));
    // Examples whose clauses each name one record teach it.
    let one = json!([{"quantity": {"airline": "delta", "aircraft": "m80"}},
                         {"ground_service": {"city": "dallas"}}]);
    assert!(
        ix.learn_clause_records([("how many delta flights use m80, and taxis in dallas", &one)])
    );
    let a = ix.analyze(request, ExtractMode::Full, 0);
    // The airline goes only where the aircraft of its clause can go too.
    assert!(airline_at(&a, "quantity"), "{:?}", a.restriction);
    assert!(!airline_at(&a, "flight_no"), "{:?}", a.restriction);
    assert!(!airline_at(&a, "flight"), "{:?}", a.restriction);
    assert!(!airline_at(&a, "order"), "{:?}", a.restriction);
    assert!(a.restriction.at("/*/capacity/aircraft").is_empty());
    // A value alone in its clause keeps every reading.
    assert!(a
        .restriction
        .at("/*/ground_service/city")
        .contains(&json!("boston")));
    assert!(a.restriction.at("/*/order/city").contains(&json!("boston")));
    // Of the records that take a partner, those that take the most: `day` tells
    // `day_name`, which takes the city too.
    let d = ix.analyze(
        "what day do british airways flights from boston leave",
        ExtractMode::Full,
        0,
    );
    assert!(airline_at(&d, "day_name"), "{:?}", d.restriction);
    assert!(!airline_at(&d, "flight_no"), "{:?}", d.restriction);
    assert!(d
        .restriction
        .at("/*/day_name/departure_city")
        .contains(&json!("boston")));
    assert!(d.restriction.at("/*/flight_no/departure_city").is_empty());
    // `service` does not tell `ground_service` from `ground_fare` (the unsaid `ground`
    // is both's), nor `flights` `flight` from `flight_no`; `day` and `capacity` do.
    let told = |r: &str| -> Vec<String> {
        ix.cues
            .records_cued(r, &[], true)
            .into_iter()
            .map(|(_, record)| record)
            .collect()
    };
    assert_eq!(
        told("the price of a limousine service"),
        Vec::<String>::new()
    );
    assert_eq!(told("ground service"), ["/*/ground_service"]);
    assert_eq!(told("flights"), Vec::<String>::new());
    assert_eq!(told("what day"), ["/*/day_name"]);
    assert_eq!(told("the capacity"), ["/*/capacity"]);
    // A call's name said in the clause is a partner in its record; a word other
    // calls' names share is not (`flights`: `flight_no` and `flight`).
    let c = ix.analyze("what is the capacity of an m80", ExtractMode::Full, 0);
    assert!(c
        .restriction
        .at("/*/capacity/aircraft")
        .contains(&json!("m80")));
    assert!(c.restriction.at("/*/quantity/aircraft").is_empty());
    // An example whose clause names two records apart unlearns it.
    let two = json!([{"quantity": {"airline": "delta", "aircraft": "m80"}},
                         {"ground_service": {"city": "dallas"}}]);
    assert!(!ix.learn_clause_records([
        ("how many delta flights use m80, and taxis in dallas", &one),
        ("delta m80 taxis in dallas", &two),
    ]));
    let b = ix.analyze(request, ExtractMode::Full, 0);
    assert!(airline_at(&b, "flight_no"));
}

#[test]
fn a_modifier_of_a_head_is_left_to_its_head_not_to_its_clause() {
    let item = |name: &str, head: &str, kinds: Value| {
        json!({"type": "object", "properties": {name: {"type": "object", "properties": {
                "number": {"enum": [1, 2, 3]},
                head: {"enum": kinds}, "size": {"enum": ["small", "large"]}},
                "required": ["number", head], "additionalProperties": false}},
                "required": [name], "additionalProperties": false})
    };
    let spec = compile(
        &json!({"type": "array", "items": {"oneOf": [
            item("drink", "drink_type", json!(["coke", "root beer"])),
            item("side", "side_type", json!(["curly fries", "onion rings"])),
        ]}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    // The examples say a clause names one record...
    let out = json!([{"drink": {"number": 2, "drink_type": "coke", "size": "small"}},
                         {"side": {"number": 1, "side_type": "onion rings"}}]);
    assert!(ix.learn_clause_records([("2 small cokes and 1 onion rings", &out)]));
    // ...but a size, optional in records whose type every instance writes, stays
    // with what it modifies: `sweet tea` is no drink found, and its `large` keeps the
    // drink's reading although the clause's curly fries are a side.
    // A count is no head: the tea's `1` keeps its drink reading too.
    let a = ix.analyze(
        "1 large curly fries with 1 large sweet tea",
        ExtractMode::Full,
        0,
    );
    let kept = |value: Value| {
        a.mentions
            .iter()
            .enumerate()
            .filter(|(i, m)| m.value == value && m.span.start > 10 && !a.unfit.contains(i))
            .map(|(_, m)| m.site.as_str())
            .collect::<BTreeSet<_>>()
    };
    assert!(
        kept(json!("large")).contains("/*/drink/size"),
        "{:?}",
        a.mentions
    );
    assert!(
        kept(json!(1)).contains("/*/drink/number"),
        "{:?}",
        a.mentions
    );
    assert!(a.restriction.at("/*/drink/size").contains(&json!("large")));
}

#[test]
fn an_ambiguous_mention_is_used_once() {
    // `four` is a rating and a party size: writing it as one uses the other reading.
    let spec = compile(
        &json!({"type": "array", "items": {"oneOf": [
            {"type": "object", "properties": {"Rate": {"type": "object", "properties": {
                "rating": {"enum": ["four", "five"]}}, "additionalProperties": false}},
             "required": ["Rate"], "additionalProperties": false},
            {"type": "object", "properties": {"Book": {"type": "object", "properties": {
                "party": {"enum": ["four", "two"]}}, "additionalProperties": false}},
             "required": ["Book"], "additionalProperties": false}
        ]}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze("a table for four", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/*/Rate/rating"), [json!("four")]);
    assert_eq!(a.restriction.at("/*/Book/party"), [json!("four")]);
    assert_eq!(a.restriction.readings.len(), 1, "{:?}", a.restriction);
    let used = [("/*/Book/party".to_string(), json!("four"))];
    let rest = a.restriction.consumed(&used, Consume::Class);
    assert!(rest.is_exhausted(), "{rest:?}");
    // Mentioned twice: two mentions, one left after one is written.
    let a = ix.analyze("four people, four stars", ExtractMode::Full, 0);
    let rest = a.restriction.consumed(&used, Consume::Class);
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(rest.readings.len(), 1);
}

#[test]
fn a_number_at_a_free_text_field_is_written_as_the_request_spells_it() {
    // `stars` takes any string and its catalog lists `seven` and `10`; `level` is a
    // choice between spelled numbers.
    let spec = compile(
        &json!({"type": "object", "properties": {
                "stars": {"type": "string"},
                "level": {"enum": ["one", "two", "three"]}},
                "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut cat = Catalogs::default();
    cat.values
        .insert("/stars".into(), vec![json!("seven"), json!("10")]);
    let ix = SpecIndex::build(&spec, &cat).expect("index");
    let at = |request: &str, site: &str| {
        let a = ix.analyze(request, ExtractMode::Full, 0);
        (a.restriction.at(site).to_vec(), a.mentions)
    };
    let (found, mentions) = at("give the hotel 7 stars", "/stars");
    assert_eq!(found, [json!("7")], "{mentions:?}");
    let (found, mentions) = at("give the hotel ten stars", "/stars");
    assert_eq!(found, [json!("ten")], "{mentions:?}");
    // Spelled as the catalog spells it: the catalog's value.
    let (found, mentions) = at("give the hotel Seven stars", "/stars");
    assert_eq!(found, [json!("seven")], "{mentions:?}");
    // A choice keeps the schema's spelling.
    let (found, mentions) = at("set the level to 2", "/level");
    assert_eq!(found, [json!("two")], "{mentions:?}");
}

#[test]
fn a_field_whose_catalog_lists_times_takes_the_request_s_times_as_written() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "when": {"type": "string"}, "party": {"type": "string"}},
                "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut cat = Catalogs::default();
    cat.values.insert(
        "/when".into(),
        vec![
            json!("six pm"),
            json!("1 am"),
            json!("tonight"),
            json!("march 3rd 2024"),
            json!("june 5th 2023"),
        ],
    );
    cat.values
        .insert("/party".into(), vec![json!("ten"), json!("2")]);
    let ix = SpecIndex::build(&spec, &cat).expect("index");
    let a = ix.analyze("a table for 2 at 10 pm", ExtractMode::Full, 0);
    assert_eq!(
        a.restriction.at("/when"),
        [json!("10 pm")],
        "{:?}",
        a.mentions
    );
    assert_eq!(a.restriction.at("/party"), [json!("2")]);
    let a = ix.analyze("a table on july 4th 2025", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/when"), [json!("july 4th 2025")]);
    // Only what is written out: a day's name is a value as the catalog lists it.
    let a = ix.analyze("a table for monday", ExtractMode::Full, 0);
    assert!(a.restriction.at("/when").is_empty(), "{:?}", a.mentions);
    // A catalog that lists no times takes none.
    let a = ix.analyze("a table for ten at 10 pm", ExtractMode::Full, 0);
    assert_eq!(
        a.restriction.at("/party"),
        [json!("ten")],
        "{:?}",
        a.mentions
    );
}

#[test]
fn a_required_command_line_is_the_model_s_to_compose_and_quoted() {
    let spec = compile(
        &json!({"type": "object", "properties": {"run": {
                "type": "object", "additionalProperties": false, "required": ["command"],
                "properties": {
                    "command": {"type": "string", "description": "The shell command to run."},
                    "note": {"type": "string"},
                    "shell": {"type": "string"}}}},
                "required": ["run"], "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze(
        "show the disk usage of the home folder",
        ExtractMode::Full,
        0,
    );
    let r = &a.restriction;
    // The required command is left whole; the optional `shell` keeps its spans.
    assert!(r.free.contains("/run/command") && r.composed.contains("/run/command"));
    assert!(!r.composed.contains("/run/shell") && r.span_sites.contains("/run/shell"));
    let gbnf = spec
        .pruned_grammar(r, dss_compiler::prune::Resume::Start)
        .to_gbnf();
    // Any quoted string, never a bare word (a space would end it).
    assert!(gbnf.contains("run-body ::= string\n"), "{gbnf}");
    assert!(!gbnf.contains("bare"), "{gbnf}");
    // A closed catalog keeps the command to its values.
    let catalogs = Catalogs {
        values: [("/run/command".to_string(), vec![json!("df -h ~")])].into(),
        closed: vec!["/run/command".into()],
        ..Catalogs::default()
    };
    let ix = SpecIndex::build(&spec, &catalogs).expect("index");
    let a = ix.analyze(
        "show the disk usage of the home folder",
        ExtractMode::Full,
        0,
    );
    assert!(!a.restriction.free.contains("/run/command"));
}

#[test]
fn a_flag_the_request_names_is_set_and_a_negated_one_cleared() {
    let spec = compile(
        &json!({"type": "object", "properties": {"find_rooms": {
                "type": "object", "additionalProperties": false, "required": ["city"],
                "properties": {
                    "city": {"type": "string"},
                    "has_balcony": {"type": "boolean"},
                    "furnished": {"type": "boolean"},
                    "pets_allowed": {"type": "boolean"},
                    "include_photos": {"type": "boolean"}}}},
                "required": ["find_rooms"], "additionalProperties": false}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let flags = |request: &str| {
        let a = ix.analyze(request, ExtractMode::Full, 0);
        ["has_balcony", "pets_allowed", "include_photos"]
            .map(|f| a.restriction.at(&format!("/find_rooms/{f}")).to_vec())
    };
    let none: Vec<Value> = Vec::new();
    assert_eq!(
        flags("find rooms in Leeds with a balcony"),
        [vec![json!(true)], none.clone(), none.clone()]
    );
    assert_eq!(
        flags("rooms in Leeds, no balcony please, and my pet is allowed"),
        [vec![json!(false)], vec![json!(true)], none.clone()]
    );
    assert_eq!(
        flags("rooms in Leeds, disable the photos"),
        [none.clone(), none.clone(), vec![json!(false)]]
    );
    assert_eq!(
        flags("rooms in Leeds; I don't mind about balconies, but show the photos"),
        [vec![json!(false)], none.clone(), vec![json!(true)]]
    );
    let a = ix.analyze("furnished rooms in Leeds", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/find_rooms/furnished"), [json!(true)]);
    // Named, the flag is listed among the items found.
    let a = ix.analyze("find rooms in Leeds with a balcony", ExtractMode::Full, 0);
    assert!(
        a.items().contains(&"true (has_balcony)".to_string()),
        "{:?}",
        a.items()
    );
    // Not named: left out.
    assert_eq!(
        flags("find rooms in Leeds"),
        [none.clone(), none.clone(), none]
    );
}

/// A list of calls, each `{"Name": {slot: enum}}`, closed.
fn calls(calls: &[(&str, Value)]) -> CompiledSpec {
    let forms: Vec<Value> = calls
        .iter()
        .map(|(name, slots)| {
            let props: serde_json::Map<String, Value> = slots
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), json!({ "enum": v })))
                .collect();
            json!({"type": "object", "required": [name], "additionalProperties": false,
                    "properties": {*name: {"type": "object", "properties": props,
                        "additionalProperties": false}}})
        })
        .collect();
    compile(
        &json!({"type": "array", "items": {"oneOf": forms}}),
        &CompileOptions::default(),
    )
    .expect("compiles")
}

#[test]
fn a_modifier_before_an_ambiguous_value_goes_with_the_value_right_before_it() {
    let spec = calls(&[
        (
            "RateBook",
            json!({"object_select": ["current"], "object_type": ["book"], "rating": ["five"]}),
        ),
        ("Search", json!({"object_type": ["book"]})),
        ("Reserve", json!({"party": ["five"]})),
    ]);
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    // `five` after `book` is a rating or a party: `current`, right before, decides.
    let a = ix.analyze("mark my current book five", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/*/RateBook/object_type"), [json!("book")]);
    assert!(
        a.restriction.at("/*/Search/object_type").is_empty(),
        "{a:?}"
    );
    // With a word between, nothing is decided.
    let a = ix.analyze("mark my current new book five", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/*/Search/object_type"), [json!("book")]);
}

#[test]
fn a_value_next_to_another_records_value_is_used_by_that_record() {
    let spec = calls(&[
        (
            "PlayMusic",
            json!({"genre": ["theme", "jazz"], "sort": ["last"]}),
        ),
        ("Search", json!({"object_type": ["song", "movie"]})),
        ("Order", json!({"dish": ["burger"], "side": ["fries"]})),
        ("Side", json!({"side": ["fries"]})),
    ]);
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze("put on some jazz songs", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/*/Search/object_type"), [json!("song")]);
    let used = [("/*/PlayMusic/genre".to_string(), json!("jazz"))];
    let rest = a.restriction.consumed(&used, Consume::Class);
    assert!(rest.at("/*/Search/object_type").is_empty(), "{rest:?}");
    // A word between, or punctuation, and the value stays its own.
    for request in [
        "put on some jazz and then songs",
        "put on some jazz, songs",
        "put on jazz music songs",
    ] {
        let a = ix.analyze(request, ExtractMode::Full, 0);
        let rest = a.restriction.consumed(&used, Consume::Class);
        assert_eq!(
            rest.at("/*/Search/object_type"),
            [json!("song")],
            "{request}"
        );
    }
    // A neighbour that some record of the value could take too decides nothing here:
    // `burger fries` (fries an order's or a side's).
    // Nor when the value's other neighbour is its own record's: `songs movie`.
    let a = ix.analyze("jazz songs movie", ExtractMode::Full, 0);
    let rest = a.restriction.consumed(&used, Consume::Class);
    assert_eq!(
        rest.at("/*/Search/object_type"),
        [json!("song"), json!("movie")]
    );
    let a = ix.analyze("a burger fries", ExtractMode::Full, 0);
    assert!(!has_record_readings(&a.restriction), "{a:?}");
}

#[test]
fn a_word_of_a_calls_name_is_used_when_that_call_is_written() {
    let spec = calls(&[
        (
            "BookRestaurant",
            json!({"restaurant_type": ["brasserie"], "city": ["oslo"]}),
        ),
        (
            "SearchCreativeWork",
            json!({"object_type": ["book", "song"]}),
        ),
        (
            "RateBook",
            json!({"object_type": ["book"], "rating": ["five"]}),
        ),
    ]);
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze("book a brasserie in oslo", ExtractMode::Full, 0);
    assert_eq!(
        a.restriction.at("/*/SearchCreativeWork/object_type"),
        [json!("book")]
    );
    // `book` also names BookRestaurant (not RateBook: `book` is a value of its own).
    let group = a
        .restriction
        .readings
        .iter()
        .find(|g| g.iter().any(|(_, v)| v.is_null()))
        .expect("a record reading");
    let records: Vec<&str> = group
        .iter()
        .filter(|(_, v)| v.is_null())
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(records, ["/*/BookRestaurant"], "{group:?}");
    // Writing the call uses the word: nothing is left to open another call with.
    let used = [
        (
            "/*/BookRestaurant/restaurant_type".to_string(),
            json!("brasserie"),
        ),
        ("/*/BookRestaurant/city".to_string(), json!("oslo")),
    ];
    let rest = a.restriction.consumed(&used, Consume::Class);
    assert!(rest.is_exhausted(), "{rest:?}");
    // While the call's own line is written, the word stays (line holding reads this).
    let open = a
        .restriction
        .without_record_readings()
        .consumed(&used[..1], Consume::Class);
    assert_eq!(
        open.at("/*/SearchCreativeWork/object_type"),
        [json!("book")]
    );
    // Where both words of `RateBook` are found, `book` is its word, not the booking's:
    // writing the booking leaves it.
    let a = ix.analyze(
        "rate the current book and a reservation at a brasserie in oslo",
        ExtractMode::Full,
        0,
    );
    assert!(
        a.restriction
            .readings
            .iter()
            .all(|g| g.iter().all(|(_, v)| !v.is_null())),
        "{:?}",
        a.restriction.readings
    );
    let rest = a.restriction.consumed(&used, Consume::Class);
    assert_eq!(
        rest.at("/*/SearchCreativeWork/object_type"),
        [json!("book")]
    );
    // Where the word is the value asked for, it stays until written as such.
    let a = ix.analyze("find the song and book a brasserie", ExtractMode::Full, 0);
    let rest = a.restriction.consumed(&used[..1], Consume::Class);
    assert_eq!(
        rest.at("/*/SearchCreativeWork/object_type"),
        [json!("song")]
    );
}

#[test]
fn a_modifier_goes_with_the_value_next_to_it() {
    let order =
        |kinds: Value| json!({"number": [1, 2], "kind": kinds, "size": ["large", "medium"]});
    let spec = calls(&[
        ("side", order(json!(["fries"]))),
        ("drink", order(json!(["coke"]))),
        ("main", json!({"kind": ["burger"]})),
    ]);
    let ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let a = ix.analyze("a large fries and a medium coke", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/*/side/size"), [json!("large")], "{a:?}");
    assert_eq!(a.restriction.at("/*/drink/size"), [json!("medium")]);
    // Fillers between (`order of`) are passed over.
    let a = ix.analyze("a burger with a large order of fries", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/*/side/size"), [json!("large")]);
    assert!(a.restriction.at("/*/drink/size").is_empty());
    // At the end of its phrase, a modifier goes with the value before it.
    let a = ix.analyze("one coke large please", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/*/drink/size"), [json!("large")]);
    assert!(a.restriction.at("/*/side/size").is_empty());
    // Other modifiers between are passed over, and a count is never given to the value
    // before it (`fries two medium coke` is two cokes).
    let a = ix.analyze("fries two medium coke", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/*/drink/number"), [json!(2)], "{a:?}");
    assert!(a.restriction.at("/*/side/number").is_empty(), "{a:?}");
    assert_eq!(
        a.restriction.at("/*/drink/size"),
        [json!("medium")],
        "{a:?}"
    );
    // A word after it that is no value found (a noun extraction missed), `and` or a
    // comma, or nothing found near it: nothing is decided.
    for request in [
        "fries with a large sweet tea",
        "a coke and large",
        "large, coke",
        "large please",
    ] {
        let a = ix.analyze(request, ExtractMode::Full, 0);
        assert_eq!(
            a.restriction.at("/*/side/size"),
            [json!("large")],
            "{request}"
        );
        assert_eq!(
            a.restriction.at("/*/drink/size"),
            [json!("large")],
            "{request}"
        );
    }
    // The paper's matcher is left as it is.
    let a = ix.analyze("a large fries", ExtractMode::Paper, 0);
    assert_eq!(a.restriction.at("/*/drink/size"), [json!("large")]);
    // Each modifier is tied to the value it modifies.
    let a = ix.analyze("a large fries and a medium coke", ExtractMode::Full, 0);
    assert_eq!(
        a.restriction.ties,
        [
            (
                ("/*/side/size".to_string(), json!("large")),
                ("/*/side/kind".to_string(), json!("fries"))
            ),
            (
                ("/*/drink/size".to_string(), json!("medium")),
                ("/*/drink/kind".to_string(), json!("coke"))
            )
        ]
    );
    // The prompt lists each modifier after the value it modifies, as a record writes
    // them (`two` is no modifier here: the word after it, `large`, is a side's or a
    // drink's).
    let a = ix.analyze("two large fries and a medium coke", ExtractMode::Full, 0);
    assert_eq!(
        a.items(),
        [
            "2 (number)",
            "fries (kind)",
            "large (size)",
            "coke (kind)",
            "medium (size)"
        ],
        "{a:?}"
    );
}

#[test]
fn a_value_next_to_a_value_of_the_document_itself_gets_no_record_reading() {
    // `sales vs profit`: `vs` names the chart, a field of the document itself; writing
    // the chart must not use the columns next to it.
    let spec = compile(
        &json!({"type": "object", "required": ["fields"], "properties": {
                "chart": {"enum": ["bar", "scatterplot"]},
                "fields": {"type": "array", "minItems": 1, "items": {"type": "object",
                    "properties": {"fieldName": {"enum": ["Sales", "Profit"]}},
                    "required": ["fieldName"]}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut c = Catalogs::default();
    c.aliases
        .push(Entry::new("/chart", json!("scatterplot")).with_aliases(["vs"]));
    let ix = SpecIndex::build(&spec, &c).expect("index");
    let a = ix.analyze("sales vs profit", ExtractMode::Full, 0);
    assert!(!has_record_readings(&a.restriction), "{a:?}");
    let rest = a
        .restriction
        .consumed(&[("/chart".into(), json!("scatterplot"))], Consume::Class);
    assert_eq!(
        rest.at("/fields/*/fieldName"),
        [json!("Sales"), json!("Profit")]
    );
}

#[test]
fn a_modifier_of_a_list_item_is_tied_to_the_item_it_modifies() {
    // `extra onions lettuce`: the quantity is the onions' (the pruned list's items then
    // offer it to the onions only), never a value of the item's own key.
    let ix = SpecIndex::build(&viz(), &catalogs()).expect("index");
    let a = ix.analyze("average sales and profit per region", ExtractMode::Full, 0);
    assert_eq!(
        a.restriction.ties,
        [(
            ("/fields/*/aggregate".to_string(), json!("mean")),
            ("/fields/*/fieldName".to_string(), json!("Sales"))
        )],
        "{a:?}"
    );
    // Two values of the same field are no modifier of each other.
    let a = ix.analyze("sales profit region", ExtractMode::Full, 0);
    assert!(a.restriction.ties.is_empty(), "{a:?}");
}

#[test]
fn writing_a_value_uses_the_mention_that_could_only_be_it() {
    // `a` before `burger` is the main dish's number alone, `a` before `large` (no head
    // after it) a number of any order: writing the main dish's number uses the first, so the second is still
    // there for the side (were the ambiguous one used, the main dish's `1` would be left
    // over, and a small model wrote it as a line of its own: `main_dish 1`).
    let order = json!({"number": [1, 2], "kind": ["fries"], "size": ["large"]});
    let spec = calls(&[
        ("main", json!({"number": [1, 2], "kind": ["burger"]})),
        ("side", order.clone()),
        (
            "drink",
            json!({"number": [1, 2], "kind": ["coke"], "size": ["large"]}),
        ),
    ]);
    let dir = tempfile::tempdir().expect("tempdir");
    let aliases = dir.path().join("aliases.yaml");
    let yaml = ["main", "side", "drink"]
        .map(|r| format!("/*/{r}/number: {{'1': [a, one]}}\n"))
        .concat();
    std::fs::write(&aliases, yaml).expect("write aliases");
    let mut catalogs = Catalogs::default();
    catalogs.add_aliases(&aliases).expect("aliases");
    let ix = SpecIndex::build(&spec, &catalogs).expect("index");
    let a = ix.analyze("a burger and a large please", ExtractMode::Full, 0);
    assert_eq!(a.restriction.at("/*/main/number").len(), 2, "{a:?}");
    let rest = a
        .restriction
        .consumed(&[("/*/main/number".into(), json!(1))], Consume::Class);
    assert_eq!(rest.at("/*/side/number"), [json!(1)], "{rest:?}");
    assert_eq!(rest.at("/*/main/number"), [json!(1)]);
    let rest = rest.consumed(&[("/*/side/number".into(), json!(1))], Consume::Class);
    assert!(rest.at("/*/main/number").is_empty(), "{rest:?}");
    assert!(rest.at("/*/drink/number").is_empty());
}

#[test]
fn a_request_gives_candidates_per_site_and_a_pruned_grammar() {
    let spec = viz();
    let ix = SpecIndex::build(&spec, &catalogs()).expect("index");
    let a = ix.analyze("average profit per region", ExtractMode::Full, 3);
    assert_eq!(a.tier, PruneTier::Exact);
    assert_eq!(
        a.restriction.at("/fields/*/fieldName"),
        [json!("Profit"), json!("Region")]
    );
    assert_eq!(a.restriction.at("/fields/*/aggregate"), [json!("mean")]);
    let g = spec.pruned_grammar(&a.restriction, Resume::Start).to_gbnf();
    assert!(
        g.contains("Profit") && g.contains("Region") && g.contains("mean"),
        "{g}"
    );
    assert!(!g.contains("Sales") && !g.contains("sum"), "{g}");
    // `average` modifies the field item of `profit`: listed after it, as written.
    assert_eq!(
        a.items(),
        [
            "Profit (fieldName)",
            "mean (aggregate)",
            "Region (fieldName)"
        ]
    );
}

#[test]
fn a_required_site_that_found_nothing_gets_the_nearest_values() {
    let spec = viz();
    let ix = SpecIndex::build(&spec, &catalogs()).expect("index");
    let a = ix.analyze("revenue by regn", ExtractMode::Full, 3);
    // "regn" is a typo of Region (fuzzy), so the site is not empty: no nearest tier.
    assert!(a
        .restriction
        .at("/fields/*/fieldName")
        .contains(&json!("Region")));
    let b = ix.analyze("show me the earnings", ExtractMode::Full, 3);
    assert_eq!(b.tier, PruneTier::Nearest);
    let offered = b.restriction.at("/fields/*/fieldName");
    assert!(!offered.is_empty() && offered.len() < 4, "{offered:?}");
}

#[test]
fn a_catalog_for_no_site_is_an_error_listing_the_sites() {
    let spec = viz();
    let mut c = Catalogs::default();
    c.values.insert("/field/*/name".into(), vec![json!("x")]);
    let e = SpecIndex::build(&spec, &c).expect_err("unknown site");
    let msg = e.to_string();
    assert!(
        msg.contains("/field/*/name") && msg.contains("/fields/*/fieldName"),
        "{msg}"
    );
}

#[test]
fn sites_the_examples_fill_without_their_request_naming_them_are_left_unpruned() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "fields": {"type": "array", "items": {"type": "object", "properties": {
                    "fieldName": {"enum": ["Sales", "Profit", "Region"]},
                    "role": {"enum": ["dimension", "measure"]}
                }, "required": ["fieldName"]}}
            }, "required": ["fields"]}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut ix = SpecIndex::build(&spec, &Catalogs::default()).expect("index");
    let out = json!({"fields": [
        {"fieldName": "Region", "role": "dimension"},
        {"fieldName": "Sales", "role": "measure"}
    ]});
    let learned = ix
        .learn_inferred(&spec, [("sales per region", &out)])
        .clone();
    assert_eq!(learned.into_iter().collect::<Vec<_>>(), ["/fields/*/role"]);
    let a = ix.analyze("profit by region", ExtractMode::Full, 3);
    let g = spec.pruned_grammar(&a.restriction, Resume::Start).to_gbnf();
    // The role is offered in full; the field names are pruned.
    assert!(g.contains("dimension") && g.contains("measure"), "{g}");
    assert!(!g.contains("Sales"), "{g}");
}

#[test]
fn consuming_removes_one_occurrence() {
    let mut r = Restriction::default();
    r.candidates
        .insert("/a".into(), vec![json!("x"), json!("x"), json!("y")]);
    r.candidates.insert("/b".into(), vec![json!("x")]);
    let used = vec![("/a".to_string(), json!("x"))];
    let c = r.consumed(&used, Consume::Class);
    assert_eq!(c.at("/a"), [json!("x"), json!("y")]);
    assert_eq!(c.at("/b"), [json!("x")]);
    let v = r.consumed(&used, Consume::Value);
    assert_eq!(v.at("/b"), [] as [Value; 0]);
    assert_eq!(r.consumed(&used, Consume::Off), r);
}
