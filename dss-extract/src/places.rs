//! Cities a request names, from a gazetteer: every city of 100,000 people or more and every
//! US city of 50,000 or more (GeoNames, CC BY 4.0; `data/places.tsv`, written by
//! `scripts/gen-places`). A name names its most populous city. Countries and US states
//! (`data/regions.tsv`, from the same source) for fields named for one.

use dss_compiler::prune::{Place, Spans};
use std::collections::HashMap;
use std::sync::OnceLock;

/// The gazetteer's rows: name, country, US state code, US state name, `word` where the
/// name is also a common English word.
const PLACES: &str = include_str!("../data/places.tsv");

/// A city of the gazetteer: its country, its US state (code and name), and whether its
/// name is also a common English word (`Reading`, `Mobile`).
struct City {
    country: &'static str,
    state: Option<(&'static str, &'static str)>,
    word: bool,
}

/// Lowercased name -> its city.
type Gazetteer = HashMap<String, City>;

fn gazetteer() -> &'static Gazetteer {
    static TABLE: OnceLock<Gazetteer> = OnceLock::new();
    TABLE.get_or_init(|| {
        PLACES
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut cols = l.split('\t');
                let name = cols.next()?;
                let country = cols.next()?;
                let code = cols.next().unwrap_or_default();
                let state = cols.next().unwrap_or_default();
                let state = (!code.is_empty()).then_some((code, state));
                let word = cols.next() == Some("word");
                let city = City {
                    country,
                    state,
                    word,
                };
                Some((name.to_lowercase(), city))
            })
            .collect()
    })
}

/// The most words a city's name has here.
const MAX_WORDS: usize = 3;

/// The cities `spans` names: spans of capitalized words (`Boston`, `Tel Aviv`, `Lang
/// Son`) the gazetteer knows, each once, the longest where two overlap (`New York`, not
/// `York`). Words a value found already took are no city.
pub(crate) fn places(spans: &Spans) -> Vec<Place> {
    let table = gazetteer();
    let mut found: Vec<(std::ops::Range<usize>, Place)> = Vec::new();
    let mut spans_found = spans.spans(MAX_WORDS);
    // Longest first, so a shorter name inside a longer one is skipped.
    spans_found.sort_by_key(|(r, _)| (std::cmp::Reverse(r.len()), r.start));
    for (r, text) in spans_found {
        let words = &spans.words[r.clone()];
        let capitalized = words
            .iter()
            .all(|w| !w.used && w.text.chars().next().is_some_and(char::is_uppercase));
        if !capitalized
            || found
                .iter()
                .any(|(f, _)| f.start < r.end && r.start < f.end)
        {
            continue;
        }
        if let Some(city) = table.get(&text.to_lowercase()) {
            let place = Place {
                name: text.clone(),
                country: city.country.to_string(),
                state: city.state.map(|(c, n)| (c.to_string(), n.to_string())),
            };
            if !found.iter().any(|(_, p)| p == &place) {
                found.push((r, place));
            }
        }
    }
    found.sort_by_key(|(r, _)| r.start);
    found.into_iter().map(|(_, p)| p).collect()
}

/// The cities `spans` names in any case (`denver`, `San Jose`), as byte ranges of the
/// request, the longest where two overlap; a name that is also a common English word
/// (`reading`, `mobile`) only capitalized. For fields named for a city, where the request
/// is often written in lower case.
pub(crate) fn cities(spans: &Spans) -> Vec<std::ops::Range<usize>> {
    let table = gazetteer();
    longest_first(spans, spans.spans(MAX_WORDS), |r, text| {
        let capitalized = spans.words[r.clone()]
            .iter()
            .all(|w| w.text.chars().next().is_some_and(char::is_uppercase));
        table
            .get(&text.to_lowercase())
            .is_some_and(|c| capitalized || !c.word)
    })
}

