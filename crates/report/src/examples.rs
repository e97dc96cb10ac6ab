//! Failing examples: distinct items from several batches, φ0 beside φ1
//! with the differing part marked, and the counterexample in a readable form.

use crate::svg::escape;
use crate::ReportInput;
use autoeval_proto::ResultRecord;
use serde_json::Value;
use similar::{ChangeTag, TextDiff};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Failing rounds to show for a dataset: wrong answers first, then
/// non-compliant ones, timeouts and unknowns; each item at most once, and
/// taken from the batches in turn so that one batch does not fill the list.
pub fn failing_examples<'a>(
    records: &[&'a ResultRecord],
    dataset: &str,
    n: usize,
) -> Vec<&'a ResultRecord> {
    let order = crate::digest::FAILING;
    let mut out: Vec<&ResultRecord> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for v in order {
        let mut by_batch: BTreeMap<u64, Vec<&ResultRecord>> = BTreeMap::new();
        for &r in records
            .iter()
            .filter(|r| r.dataset == dataset && r.verdict == v)
        {
            by_batch.entry(r.batch).or_default().push(r);
        }
        let mut queues: Vec<std::vec::IntoIter<&ResultRecord>> =
            by_batch.into_values().map(Vec::into_iter).collect();
        while out.len() < n && !queues.is_empty() {
            queues.retain_mut(|q| {
                if out.len() >= n {
                    return true;
                }
                match q.find(|r| !seen.contains(r.id.as_str())) {
                    Some(r) => {
                        seen.insert(&r.id);
                        out.push(r);
                        true
                    }
                    None => false,
                }
            });
        }
    }
    out
}

