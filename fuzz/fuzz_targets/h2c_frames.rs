//! libFuzzer target: `stackbench_load::fuzzing::h2c_frames` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stackbench_load::fuzzing::h2c_frames(data));