/// The spans of `candidates` that `names` accepts, longest first, none overlapping one
/// taken before it, as byte ranges of the request in request order.
fn longest_first(
    spans: &Spans,
    mut candidates: Vec<(std::ops::Range<usize>, String)>,
    names: impl Fn(&std::ops::Range<usize>, &str) -> bool,
) -> Vec<std::ops::Range<usize>> {
    candidates.sort_by_key(|(r, _)| (std::cmp::Reverse(r.len()), r.start));
    let mut found: Vec<std::ops::Range<usize>> = Vec::new();
    for (r, text) in candidates {
        if !found.iter().any(|f| f.start < r.end && r.start < f.end) && names(&r, &text) {
            found.push(r);
        }
    }
    found.sort_by_key(|r| r.start);
    found
        .into_iter()
        .map(|r| spans.words[r.start].at.start..spans.words[r.end - 1].at.end)
        .collect()
}

/// The countries and US states: kind, name, `word` where the name is also a common English
/// word (`Chad`, `Turkey`, the codes `OK`, `IN`).
const REGIONS: &str = include_str!("../data/regions.tsv");

/// What a field named for a place takes: a city, a US state, a country.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum PlaceKind {
    /// A city (`departure_city`, `city_name`).
    City,
    /// A US state, by name or postal code (`state`, `us_state`).
    State,
    /// A country (`country`, `country_name`).
    Country,
}

impl PlaceKind {
    /// The kind of place a field's name asks for, from its lowercased words
    /// (`departure_city`: `departure`, `city`).
    pub(crate) fn named(words: &[String]) -> Option<PlaceKind> {
        [
            ("city", PlaceKind::City),
            ("state", PlaceKind::State),
            ("country", PlaceKind::Country),
        ]
        .into_iter()
        .find(|(w, _)| words.iter().any(|k| k == w))
        .map(|(_, kind)| kind)
    }
}

/// Lowercased name -> the kinds of region it names, each with whether the name is also a
/// common English word there.
type Regions = HashMap<String, Vec<(PlaceKind, bool)>>;

fn regions() -> &'static Regions {
    static TABLE: OnceLock<Regions> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: Regions = HashMap::new();
        for l in REGIONS.lines().filter(|l| !l.starts_with('#')) {
            let mut cols = l.split('\t');
            let kind = match cols.next() {
                Some("country") => PlaceKind::Country,
                Some("state") => PlaceKind::State,
                _ => continue,
            };
            let Some(name) = cols.next() else { continue };
            let word = cols.next() == Some("word");
            table
                .entry(name.to_lowercase())
                .or_default()
                .push((kind, word));
        }
        table
    })
}

/// The most words a country's or state's name has here (`Saint Vincent and the
/// Grenadines`).
const MAX_REGION_WORDS: usize = 5;

/// Whether `text` (any case) names a place of `kind`.
pub(crate) fn is_place(kind: PlaceKind, text: &str) -> bool {
    let key = text.trim().to_lowercase();
    match kind {
        PlaceKind::City => gazetteer().contains_key(&key),
        _ => regions()
            .get(&key)
            .is_some_and(|ks| ks.iter().any(|(k, _)| *k == kind)),
    }
}

