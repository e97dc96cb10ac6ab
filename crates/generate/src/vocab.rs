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

/// True when the formula parser reads `word` as one plain name (not an
/// operator keyword such as `v`, `and` or `all`).
pub fn is_plain_name(word: &str) -> bool {
    matches!(tokenize(word).as_deref(), Ok([t]) if t.tok == Tok::Name(word.into()))
}

/// Verbs with their arity, from the bundled list.
pub fn verbs() -> &'static [Predicate] {
    static VERBS: OnceLock<Vec<Predicate>> = OnceLock::new();
    VERBS.get_or_init(|| {
        include_str!("../data/verbs.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let (name, arity) = l.split_once(' ')?;
                Some(Predicate {
                    name: name.to_string(),
                    arity: arity.trim().parse().ok()?,
                })
            })
            .filter(|p| is_plain_name(&p.name))
            .collect()
    })
}

/// Person first names usable as object names: one plain word each.
pub fn person_names() -> &'static [&'static str] {
    use fake::locales::{Data, EN};
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<&'static str> = EN::NAME_FIRST_NAME
            .iter()
            .copied()
            .filter(|n| n.chars().all(|c| c.is_ascii_alphabetic()) && is_plain_name(n))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    })
}

/// Highest arity the English verb list offers.
pub fn max_verb_arity() -> usize {
    verbs().iter().map(|v| v.arity).max().unwrap_or(0)
}

/// The predicates of one formula: `count` of them, each with an arity drawn
/// uniformly from `min..=max`; English verbs of that arity, or `pred1…`.
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
            let pool: Vec<&Predicate> = verbs()
                .iter()
                .filter(|v| v.arity == arity && !out.iter().any(|o| o.name == v.name))
                .collect();
            if let Some(v) = pool.get(rng.below(pool.len().max(1))) {
                out.push((*v).clone());
            }
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
