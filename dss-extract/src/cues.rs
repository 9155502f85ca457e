//! Name cues: the words of a union's tags (the call or intent written, such as
//! `atis_ground_fare`, `GetWeather`, `flight_no`) found in a request.
//!
//! A request rarely names the call it wants by its identifier, but it often says the words
//! the identifier is made of: "which **cities** can i reach on spirit" asks for `atis_city`,
//! "the **distance** between two towns" for `atis_distance`. A small model left to choose among a
//! dozen calls by itself often picks the one its worked examples began with. Cues are
//! shown beside the values found (`cities (atis_city)` in the prompt's "Items found"
//! line); they never prune the grammar, since a call is also asked for in words its name
//! does not hold ("what would i pay" for a fare).
//!
//! A tag's words come from its name (split at `_`, `-`, camelCase and digits, lower case,
//! singular, a few identifier abbreviations spelled out: `no` is `number`), less function
//! words and less the words every tag of the union shares (`atis`). A cue is a window of
//! the request, outside the values found, holding some of one tag's words; of overlapping
//! cues only the tags with the most words found are kept, and only where at least half of
//! the tag's words are found.

use std::collections::BTreeSet;
use std::ops::Range;

use dss_compiler::prune::{FormSite, Site, SiteKind};
use serde_json::Value;

use crate::normalize::{stem_into, Normalized};
use crate::{Mention, Tier};

/// Identifier abbreviations read as the word they stand for.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("addr", "address"),
    ("amt", "amount"),
    ("auth", "authentication"),
    ("cfg", "configuration"),
    ("config", "configuration"),
    ("db", "database"),
    ("desc", "description"),
    ("doc", "document"),
    ("img", "image"),
    ("info", "information"),
    ("msg", "message"),
    ("no", "number"),
    ("nr", "number"),
    ("num", "number"),
    ("pic", "picture"),
    ("qty", "quantity"),
    ("temp", "temperature"),
];

/// Words that tell nothing about which call is meant.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "is", "of", "on", "or", "the", "to",
    "with",
];

/// Words of a cue further apart than this (in request words) are not one cue.
const WINDOW: usize = 6;

/// The tags of one union site and their words.
#[derive(Debug, Clone)]
struct CueSite {
    path: String,
    /// The tags are the keywords of merged forms ([`FormSite`]): each names a record.
    forms: bool,
    /// (tag, its words: normalised, singular, distinct).
    tags: Vec<(String, Vec<String>)>,
    /// Per tag: whether each of its words is also another tag's (`atis_flight`'s `flight`
    /// is in `atis_flight_no`): such a tag is cued only where its clause cues no other.
    shared: Vec<bool>,
}

/// The cue words of a spec's union tags, built once.
#[derive(Debug, Clone, Default)]
pub(crate) struct TagCues {
    sites: Vec<CueSite>,
    /// The words of the spec's field names of two words or more (`fare_code`).
    fields: Vec<Vec<String>>,
    /// Every field name and its words (`aircraft`, `departure_city`).
    field_words: Vec<(String, Vec<String>)>,
}

