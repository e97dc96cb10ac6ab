//! The iteration order of a CPython 3.10 `set` of strings under
//! `PYTHONHASHSEED=0`: the public implementation lists a formula's objects
//! in the order its `set` holds them, so reproducing its prompts byte for
//! byte needs the same table. Strings hash by SipHash-2-4 with a zero key
//! (CPython up to 3.10; 3.11 changed it to SipHash-1-3); the table is open
//! addressing with 9 linear probes, a perturbed step, and CPython's growth,
//! merge and difference rules, which decide where each entry lands.

use std::hash::Hasher;

const MIN_SIZE: usize = 8;
const LINEAR_PROBES: usize = 9;
const PERTURB_SHIFT: u32 = 5;

/// The slot probed after `i` once the linear probes missed, and the
/// perturbation after it (CPython's `perturb >>= PERTURB_SHIFT; i = (i * 5 +
/// 1 + perturb) & mask`).
fn next_probe(i: usize, perturb: u64, mask: usize) -> (usize, u64) {
    let perturb = perturb >> PERTURB_SHIFT;
    let i = i
        .wrapping_mul(5)
        .wrapping_add(1)
        .wrapping_add(perturb as usize)
        & mask;
    (i, perturb)
}

/// `hash(s)` of CPython 3.10 with `PYTHONHASHSEED=0`, as an unsigned word.
pub fn str_hash(s: &str) -> u64 {
    if s.is_empty() {
        return 0;
    }
    // ASCII names: one byte a character, as CPython hashes latin-1 strings.
    let mut h = siphasher::sip::SipHasher24::new_with_keys(0, 0);
    h.write(s.as_bytes());
    match h.finish() {
        // -1 is reserved for errors: CPython uses -2.
        u64::MAX => u64::MAX - 1,
        x => x,
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Slot {
    Empty,
    /// A deleted entry's place.
    Dummy,
    Full(String, u64),
}

/// A CPython `set` of strings, kept exactly as CPython keeps its table.
#[derive(Clone, Debug)]
pub struct PySet {
    table: Vec<Slot>,
    /// Slots in use, dummies included.
    fill: usize,
    /// Entries.
    used: usize,
}

impl Default for PySet {
    fn default() -> PySet {
        PySet {
            table: vec![Slot::Empty; MIN_SIZE],
            fill: 0,
            used: 0,
        }
    }
}

impl PySet {
    /// `{a, b, …}`.
    pub fn of<'a>(keys: impl IntoIterator<Item = &'a str>) -> PySet {
        let mut s = PySet::default();
        for k in keys {
            s.add(k);
        }
        s
    }

    fn mask(&self) -> usize {
        self.table.len() - 1
    }

    /// The entries in table order, as iterating the set gives them.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.table.iter().filter_map(|s| match s {
            Slot::Full(k, _) => Some(k.as_str()),
            _ => None,
        })
    }

    fn entries(&self) -> impl Iterator<Item = (&str, u64)> {
        self.table.iter().filter_map(|s| match s {
            Slot::Full(k, h) => Some((k.as_str(), *h)),
            _ => None,
        })
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.used
    }

    /// `key in self`.
    pub fn contains(&self, key: &str) -> bool {
        self.iter().any(|k| k == key)
    }

    /// `set_insert_clean`: an entry into a table without dummies.
    fn insert_clean(table: &mut [Slot], key: &str, hash: u64) {
        let mask = table.len() - 1;
        let mut perturb = hash;
        let mut i = (hash as usize) & mask;
        loop {
            if table[i] == Slot::Empty {
                table[i] = Slot::Full(key.to_string(), hash);
                return;
            }
            if i + LINEAR_PROBES <= mask {
                for j in 1..=LINEAR_PROBES {
                    if table[i + j] == Slot::Empty {
                        table[i + j] = Slot::Full(key.to_string(), hash);
                        return;
                    }
                }
            }
            (i, perturb) = next_probe(i, perturb, mask);
        }
    }

    /// `set_table_resize`: a table of more than `min_used` slots, the
    /// entries put back in their old table order.
    fn resize(&mut self, min_used: usize) {
        let mut size = MIN_SIZE;
        while size <= min_used {
            size <<= 1;
        }
        let old = std::mem::replace(&mut self.table, vec![Slot::Empty; size]);
        self.fill = self.used;
        for slot in old {
            if let Slot::Full(k, h) = slot {
                PySet::insert_clean(&mut self.table, &k, h);
            }
        }
    }

    fn found_unused(&mut self, i: usize, key: &str, hash: u64) {
        self.table[i] = Slot::Full(key.to_string(), hash);
        self.fill += 1;
        self.used += 1;
        if self.fill * 5 >= self.mask() * 3 {
            self.resize(self.used * 4);
        }
    }

    fn found_dummy(&mut self, i: usize, key: &str, hash: u64) {
        self.table[i] = Slot::Full(key.to_string(), hash);
        self.used += 1;
    }

    /// `set.add(key)` (`set_add_entry`).
    pub fn add(&mut self, key: &str) {
        let hash = str_hash(key);
        let mask = self.mask();
        let mut i = (hash as usize) & mask;
        if self.table[i] == Slot::Empty {
            return self.found_unused(i, key, hash);
        }
        let same = |slot: &Slot| matches!(slot, Slot::Full(k, h) if *h == hash && k == key);
        let mut free: Option<usize> = None;
        let mut perturb = hash;
        loop {
            match &self.table[i] {
                Slot::Dummy => free = Some(i),
                slot if same(slot) => return,
                _ => {}
            }
            if i + LINEAR_PROBES <= mask {
                for j in 1..=LINEAR_PROBES {
                    match &self.table[i + j] {
                        Slot::Empty => {
                            return match free {
                                None => self.found_unused(i + j, key, hash),
                                Some(f) => self.found_dummy(f, key, hash),
                            };
                        }
                        Slot::Dummy => free = Some(i + j),
                        slot if same(slot) => return,
                        _ => {}
                    }
                }
            }
            (i, perturb) = next_probe(i, perturb, mask);
            if self.table[i] == Slot::Empty {
                return match free {
                    None => self.found_unused(i, key, hash),
                    Some(f) => self.found_dummy(f, key, hash),
                };
            }
        }
    }

    /// `set.discard(key)`: its slot becomes a dummy.
    pub fn discard(&mut self, key: &str) {
        if let Some(slot) = self
            .table
            .iter_mut()
            .find(|s| matches!(s, Slot::Full(k, _) if k == key))
        {
            *slot = Slot::Dummy;
            self.used -= 1;
        }
    }

    /// `set_merge`: every entry of `other` added, as `|=` and copies do.
    pub fn merge(&mut self, other: &PySet) {
        if other.used == 0 {
            return;
        }
        if (self.fill + other.used) * 5 >= self.mask() * 3 {
            self.resize((self.used + other.used) * 2);
        }
        if self.fill == 0 && self.mask() == other.mask() && other.fill == other.used {
            self.table = other.table.clone();
            self.fill = other.fill;
            self.used = other.used;
            return;
        }
        if self.fill == 0 {
            self.fill = other.used;
            self.used = other.used;
            for (k, h) in other.entries() {
                PySet::insert_clean(&mut self.table, k, h);
            }
            return;
        }
        for k in other.iter() {
            self.add(k);
        }
    }

    /// `set(self)`.
    pub fn copy(&self) -> PySet {
        let mut out = PySet::default();
        out.merge(self);
        out
    }

    /// `self | other`.
    pub fn union(&self, other: &PySet) -> PySet {
        let mut out = self.copy();
        out.merge(other);
        out
    }

    /// `self - other` (`set_difference`).
    pub fn difference(&self, other: &PySet) -> PySet {
        if (self.len() >> 2) > other.len() {
            let mut out = self.copy();
            for k in other.iter() {
                out.discard(k);
            }
            return out;
        }
        let mut out = PySet::default();
        for k in self.iter().filter(|k| !other.contains(k)) {
            out.add(k);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_hash_as_cpython_310_does_with_a_zero_seed() {
        // hash('p1') and hash('dillan') under CPython 3.10, PYTHONHASHSEED=0.
        assert_eq!(str_hash("p1"), 0xb11d_e78b_0ed2_41ed);
        assert_eq!(str_hash("dillan"), 0x5a21_77d5_42ef_28a2);
        assert_eq!(str_hash(""), 0);
    }

    #[test]
    fn a_set_iterates_in_its_table_order() {
        // Added one by one, CPython 3.10 iterates them in this order.
        let s = PySet::of(["p11", "p3", "p7", "p8", "p10", "p4", "p9"]);
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            ["p10", "p4", "p7", "p8", "p3", "p11", "p9"]
        );
        let less = s.difference(&PySet::of(["p4"]));
        assert_eq!(less.len(), 6);
        assert!(!less.contains("p4") && less.contains("p9"));
    }
}
