//! libFuzzer target: `stackbench_hurl::fuzz_expr` (the parser and
//! evaluator of a scenario file's `expr` variables) on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stackbench_hurl::fuzz_expr(data));
