//! Records a test wrote, held to the RunRecord's JSON schema
//! (`crates/record/schema/run-record.schema.json`, [`stackbench_record::JSON_SCHEMA`]):
//! a test that reads a record back goes through [`record_json`] (or [`assert_valid_record`]
//! for a record already parsed or built in memory), so every record the suite writes is
//! checked against the file that describes it to everyone else.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(stackbench_record::JSON_SCHEMA)
            .unwrap_or_else(|e| panic!("run-record.schema.json is not JSON: {e}"));
        jsonschema::draft202012::new(&schema)
            .unwrap_or_else(|e| panic!("run-record.schema.json is not a valid JSON Schema: {e}"))
    })
}

/// Every place where `record` breaks the schema, one line each (`/summary/rps: ...`);
/// empty when it validates.
pub fn schema_violations(record: &Value) -> Vec<String> {
    validator()
        .iter_errors(record)
        .map(|e| {
            format!(
                "{}: {e}",
                if e.instance_path().as_str().is_empty() { "/" } else { e.instance_path().as_str() }
            )
        })
        .collect()
}

/// Panics, naming every violation, unless `record` validates against the schema.
pub fn assert_valid_record(record: &Value) {
    let violations = schema_violations(record);
    assert!(
        violations.is_empty(),
        "the record breaks crates/record/schema/run-record.schema.json (change the schema, \
         docs/run-record.md and the types together):\n  {}",
        violations.join("\n  ")
    );
}

/// A record as JSON text (a file's contents, `--json -` output), parsed and validated.
pub fn record_json(text: impl AsRef<[u8]>) -> Value {
    let text = text.as_ref();
    let record: Value = serde_json::from_slice(text).unwrap_or_else(|e| {
        panic!("not a JSON record ({e}): {}", String::from_utf8_lossy(&text[..text.len().min(2_000)]))
    });
    assert_valid_record(&record);
    record
}

/// The record in the file at `path`, parsed and validated.
pub fn record_file(path: &Path) -> Value {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    record_json(text)
}

/// The result directory `dir` read back as the reports read it, after validating every
/// record under its `runs/` (each `*.json`; an interrupted run set aside is not a record).
pub fn load_results(dir: &Path) -> stackbench_record::ResultSet {
    let runs = dir.join(stackbench_record::RUNS_DIR);
    if let Ok(entries) = std::fs::read_dir(&runs) {
        for path in entries.flatten().map(|e| e.path()) {
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
                let record: Value = serde_json::from_slice(&text)
                    .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
                let violations = schema_violations(&record);
                assert!(violations.is_empty(), "{}:\n  {}", path.display(), violations.join("\n  "));
            }
        }
    }
    stackbench_record::ResultSet::load(dir)
        .unwrap_or_else(|e| panic!("reading the results in {}: {e}", dir.display()))
}

/// A record built in memory (`stackbench_load::run`'s result), serialized and validated;
/// handed back for the test to go on with.
pub fn valid(record: stackbench_record::RunRecord) -> stackbench_record::RunRecord {
    assert_valid_record(&serde_json::to_value(&record).expect("a record serializes"));
    record
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The smallest record a reader accepts: required keys only.
    fn minimal() -> Value {
        let latency = json!({"count": 0, "min_us": 0, "mean_us": 0.0, "stdev_us": 0.0, "p50_us": 0,
            "p90_us": 0, "p95_us": 0, "p99_us": 0, "p999_us": 0, "max_us": 0});
        json!({
            "schema": 1, "tool_version": "0.1.0", "started_at_ms": 1,
            "params": {"url": "http://127.0.0.1:1/", "transport": "http1",
                "model": {"kind": "closed", "connections": 1, "think_ms": 0, "ramp_up_ms": 0},
                "warmup_ms": 0, "timeout_ms": 1000, "threads": 1, "seed": 1, "check_every": 0},
            "environment": {"os": "linux", "cores": 2, "stackbench_version": "0.1.0"},
            "summary": {"duration_s": 1.0, "requests": 0, "ok": 0, "errors": 0, "rps": 0.0, "ok_rps": 0.0,
                "bytes_sent": 0, "bytes_received": 0, "latency": latency,
                "checks": {"performed": 0, "failed": 0}, "corrected_for_coordinated_omission": false},
            "histogram": "HISTFAAAABx4nJNpmSzMwMDAxQABzFCaEUzKT/4PAEr3BHs=",
            "errors": {}, "timeline": [],
            "generator": {"cpu_user_s": 0.0, "cpu_system_s": 0.0, "cores": 1, "utilization": 0.0, "saturated": false}
        })
    }

    type Change = fn(&mut Value);

    #[test]
    fn the_schema_accepts_a_minimal_record_and_names_what_breaks_it() {
        assert_valid_record(&minimal());
        let cases: [(&str, Change); 8] = [
            ("/summary", |r| r["summary"].as_object_mut().unwrap().remove("ok_rps").map(drop).unwrap()),
            ("/", |r| r["surprise"] = json!(1)),
            ("/schema", |r| r["schema"] = json!(2)),
            ("/errors", |r| r["errors"] = json!({"teapot": 1})),
            ("/summary/requests", |r| r["summary"]["requests"] = json!(-1)),
            ("/params/model", |r| r["params"]["model"] = json!({"kind": "open", "rate": 10.0})),
            ("/histogram", |r| r["histogram"] = json!("not base64!")),
            ("/generator/utilization", |r| r["generator"]["utilization"] = json!(1.5)),
        ];
        for (path, change) in cases {
            let mut r = minimal();
            change(&mut r);
            let violations = schema_violations(&r);
            assert!(violations.iter().any(|v| v.starts_with(&format!("{path}:"))), "{path}: {violations:?}");
        }
    }

    #[test]
    fn optional_parts_validate_in_their_written_shape() {
        let mut r = minimal();
        r["label"] = json!({"contestant": "go-gin", "scenario": "dummy", "repetition": 1});
        r["errors"] = json!({"connect": 1, "reset": 1, "timeout": 1, "http_503": 2, "grpc_14": 1, "check": 1,
            "late": 1, "protocol": 1, "tls_handshake": 1, "tls_certificate": 1, "tls_answer": 1});
        r["invalid"] = json!({"kind": "no_progress", "reason": "nothing completed"});
        r["find_max"] = json!({"slo": ["p99<10ms"], "precision": 0.05, "step_s": 5.0, "steps": [],
            "sustained_rps": null, "lower_bound": false, "bracket": [100.0, 200.0], "ended": "nothing_met"});
        assert_valid_record(&r);
        r["invalid"]["kind"] = json!("inconsistent");
        assert!(schema_violations(&r).iter().any(|v| v.starts_with("/invalid/kind:")), "never written");
    }
}
