use std::fmt::Write as _;

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

/// A small generator of documents and expressions for the fast path's test against sxd.
struct Gen(u64, bool);

impl Gen {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() >> 33) as usize % n
    }

    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[self.below(from.len())]
    }

    fn element(&mut self, depth: usize, out: &mut String) {
        let name = self.pick(&["a", "b", "c", "p:a", "p:b", "q:c", "a", "b"]);
        out.push('<');
        out.push_str(name);
        if self.below(6) == 0 && (self.1 || !name.contains(':')) {
            out.push_str(self.pick(&[" xmlns:p='urn:p2'", " xmlns='urn:e'", " xmlns:q='urn:q'"]));
        } else if self.1 && self.below(8) == 0 {
            out.push_str(" xmlns=''");
        }
        for attr in ["id", "n", "p:id"] {
            if self.below(3) == 0 {
                let v = self.pick(&["1", "2", "x", " 3 ", "1.5", "", "a b", "-0", "1e2", "NaN"]);
                let v =
                    if self.1 && self.below(4) == 0 { self.pick(&["a\r\nb", "\t4\n", "a\nb"]) } else { v };
                let _ = write!(out, " {attr}='{v}'");
            }
        }
        out.push('>');
        let children = if depth == 0 { 0 } else { self.below(5) };
        for _ in 0..children {
            match self.below(8) {
                0..=3 => self.element(depth - 1, out),
                4 | 5 if self.1 && self.below(4) == 0 => out.push_str("\r\n5\r"),
                4 | 5 => {
                    out.push_str(self.pick(&["1", "x", " y ", "2.5", "  ", "\n z\t", "inf", "-1", "a b  c"]));
                }
                6 if self.1 => {
                    out.push_str(self.pick(&["<!-- k -->", "&amp;", "<![CDATA[1]]>", "<?pi d?>", "&#65;"]));
                }
                6 => out.push_str(self.pick(&["<!-- k -->", "<?pi d?>"])),
                _ => out.push(' '),
            }
        }
        out.push_str("</");
        out.push_str(name);
        out.push('>');
    }

    fn document(&mut self) -> String {
        let mut out = String::from(self.pick(&["", "<?xml version='1.0'?>\n", "<!-- top -->"]));
        self.1 = self.below(3) == 0;
        let root = if self.1 { self.pick(&["r", "p:r"]) } else { "r" };
        let ns = self
            .pick(&[" xmlns:p='urn:p' xmlns:q='urn:q'", " xmlns='urn:d' xmlns:p='urn:p' xmlns:q='urn:q'"]);
        let _ = write!(out, "<{root}{ns}>");
        for _ in 0..=self.below(4) {
            self.element(3, &mut out);
        }
        let _ = write!(out, "</{root}>");
        out
    }

    fn test(&mut self) -> String {
        self.pick(&[
            "a",
            "b",
            "c",
            "p:a",
            "p:b",
            "q:c",
            "_:a",
            "*",
            "p:*",
            "node()",
            "text()",
            "comment()",
            "r",
            "p:r",
        ])
        .to_owned()
    }

    fn step(&mut self, depth: usize) -> String {
        let mut s = match self.below(12) {
            0 => format!("@{}", self.pick(&["id", "n", "p:id", "*", "p:*", "node()"])),
            1 => ".".to_owned(),
            2 => "..".to_owned(),
            3 => format!(
                "{}::{}",
                self.pick(&["child", "descendant", "descendant-or-self", "self", "parent"]),
                self.test()
            ),
            4 if self.below(3) == 0 => format!("following-sibling::{}", self.test()),
            _ => self.test(),
        };
        if depth > 0 && self.below(3) == 0 {
            let pred = match self.below(6) {
                0 => self.pick(&["1", "2", "last()", "1.5", "0", "position() > 1"]).to_owned(),
                _ => self.expr(depth - 1),
            };
            let _ = write!(s, "[{pred}]");
        }
        s
    }

    fn path(&mut self, depth: usize) -> String {
        let mut s = self.pick(&["/", "//", "", "//", ""]).to_owned();
        for i in 0..=self.below(3) {
            if i > 0 {
                s.push_str(self.pick(&["/", "//"]));
            }
            s.push_str(&self.step(depth));
        }
        s
    }

    fn expr(&mut self, depth: usize) -> String {
        if depth == 0 {
            return match self.below(4) {
                0 => self.pick(&["1", "'x'", "'1'", "2.5", "' y '", "true()", "'a b'"]).to_owned(),
                _ => self.path(0),
            };
        }
        let d = depth - 1;
        match self.below(14) {
            0 => format!("count({})", self.path(d)),
            1 => format!(
                "{}({})",
                self.pick(&["string", "normalize-space", "boolean", "number", "not", "string-length"]),
                self.expr(d)
            ),
            2 => format!(
                "{}({})",
                self.pick(&["sum", "local-name", "sum", "local-name", "name"]),
                self.path(d)
            ),
            3 => {
                format!("{} {} {}", self.expr(d), self.pick(&["=", "!=", "<", "<=", ">", ">="]), self.expr(d))
            }
            4 => format!(
                "{} {} {}",
                self.expr(d),
                self.pick(&["+", "-", "*", "div", "mod", "and", "or"]),
                self.expr(d)
            ),
            5 => format!("{} | {}", self.path(d), self.path(d)),
            6 => format!(
                "{}({}, {})",
                self.pick(&["concat", "contains", "starts-with", "substring-before", "substring-after"]),
                self.expr(d),
                self.expr(d)
            ),
            7 => format!("-{}", self.expr(d)),
            8 => format!("({})", self.expr(d)),
            9 => format!("{}({})", self.pick(&["floor", "ceiling", "round"]), self.expr(d)),
            10 => self
                .pick(&["position()", "last()", "string()", "normalize-space()", "local-name()", "number()"])
                .to_owned(),
            _ => self.path(d),
        }
    }
}

