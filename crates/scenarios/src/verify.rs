//! Contract verification of `bubble-sort` as data: an ordered list of cases
//! (a call, the outcome the contract demands, and the name of the rule), the
//! good lists and the one refused (docs/scenarios.md, "Verification"), over
//! gRPC or its Connect JSON form. `dummy`, `event-log` and `db-read` are
//! verified by their scenario files (`scenarios/builtin/`, run by
//! `stackbench-run`).
//!
//! Every case has a [`Level`] (TechEmpower's verifier, pass / warn / fail, is
//! the model): a **core** rule says the answer is right (the sorted list, the
//! status of a good request), a **hardening** rule says bad input is refused
//! (the 10,000-number cap). A contestant that breaks a core rule is not
//! measured; one that breaks only hardening rules is measured, and every
//! report says what it does not enforce, unless the plan asks for
//! `verify = "strict"`.
//!
//! This module does no I/O. The orchestrator (`stackbench-run`) sends each case
//! in order over the wire and judges the answer with [`judge`], which reuses
//! [`crate::check::check`] so a rule is written once.

use std::sync::Arc;

use bytes::Bytes;

use crate::bubble;
use crate::check::{CheckError, Expect, ResponseView, check};
use crate::contract::JSON;

/// How a case travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// HTTP/1.1 (h2c welcome).
    Http,
    /// gRPC unary over h2c: the body is the bare protobuf message; the sender
    /// adds the 5-byte frame header and reads `grpc-status`.
    Grpc,
}

/// One request of a verification.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub transport: Transport,
    pub method: &'static str,
    /// Path and query.
    pub path: String,
    /// `Content-Type` to send, if any.
    pub content_type: Option<&'static str>,
    pub body: Bytes,
}

/// What the contract demands of the answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// What the response checker accepts for this expectation.
    Check(Expect),
    /// A gRPC call that fails with this status code (3 = INVALID_ARGUMENT).
    GrpcStatus(u32),
}

/// How much a broken rule matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The answer is right: breaking it leaves the contestant out.
    Core,
    /// Bad input is refused: breaking it is a warning shown beside the contestant.
    Hardening,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Core => "core",
            Level::Hardening => "hardening",
        }
    }
}

/// One verification case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The rule in the contract's words; what a failing contestant is reported with.
    pub rule: &'static str,
    pub level: Level,
    /// Hardening: what a contestant that breaks it does not enforce, in a few
    /// words ("the 10,000-number cap"); empty for core rules.
    pub enforces: &'static str,
    pub request: Request,
    pub outcome: Outcome,
}

/// What the sender observed.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// HTTP status (200 for any gRPC answer that got through HTTP).
    pub status: u16,
    pub content_type: Option<&'a [u8]>,
    /// gRPC only: the `grpc-status` trailer (0 = OK), if any.
    pub grpc_status: Option<u32>,
    /// The body; for gRPC the unframed message.
    pub body: &'a [u8],
}

/// Options of a verification.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// `db-read`: the driver path, e.g. `/db/sqlite` (required for db-read).
    pub base_path: String,
    /// The store was emptied before the verification (the orchestrator resets
    /// it): event-log's count must then start at 0 (its file's `clean_values`).
    pub clean_store: bool,
    /// `bubble-sort`: verify the Connect JSON form over HTTP/1.1 instead of gRPC.
    pub connect_json: bool,
}

/// Why a case failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error("expected gRPC status {expected}, got {}", got.map_or_else(|| "none".to_owned(), |g| g.to_string()))]
    GrpcStatus { expected: u32, got: Option<u32> },
}

/// Judges one observed answer against its case.
pub fn judge(outcome: &Outcome, seen: &Observed<'_>) -> Result<(), Violation> {
    match outcome {
        Outcome::Check(expect) => {
            if matches!(expect, Expect::SortedProto(_)) {
                grpc_ok(seen)?;
            }
            let view = ResponseView { status: seen.status, content_type: seen.content_type, body: seen.body };
            Ok(check(expect, &view)?)
        }
        Outcome::GrpcStatus(code) => {
            if seen.grpc_status == Some(*code) {
                Ok(())
            } else {
                Err(Violation::GrpcStatus { expected: *code, got: seen.grpc_status })
            }
        }
    }
}

/// The rule the load engine applies too ([`crate::check::grpc_end`]).
fn grpc_ok(seen: &Observed<'_>) -> Result<(), Violation> {
    use crate::check::{GrpcEnd, grpc_end};
    match grpc_end(seen.status, seen.grpc_status) {
        GrpcEnd::Ok => Ok(()),
        GrpcEnd::Status(_) | GrpcEnd::MissingStatus => {
            Err(Violation::GrpcStatus { expected: 0, got: seen.grpc_status })
        }
        GrpcEnd::Http(status) => Err(Violation::Check(CheckError::Status { expected: 200, got: status })),
    }
}

/// Why cases cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CasesError {
    #[error("db-read is verified through one driver: give its path, like /db/sqlite (got {0:?})")]
    DbReadPath(String),
}

fn http(
    method: &'static str,
    path: impl Into<String>,
    content_type: Option<&'static str>,
    body: &str,
) -> Request {
    Request {
        transport: Transport::Http,
        method,
        path: path.into(),
        content_type,
        body: Bytes::copy_from_slice(body.as_bytes()),
    }
}

