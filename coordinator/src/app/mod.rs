//! What the commands share, so that no command imports another: the
//! one-machine run and its end, the report, provers, item generation and
//! the Parquet file.

pub mod a1;
pub mod decided;
pub mod fleet;
pub mod items;
pub mod one_machine;
pub mod output;
pub mod parquet;
pub mod provers;
pub mod report;
pub mod run;

/// Whether the command line behind `matches` (or its variables) gave the
/// flag `id`: a flag left to its default yields to what a run's directory
/// keeps.
pub fn given_on_line(matches: Option<&clap::ArgMatches>, id: &str) -> bool {
    matches.is_some_and(|m| autoeval_run_settings::options::file_as_flags::given(m, id))
}
