//! The crate's integration tests, one binary: the built-in scenarios as files against
//! in-memory servers, Hurl's semantics feature by feature against a real HTTP server, and a
//! file's session (cookies, redirects) against the same server.

mod builtin_files;
mod conformance;
mod wire;
