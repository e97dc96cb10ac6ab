//! The generator's random source: ChaCha8 with this crate's own sampling
//! helpers, so a seed gives the same dataset on every machine and build.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A deterministic random stream for one (seed, dataset, batch).
pub struct Rng(ChaCha8Rng);

impl Rng {
    /// The stream for `seed`, a dataset tag and a batch number.
    pub fn new(seed: u64, tag: &str, batch: u64) -> Rng {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..16].copy_from_slice(&batch.to_le_bytes());
        for (i, b) in tag.bytes().take(16).enumerate() {
            key[16 + i] = b;
        }
        Rng(ChaCha8Rng::from_seed(key))
    }

    /// Uniform in `0..n`; `n` must be positive.
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        let n = n as u64;
        // Rejection keeps the draw unbiased.
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.0.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        let x = (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        x < p
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// `k` distinct indices of `0..len` (all of them when `k >= len`), in draw order.
    pub fn sample_indices(&mut self, len: usize, k: usize) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..len).collect();
        let k = k.min(len);
        for i in 0..k {
            let j = i + self.below(len - i);
            idx.swap(i, j);
        }
        idx.truncate(k);
        idx
    }
}
