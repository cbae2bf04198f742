//! The crate's integration tests, one binary: the built-in scenarios as files against
//! in-memory servers, and Hurl's semantics feature by feature against a real HTTP server.

mod builtin_files;
mod conformance;
