//! The prompts against their golden texts and the reference's, one test binary.

mod prompts;
mod reference;
