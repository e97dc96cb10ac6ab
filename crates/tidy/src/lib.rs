//! The tidy checks: the invariants docs/ARCHITECTURE.md states, kept by
//! this package's tests (`tests/tidy/`), which read the workspace's
//! resolved graph and its sources as Rust. The library itself is empty; the
//! package links nothing of the product, so the checks build in seconds.
