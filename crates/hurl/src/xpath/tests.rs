use super::*;

fn eval(text: &str, format: Format, expr: &str) -> Result<Value<'static>, String> {
    Doc::parse(text, format)?.eval(&*compile(expr)?)
}

fn xml(text: &str, expr: &str) -> Value<'static> {
    eval(text, Format::Xml, expr).unwrap()
}

fn html(text: &str, expr: &str) -> Value<'static> {
    eval(text, Format::Html, expr).unwrap()
}

fn s(v: &str) -> Value<'static> {
    Value::Str(v.to_owned().into())
}

const FOOD: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<food><banana type="fruit" price="1.1"/><apple type="fruit"/><beef type="meat"/></food>"#;

#[test]
fn results_are_typed_as_hurl_types_them() {
    assert_eq!(xml(FOOD, "//food/*"), Value::Nodeset(3));
    let count = xml(FOOD, "count(//food/*)");
    assert!(matches!(count, Value::Float(_)) && count == Value::Int(3), "{count:?}");
    assert_eq!(xml(FOOD, "number(//banana/@price)"), Value::Float(1.1));
    assert_eq!(xml(FOOD, "count(//*[@type='fruit']) = 2"), Value::Bool(true));
    assert_eq!(xml(FOOD, "string(//beef/@type)"), s("meat"));
    assert_eq!(xml(FOOD, "//nothing"), Value::Nodeset(0));
    assert_eq!(xml("<data>café</data>", "normalize-space(//data)"), s("café"));
}

#[test]
fn string_of_a_node_set_is_its_first_node_as_in_xpath_1() {
    let page = "<html><body><h1> One </h1><h1>Two</h1></body></html>";
    assert_eq!(html(page, "normalize-space(//h1)"), s("One"));
    assert_eq!(html(page, "string(//h1[2])"), s("Two"));
}

#[test]
fn html_is_read_leniently_with_elements_in_no_namespace() {
    let page = "<!DOCTYPE html><html><head><meta charset=\"UTF-8\"><title>T</title></head>\
                <body><p>one<p>two<br><ul><li>a<li>b</ul></body></html>";
    assert_eq!(html(page, "normalize-space(/html/head/meta/@charset)"), s("UTF-8"));
    assert_eq!(html(page, "string(//title)"), s("T"));
    assert_eq!(html(page, "//p"), Value::Nodeset(2));
    assert_eq!(html(page, "count(//ul/li)"), Value::Float(2.0));
    // Missing html, head and body are implied, as libxml2 implies them.
    assert_eq!(html("<p>x</p>", "string(/html/body/p)"), s("x"));
    assert_eq!(html("<html></html>", "boolean(count(//a[contains(@href,'x')]))"), Value::Bool(false));
}

#[test]
fn white_space_after_the_body_is_not_in_it() {
    let page = "<html><head></head><body>你好世界</body>\n</html>\n\n";
    assert_eq!(html(page, "string(//body)"), s("你好世界"));
    assert_eq!(html("<html><body>x</body></html>  ", "string(//body)"), s("x"));
    assert_eq!(html("<body>x</body> y", "string(//body)"), s("x y"));
    assert_eq!(html("<body>x</body>été", "string(//body)"), s("xété"));
    assert_eq!(before_tail("<BODY>x</BODY >\n</HTML>\n"), "<BODY>x</BODY >");
}

#[test]
fn namespaces_are_registered_with_underscore_for_the_default() {
    let prefixed = r#"<?xml version="1.0"?>
<a:books xmlns:a="foo:" xmlns:b="bar:"><b:book xmlns:c="baz:"><b:title>Dune</b:title>
<c:author>Herbert</c:author></b:book></a:books>"#;
    assert_eq!(xml(prefixed, "string(//a:books/b:book/b:title)"), s("Dune"));
    assert_eq!(xml(prefixed, "string(//a:books/b:book/c:author)"), s("Herbert"));
    assert_eq!(xml(prefixed, "string(//*[name()='b:book']/*[name()='c:author'])"), s("Herbert"));
    assert_eq!(xml(prefixed, "string(//*[local-name()='book']/*[local-name()='title'])"), s("Dune"));

    let svg = r#"<svg xmlns="http://www.w3.org/2000/svg"><g><circle/><circle/><circle/></g></svg>"#;
    assert_eq!(xml(svg, "//_:svg/_:g/_:circle"), Value::Nodeset(3));
    assert_eq!(
        xml(svg, "//*[local-name()='svg']/*[local-name()='g']/*[local-name()='circle']"),
        Value::Nodeset(3)
    );
    // Without the prefix, a name test means no namespace (XPath 1.0), so nothing is found.
    assert_eq!(xml(svg, "//svg"), Value::Nodeset(0));

    let scoped = r"<book xmlns='urn:loc.gov:books' xmlns:isbn='urn:ISBN:0-395-36341-6'>
<title>Cheaper by the Dozen</title><isbn:number>1568491379</isbn:number>
<notes><p xmlns='http://www.w3.org/1999/xhtml'>This is a <i>funny</i> book!</p></notes></book>";
    assert_eq!(xml(scoped, "string(//_:book/_:title)"), s("Cheaper by the Dozen"));
    assert_eq!(xml(scoped, "string(//_:book/isbn:number)"), s("1568491379"));
    assert_eq!(xml(scoped, "//_:book/_:notes/*[local-name()='p']"), Value::Nodeset(1));
    // Only the first default namespace is `_`.
    assert_eq!(xml(scoped, "//_:p"), Value::Nodeset(0));
}

