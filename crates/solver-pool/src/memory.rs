//! Whether a verifier's provers fit the container it runs in: the kernel
//! kills a container past its memory limit.

/// The memory limit of the control group this process runs in (a
/// container's limit), when there is one.
pub fn container_memory_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok()?;
    text.trim().parse().ok()
}

/// Why `jobs` provers of `prover_mb` each cannot fit in `limit` bytes
/// beside the verifier itself (`own_mb`), if they cannot.
pub fn memory_misfit(jobs: usize, prover_mb: u64, own_mb: u64, limit: u64) -> Option<String> {
    let needed = (jobs as u64 * prover_mb + own_mb) << 20;
    (needed > limit).then(|| {
        format!(
            "{jobs} provers of up to {prover_mb} MiB each and the verifier's own {own_mb} MiB need {} MiB, past the container's limit of {} MiB; lower --prover-memory-mb or --jobs, or raise the limit",
            needed >> 20,
            limit >> 20
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provers_that_cannot_fit_the_container_are_named() {
        let gib = 1u64 << 30;
        assert!(memory_misfit(2, 1536, 512, 4 * gib).is_none());
        let why = memory_misfit(2, 4096, 512, 4 * gib).unwrap();
        assert!(
            why.contains("8704 MiB") && why.contains("4096 MiB"),
            "{why}"
        );
    }
}
