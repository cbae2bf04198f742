//! `docs/scenarios.md` lists every verification rule of `bubble-sort` with its
//! level, in the words the code uses: a rule added, renamed or moved to another
//! level fails here until the contract document says so too. (The other
//! scenarios' rules are their files' cases: `crates/hurl/tests/builtin_files.rs`.)

use stackbench_scenarios::verify::bubble_sort_cases;

#[test]
fn the_contract_document_lists_every_rule_with_its_level() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md")).unwrap();
    let heading = "### `bubble-sort`";
    let Some((_, rest)) = doc.split_once(heading) else {
        panic!("docs/scenarios.md has no section {heading}");
    };
    let section = rest.split("\n### ").next().unwrap_or(rest);
    for case in bubble_sort_cases(false) {
        let row = format!("| {} | {} |", case.level.name(), case.rule.replace('|', "\\|"));
        assert!(section.contains(&row), "docs/scenarios.md lacks the row {row}");
    }
}
