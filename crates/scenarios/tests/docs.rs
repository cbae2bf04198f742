//! `docs/scenarios.md` lists every verification rule with its level, in the
//! words the code uses: a rule added, renamed or moved to another level
//! fails here until the contract document says so too.

use stackbench_scenarios::Scenario;
use stackbench_scenarios::verify::{VerifyOptions, cases};

#[test]
fn the_contract_document_lists_every_rule_with_its_level() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md")).unwrap();
    for scenario in Scenario::ALL {
        let opts = VerifyOptions { base_path: "/db/sqlite".into(), ..VerifyOptions::default() };
        let heading = format!("### `{}`", scenario.name());
        let Some((_, rest)) = doc.split_once(&heading) else {
            panic!("docs/scenarios.md has no section {heading}");
        };
        let section = rest.split("\n### ").next().unwrap_or(rest);
        for case in cases(scenario, &opts).unwrap() {
            let row = format!("| {} | {} |", case.level.name(), case.rule.replace('|', "\\|"));
            assert!(section.contains(&row), "{scenario}: docs/scenarios.md lacks the row {row}");
        }
    }
}