#[test]
fn a_document_type_declaration_is_skipped_unread() {
    let svg = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.0//EN\"\n  \
               \"http://www.w3.org/TR/2001/REC-SVG-20010904/DTD/svg10.dtd\">\n\
               <svg xmlns=\"http://www.w3.org/2000/svg\"><g><circle/><circle/></g></svg>";
    assert_eq!(xml(svg, "count(//_:g/_:circle)"), Value::Float(2.0));
    let subset = "<!DOCTYPE r [<!ELEMENT r (#PCDATA)> <!ATTLIST r a CDATA '>'>]><r>x</r>";
    assert_eq!(xml(subset, "string(/r)"), s("x"));
    assert_eq!(without_doctype("<r/>"), "<r/>");
    assert_eq!(without_doctype("<!DOCTYPE r\n><r/>"), "           \n <r/>");
}

#[test]
fn a_later_declaration_of_a_prefix_replaces_an_earlier_one() {
    let doc = r#"<r xmlns:a="one:"><a:x/><s xmlns:a="two:"><a:y/></s><t/></r>"#;
    assert_eq!(xml(doc, "//a:y"), Value::Nodeset(1));
    assert_eq!(xml(doc, "//a:x"), Value::Nodeset(0));
}

#[test]
fn an_expression_is_compiled_once_per_thread_and_kept_within_bounds() {
    let first = compile("count(//kept/once)").unwrap();
    assert!(Rc::ptr_eq(&first, &compile("count(//kept/once)").unwrap()));
    for i in 0..COMPILED_KEPT * 2 {
        compile(&format!("//kept{i}")).unwrap();
    }
    assert!(STATE.with_borrow(|s| s.compiled.len()) <= COMPILED_KEPT);
    let again = compile("count(//kept/once)").unwrap();
    assert_eq!(xml("<kept><once/><once/></kept>", "count(//kept/once)"), Value::Float(2.0));
    assert!(Rc::ptr_eq(&again, &compile("count(//kept/once)").unwrap()));
}

#[test]
fn a_prefix_is_read_from_each_body_never_from_the_one_before() {
    // One context serves every evaluation on a thread: the same prefix bound to another URI,
    // then absent, must give each body's own answer.
    let one = r#"<r xmlns:p="urn:one"><p:x/><p:x/></r>"#;
    let two = r#"<r xmlns:p="urn:two" xmlns:q="urn:one"><p:x/><q:x/><q:x/><q:x/></r>"#;
    assert_eq!(xml(one, "count(//p:x)"), Value::Float(2.0));
    assert_eq!(xml(two, "count(//p:x)"), Value::Float(1.0));
    assert_eq!(xml(two, "count(//q:x)"), Value::Float(3.0));
    assert_eq!(xml(one, "count(//p:x)"), Value::Float(2.0));
    assert!(eval(one, Format::Xml, "count(//q:x)").unwrap_err().contains("`q` is not declared"));
    assert!(eval("<r/>", Format::Xml, "count(//p:x)").unwrap_err().contains("`p` is not declared"));
}

#[test]
fn bad_expressions_and_bodies_are_errors_that_say_why() {
    assert!(compile("^^^").unwrap_err().contains("invalid xpath expression"));
    assert!(compile("//").is_err());
    assert!(compile("").unwrap_err().contains("empty"));
    assert!(eval("<a/>", Format::Xml, "strong(//a)").unwrap_err().starts_with("xpath:"));
    assert!(eval("<a/>", Format::Xml, "//nope:a").unwrap_err().contains("`nope` is not declared"));
    assert!(eval("<a/>", Format::Html, "count(//x:*)").unwrap_err().contains("`x` is not declared"));
    assert!(eval("??", Format::Xml, "//a").unwrap_err().contains("not valid XML"));
    assert!(eval("<a><b></a>", Format::Xml, "//a").unwrap_err().contains("not valid XML"));
    assert!(eval("  ", Format::Html, "//a").unwrap_err().contains("empty"));
    assert!(Format::of_content_type(Some("text/html; charset=utf-8")) == Format::Html);
    assert!(Format::of_content_type(Some("application/xhtml+xml")) == Format::Html);
    assert!(Format::of_content_type(Some("application/xml")) == Format::Xml);
    assert!(Format::of_content_type(None) == Format::Xml);
}