/// `expr` on `text` read by sxd alone, as before the fast path.
fn sxd_only(text: &str, expr: &XPathExpr) -> Result<Value<'static>, String> {
    let package = parse_xml(&without_doctype(text))?;
    let namespaces = namespaces(&package);
    Doc { tree: Tree::Sxd(package), namespaces }.eval(expr)
}

/// The answer of the fast path itself, not falling back: `None` where it gives the
/// expression to sxd.
fn fast_only(doc: &Doc, expr: &XPathExpr) -> Option<Value<'static>> {
    let Tree::Fast { xml, split_text, .. } = &doc.tree else { return None };
    let e = expr.fast.as_ref()?;
    if *split_text && expr.sees_text {
        return None;
    }
    let uris: Vec<&str> = expr
        .prefixes
        .iter()
        .map(|p| doc.namespaces.iter().find(|(n, _)| n == p).map(|(_, u)| u.as_str()))
        .collect::<Option<_>>()?;
    xml.with_dependent(|_, d| fast::eval::evaluate(e, d, &uris)).ok()
}

/// How many documents and expressions are compared (`XPATH_SEEDS` for more).
const SEEDS: u64 = 3000;

#[test]
fn the_fast_path_gives_sxds_results_on_generated_documents_and_expressions() {
    let seeds = std::env::var("XPATH_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(SEEDS);
    let (mut compared, mut fast) = (0, 0);
    for seed in 1..=seeds {
        let mut g = Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1, false);
        let text = g.document();
        let src = g.expr(3);
        let Ok(expr) = compile(&src) else { continue };
        let doc = Doc::parse(&text, Format::Xml).unwrap();
        let want = sxd_only(&text, &expr);
        let got = doc.eval(&expr);
        let shown = |v: &Result<Value<'static>, String>| format!("{v:?}");
        assert_eq!(shown(&got), shown(&want), "seed {seed}: {src}\non {text}");
        compared += 1;
        if let Some(v) = fast_only(&doc, &expr) {
            assert_eq!(shown(&Ok(v)), shown(&want), "seed {seed} (fast path): {src}\non {text}");
            fast += 1;
        }
    }
    assert!(
        compared > seeds * 29 / 30 && fast > compared / 2,
        "{compared} compared, {fast} on the fast path"
    );
}
#[test]
fn the_expressions_hurl_files_write_take_the_fast_path() {
    let soap = r#"<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetQuoteResponse><Symbol>ACME</Symbol><Price currency="EUR">12.50</Price><History><Day>12.10</Day><Day>12.35</Day><Day>12.50</Day></History></GetQuoteResponse></soap:Body></soap:Envelope>"#;
    let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="urn:x"><g id="a"><circle r="1"/><circle r="2" x:k="v"/></g><!-- c --><text>Hi <b>there</b></text></svg>"#;
    let cases: &[(&str, &str, Value<'static>)] = &[
        (soap, "string(//Price)", s("12.50")),
        (soap, "string(//soap:Body/GetQuoteResponse/Symbol)", s("ACME")),
        (soap, "string(//Price/@currency)", s("EUR")),
        (soap, "number(//Price)", Value::Float(12.5)),
        (soap, "count(//History/Day)", Value::Float(3.0)),
        (soap, "//soap:Fault", Value::Nodeset(0)),
        (soap, "/soap:Envelope/soap:Body/*", Value::Nodeset(1)),
        (soap, "string(//History/Day[last()])", s("12.50")),
        (soap, "sum(//Day) > 36", Value::Bool(true)),
        (soap, "boolean(//Day[. = '12.35'])", Value::Bool(true)),
        (soap, "normalize-space(//GetQuoteResponse)", s("ACME12.5012.1012.3512.50")),
        (soap, "local-name(/*)", s("Envelope")),
        (svg, "count(//_:svg/_:g/_:circle)", Value::Float(2.0)),
        (svg, "string(//_:circle[2]/@r)", s("2")),
        (svg, "string(//_:circle[@x:k='v']/@r)", s("2")),
        (svg, "string(//_:text)", s("Hi there")),
        (svg, "//_:text/text()", Value::Nodeset(1)),
        (svg, "count(//comment())", Value::Float(1.0)),
        (svg, "count(//*[local-name()='circle'])", Value::Float(2.0)),
        (svg, "string(//_:g/@id) = 'a' and not(//_:rect)", Value::Bool(true)),
        (svg, "concat(//_:b, '!')", s("there!")),
        (svg, "contains(//_:text, 'Hi') or starts-with(//_:b, 'x')", Value::Bool(true)),
    ];
    for (text, src, want) in cases {
        let expr = compile(src).unwrap();
        let doc = Doc::parse(text, Format::Xml).unwrap();
        assert_eq!(fast_only(&doc, &expr).as_ref(), Some(want), "{src}");
        assert_eq!(sxd_only(text, &expr).as_ref(), Ok(want), "{src}");
    }
    // Beyond the fast path: sxd answers, on the same document.
    for (src, want) in
        [("name(//Price)", s("Price")), ("count(//Day[1]/following-sibling::Day)", Value::Float(2.0))]
    {
        let expr = compile(src).unwrap();
        assert!(expr.fast.is_none(), "{src}");
        assert_eq!(xml(soap, src), want, "{src}");
    }
    // A value sxd refuses is refused the same way.
    assert!(eval(soap, Format::Xml, "count('x')").unwrap_err().contains("nodeset"));
}

#[test]
fn bodies_whose_trees_sxd_reads_differently_go_to_sxd() {
    // sxd drops a default namespace a prefixed element declares, and keeps a text node per
    // reference or CDATA section: those bodies, or those expressions, are sxd's.
    let prefixed = "<p:r xmlns:p='urn:p' xmlns='urn:d'><a>1</a></p:r>";
    assert!(matches!(Doc::parse(prefixed, Format::Xml).unwrap().tree, Tree::Sxd(_)));
    assert!(matches!(
        Doc::parse("<r xmlns='urn:d'><a xmlns=''/></r>", Format::Xml).unwrap().tree,
        Tree::Sxd(_)
    ));
    assert!(matches!(Doc::parse("<r xmlns='urn:d'><a/></r>", Format::Xml).unwrap().tree, Tree::Fast { .. }));
    let refs = "<r><a>x &amp; y<![CDATA[z]]></a></r>";
    assert_eq!(xml(refs, "count(//a/text())"), Value::Float(4.0));
    assert_eq!(xml(refs, "string(//a)"), s("x & yz"));
    let doc = Doc::parse(refs, Format::Xml).unwrap();
    assert!(fast_only(&doc, &compile("count(//a/text())").unwrap()).is_none());
    assert_eq!(fast_only(&doc, &compile("string(//a)").unwrap()), Some(s("x & yz")));
    // A body roxmltree refuses is read by sxd, whose error it gives.
    assert!(eval("<a><b></a>", Format::Xml, "//a").unwrap_err().contains("not valid XML"));
}

#[test]
fn long_expressions_are_sxds() {
    let sum = vec!["1"; 200].join(" + ");
    assert!(compile(&sum).unwrap().fast.is_none());
    assert_eq!(xml("<r/>", &sum), Value::Float(200.0));
    assert!(compile("count(//a[b[c[d]]])").unwrap().fast.is_some());
}
