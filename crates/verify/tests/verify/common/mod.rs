//! The independent oracles, shared with the command's tests.

// Each test binary that includes this module uses a part of it.
#![allow(unused_imports, dead_code)]

pub use autoeval_oracle::*;

use autoeval_syntax::Formula;
use autoeval_verify::Counterexample;
use std::collections::BTreeSet;

/// Whether the finite model a counterexample names tells `a` from `b`, by
/// evaluating both in it; `None` when the counterexample is no such model.
pub fn model_tells_apart(a: &Formula, b: &Formula, cex: &Option<Counterexample>) -> Option<bool> {
    let Some(Counterexample::Model {
        domain,
        constants,
        true_atoms,
    }) = cex
    else {
        return None;
    };
    let atoms: BTreeSet<String> = true_atoms.iter().cloned().collect();
    let va = eval_in_model(a, domain, constants, &atoms, &mut Vec::new());
    let vb = eval_in_model(b, domain, constants, &atoms, &mut Vec::new());
    Some(va != vb)
}
