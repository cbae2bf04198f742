//! Seeds for the bootstrap's draws. The generator is the workspace's one
//! SplitMix64 (`stackbench_contract::rng`); each contestant draws from a
//! stream of its own, seeded from its names, whatever order the contestants
//! are analysed in.

pub use stackbench_contract::rng::SplitMix64;

/// A seed derived from names (FNV-1a over the parts, separated), so that each
/// contestant's bootstrap draws from its own stream whatever order the
/// contestants are analysed in.
pub fn seed_from(base: u64, parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ base;
    for part in parts {
        for b in part.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_differ_by_part_boundaries() {
        assert_ne!(seed_from(0, &["ab", "c"]), seed_from(0, &["a", "bc"]));
        assert_ne!(seed_from(0, &["a"]), seed_from(1, &["a"]));
        assert_eq!(seed_from(3, &["x", "y"]), seed_from(3, &["x", "y"]));
    }
}