/// A core case: the answer must be right.
fn case(rule: &'static str, request: Request, outcome: Outcome) -> Case {
    Case { rule, level: Level::Core, enforces: "", request, outcome }
}

/// A hardening case: bad input must be refused; `enforces` names what.
fn hardening(enforces: &'static str, rule: &'static str, request: Request, outcome: Outcome) -> Case {
    Case { rule, level: Level::Hardening, enforces, request, outcome }
}

fn error(status: u16) -> Outcome {
    Outcome::Check(Expect::Error { status })
}

/// The verification cases of `bubble-sort`, in the order they must be sent: over gRPC, or
/// its Connect JSON form.
pub fn bubble_sort_cases(connect_json: bool) -> Vec<Case> {
    bubble_cases(connect_json)
}

fn bubble_cases(connect_json: bool) -> Vec<Case> {
    let lists: [(&'static str, Vec<i32>); 4] = [
        ("the 1000 numbers of the experiment come back sorted", bubble::SEED.clone()),
        ("an empty list is valid and comes back empty", Vec::new()),
        ("negative numbers and duplicates are sorted too", vec![5, -3, 5, 0, i32::MIN, i32::MAX, -3, 1]),
        ("a one-element list comes back as is", vec![42]),
    ];
    let too_long: Vec<i32> = (0..=bubble::MAX_LEN as i32).rev().collect();
    let mut out = Vec::new();
    for (rule, list) in lists {
        let mut sorted = list.clone();
        sorted.sort_unstable();
        let sorted: Arc<[i32]> = sorted.into();
        out.push(if connect_json {
            case(
                rule,
                http("POST", bubble::GRPC_PATH, Some(JSON), &serde_json::json!({ "data": list }).to_string()),
                Outcome::Check(Expect::SortedJson(sorted)),
            )
        } else {
            case(rule, grpc(&list), Outcome::Check(Expect::SortedProto(sorted)))
        });
    }
    let rule = "more than 10,000 numbers is refused (INVALID_ARGUMENT, or 400 over JSON)";
    let cap = "the 10,000-number cap";
    out.push(if connect_json {
        hardening(
            cap,
            rule,
            http("POST", bubble::GRPC_PATH, Some(JSON), &serde_json::json!({ "data": too_long }).to_string()),
            error(400),
        )
    } else {
        hardening(cap, rule, grpc(&too_long), Outcome::GrpcStatus(3))
    });
    out
}

fn grpc(list: &[i32]) -> Request {
    let mut body = Vec::new();
    bubble::encode_list(list, &mut body);
    Request {
        transport: Transport::Grpc,
        method: "POST",
        path: bubble::GRPC_PATH.to_owned(),
        content_type: Some("application/grpc"),
        body: Bytes::from(body),
    }
}

/// The request used to tell that a freshly started `bubble-sort` contestant is
/// ready (the cold-start probe): cheap, side-effect free, and checked, so
/// "ready" means "answers correctly": the one-element list.
pub fn bubble_sort_probe(connect_json: bool) -> Case {
    bubble_cases(connect_json).swap_remove(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(status: u16, body: &str) -> Observed<'_> {
        Observed { status, content_type: Some(b"application/json"), grpc_status: None, body: body.as_bytes() }
    }

    #[test]
    fn errors_need_json() {
        assert!(judge(&error(400), &json(400, r#"{"error":"more than 10000 numbers"}"#)).is_ok());
        assert!(judge(&error(400), &json(200, r#"{"data":[]}"#)).is_err());
        assert!(judge(&error(400), &json(400, "too long")).is_err());
        assert_eq!(
            judge(&Outcome::GrpcStatus(3), &json(200, "")),
            Err(Violation::GrpcStatus { expected: 3, got: None })
        );
    }

    #[test]
    fn bubble_cases_judge_grpc_answers() {
        let list = bubble_sort_cases(false);
        for c in &list {
            match &c.outcome {
                Outcome::Check(Expect::SortedProto(sorted)) => {
                    let mut msg = Vec::new();
                    bubble::encode_list(sorted, &mut msg);
                    let seen = Observed {
                        status: 200,
                        content_type: Some(b"application/grpc"),
                        grpc_status: Some(0),
                        body: &msg,
                    };
                    judge(&c.outcome, &seen).unwrap();
                    let failed = Observed { grpc_status: Some(13), ..seen };
                    assert!(judge(&c.outcome, &failed).is_err());
                    // Regression: an answer without `grpc-status` passed verification while the
                    // load engine counted it a protocol error; one rule now (`check::grpc_end`).
                    let no_status = Observed { grpc_status: None, ..seen };
                    assert!(judge(&c.outcome, &no_status).is_err());
                    assert_eq!(
                        crate::check::grpc_end(200, None),
                        crate::check::GrpcEnd::MissingStatus,
                        "the load engine's rule"
                    );
                }
                Outcome::GrpcStatus(3) => {
                    assert_eq!(bubble::decode_list(&c.request.body).unwrap().len(), bubble::MAX_LEN + 1);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(bubble_sort_cases(true).iter().all(|c| c.request.transport == Transport::Http));
    }

    #[test]
    fn the_probe_is_the_one_element_list() {
        for connect_json in [false, true] {
            let p = bubble_sort_probe(connect_json);
            assert_eq!(p.rule, "a one-element list comes back as is");
            assert_eq!(p.level, Level::Core);
        }
    }
}
