//! libFuzzer target: `stackbench_hurl::fuzz_eval` (hostile answers judged by a scenario's
//! compiled checks and its general evaluator, which must agree, then the captured values
//! written into a request) on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stackbench_hurl::fuzz_eval(data));
