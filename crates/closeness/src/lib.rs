//! Graded closeness of a candidate first-order formula to its ground truth,
//! after paper 003: where ∀uto∃val's verdict is only equivalent or not,
//! these scores tell a near miss from a wild one, and the perturbations of
//! [`perturb`] measure how sensitive each score is to a kind of error.
//!
//! Every metric is a pure function of two formulas (or their token
//! sequences) returning a score in [0, 1], 1 for identical formulas.

pub mod alignment;
pub mod bertscore;
pub mod bleu;
pub mod le;
pub mod meteor;
pub mod perturb;
pub mod rouge;
pub mod scores;
pub mod sensitivity;
pub mod smatch;
pub mod tokens;

pub use bertscore::{bertscore, BertScore, EmbedError, TokenEmbedder, TokenEmbeddings};
pub use bleu::bleu;
pub use le::logical_equivalence;
pub use meteor::meteor;
pub use rouge::rouge_l;
pub use scores::{closeness, closeness_against, closeness_with, Closeness};
pub use sensitivity::{sensitivity, Sensitivity};
pub use smatch::{smatch, Smatch};
pub use tokens::tokens;
