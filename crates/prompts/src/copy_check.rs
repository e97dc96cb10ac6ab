//! Detecting an informalization that copies the formula (paper Sec. 4,
//! "Robust Parser"): operator symbols, fragments of the formula, or the
//! formula verbatim in the English.

use autoeval_proto::CopyCheck;

/// Logic symbols, which never belong in English.
const LOGIC_SYMBOLS: [&str; 8] = ["∧", "∨", "¬", "∀", "∃", "→", "↔", "⊕"];
/// ASCII symbols, which count only when the formula itself uses them
/// (`*` is also Markdown emphasis).
const ASCII_SYMBOLS: [&str; 5] = ["&", "|", "~", "*", "->"];

/// Shortest fragment of the formula that counts as copied: enough to carry
/// an operator between two operands.
const MIN_FRAGMENT_CHARS: usize = 5;

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Checks `english` for parts of `formula`.
pub fn copy_check(formula: &str, english: &str) -> CopyCheck {
    let ascii = ASCII_SYMBOLS.iter().filter(|op| formula.contains(**op));
    let symbols: Vec<String> = LOGIC_SYMBOLS
        .iter()
        .chain(ascii)
        .filter(|op| english.contains(**op))
        .map(|op| op.to_string())
        .collect();
    let fragment = longest_fragment(formula, english);
    CopyCheck {
        copied: !symbols.is_empty() || fragment.is_some(),
        symbols,
        fragment,
    }
}

/// Operators of formal syntax; a copied fragment must hold one. Brackets
/// alone are not enough: a predicate atom such as `pred3(p5, x1)` may be
/// named in the English, as the prompt's vocabulary gives it.
fn is_formal(c: char) -> bool {
    "∧∨¬∀∃→↔⊕&|~*.".contains(c)
}

/// The fragment of `formula` found in `english`, both without whitespace:
/// the first window (by start) of the longest length tried that holds formal
/// syntax, trying the whole formula, then halving the length while it is
/// above twice the minimum, then one shorter at a time.
fn longest_fragment(formula: &str, english: &str) -> Option<String> {
    let f: Vec<char> = squeeze(formula).chars().collect();
    let e: Vec<char> = squeeze(english).chars().collect();
    if f.len() < MIN_FRAGMENT_CHARS || !e.iter().any(|&c| is_formal(c)) {
        return None;
    }
    // found[k]: the longest run of `f` ending at k that occurs in `e`, by the
    // longest-common-suffix table, one row of `e` at a time.
    let mut found = vec![0usize; f.len()];
    let mut row = vec![0usize; e.len() + 1];
    for (k, &fc) in f.iter().enumerate() {
        for j in (1..=e.len()).rev() {
            row[j] = if e[j - 1] == fc { row[j - 1] + 1 } else { 0 };
            found[k] = found[k].max(row[j]);
        }
    }
    // formal_before[i]: formal characters among f[..i].
    let mut formal_before = vec![0usize; f.len() + 1];
    for (i, &c) in f.iter().enumerate() {
        formal_before[i + 1] = formal_before[i] + usize::from(is_formal(c));
    }
    let mut len = f.len();
    while len >= MIN_FRAGMENT_CHARS {
        for start in 0..=f.len() - len {
            let end = start + len;
            if found[end - 1] >= len && formal_before[end] > formal_before[start] {
                return Some(f[start..end].iter().collect());
            }
        }
        // Halving keeps the search short on long formulas.
        len = if len > 2 * MIN_FRAGMENT_CHARS {
            len / 2
        } else {
            len - 1
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search as first written: every window, searched for as text.
    fn by_windows(formula: &str, english: &str) -> Option<String> {
        let f: Vec<char> = squeeze(formula).chars().collect();
        let e = squeeze(english);
        let formal = |s: &[char]| s.iter().any(|c| is_formal(*c));
        let mut len = f.len();
        while len >= MIN_FRAGMENT_CHARS {
            for start in 0..=f.len() - len {
                let window = &f[start..start + len];
                if formal(window) && e.contains(&window.iter().collect::<String>()) {
                    return Some(window.iter().collect());
                }
            }
            len = if len > 2 * MIN_FRAGMENT_CHARS {
                len / 2
            } else {
                len - 1
            };
        }
        None
    }

    #[test]
    fn the_table_finds_what_searching_every_window_finds() {
        let formulas = [
            "(p1 ∧ ¬(p2 ∨ p3))",
            "∀ x1.∃ x2.(likes(x1, x2) ∨ ¬hates(x2, Anna))",
            "((0*1)|(10))*",
            "p1",
            "(p1 ∨ p2) ∧ (¬p3 ∨ p4 ∨ p5) ∧ (p6 ∨ ¬p7)",
        ];
        let mut checked = 0;
        for f in formulas {
            let chars: Vec<char> = f.chars().collect();
            // English holding every slice of the formula, amid prose.
            for a in 0..chars.len() {
                for b in a..=chars.len() {
                    let piece: String = chars[a..b].iter().collect();
                    for english in [
                        format!("It says {piece} and more."),
                        format!("{piece}{piece}"),
                        format!("no symbols here but {piece}"),
                    ] {
                        assert_eq!(
                            longest_fragment(f, &english),
                            by_windows(f, &english),
                            "{f:?} in {english:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000);
    }
}
