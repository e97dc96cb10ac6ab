//! How the settings read from the command line, where clap needs a parser.

use autoeval_generate::DatasetKind;
use autoeval_prompts::{PromptSet, Shots};
use autoeval_proto::CopyPolicy;
use clap::builder::{PossibleValuesParser, TypedValueParser};

/// A dataset kind by its name.
pub(crate) fn dataset(s: &str) -> Result<DatasetKind, String> {
    s.parse()
}

/// A prompt set by its name.
pub(crate) fn prompt_set(s: &str) -> Result<PromptSet, String> {
    s.parse::<PromptSet>()
}

/// How items are drawn: `algorithm-1` or `prefer-new-trees`.
pub(crate) fn sampling() -> impl TypedValueParser<Value = autoeval_generate::Sampling> {
    PossibleValuesParser::new(["algorithm-1", "prefer-new-trees"])
        .try_map(|s| s.parse::<autoeval_generate::Sampling>())
}

/// A prompt style, one of those `--help` lists.
pub(crate) fn shots() -> impl TypedValueParser<Value = Shots> {
    PossibleValuesParser::new(Shots::ALL.map(Shots::name)).try_map(|s| s.parse::<Shots>())
}

/// What a copied formula counts as: `flag` or `fail`.
pub(crate) fn copy_policy() -> impl TypedValueParser<Value = CopyPolicy> {
    PossibleValuesParser::new(["flag", "fail"]).map(|s| match s.as_str() {
        "fail" => CopyPolicy::Fail,
        _ => CopyPolicy::Flag,
    })
}
