//! A size in bytes with its unit, as a person writes it: a plan's `memory = "512MiB"`,
//! `--max-file-size 128MiB`. One parser for every size the tool reads.

use std::str::FromStr;

use serde::{Deserialize, Deserializer};

/// A size in bytes, written `"512MiB"`, `"1GiB"`, `"100MB"` or as an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let mult: u64 = match unit.trim() {
            "" | "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            "KB" | "kB" => 1000,
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            _ => 0,
        };
        match num.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)).filter(|&n| n > 0) {
            Some(n) => Ok(ByteSize(n)),
            None => Err(format!(
                "invalid size {s:?}; write a positive integer with a unit B, KiB, MiB, GiB, KB, MB or GB, like \"512MiB\""
            )),
        }
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(0) => Err(serde::de::Error::custom(
                "a size of 0 bytes holds nothing; write a positive size, like \"512MiB\"",
            )),
            Raw::Int(n) => Ok(ByteSize(n)),
            Raw::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}
