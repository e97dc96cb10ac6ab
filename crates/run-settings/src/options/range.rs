//! A number's range, checked by the flag's parser: the same check for a
//! flag, a config file's key and a per-model key, declared with the
//! per-model keys.

pub use autoeval_models::within;
