//! libFuzzer target: `stackbench_hurl::fuzz_parse` (the Hurl file parser and
//! the variable check) on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stackbench_hurl::fuzz_parse(data));
