//! A file's session against a real server (the conformance suite's, `serve`): the cookie
//! jar kept from one entry to the next and sent as Hurl sends it, `[Cookies]` beside it, and
//! redirects followed when an entry asks (`location`, `max-redirs`), never to a server the
//! file does not name.

use stackbench_hurl::{Kind, Routes, Scenario, StepOutcome, Vars, Wire, run_flow_in};

use crate::conformance::{failed, send, serve};

/// Runs `text` (a Hurl file whose URLs begin with `{{base_url}}`) as one session against a
/// fresh server, its requests routed as `verify` routes them.
fn session(text: &str) -> Vec<StepOutcome> {
    let base = serve();
    let toml = format!("[[flow]]\nhurl = '''\n{text}'''\n");
    let s = Scenario::parse_embedded("w.toml", &toml, &[], &[]).unwrap_or_else(|e| panic!("{e}"));
    let routes = Routes::at(&s, &base).unwrap();
    let mut vars = Vars::new(7);
    vars.set("base_url", &base, Kind::String);
    let mut wire = Wire { routes: Some(&routes), ..Wire::default() };
    run_flow_in(&s.flows[0].hurl, &[], &mut vars, &mut wire, &mut send)
}

fn passes(text: &str) {
    let steps = session(text);
    assert_eq!(failed(&steps), Vec::<u32>::new(), "{text}\n{steps:#?}");
}

#[test]
fn a_cookie_an_answer_sets_is_sent_on_the_entries_after() {
    passes(
        "POST {{base_url}}/login\nHTTP 200\n[Asserts]\ncookie \"sid\" == \"s1\"\ncookie \"sid[HttpOnly]\" exists\n\nGET {{base_url}}/echo\nHTTP 200\n[Asserts]\njsonpath \"$.headers.cookie\" == \"sid=s1\"\n",
    );
    // The jar's cookies come first in the one Cookie header, then the section's.
    passes(
        "POST {{base_url}}/login\nHTTP 200\n\nGET {{base_url}}/echo\n[Cookies]\nlang: fr\nHTTP 200\n[Asserts]\njsonpath \"$.headers.cookie\" == \"sid=s1; lang=fr\"\n",
    );
    // Before the answer that sets it, there is none.
    passes("GET {{base_url}}/echo\nHTTP 200\n[Asserts]\njsonpath \"$.headers.cookie\" not exists\n");
}

#[test]
fn a_redirect_is_followed_only_when_the_entry_asks() {
    passes(
        "GET {{base_url}}/redirect\nHTTP 302\n[Asserts]\nheader \"Location\" == \"/echo?from=redirect\"\nredirects count == 0\n",
    );
    passes(
        "GET {{base_url}}/redirect\n[Options]\nlocation: true\nHTTP 200\n[Asserts]\njsonpath \"$.query\" == \"from=redirect\"\nurl endsWith \"/echo?from=redirect\"\nredirects count == 1\n",
    );
    // A POST answered 302 is followed as a GET without its body, as curl does.
    passes(
        "POST {{base_url}}/redirect\n[Options]\nlocation: true\n{\"a\": 1}\nHTTP 200\n[Asserts]\njsonpath \"$.method\" == \"GET\"\njsonpath \"$.length\" == 0\n",
    );
}

#[test]
fn too_many_hops_and_a_location_elsewhere_fail_the_entry_with_why() {
    let steps = session("GET {{base_url}}/loop\n[Options]\nlocation: true\nmax-redirs: 3\nHTTP 200\n");
    let why = steps[0].error.as_deref().unwrap_or_default();
    assert!(why.contains("too many redirects: 3 followed"), "{steps:#?}");
    let steps = session("GET {{base_url}}/away\n[Options]\nlocation: true\nHTTP 200\n");
    let why = steps[0].error.as_deref().unwrap_or_default();
    assert!(
        why.contains("http://192.0.2.1/steal") && why.contains("leaves the file's origins"),
        "{steps:#?}"
    );
}