/// The places of `kind` that `spans` names in any case, as byte ranges of the request,
/// the longest where two overlap (`south carolina`, not `carolina`). A name that is also a
/// common English word counts capitalized as a name (`Turkey`, `OK`); in lower case only
/// right after `in` at a clause's end (`in ok, then`), where a word would not stand. Cities
/// are [`cities`].
pub(crate) fn named_places(spans: &Spans, kind: PlaceKind) -> Vec<std::ops::Range<usize>> {
    if kind == PlaceKind::City {
        return cities(spans);
    }
    let table = regions();
    let mut all = spans.spans(MAX_REGION_WORDS);
    // Every word alone too: a code is a place even where no value may start (`OR`).
    for (i, w) in spans.words.iter().enumerate() {
        if !all.iter().any(|(r, _)| *r == (i..i + 1)) {
            all.push((i..i + 1, w.text.clone()));
        }
    }
    longest_first(spans, all, |r, text| {
        let Some(word) = table
            .get(&text.to_lowercase())
            .and_then(|ks| ks.iter().find(|(k, _)| *k == kind).map(|(_, word)| *word))
        else {
            return false;
        };
        let words = &spans.words[r.clone()];
        let as_name = if text.chars().count() <= 2 {
            text.chars().all(|c| c.is_uppercase())
        } else {
            words
                .iter()
                .all(|w| w.text.chars().next().is_some_and(char::is_uppercase))
        };
        let after_in = r.start > 0 && spans.words[r.start - 1].text.eq_ignore_ascii_case("in");
        let clause_ends = words.last().is_some_and(|w| {
            w.between.contains([',', '.', '?', '!', ';'])
                || spans.words.get(r.end).is_none_or(|n| {
                    matches!(n.text.to_lowercase().as_str(), "and" | "then" | "also")
                })
        });
        !word || as_name || (after_in && clause_ends)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(request: &str) -> Vec<String> {
        places(&Spans::of(request))
            .iter()
            .map(|p| p.completed(true))
            .collect()
    }

    #[test]
    fn a_city_is_completed_with_its_state_or_country() {
        assert_eq!(named("is it windy in Denver today"), ["Denver, CO"]);
        assert_eq!(
            named("rain tomorrow in Lyon or in Porto?"),
            ["Lyon, France", "Porto, Portugal"]
        );
        // The longest name the gazetteer knows; lowercase words are no city.
        assert_eq!(named("flights out of New York please"), ["New York, NY"]);
        assert!(named("a nice day in the park").is_empty());
        let at = |request: &str| -> Vec<String> {
            cities(&Spans::of(request))
                .into_iter()
                .map(|r| request[r].to_string())
                .collect()
        };
        assert_eq!(
            at("flights from denver to san jose on friday"),
            ["denver", "san jose"]
        );
        // A common word is a city only capitalized.
        assert!(at("reading list for mobile users").is_empty());
        assert_eq!(at("trains to Reading"), ["Reading"]);
        let denver = &places(&Spans::of("snow in Denver"))[0];
        assert_eq!(denver.completed(false), "Denver, Colorado");
    }

    #[test]
    fn countries_and_states_are_named_in_any_case() {
        let at = |request: &str, kind: PlaceKind| -> Vec<String> {
            named_places(&Spans::of(request), kind)
                .into_iter()
                .map(|r| request[r].to_string())
                .collect()
        };
        assert_eq!(
            at(
                "ship it to sri lanka or to the united kingdom",
                PlaceKind::Country
            ),
            ["sri lanka", "united kingdom"]
        );
        assert_eq!(
            at(
                "rain in north carolina and snow in vermont",
                PlaceKind::State
            ),
            ["north carolina", "vermont"]
        );
        // Codes: one that is no English word in any case; `OK` capitalized, or after `in`
        // at a clause's end.
        assert_eq!(at("a cabin near boise id or tx", PlaceKind::State), ["tx"]);
        assert_eq!(at("hotels in Tulsa, OK", PlaceKind::State), ["OK"]);
        assert_eq!(at("the forecast in ok, please", PlaceKind::State), ["ok"]);
        assert!(at("is it ok in the morning", PlaceKind::State).is_empty());
        // A common word is a country only capitalized.
        assert!(at("roast turkey for dinner", PlaceKind::Country).is_empty());
        assert_eq!(at("flights to Turkey", PlaceKind::Country), ["Turkey"]);
        assert!(is_place(PlaceKind::State, "Georgia") && is_place(PlaceKind::Country, "georgia"));
        assert!(!is_place(PlaceKind::Country, "vermont"));
    }
}
