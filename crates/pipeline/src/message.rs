//! The messages that flow between stages; the translate stage's crate defines them.

pub use autoeval_translate::{shots_name, task_item, TranslateTask, VerifyTask};
