//! libFuzzer target: `stackbench_hurl::fuzz_xpath` (an XPath expression compiled, and
//! a hostile body bounded, parsed as XML and as HTML and queried) on arbitrary bytes. The
//! engine crates' panics, which `xpath` catches and reports as the body's error, are let
//! through to their catch (`fuzz_panic_hook`); any other panic aborts, as libFuzzer wants.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: stackbench_hurl::fuzz_panic_hook(),
    |data: &[u8]| stackbench_hurl::fuzz_xpath(data)
);
