//! The `xpath` query and filter as Hurl evaluates them: XPath 1.0 on the body read as HTML
//! when its `Content-Type` says so, else as XML; the namespaces the body declares, the
//! first default one as `_`; node sets counted, strings, numbers and booleans as themselves.

use super::*;

/// The pages of the test server under `/xpath/`.
pub(super) fn page(path: &str) -> Answered {
    let (content_type, body) = match path {
        "/xpath/html" => (
            "text/html; charset=utf-8",
            "<!DOCTYPE html>\n<html><head><meta charset=\"UTF-8\"><title>Shop</title></head>\n\
             <body><h1>  Hello\n world </h1><ul><li>a<li>b<li>c</ul><br>\n\
             <form action=\"/login\"><input type=\"hidden\" name=\"csrf\" value=\"t0k3n\"></form>\n\
             <table><tr><td>1</td></tr></table></body></html>",
        ),
        "/xpath/xml" => (
            "application/xml",
            "<?xml version=\"1.0\"?>\n<book xmlns='urn:loc.gov:books' xmlns:isbn='urn:ISBN:0-395-36341-6'>\n\
             <title>Cheaper by the Dozen</title><isbn:number>1568491379</isbn:number>\n\
             <price>12.5</price><notes><p xmlns='http://www.w3.org/1999/xhtml'>A <i>funny</i> book</p></notes></book>",
        ),
        "/xpath/svg" => (
            "image/svg+xml",
            "<svg xmlns=\"http://www.w3.org/2000/svg\"><g><circle r=\"1\"/><circle/><circle/></g></svg>",
        ),
        "/xpath/data" => ("text/plain", "<data>café</data>"),
        "/xpath/broken" => ("application/xml", "<a><b></a>"),
        _ => return (404, Vec::new(), Vec::new()),
    };
    (200, vec![("Content-Type", content_type.into())], body.as_bytes().to_vec())
}

#[test]
fn html_pages_are_read_leniently() {
    passes(
        "GET {{base_url}}/xpath/html\nHTTP 200\n[Asserts]\n\
         xpath \"string(//title)\" == \"Shop\"\n\
         xpath \"normalize-space(//h1)\" == \"Hello world\"\n\
         xpath \"//li\" count == 3\nxpath \"count(//li)\" == 3\nxpath \"count(//li)\" isFloat\n\
         xpath \"//ul/li[2]\" exists\nxpath \"//h2\" not exists\nxpath \"boolean(//form)\" == true\n\
         xpath \"string(//form/@action)\" startsWith \"/log\"\nxpath \"//td\" count == 1\n",
    );
}

#[test]
fn a_capture_from_a_page_feeds_the_next_request() {
    passes(
        "GET {{base_url}}/xpath/html\nHTTP 200\n[Captures]\ntoken: xpath \"string(//input[@name='csrf']/@value)\"\n\
         POST {{base_url}}/echo\n[Form]\ncsrf: {{token}}\nHTTP 200\n[Asserts]\njsonpath \"$.body\" == \"csrf=t0k3n\"\n",
    );
}

#[test]
fn a_captured_node_set_is_a_node_set() {
    passes(
        "GET {{base_url}}/xpath/html\nHTTP 200\n[Captures]\nitems: xpath \"//li\"\n[Asserts]\n\
         variable \"items\" count == 3\nvariable \"items\" exists\n",
    );
}

#[test]
fn xml_namespaces_and_the_default_one_as_underscore() {
    passes(
        "GET {{base_url}}/xpath/xml\nHTTP 200\n[Asserts]\n\
         xpath \"string(//_:book/_:title)\" == \"Cheaper by the Dozen\"\n\
         xpath \"string(//_:book/isbn:number)\" == \"1568491379\"\n\
         xpath \"number(//_:price)\" == 12.5\n\
         xpath \"//*[local-name()='book']/*[local-name()='notes']\" count == 1\n\
         xpath \"//_:book/_:notes/*[local-name()='p']\" count == 1\n\
         xpath \"//book\" count == 0\n",
    );
    passes("GET {{base_url}}/xpath/svg\nHTTP 200\n[Asserts]\nxpath \"//_:svg/_:g/_:circle\" count == 3\n");
}

#[test]
fn the_filter_reads_a_string_and_templates_are_rendered() {
    let text = "GET {{base_url}}/xpath/data\nHTTP 200\n[Asserts]\n\
                body xpath \"normalize-space(//data)\" == \"café\"\n\
                xpath \"normalize-space(//data)\" == \"café\"\n\
                GET {{base_url}}/xpath/html\nHTTP 200\n[Asserts]\nxpath \"string(//li[{{n}}])\" == \"b\"\n";
    let steps = run_with(text, &[("n", "2")]);
    assert_eq!(failed(&steps), Vec::<u32>::new(), "{steps:#?}");
}

#[test]
fn what_fails_fails_at_its_line() {
    fails_at(
        "GET {{base_url}}/xpath/html\nHTTP 200\n[Asserts]\n\
         xpath \"//li\" count == 4\nxpath \"string(//title)\" == \"Shop\"\nxpath \"//x:li\" exists\n",
        &[4, 6],
    );
    // A body that is not XML: each xpath check on it fails, the others still run.
    fails_at(
        "GET {{base_url}}/xpath/broken\nHTTP 200\n[Asserts]\nxpath \"//a\" exists\nbody contains \"<a>\"\n",
        &[4],
    );
    fails_at("GET {{base_url}}/store\nHTTP 200\n[Asserts]\nxpath \"//a\" not exists\n", &[4]);
}

#[test]
fn a_literal_expression_that_does_not_compile_is_refused_at_its_position() {
    let f =
        stackbench_hurl::load("x.hurl", "GET http://h\nHTTP 200\n[Asserts]\nxpath \"//[\" exists\n", |_| {
            true
        })
        .unwrap();
    let e = stackbench_hurl::invalid_jsonpath(&f).unwrap_err();
    assert_eq!(e.to_string().split(": ").next(), Some("x.hurl:4:1"), "{e}");
    assert!(e.to_string().contains("invalid xpath expression"), "{e}");
}