#[test]
fn entities_are_never_expanded_nor_loaded() {
    let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<lolz>&lol3;</lolz>"#;
    assert!(eval(laughs, Format::Xml, "string(//lolz)").unwrap_err().contains("not valid XML"));
    let external = r#"<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY secret SYSTEM "file:///etc/passwd">]><r>&secret;</r>"#;
    assert!(eval(external, Format::Xml, "string(//r)").unwrap_err().contains("not valid XML"));
    let remote = r#"<?xml version="1.0"?><!DOCTYPE r SYSTEM "http://198.18.0.1/r.dtd"><r>x</r>"#;
    assert_eq!(xml(remote, "string(//r)"), s("x"));
    // HTML reads entity references as text, never as a declaration.
    let page = "<!DOCTYPE html [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><p>&e;&amp;</p>";
    assert_eq!(html(page, "string(//p)"), s("&e;&"));
}

#[test]
fn deep_nesting_is_refused_before_it_is_parsed() {
    let deep = |n: usize| "<a>".repeat(n) + &"</a>".repeat(n);
    assert_eq!(xml(&deep(MAX_XML_DEPTH), "count(//a)"), Value::Float(MAX_XML_DEPTH as f64));
    assert!(eval(&deep(MAX_XML_DEPTH + 1), Format::Xml, "//a").unwrap_err().contains("deep"));
    let divs = |n: usize| "<div>".repeat(n);
    assert_eq!(html(&divs(MAX_HTML_DEPTH), "count(//div)"), Value::Float(MAX_HTML_DEPTH as f64));
    assert!(eval(&divs(MAX_HTML_DEPTH + 1), Format::Html, "//div").unwrap_err().contains("deep"));
    assert!(eval(&divs(100_000), Format::Html, "//div").unwrap_err().contains("deep"));
    // Paragraphs and list items left open close each other: they do not count as depth.
    assert_eq!(html(&"<p>x".repeat(10_000), "count(//p)"), Value::Float(10_000.0));
}

#[test]
fn deep_documents_within_bounds_evaluate_on_a_small_stack() {
    let page = "<div>".repeat(MAX_HTML_DEPTH) + "x";
    let run = move || html(&page, "string(//div[last()])") == s("x");
    let done = std::thread::Builder::new().stack_size(256 << 10).spawn(run).unwrap();
    assert!(done.join().unwrap());
}

#[test]
fn huge_bodies_are_refused_by_size_and_by_nodes() {
    let big = "x".repeat(MAX_BYTES + 1);
    assert!(eval(&big, Format::Html, "//a").unwrap_err().contains("MiB"));
    let tags = "<a/>".repeat(MAX_NODES / 2);
    let doc = format!("<r>{tags}</r>");
    assert!(eval(&doc, Format::Xml, "//a").unwrap_err().contains("elements, attributes and texts"));
    let attrs = " a=''".repeat(MAX_NODES);
    let doc = format!("<r{attrs}/>");
    assert!(eval(&doc, Format::Xml, "//r").unwrap_err().contains("elements, attributes and texts"));
    let within = format!("<r>{}</r>", "<a/>".repeat(MAX_NODES / 2 - 1));
    assert_eq!(xml(&within, "count(//a)"), Value::Float((MAX_NODES / 2 - 1) as f64));
}

#[test]
fn prefixes_are_found_outside_literals_and_axes() {
    assert_eq!(prefixes("//a:b/child::c:*[@x:y = 'p:q'][. = \"r:s\"]/$v:w"), ["a", "c", "x", "v"]);
    assert_eq!(prefixes("count(//_:svg/descendant-or-self::node()) div 2"), ["_"]);
    assert!(prefixes("//a[1.5 < 2]/text()").is_empty());
}

#[test]
fn the_scan_counts_tags_and_depth_skipping_comments() {
    assert_eq!(scan(b"<a><b/><!-- <c><c><c> --><d></d></a>", Format::Xml), (6, 2));
    assert_eq!(scan(b"<html><body><div><br><img src=x><p>t</div>", Format::Html), (13, 1));
    assert_eq!(scan(b"</x></x><a>", Format::Xml), (2, 1));
    assert_eq!(scan(b"a < b and c > d", Format::Html), (0, 0));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// What the fuzz target runs never panics past the engine's own catches, on a small
    /// document and an expression with bytes changed, cut or inserted.
    #[test]
    fn fuzz_xpath_never_panics(
        edits in proptest::collection::vec((0..FUZZ_SEED.len(), proptest::prelude::any::<u8>(), 0..3u8), 0..6)
    ) {
        fuzz_xpath(&crate::edited(FUZZ_SEED, &edits));
    }
}

/// An expression and a document the fuzz test's edits start from.
const FUZZ_SEED: &str = "count(//_:b[@id > 1]/text()) + string-length(//c)\n\
    <a xmlns=\"urn:x\" xmlns:p=\"urn:p\"><b id=\"2\">t</b><p:c>u<!-- v --></p:c><![CDATA[w]]></a>";
