//! FOL text as the token sequence the n-gram metrics compare: every name
//! is one token, every operator and bracket another; spaces separate only.

/// The tokens of a formula: names (letters, digits, `_`, `-`, `'`) whole,
/// every other visible character alone. `∀x (Eel(x) → Fish(x))` gives
/// `∀ x ( Eel ( x ) → Fish ( x ) )`.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut name = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || matches!(c, '_' | '-' | '\'') {
            name.push(c);
            continue;
        }
        if !name.is_empty() {
            out.push(std::mem::take(&mut name));
        }
        if !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    if !name.is_empty() {
        out.push(name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_whole_and_symbols_alone() {
        assert_eq!(
            tokens("∀x (Eel(x) → Fish(x, typeC-Port))"),
            [
                "∀",
                "x",
                "(",
                "Eel",
                "(",
                "x",
                ")",
                "→",
                "Fish",
                "(",
                "x",
                ",",
                "typeC-Port",
                ")",
                ")"
            ]
        );
        assert_eq!(tokens("  ¬p1∧p2 "), ["¬", "p1", "∧", "p2"]);
        assert!(tokens("").is_empty());
    }
}
