//! Cities a request names, from a gazetteer: every city of 100,000 people or more and every
//! US city of 50,000 or more (GeoNames, CC BY 4.0; `data/places.tsv`, written by
//! `scripts/gen-places`). A name names its most populous city.

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
    let mut found: Vec<std::ops::Range<usize>> = Vec::new();
    let mut all = spans.spans(MAX_WORDS);
    all.sort_by_key(|(r, _)| (std::cmp::Reverse(r.len()), r.start));
    for (r, text) in all {
        if found.iter().any(|f| f.start < r.end && r.start < f.end) {
            continue;
        }
        let words = &spans.words[r.clone()];
        let capitalized = words
            .iter()
            .all(|w| w.text.chars().next().is_some_and(char::is_uppercase));
        if table
            .get(&text.to_lowercase())
            .is_some_and(|c| capitalized || !c.word)
        {
            found.push(r);
        }
    }
    found.sort_by_key(|r| r.start);
    found
        .into_iter()
        .map(|r| spans.words[r.start].at.start..spans.words[r.end - 1].at.end)
        .collect()
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
}
