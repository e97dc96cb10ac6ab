//! A4 as a library call: ask a judge model whether φ0 ≡ φ1 and read its
//! yes or no. `autoeval judge` and the fleet's LLM workers both ask through
//! [`ask`], so a judgement means the same wherever it was made.

mod ask;

pub use ask::{ask, judge_style, Judging};
