//! `reference-noisy:RATE`: the reference model with one of the errors LLMs
//! make (paper App. G) injected into that fraction of items, chosen from a
//! hash of the formula, so the same item always gets the same error.

use autoeval_generate::perturb::{self, RegexRewrite, Rewrite};
use autoeval_generate::rng::Rng;
use autoeval_syntax::{alphabet, parse_formula_exact, parse_regex_exact, print, Mode, Style};

/// One injected error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injection {
    /// Which error, e.g. `FlipNegation` or `DropStar`.
    pub kind: String,
    /// The formula with the error, which the model then describes.
    pub formula: String,
}

fn fnv(text: &str, salt: u64) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64 ^ salt, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The error injected into `phi0` at `rate`, if this item gets one.
pub fn injection(phi0: &str, regex: bool, rate: f64) -> Option<Injection> {
    let h = fnv(phi0, 0);
    if ((h >> 11) as f64 / (1u64 << 53) as f64) >= rate {
        return None;
    }
    let mut rng = Rng::new(h, "noise", 0);
    if regex {
        let sigma = alphabet(2);
        let r = parse_regex_exact(phi0, Mode::Lenient, &alphabet(36)).ok()?;
        let kinds: Vec<RegexRewrite> = RegexRewrite::NEAR_MISS
            .into_iter()
            .filter(|&k| perturb::regex(&r, k, &sigma, &mut Rng::new(h, "probe", 0)).is_some())
            .collect();
        let kind = *kinds.get(rng.below(kinds.len().max(1)))?;
        let out = perturb::regex(&r, kind, &sigma, &mut rng)?;
        Some(Injection {
            kind: format!("{kind:?}"),
            formula: print::regex(&out),
        })
    } else {
        let f = parse_formula_exact(phi0, Mode::Lenient).ok()?;
        let kinds: Vec<Rewrite> = Rewrite::NEAR_MISS
            .into_iter()
            .filter(|&k| perturb::logic(&f, k, &mut Rng::new(h, "probe", 0)).is_some())
            .collect();
        let kind = *kinds.get(rng.below(kinds.len().max(1)))?;
        let out = perturb::logic(&f, kind, &mut rng)?;
        Some(Injection {
            kind: format!("{kind:?}"),
            formula: print::formula(&out, Style::Unicode),
        })
    }
}
