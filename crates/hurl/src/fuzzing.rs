//! The scenario evaluator against hostile answers, for fuzzing (`fuzz/`, target
//! `scenario_eval`, and a bounded property test here that CI runs): arbitrary
//! bytes are made into an answer (status, headers, body) and judged by a set of
//! checks that covers every query and predicate, both by the checks compiled for
//! the answer that passes ([`crate::eval::Compiled`] and the one-pass JSON reading)
//! and by the general evaluator. Neither may panic, each must stay within its
//! bounds, and they must agree: the same failures and the same captured values;
//! a jsonpath filter read in one pass must find what the parsed document gives.
//! The captured values are then written into a request, as the next entry of a
//! flow writes them (a hostile value that cannot go in a request line or header
//! is refused there, never written).

use crate::eval::{Answer, Compiled, Request};
use crate::model::HurlFile;
use crate::template::{Kind, Vars};

/// The checks hostile answers are judged by: the first entry of each, chosen by the input's
/// first byte; its second entry writes what the first captured. Singular paths, which the
/// compiled checks read in one pass (the last entry's each one member name, read in one loop
/// over the document's object), and paths that build the whole document (`..`, `*`, `[-1]`),
/// regexes, headers, the status and the body.
const CHECKS: [&str; 4] = [
    "GET http://h/a\nHTTP 200\n[Captures]\nid: jsonpath \"$.id\"\nname: jsonpath \"$.user.name\"\n\
     [Asserts]\njsonpath \"$.id\" isInteger\njsonpath \"$.ok\" == true\njsonpath \"$.n\" > 3\n\
     jsonpath \"$.s\" contains \"x\"\njsonpath \"$.items[0].v\" == \"a\"\njsonpath \"$.f\" isFloat\n\
     header \"Content-Type\" matches /json/\njsonpath \"$.user.name\" startsWith \"a\"\n\n\
     GET http://h/{{id}}\nX-Name: {{name}}\n{\"id\": {{id}}, \"name\": \"{{name}}\"}\n",
    "GET http://h/a\nHTTP *\n[Captures]\nall: jsonpath \"$..*\" count\nlast: jsonpath \"$.list[-1]\"\n\
     any: jsonpath \"$.list[*]\"\n[Asserts]\njsonpath \"$..a..b\" count >= 0\njsonpath \"$.list\" includes 1\n\
     jsonpath \"$.list[*]\" isCollection\njsonpath \"$..x\" isEmpty\nstatus < 500\n\n\
     GET http://h/{{last}}?n={{all}}\nX-Any: {{any}}\n",
    "GET http://h/a\nHTTP 201\n[Captures]\nword: regex /([a-z]+)/\nkind: header \"Content-Type\"\n\
     text: body\n[Asserts]\nbody startsWith \"{\"\nbody endsWith \"}\"\nregex \"[0-9]+\" exists\n\
     header \"X-Many\" count == 2\nheader \"X-Many\" contains \"a\"\nbody isString\n\n\
     GET http://h/{{word}}\nContent-Type: {{kind}}\n`{{text}}`\n",
    "GET http://h/a\nHTTP *\n[Captures]\na: jsonpath \"$.a\"\n[Asserts]\njsonpath \"$.a\" == 1\n\
     jsonpath \"$.a\" isInteger\njsonpath \"$.b\" == \"x\"\njsonpath \"$['ab']\" exists\n\
     jsonpath \"$.c\" not exists\n\nGET http://h/{{a}}\n",
];

/// Paths of one filter, which the one-pass reading answers where it can tell
/// ([`crate::jsonpath::stream::Filtered`]): what it finds must be what the parsed document gives.
const FILTERS: [&str; 3] = ["$.a[?(@.b == 'x')].c", "$[?(@.a > 3 || !@.b)].b", "$.b[?(@ >= 1 && @ != 'x')]"];

/// The one-pass reading of [`FILTERS`] on `body` against [`JsonPath::eval`] on its document.
///
/// [`JsonPath::eval`]: crate::jsonpath::JsonPath::eval
fn filters_agree(body: &[u8]) {
    use crate::jsonpath::stream::Leaf;
    use crate::jsonpath::{Budget, Found, JsonPath, MIN_BUDGET};
    static PATHS: std::sync::OnceLock<Vec<JsonPath>> = std::sync::OnceLock::new();
    let paths = PATHS.get_or_init(|| FILTERS.iter().map(|p| JsonPath::parse(p).expect("a path")).collect());
    let doc = serde_json::from_slice::<serde_json::Value>(body).ok();
    let mut found = Vec::new();
    for p in paths {
        let pass = p.filtered().expect("read in one pass");
        if pass.find(body, &mut found).is_none() {
            continue;
        }
        let doc = doc.as_ref().expect("the pass answers on JSON only");
        let Ok(Found::Many(want)) = p.eval(doc, &mut Budget::new(MIN_BUDGET)) else { panic!("a list") };
        let got: Vec<serde_json::Value> = found
            .drain(..)
            .map(|l| match l {
                Leaf::Str(s) => s.into(),
                Leaf::Int(n) => n.into(),
                Leaf::Value(v) => v,
                Leaf::Nothing => panic!("a target that found nothing"),
            })
            .collect();
        assert!(want.iter().copied().eq(&got), "the one-pass filter disagrees with the document");
    }
}

/// An answer made from arbitrary bytes.
struct Hostile<'a> {
    status: u16,
    headers: Vec<(String, String)>,
    body: &'a [u8],
}

