//! Detecting an informalization that copies the formula (paper Sec. 4,
//! "Robust Parser"): operator symbols, fragments of the formula, or the
//! formula verbatim in the English.

use serde::{Deserialize, Serialize};

/// What the copy check found in an informalization.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyCheck {
    /// True when anything below was found.
    pub copied: bool,
    /// Operator symbols of the formal syntax found in the English.
    pub symbols: Vec<String>,
    /// The longest run of the formula's own text found in the English.
    pub fragment: Option<String>,
}

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
    // Fragments are compared without whitespace; a fragment must contain
    // formal syntax (an operator or parenthesis), or names alone would count.
    let f: Vec<char> = squeeze(formula).chars().collect();
    let e = squeeze(english);
    let formal = |s: &[char]| s.iter().any(|c| "∧∨¬∀∃→↔⊕()&|~*.".contains(*c));
    let mut fragment: Option<String> = None;
    let mut len = f.len();
    while len >= MIN_FRAGMENT_CHARS && fragment.is_none() {
        for start in 0..=f.len() - len {
            let window = &f[start..start + len];
            if formal(window) && e.contains(&window.iter().collect::<String>()) {
                fragment = Some(window.iter().collect());
                break;
            }
        }
        // Halving keeps the search short on long formulas.
        len = if len > 2 * MIN_FRAGMENT_CHARS {
            len / 2
        } else {
            len - 1
        };
    }
    CopyCheck {
        copied: !symbols.is_empty() || fragment.is_some(),
        symbols,
        fragment,
    }
}
