//! Why a load cannot be run as asked ([`SpecError`]), naming the flag to
//! change; the one error of turning options, a URL or a scenario file into a
//! [`crate::LoadSpec`].

/// A load run that cannot be done as asked, with what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("malformed URL {url:?}: {why}")]
    Url { url: String, why: String },
    #[error(
        "unsupported scheme {scheme:?} in {url:?}: stackbench load speaks http:// and https:// (HTTP/1.1, or HTTP/2 with --http2, or gRPC with --grpc)"
    )]
    Scheme { url: String, scheme: String },
    #[error("{flag}: {why}")]
    Invalid { flag: &'static str, why: String },
    #[error("{a} and {b} cannot be used together: {why}")]
    Conflict { a: &'static str, b: &'static str, why: &'static str },
    #[error("--scenario: {0}")]
    Scenario(String),
    #[error("--scenario-file: {0}")]
    ScenarioFile(String),
    #[error("--body: cannot read {path}: {why}")]
    BodyFile { path: String, why: String },
    #[error(transparent)]
    Call(#[from] crate::grpc_call::CallError),
}

pub(crate) fn invalid(flag: &'static str, why: impl Into<String>) -> SpecError {
    SpecError::Invalid { flag, why: why.into() }
}

pub(crate) fn conflict(a: &'static str, b: &'static str, why: &'static str) -> SpecError {
    SpecError::Conflict { a, b, why }
}
