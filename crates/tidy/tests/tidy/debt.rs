//! What is known not to hold yet, named one by one: a check passes when
//! what it finds is exactly its list, so the list can only shrink. A new
//! breach fails the check, and so does one that was mended but is still
//! listed (take it off).

/// The breaches of one invariant still to mend.
pub struct Debt(&'static [&'static str]);

impl Debt {
    /// Functions over 120 lines, as `path::name`.
    pub const FUNCTIONS_OVER_120_LINES: Debt = Debt(&[]);
    /// `lib.rs` and `mod.rs` files over 400 lines of code.
    pub const MAPS_OVER_400_LINES: Debt = Debt(&[]);
    /// Files outside the I/O crates that call file, process, network or
    /// environment APIs.
    pub const IO_OUTSIDE_IO_CRATES: Debt = Debt(&[]);
    /// Long flags declared by more than one field, by name.
    pub const FLAGS_DECLARED_MORE_THAN_ONCE: Debt = Debt(&[]);
    /// Modules in an import circle.
    pub const IMPORT_CIRCLES: Debt = Debt(&[]);
    /// Files outside a provider's module that name a provider.
    pub const PROVIDER_NAMES: Debt = Debt(&[]);

    /// Fails unless `found` (each breach's name and what it is) is exactly
    /// this list.
    pub fn check(&self, what: &str, found: impl IntoIterator<Item = (String, String)>) {
        let found: Vec<(String, String)> = found.into_iter().collect();
        for (name, detail) in &found {
            println!("{what}: {name}: {detail}");
        }
        let new: Vec<String> = found
            .iter()
            .filter(|(name, _)| !self.0.contains(&name.as_str()))
            .map(|(name, detail)| format!("{name} ({detail})"))
            .collect();
        let mended: Vec<&str> = self
            .0
            .iter()
            .copied()
            .filter(|listed| !found.iter().any(|(name, _)| name == listed))
            .collect();
        assert!(new.is_empty(), "{what}, new:\n  {}", new.join("\n  "));
        assert!(
            mended.is_empty(),
            "{what}: these hold now; take them off the list in debt.rs:\n  {}",
            mended.join("\n  ")
        );
    }
}
