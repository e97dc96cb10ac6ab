//! The closed leaves of an expansion, each with the level it was found at.

/// Closed leaves in one buffer: Algorithm 1 makes millions of short ones,
/// which as vectors of their own would cost more in headers than in symbols.
#[derive(Default)]
pub struct Leaves {
    symbols: Vec<u8>,
    ends: Vec<u32>,
    levels: Vec<u16>,
}

impl Leaves {
    /// Adds a leaf found at generation level `level` (1 for the start
    /// symbol's own closings; the paper's App. I `depth`).
    pub fn push(&mut self, leaf: &[u8], level: usize) {
        self.symbols.extend_from_slice(leaf);
        self.ends.push(self.symbols.len() as u32);
        self.levels.push(u16::try_from(level).unwrap_or(u16::MAX));
    }

    /// Leaf `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.symbols[start..self.ends[i] as usize]
    }

    /// The generation level leaf `i` was found at.
    pub fn level(&self, i: usize) -> u32 {
        u32::from(self.levels[i])
    }

    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The leaves in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|i| self.get(i))
    }
}
