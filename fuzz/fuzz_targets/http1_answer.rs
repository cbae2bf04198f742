//! libFuzzer target: `stackbench_load::fuzzing::http1_answer` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stackbench_load::fuzzing::http1_answer(data));