/// Splits a formula into the units a difference is marked in: names,
/// single symbols and runs of spaces.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let word = c.is_alphanumeric() || c == '_';
        match (start, word) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                out.push(&text[s..i]);
                start = None;
            }
            _ => {}
        }
        if !word {
            out.push(&text[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

/// φ0 and φ1 as HTML with the parts that differ in `<mark>`: what φ1
/// dropped is marked in φ0, what it added is marked in φ1.
pub fn marked_pair(phi0: &str, phi1: &str) -> (String, String) {
    let (a, b) = (tokens(phi0), tokens(phi1));
    let diff = TextDiff::configure().diff_slices(&a, &b);
    let (mut left, mut right) = (String::new(), String::new());
    for change in diff.iter_all_changes() {
        let text = escape(change.value());
        match change.tag() {
            ChangeTag::Equal => {
                left.push_str(&text);
                right.push_str(&text);
            }
            ChangeTag::Delete if change.value().trim().is_empty() => left.push_str(&text),
            ChangeTag::Insert if change.value().trim().is_empty() => right.push_str(&text),
            ChangeTag::Delete => {
                let _ = write!(left, "<mark>{text}</mark>");
            }
            ChangeTag::Insert => {
                let _ = write!(right, "<mark>{text}</mark>");
            }
        }
    }
    (left, right)
}

/// A counterexample as a person reads it: a truth table row, a structure's
/// domain, constants and relations, or a word and which side accepts it.
pub fn counterexample_html(c: &Value) -> String {
    let mut out = String::new();
    if let Some(assignment) = c.get("assignment").and_then(Value::as_object) {
        out.push_str(r#"<table class="cx"><tr><th class="l">atom</th>"#);
        for atom in assignment.keys() {
            let _ = write!(out, "<th>{}</th>", escape(atom));
        }
        out.push_str(r#"</tr><tr><td class="l">value</td>"#);
        for v in assignment.values() {
            let _ = write!(
                out,
                "<td>{}</td>",
                if v.as_bool() == Some(true) { "T" } else { "F" }
            );
        }
        out.push_str("</tr></table>");
    } else if let Some(domain) = c.get("domain").and_then(Value::as_array) {
        let names: Vec<String> = domain
            .iter()
            .filter_map(Value::as_str)
            .map(escape)
            .collect();
        let _ = write!(out, "domain {{{}}}", names.join(", "));
        if let Some(constants) = c.get("constants").and_then(Value::as_object) {
            let pairs: Vec<String> = constants
                .iter()
                .map(|(k, v)| format!("{} = {}", escape(k), escape(v.as_str().unwrap_or("?"))))
                .collect();
            if !pairs.is_empty() {
                let _ = write!(out, "; {}", pairs.join(", "));
            }
        }
        let mut relations: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for atom in c
            .get("true_atoms")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let (name, args) = atom.split_once('(').unwrap_or((atom, ""));
            relations
                .entry(name)
                .or_default()
                .push(args.trim_end_matches(')'));
        }
        out.push_str(
            r#"<table class="cx"><tr><th class="l">relation</th><th class="l">holds of</th></tr>"#,
        );
        for (name, args) in &relations {
            let shown: Vec<String> = args
                .iter()
                .map(|a| {
                    if a.is_empty() {
                        "true".into()
                    } else {
                        format!("({})", escape(a))
                    }
                })
                .collect();
            let _ = write!(
                out,
                r#"<tr><td class="l">{}</td><td class="l">{}</td></tr>"#,
                escape(name),
                shown.join(", ")
            );
        }
        out.push_str(r#"</table><span class="note">Every atom not listed is false.</span>"#);
    } else if let Some(word) = c.get("word").and_then(Value::as_str) {
        let by = c.get("accepted_by").and_then(Value::as_str).unwrap_or("");
        let (yes, no) = if by == "phi1" {
            ("φ1", "φ0")
        } else {
            ("φ0", "φ1")
        };
        let shown = if word.is_empty() {
            "ε (the empty word)".to_string()
        } else {
            format!("<code>{}</code>", escape(word))
        };
        let _ = write!(
            out,
            "the word {shown} is in the language of {yes} but not of {no}"
        );
    } else if let Some(model) = c.get("model").and_then(Value::as_str) {
        let _ = write!(out, "<pre>{}</pre>", escape(model));
    } else {
        let _ = write!(out, "<pre>{}</pre>", escape(&c.to_string()));
    }
    out
}

/// The failing-examples section.
pub fn section(out: &mut String, input: &ReportInput, datasets: &[String]) {
    out.push_str(r#"<h2 id="examples">Failing examples</h2><p class="note">Distinct items from the batches in turn, wrong answers first. In φ0 the parts φ1 lost are marked; in φ1 the parts it added.</p>"#);
    for d in datasets {
        let shown = failing_examples(&input.digest.failing(d), d, input.examples_per_dataset);
        let _ = write!(out, "<h3>{}</h3>", escape(d));
        if shown.is_empty() {
            out.push_str(r#"<p class="note">No failing rounds.</p>"#);
        }
        for r in shown {
            let _ = write!(
                out,
                r#"<div class="ex"><b>{}</b> · batch {} · complexity {} · {} · {} · round {} · <b>{}</b>"#,
                escape(&r.id),
                r.batch,
                r.complexity,
                escape(&r.model),
                escape(&r.prompt),
                r.round,
                r.verdict.name(),
            );
            let (left, right) = match &r.phi1 {
                Some(phi1) => marked_pair(&r.phi0, phi1),
                None => (
                    escape(&r.phi0),
                    escape(r.raw_answer.as_deref().unwrap_or("–")),
                ),
            };
            let right_label = if r.phi1.is_some() {
                format!("φ{}", r.round)
            } else {
                "the model's answer".into()
            };
            let _ = write!(
                out,
                r#"<table class="pair"><tr><th class="l">φ0</th><th class="l">{}</th></tr><tr><td class="l"><pre>{}</pre></td><td class="l"><pre>{}</pre></td></tr></table>English<pre>{}</pre>"#,
                right_label,
                left,
                right,
                escape(r.english.as_deref().unwrap_or("–")),
            );
            if let Some(why) = &r.reason {
                let _ = write!(out, "why<pre>{}</pre>", escape(why));
            }
            if let Some(c) = &r.counterexample {
                let _ = write!(
                    out,
                    r#"<div>counterexample: {}</div>"#,
                    counterexample_html(c)
                );
            }
            out.push_str("</div>");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_differing_tokens_are_marked() {
        let (l, r) = marked_pair("(p1 ∧ p2) ∨ ¬p3", "(p1 ∨ p2) ∨ ¬p3");
        assert_eq!(l, "(p1 <mark>∧</mark> p2) ∨ ¬p3");
        assert_eq!(r, "(p1 <mark>∨</mark> p2) ∨ ¬p3");
        let (l, r) = marked_pair("∀x P(x)", "∀x P(x)");
        assert!(!l.contains("mark") && !r.contains("mark"));
    }

    #[test]
    fn counterexamples_read_as_tables_and_words() {
        let a = counterexample_html(&serde_json::json!({"assignment": {"p1": true, "p2": false}}));
        assert!(a.contains("<th>p1</th><th>p2</th>") && a.contains("<td>T</td><td>F</td>"));
        let m = counterexample_html(&serde_json::json!({
            "domain": ["e0", "e1"], "constants": {"alice": "e0"},
            "true_atoms": ["Likes(e0,e1)", "Likes(e1,e1)", "Tall(e0)"]}));
        assert!(m.contains("domain {e0, e1}; alice = e0"));
        assert!(m.contains("<td class=\"l\">Likes</td><td class=\"l\">(e0,e1), (e1,e1)</td>"));
        let w = counterexample_html(&serde_json::json!({"word": "", "accepted_by": "phi1"}));
        assert!(w.contains("ε") && w.contains("of φ1 but not of φ0"));
    }

    #[test]
    fn examples_are_distinct_items_from_several_batches() {
        let rec = |id: &str, batch: u64| ResultRecord {
            id: id.into(),
            dataset: "d".into(),
            batch,
            verdict: autoeval_proto::Verdict::NotEquivalent,
            ..ResultRecord::default()
        };
        let records = [
            rec("a", 0),
            rec("a", 0),
            rec("b", 0),
            rec("c", 0),
            rec("x", 1),
            rec("y", 2),
        ];
        let records: Vec<&ResultRecord> = records.iter().collect();
        let shown: Vec<&str> = failing_examples(&records, "d", 4)
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(shown, ["a", "x", "y", "b"]);
        // What the digest keeps of them chooses the same examples.
        let owned: Vec<ResultRecord> = records.iter().map(|r| (*r).clone()).collect();
        let digest = crate::RunDigest::of(&owned, 4);
        let kept: Vec<&str> = failing_examples(&digest.failing("d"), "d", 4)
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(kept, shown);
    }
}
