//! `autoeval closeness --bench`: pairs scored per second by each metric,
//! one thread, over the same (formula, perturbation) pairs, side by side in
//! one run. Build with `--release`.

use anyhow::Result;
use autoeval_closeness::perturb::Perturbation;
use autoeval_closeness::{
    bertscore, bleu, logical_equivalence, meteor, rouge_l, smatch, tokens, TokenEmbedder,
};
use autoeval_syntax::{print, Formula, Style};
use std::time::Instant;

/// Times of each metric over `pairs` `repeats` times; prints the median rate.
pub fn run(
    formulas: &[Formula],
    encoder: Option<&dyn TokenEmbedder>,
    repeats: usize,
) -> Result<()> {
    let pairs: Vec<(Formula, Formula)> = formulas
        .iter()
        .flat_map(|f| {
            Perturbation::ALL
                .iter()
                .filter_map(move |p| Some((f.clone(), p.apply(f)?)))
        })
        .collect();
    let texts: Vec<(String, String)> = pairs
        .iter()
        .map(|(a, b)| {
            (
                print::formula(a, Style::Unicode),
                print::formula(b, Style::Unicode),
            )
        })
        .collect();
    println!(
        "closeness bench: {} pairs (fol-english formulas and their perturbations), one thread, median of {repeats}",
        pairs.len()
    );
    println!(
        "  {:<10} {:>7} {:>12} {:>14}",
        "metric", "pairs", "pairs/s", "µs per pair"
    );
    let names = ["BLEU", "ROUGE-L", "METEOR", "LE", "Smatch++", "BERTScore"];
    let score = |name: &str, i: usize| -> Result<f64> {
        let ((a, b), (ta, tb)) = (&pairs[i], &texts[i]);
        Ok(match name {
            "BLEU" => bleu(&tokens(ta), &tokens(tb)),
            "ROUGE-L" => rouge_l(&tokens(ta), &tokens(tb)),
            "METEOR" => meteor(&tokens(ta), &tokens(tb)),
            "LE" => logical_equivalence(a, b),
            "Smatch++" => smatch(a, b).f1,
            _ => match encoder {
                Some(e) => bertscore(&e.embed(ta)?, &e.embed(tb)?).f1,
                None => 0.0,
            },
        })
    };
    for name in names {
        // The encoder is slow: a slice of the pairs is enough for its rate.
        let n = match (name, encoder) {
            ("BERTScore", None) => continue,
            ("BERTScore", Some(_)) => pairs.len().min(200),
            _ => pairs.len(),
        };
        let mut rates = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let started = Instant::now();
            let mut sink = 0.0;
            for i in 0..n {
                sink += score(name, i)?;
            }
            std::hint::black_box(sink);
            rates.push(n as f64 / started.elapsed().as_secs_f64());
        }
        rates.sort_by(f64::total_cmp);
        let rate = rates[rates.len() / 2];
        println!("  {name:<10} {n:>7} {rate:>12.0} {:>14.1}", 1e6 / rate);
    }
    if encoder.is_none() {
        println!("  BERTScore: no encoder configured (--bertscore-model DIR)");
    }
    Ok(())
}
