//! libFuzzer target: `stackbench_hurl::fuzz_scenario` (the TOML scenario file's
//! parser, its variables drawn and its requests rendered) on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stackbench_hurl::fuzz_scenario(data));