impl Answer for Hostile<'_> {
    fn status(&self) -> u16 {
        self.status
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        self.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).nth(nth).map(|(_, v)| v.as_str())
    }
    fn body(&self) -> &[u8] {
        self.body
    }
}

/// `data` as an answer: after the first byte (which chooses the checks), two bytes of status,
/// then header lines (`Name: value`, `\n` between them) up to a 0xFF byte, then the body.
fn answer(data: &[u8]) -> Hostile<'_> {
    let status = data.get(1..3).map_or(200, |s| u16::from_le_bytes([s[0], s[1]]) % 600);
    let rest = data.get(3..).unwrap_or_default();
    let (head, body) = match rest.iter().position(|&b| b == 0xFF) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (&rest[..0], rest),
    };
    let headers = String::from_utf8_lossy(head)
        .split('\n')
        .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())))
        .collect();
    Hostile { status, headers, body }
}

/// The checks, parsed once, each with its first entry's compiled checks.
fn checks() -> &'static [(HurlFile, Compiled)] {
    static FILES: std::sync::OnceLock<Vec<(HurlFile, Compiled)>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let parse = |t: &&str| crate::parse::parse("fuzz.hurl", t).expect("the checks parse");
        CHECKS.iter().map(|t| (parse(t), Compiled::default())).collect()
    })
}

/// For fuzzing: arbitrary bytes as an answer, judged by the compiled checks and the general
/// evaluator (which must agree), then the captured values written into a request; must never
/// panic.
pub fn fuzz_eval(data: &[u8]) {
    let files = checks();
    let (file, compiled) = &files[usize::from(data.first().copied().unwrap_or(0)) % files.len()];
    let a = answer(data);
    filters_agree(a.body);
    let (check, next) = (&file.entries[0], &file.entries[1]);
    let judge = |one_pass: bool, asserts: bool| {
        let (mut vars, mut failures) = (Vars::new(1), Vec::new());
        vars.max_capture = 4096;
        let c = one_pass.then_some(compiled);
        check.check_read(c, &a, &mut vars, &mut Vec::new(), &mut failures, asserts);
        let captured: Vec<_> = file.captures().map(|c| vars.get(&c.name).cloned()).collect();
        (failures, captured, vars)
    };
    for asserts in [false, true] {
        let (compiled, general) = (judge(true, asserts), judge(false, asserts));
        assert_eq!((&compiled.0, &compiled.1), (&general.0, &general.1), "the two evaluators disagree");
        let mut vars = compiled.2;
        vars.set("base_url", "http://127.0.0.1:9", Kind::String);
        let mut req = Request::default();
        if next.render(&mut vars, &mut req).is_ok() {
            // Nothing a value put in the URL or a header line ends a line.
            let lines = req.headers.strip_suffix(b"\r\n").unwrap_or(&req.headers);
            let mut head = lines.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
            assert!(crate::template::unsafe_byte(&req.url).is_none(), "a URL that ends its line");
            assert!(head.all(|l| crate::template::unsafe_byte(l).is_none()), "a header that ends its line");
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_checks_parse_and_name_what_they_capture() {
        for (f, _) in checks() {
            assert_eq!(f.entries.len(), 2);
            crate::check_variables(f, |_| true).unwrap();
        }
        // The first is compiled: the fuzzing compares the compiled checks with the general
        // evaluator on it.
        fuzz_eval(b"\0\xc8\0Content-Type: application/json\xff{\"id\": 1}");
        assert!(checks()[0].1.is_compiled(), "compiled");
        // The last reads its paths, each one member name, in one loop (a plain body).
        fuzz_eval(b"\x03\xc8\0Content-Type: application/json\xff{\"a\": 1, \"b\": \"x\", \"ab\": null}");
        assert!(checks()[3].1.is_compiled(), "compiled");
    }

    /// A hostile answer from parts: which checks, a status, header lines and a body that is
    /// JSON (damaged, sometimes), or any bytes.
    fn hostile() -> impl Strategy<Value = Vec<u8>> {
        let header = prop_oneof![
            Just("Content-Type: application/json".to_owned()),
            Just("X-Many: a".to_owned()),
            "[A-Za-z-]{1,8}: [ -~\r\u{e9}]{0,12}",
        ];
        let body = prop_oneof![
            crate::jsonpath::tests::arb_json().prop_map(|v| v.to_string().into_bytes()),
            (crate::jsonpath::tests::arb_json(), any::<prop::sample::Index>(), any::<u8>()).prop_map(
                |(v, at, b)| {
                    let mut s = v.to_string().into_bytes();
                    let i = at.index(s.len());
                    s[i] = b;
                    s
                }
            ),
            proptest::collection::vec(any::<u8>(), 0..64),
            Just(format!("{}1{}", "{\"a\":".repeat(100), "}".repeat(100)).into_bytes()),
        ];
        (any::<u8>(), any::<u16>(), proptest::collection::vec(header, 0..4), body).prop_map(
            |(pick, status, headers, body)| {
                let mut data = vec![pick];
                data.extend_from_slice(&status.to_le_bytes());
                data.extend_from_slice(headers.join("\n").as_bytes());
                data.push(0xFF);
                data.extend_from_slice(&body);
                data
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// What the fuzz target runs holds on hostile answers: no panic, the compiled checks
        /// and the general evaluator agree, nothing unsafe is written. CI runs this bounded
        /// run of the `scenario_eval` fuzz target (fuzz/README.md says why).
        #[test]
        fn hostile_answers_are_judged_alike_and_never_panic(data in hostile()) {
            fuzz_eval(&data);
        }

        /// And on bytes with no structure at all.
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            fuzz_eval(&data);
        }
    }
}
