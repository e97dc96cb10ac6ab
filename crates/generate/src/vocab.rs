//! Vocabularies that turn a grammar's placeholders into names.

use crate::rng::Rng;
use autoeval_syntax::lex::{tokenize, Tok};
use std::sync::OnceLock;

/// A predicate name and how many arguments it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predicate {
    /// The name as it appears in formulas.
    pub name: String,
    /// Number of arguments.
    pub arity: usize,
}

/// A VerbNet verb at one arity, and how often the paper's list holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verb {
    /// The verb, lowercased, with its arity.
    pub predicate: Predicate,
    /// How many times the paper's public implementation's list holds this
    /// (verb, arity): its weight when a verb of that arity is drawn.
    pub weight: usize,
}

/// True when the formula parser reads `word` as one plain name (not an
/// operator keyword such as `v`, `and` or `all`).
pub fn is_plain_name(word: &str) -> bool {
    matches!(tokenize(word).as_deref(), Ok([t]) if t.tok == Tok::Name(word.into()))
}

/// The FOL-English verbs with their arities and weights, derived from
/// VerbNet by the paper's filters (`data/verbnet-verbs.tsv`); a verb may
/// have two arities. Names the formula parser would not read as one plain
/// name are left out.
pub fn verbs() -> &'static [Verb] {
    static VERBS: OnceLock<Vec<Verb>> = OnceLock::new();
    VERBS.get_or_init(|| {
        include_str!("../data/verbnet-verbs.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let mut cells = l.split('\t');
                let name = cells.next()?;
                let arity = cells.next()?.trim().parse().ok()?;
                let weight = cells.next()?.trim().parse().ok()?;
                Some(Verb {
                    predicate: Predicate {
                        name: name.to_string(),
                        arity,
                    },
                    weight,
                })
            })
            .filter(|v| is_plain_name(&v.predicate.name))
            .collect()
    })
}

/// Person first names usable as object names: Faker's English first names
/// as the paper's public implementation filters and lowercases them
/// (`data/person-names.txt`), less any the formula parser would not read as
/// one plain name.
pub fn person_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        include_str!("../data/person-names.txt")
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter(|n| is_plain_name(n))
            .collect()
    })
}

/// Highest arity the English verb list offers.
pub fn max_verb_arity() -> usize {
    verbs().iter().map(|v| v.predicate.arity).max().unwrap_or(0)
}

/// The predicates of one formula: `count` draws, each with an arity drawn
/// uniformly from `min..=max`; then `pred1…`, or an English verb of that
/// arity drawn by its weight, as the paper's implementation draws them: a
/// verb drawn again takes the later arity, so there may be fewer than `count`.
pub fn draw_predicates(
    rng: &mut Rng,
    count: usize,
    min: usize,
    max: usize,
    english: bool,
) -> Vec<Predicate> {
    let mut out: Vec<Predicate> = Vec::with_capacity(count);
    for i in 0..count {
        let arity = rng.between(min, max);
        if english {
            let pool: Vec<&Verb> = verbs()
                .iter()
                .filter(|v| v.predicate.arity == arity)
                .collect();
            let total: usize = pool.iter().map(|v| v.weight).sum();
            if total == 0 {
                continue;
            }
            let mut at = rng.below(total);
            let Some(verb) = pool.iter().find(|v| {
                let here = at < v.weight;
                at = at.saturating_sub(v.weight);
                here
            }) else {
                continue;
            };
            out.retain(|o| o.name != verb.predicate.name);
            out.push(verb.predicate.clone());
        } else {
            out.push(Predicate {
                name: format!("pred{}", i + 1),
                arity,
            });
        }
    }
    out
}

/// The objects of one formula: `p1…pN`, or N distinct person names.
pub fn draw_objects(rng: &mut Rng, count: usize, english: bool) -> Vec<String> {
    if english {
        let names = person_names();
        rng.sample_indices(names.len(), count)
            .into_iter()
            .map(|i| names[i].to_string())
            .collect()
    } else {
        (1..=count).map(|i| format!("p{i}")).collect()
    }
}
