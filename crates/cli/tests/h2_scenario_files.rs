//! h2c and gRPC scenario files through the binary, against real servers: the
//! built-in `bubble-sort`'s gRPC file, `scenarios/builtin/bubble-sort.toml`
//! (also the example of a gRPC file), against the Rust reference server
//! (`sb-bubble-sort`), with `verify` (every case passes) and `load` (the call
//! recorded under the method's name); a plan's contestant serving a gRPC file
//! of its own, verified and measured under the file's name; and an h2c file
//! against `sb-dummy`, whose accept loop serves h2c beside HTTP/1.1. (The
//! bubble-sort file against faulty servers: `bubble_sort_verify.rs`.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use stackbench_testkit::contestants::contestant;
use stackbench_testkit::process::Server;

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");

fn builtin(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/builtin").join(name).canonicalize().unwrap()
}

fn serve(name: &str) -> Server {
    Server::start(Command::new(contestant(BIN, name)).args(["--port", "0"]))
}

fn stackbench(args: &[&str], file: &Path) -> Output {
    Command::new(BIN).args(args).arg("--scenario-file").arg(file).output().expect("stackbench runs")
}

/// A file in a directory of its own, removed with the `TempDir`.
fn temp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix("sb-h2-files-").tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn the_reference_server_passes_the_bubble_sort_file_and_is_measured() {
    let s = serve("sb-bubble-sort");
    let url = format!("http://{}", s.addr);
    // The shipped file names the repository's `.proto` (`../../proto/`): its root is the repository.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = ["--file-root", repo.to_str().unwrap()];
    let out = stackbench(&[&["verify", &url][..], &root].concat(), &builtin("bubble-sort.toml"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("ok      core       negative numbers and duplicates are sorted too"), "{stdout}");
    assert!(stdout.contains("passes the bubble-sort scenario (5 cases)"), "{stdout}");

    let out = stackbench(
        &[
            &["load", &url, "-c", "2", "-d", "1s", "--threads", "1", "--check-every", "1", "--json", "-"][..],
            &root,
        ]
        .concat(),
        &builtin("bubble-sort.toml"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let record = stackbench_testkit::record::record_json(&out.stdout);
    assert_eq!(record["params"]["transport"], "grpc");
    let per = &record["per_request"][0];
    assert_eq!(per["name"], "sort.v1.SortService/BubbleSort");
    assert!(per["requests"].as_u64().unwrap() > 5, "{per}");
    assert_eq!(record["summary"]["errors"], 0, "{}", record["errors"]);
    assert_eq!(record["summary"]["checks"]["failed"], 0, "every answer the sorted numbers");
    assert_eq!(record["iterations"]["requests"], per["requests"]);
    assert!(!stderr.contains("by request"), "one request per iteration: the totals say it all\n{stderr}");
}

/// A gRPC file of a team's own (the built-in's name is the built-in's, in a plan).
const SORT_FILE: &str = r#"
name = "sort-file"
protocol = "grpc"

[grpc]
proto = "PROTO"

[[flow]]
name = "sort"
hurl = '''
POST {{base_url}}/sort.v1.SortService/BubbleSort
{"data": [3, -1, 2]}
HTTP 200
[Asserts]
jsonpath "$.data[0]" == -1
jsonpath "$.data[2]" == 3
'''
"#;

#[test]
fn a_plan_contestant_serving_the_grpc_file_is_verified_and_measured() {
    let scratch = tempfile::Builder::new().prefix("sb-h2-files-plan-").tempdir().unwrap();
    let dir = scratch.path();
    let bin_dir = Path::new(&contestant(BIN, "sb-bubble-sort")).parent().unwrap().to_owned();
    // A scenario's files are under its directory.
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto/sort/v1/sort.proto");
    std::fs::copy(proto, dir.join("sort.proto")).unwrap();
    let file = dir.join("sort-file.toml");
    std::fs::write(&file, SORT_FILE.replace("PROTO", "sort.proto")).unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[defaults]\nrepetitions = 1\ncold_starts = 1\nready_timeout = \"10s\"\nstop_grace = \"2s\"\n\
             [load.sort-file]\nconnections = 2\nwarmup = \"200ms\"\nduration = \"1s\"\n\
             [[contestant]]\nname = \"tonic\"\nscenario = \"{}\"\nlanguage = \"Rust\"\nframework = \"tonic\"\n\
             command = [\"{}/sb-bubble-sort\", \"--port\", \"{{port}}\"]\n",
            file.display(),
            bin_dir.display()
        ),
    )
    .unwrap();
    let out = dir.join("results");
    let o = Command::new(BIN)
        .args(["run", "--no-report"])
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{said}");
    let set = stackbench_testkit::record::load_results(&out);
    let c = &set.contestants[0];
    assert_eq!(c.scenario, "sort-file");
    let v = c.verification.as_ref().unwrap();
    assert!(v.passed && v.cases == 1, "{v:?}");
    assert_eq!(set.runs.len(), 1, "{said}");
    let run = &set.runs[0];
    assert_eq!(run.label.scenario.as_deref(), Some("sort-file"));
    assert_eq!(run.per_request[0].name, "sort.v1.SortService/BubbleSort");
    assert!(run.summary.requests > 0 && run.summary.errors == 0, "{:?}", run.errors);
}

const H2C: &str = r#"
name = "events-h2c"
protocol = "h2c"

[[flow]]
names = ["event", "count"]
hurl = '''
POST {{base_url}}/events
{"type": "signup"}
HTTP 200
[Captures]
n: jsonpath "$.count"
GET {{base_url}}/events/count
HTTP 200
[Asserts]
header "content-type" contains "application/json"
jsonpath "$.count" >= 1
'''
"#;

#[test]
fn an_h2c_file_is_verified_and_loaded_over_http2() {
    let s = serve("sb-dummy");
    let url = format!("http://{}", s.addr);
    let (_dir, file) = temp("events-h2c.toml", H2C);
    let out = stackbench(&["verify", &url], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("passes the events-h2c scenario (1 cases)"), "{stdout}");
    let out = stackbench(&["load", &url, "-c", "2", "-d", "1s", "--threads", "1", "--json", "-"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let record = stackbench_testkit::record::record_json(&out.stdout);
    assert_eq!(record["params"]["transport"], "h2c");
    assert_eq!(record["summary"]["errors"], 0, "{}", record["errors"]);
    let names: Vec<&str> =
        record["per_request"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["event", "count"]);
    // A wrong expectation fails verification with its place in the TOML.
    let (_dir, file) = temp("events-h2c-wrong.toml", &H2C.replace(">= 1", "== 0"));
    let out = stackbench(&["verify", &url], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("events-h2c-wrong.toml:17:1: `jsonpath \"$.count\" == 0`"), "{stdout}");
}