/// The words of one name: split, lower case, abbreviations spelled out, singular.
fn name_words(name: &str) -> Vec<String> {
    let n = Normalized::new(name);
    let mut out: Vec<String> = Vec::new();
    for t in &n.tokens {
        let w = &n.text[t.start..t.end];
        let w = ABBREVIATIONS
            .iter()
            .find(|(a, _)| *a == w)
            .map_or(w, |(_, full)| *full);
        if FUNCTION_WORDS.contains(&w) || w.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let mut s = String::new();
        stem_into(w, &mut s);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

impl TagCues {
    /// The cue words of every union with two tags or more: discriminator values (tag
    /// sites) and the keywords that open merged forms ([`FormSite`]).
    pub(crate) fn build(sites: &[Site], forms: &[FormSite]) -> Self {
        let mut out = Vec::new();
        let mut fields: Vec<Vec<String>> = Vec::new();
        let mut field_words: Vec<(String, Vec<String>)> = Vec::new();
        for s in sites {
            let field = s.path.rsplit('/').next().unwrap_or_default();
            let words = name_words(field);
            if words.len() > 1 && !fields.contains(&words) {
                fields.push(words.clone());
            }
            if !words.is_empty() && !field_words.iter().any(|(f, _)| f == field) {
                field_words.push((field.to_string(), words));
            }
        }
        let tag_sites = sites.iter().filter_map(|s| match &s.kind {
            SiteKind::Tag { values } => Some((&s.path, values)),
            _ => None,
        });
        let form_sites = forms.iter().map(|f| (&f.path, &f.names));
        let tagged = tag_sites.map(|t| (t, false));
        for ((path, values), is_form) in tagged.chain(form_sites.map(|f| (f, true))) {
            if values.len() < 2 {
                continue;
            }
            let mut tags: Vec<(String, Vec<String>)> =
                values.iter().map(|v| (v.clone(), name_words(v))).collect();
            // Words every tag has (a common prefix such as `atis`) tell the tags apart
            // from nothing.
            let shared: BTreeSet<String> = tags[0]
                .1
                .iter()
                .filter(|w| tags.iter().all(|(_, ws)| ws.contains(w)))
                .cloned()
                .collect();
            for (_, ws) in &mut tags {
                ws.retain(|w| !shared.contains(w));
            }
            tags.retain(|(_, ws)| !ws.is_empty());
            if !tags.is_empty() {
                let shared = (0..tags.len())
                    .map(|k| {
                        tags[k].1.iter().all(|w| {
                            tags.iter()
                                .enumerate()
                                .any(|(o, (_, ws))| o != k && ws.contains(w))
                        })
                    })
                    .collect();
                out.push(CueSite {
                    path: path.clone(),
                    forms: is_form,
                    tags,
                    shared,
                });
            }
        }
        TagCues {
            sites: out,
            fields,
            field_words,
        }
    }

    /// The records the request names by merged forms' keywords (see [`TagCues::find`], with
    /// no value's span taken): the span of each such cue and the record path of its form
    /// (`/*/BookRestaurant` for `book` in "book a brasserie"; nothing for `book` in "rate
    /// the current book", where `RateBook` finds both its words and wins).
    pub(crate) fn records_named(&self, request: &str) -> Vec<(Range<usize>, String)> {
        self.records_cued(request, &[], false)
    }

    /// The cues of [`TagCues::find`] (with the values found, `taken`) that name a record
    /// of a form site: the cue's span and the record's path (`/*/atis_capacity`). With
    /// `telling`, only cues that tell their tag from the others ([`TagCues::tells`]).
    pub(crate) fn records_cued(
        &self,
        request: &str,
        taken: &[(Range<usize>, String)],
        telling: bool,
    ) -> Vec<(Range<usize>, String)> {
        let forms: Vec<&str> = self
            .sites
            .iter()
            .filter(|s| s.forms)
            .map(|s| s.path.as_str())
            .collect();
        if forms.is_empty() {
            return Vec::new();
        }
        self.find(request, taken)
            .into_iter()
            .filter(|m| forms.contains(&m.site.as_str()))
            .filter(|m| !telling || self.tells(m, request))
            .filter_map(|m| {
                let tag = m.value.as_str()?;
                Some((m.span.clone(), FormSite::record_of(&m.site, tag)))
            })
            .collect()
    }

    /// Whether cue `m` (of `request`) tells its tag from the union's others: it says a
    /// word of the tag's name that no other name holds, and every word of the name it
    /// leaves unsaid is the tag's own too. `capacity` (`atis_capacity`), `flight numbers`
    /// (`atis_flight_no`) and `day` (`atis_day_name`) do; `flights` does not (every
    /// `flight`-named call has the word), nor `service` (`atis_ground_service`: the unsaid
    /// `ground` is also `atis_ground_fare`'s, so the request has not said which of the two).
    fn tells(&self, m: &Mention, request: &str) -> bool {
        let Some(site) = self.sites.iter().find(|s| s.path == m.site) else {
            return false;
        };
        let Some(k) = site.tags.iter().position(|(t, _)| m.value == t.as_str()) else {
            return false;
        };
        let said: BTreeSet<String> = request
            .get(m.span.clone())
            .map(|t| {
                let n = Normalized::new(t);
                n.tokens
                    .iter()
                    .map(|tok| {
                        let mut w = String::new();
                        stem_into(&n.text[tok.start..tok.end], &mut w);
                        w
                    })
                    .collect()
            })
            .unwrap_or_default();
        let own = |w: &String| {
            site.tags
                .iter()
                .enumerate()
                .all(|(o, (_, ws))| o == k || !ws.contains(w))
        };
        let words = &site.tags[k].1;
        words.iter().any(|w| said.contains(w) && own(w))
            && words.iter().all(|w| said.contains(w) || own(w))
    }

    /// The cues in `request`, by span start. `taken` are the values found: their spans and
    /// the names of the fields they were found at. Words inside them are not read as cues.
    ///
    /// Two kinds of cue are not kept, as they name something other than a call:
    /// - a field's name, all of it, right next to a value found at that field labels the
    ///   value (`aircraft dh8`, where `aircraft` is a field as well as `atis_aircraft`'s
    ///   word; but `departure times` still asks for `atis_flight_time`, of whose words the
    ///   field `flight_time` is only partly said);
    /// - a tag whose words all belong to other tags' names too (`atis_flight`: `flight` is
    ///   in `atis_flight_no` and `atis_flight_time`) is only the clause's topic when the
    ///   clause names no other tag of the union (`what day of the week do flights … fly
    ///   on` asks for `atis_day_name`).
    pub(crate) fn find(&self, request: &str, taken: &[(Range<usize>, String)]) -> Vec<Mention> {
        if self.sites.is_empty() {
            return Vec::new();
        }
        let n = Normalized::new(request);
        let clause = n.clauses(request);
        // A value found at field `f` starts right after token `i` / ends right before it.
        let labels = |i: usize, f: &str| {
            let after = n.tokens.get(i + 1).map(|t| t.orig_start);
            let before = i.checked_sub(1).map(|j| n.tokens[j].orig_end);
            taken
                .iter()
                .any(|(r, field)| field == f && (Some(r.start) == after || Some(r.end) == before))
        };
        let words: Vec<Option<String>> = n
            .tokens
            .iter()
            .map(|t| {
                let inside = taken
                    .iter()
                    .any(|(r, _)| r.start <= t.orig_start && t.orig_end <= r.end);
                (!inside).then(|| {
                    let mut s = String::new();
                    stem_into(&n.text[t.start..t.end], &mut s);
                    s
                })
            })
            .collect();
        let mut out = Vec::new();
        for site in &self.sites {
            // The tags' words, then the field names' (a field named in full, `fare code`,
            // outweighs a tag of which it holds fewer words: `atis_ground_fare`).
            let names: Vec<&[String]> = site
                .tags
                .iter()
                .map(|(_, w)| w.as_slice())
                .chain(self.fields.iter().map(Vec::as_slice))
                .collect();
            let n_tags = site.tags.len();
            // (first word, last word, name index, words found)
            let mut cands: Vec<(usize, usize, usize, usize)> = Vec::new();
            for (k, name_words) in names.iter().enumerate() {
                for (anchor, w) in words.iter().enumerate() {
                    if !w.as_ref().is_some_and(|w| name_words.contains(w)) {
                        continue;
                    }
                    // The name's words near the anchor, each at its nearest position.
                    let (mut lo, mut hi, mut found) = (anchor, anchor, 0);
                    for tw in *name_words {
                        let near = (anchor.saturating_sub(WINDOW)
                            ..words.len().min(anchor + WINDOW + 1))
                            .filter(|&i| words[i].as_deref() == Some(tw.as_str()))
                            .min_by_key(|&i| i.abs_diff(anchor));
                        if let Some(i) = near {
                            found += 1;
                            lo = lo.min(i);
                            hi = hi.max(i);
                        }
                    }
                    let full = found == name_words.len();
                    if (k < n_tags || full) && !cands.contains(&(lo, hi, k, found)) {
                        cands.push((lo, hi, k, found));
                    }
                }
            }
            cands.sort_by_key(|&(lo, hi, _, _)| (lo, hi));
            // (first word, last word, tag index, share of its words) of the cues kept.
            let mut found: Vec<(usize, usize, usize, f64)> = Vec::new();
            // Overlapping candidates are one cue: the tags with the most words found, then
            // the largest share of their words, are kept.
            let mut i = 0;
            while i < cands.len() {
                let mut end = cands[i].1;
                let mut j = i + 1;
                while j < cands.len() && cands[j].0 <= end {
                    end = end.max(cands[j].1);
                    j += 1;
                }
                let group = &cands[i..j];
                let share = |&(_, _, k, found): &(usize, usize, usize, usize)| {
                    found as f64 / names[k].len() as f64
                };
                let most = group.iter().map(|c| c.3).max().unwrap_or(0);
                let best = group
                    .iter()
                    .filter(|c| c.3 == most && c.2 < n_tags)
                    .map(share)
                    .fold(0.0, f64::max);
                let mut kept = BTreeSet::new();
                for c in group {
                    let s = share(c);
                    if c.2 < n_tags && c.3 == most && s >= best && s >= 0.5 && kept.insert(c.2) {
                        found.push((c.0, c.1, c.2, s));
                    }
                }
                i = j;
            }
            // A field's name labelling the value next to it.
            found.retain(|&(lo, hi, k, share)| {
                let cue_words = &site.tags[k].1;
                share < 1.0
                    || !self
                        .field_words
                        .iter()
                        .any(|(f, fw)| fw == cue_words && (labels(hi, f) || labels(lo, f)))
            });
            // A tag made of other tags' words, where the clause names another tag.
            let shared = |k: usize| site.shared[k];
            let kept: Vec<(usize, usize, usize, f64)> = found
                .iter()
                .copied()
                .filter(|&(lo, _, k, _)| {
                    !shared(k)
                        || !found.iter().any(|&(lo2, _, k2, _)| {
                            k2 != k && !shared(k2) && clause[lo2] == clause[lo]
                        })
                })
                .collect();
            for (lo, hi, k, s) in kept {
                let span = n.tokens[lo].orig_start..n.tokens[hi].orig_end;
                out.push(Mention {
                    text: request[span.clone()].to_string(),
                    span,
                    site: site.path.clone(),
                    value: Value::String(site.tags[k].0.clone()),
                    tier: Tier::Cue,
                    score: s,
                });
            }
        }
        out.sort_by_key(|m| (m.span.start, m.span.end));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(tags: &[&str]) -> Site {
        Site {
            path: "/*".into(),
            kind: SiteKind::Tag {
                values: tags.iter().map(|t| t.to_string()).collect(),
            },
            required: true,
            required_in_record: true,
            examples: Vec::new(),
            optional_field: false,
            composed: false,
            codes: Vec::new(),
        }
    }

    /// An optional enum field at `path`.
    fn field(path: &str) -> Site {
        Site {
            path: path.into(),
            kind: SiteKind::Choice { values: vec![] },
            required: false,
            required_in_record: false,
            examples: Vec::new(),
            optional_field: true,
            composed: false,
            codes: Vec::new(),
        }
    }

    fn cues(tags: &[&str], request: &str) -> Vec<(String, String)> {
        TagCues::build(&[site(tags)], &[])
            .find(request, &[])
            .into_iter()
            .map(|m| (m.text, m.value.as_str().unwrap_or_default().to_string()))
            .collect()
    }

    #[test]
    fn a_tags_words_name_it() {
        let tags = [
            "atis_city",
            "atis_distance",
            "atis_flight",
            "atis_flight_no",
            "atis_ground_fare",
            "atis_ground_service",
        ];
        assert_eq!(
            cues(
                &tags,
                "what cities does northwest fly to and the distance from dallas"
            ),
            [
                ("cities".to_string(), "atis_city".to_string()),
                ("distance".into(), "atis_distance".into())
            ]
        );
        // `no` is `number`; the tag with more words found wins over `atis_flight`.
        assert_eq!(
            cues(&tags, "flight numbers out of oakland"),
            [("flight numbers".to_string(), "atis_flight_no".to_string())]
        );
        // Both words of `atis_ground_fare` beat one of `atis_ground_service`.
        assert_eq!(
            cues(&tags, "any fares for ground travel"),
            [(
                "fares for ground".to_string(),
                "atis_ground_fare".to_string()
            )]
        );
        // One word of two each: both are offered.
        assert_eq!(cues(&tags, "ground transportation").len(), 2);
        // A field named in full (`fare code`) outweighs one word of a tag.
        let fare_code = field("/*/atis_abbreviation/fare_code");
        let c = TagCues::build(&[site(&tags), fare_code], &[]);
        assert!(c.find("explain the fare code qo", &[]).is_empty());
        assert_eq!(c.find("the fare to boston", &[]).len(), 1);
        // Nothing named: no cue.
        assert!(cues(&tags, "i need a ticket to seattle").is_empty());
    }

    #[test]
    fn field_labels_and_shared_words_are_not_call_cues() {
        let tags = [
            "atis_aircraft",
            "atis_day_name",
            "atis_flight",
            "atis_flight_no",
            "atis_quantity",
        ];
        let aircraft = field("/*/atis_quantity/aircraft");
        let c = TagCues::build(&[site(&tags), aircraft], &[]);
        let tags_of = |request: &str, taken: &[(Range<usize>, String)]| -> Vec<String> {
            c.find(request, taken)
                .into_iter()
                .filter_map(|m| m.value.as_str().map(str::to_string))
                .collect()
        };
        // `aircraft` right before a value found at the field `aircraft` labels it.
        let request = "how many flights use aircraft dh8";
        let dh8 = vec![(30..33, "aircraft".to_string())];
        assert_eq!(&request[30..33], "dh8");
        assert!(!tags_of(request, &dh8).contains(&"atis_aircraft".to_string()));
        // Not next to it, or next to a value of another field: a cue.
        assert!(tags_of("which aircraft is named d9s", &[]).contains(&"atis_aircraft".to_string()));
        let other = vec![(30..33, "flight_number".to_string())];
        assert!(tags_of(request, &other).contains(&"atis_aircraft".to_string()));
        // Part of a field's name next to its value is still a cue.
        let c2 = TagCues::build(
            &[
                site(&["atis_flight_time", "atis_flight"]),
                field("/*/atis_flight_time/flight_time"),
            ],
            &[],
        );
        let r = "all departure times out of reno";
        let departure = vec![(4..13, "flight_time".to_string())];
        assert_eq!(&r[4..13], "departure");
        let found: Vec<String> = c2
            .find(r, &departure)
            .into_iter()
            .filter_map(|m| m.value.as_str().map(str::to_string))
            .collect();
        assert_eq!(found, ["atis_flight_time"]);
        // `flight` is a word of three tags: it yields to the clause's day.
        assert_eq!(
            tags_of("what day of the week do flights from boston fly on", &[]),
            ["atis_day_name"]
        );
        // Alone in its clause it stays, and another clause does not take it away.
        assert_eq!(
            tags_of("list flights from memphis and what day is it", &[]),
            ["atis_flight", "atis_day_name"]
        );
    }

    #[test]
    fn camel_case_names_and_values_found_are_kept_apart() {
        let tags = [
            "AddToPlaylist",
            "PlayMusic",
            "GetWeather",
            "BookRestaurant",
            "RateBook",
        ];
        assert_eq!(
            cues(&tags, "book a table at a restaurant"),
            [(
                "book a table at a restaurant".to_string(),
                "BookRestaurant".to_string()
            )]
        );
        // A word inside a value found (a playlist's name) is not a cue.
        let c = TagCues::build(&[site(&tags)], &[]);
        let playlist = vec![(13..29, "playlist".to_string())];
        let found = c.find("add it to my weather playlist", &playlist);
        let tags: Vec<&str> = found.iter().filter_map(|m| m.value.as_str()).collect();
        assert_eq!(tags, ["AddToPlaylist"], "{found:?}");
        assert_eq!(found[0].text, "add");
        // Fewer than half of a tag's words: no cue.
        assert!(cues(&["get_current_weather_report", "send_mail"], "the weather").is_empty());
    }
}
