//! Generates the `sort.v1` gRPC service code from `proto/sort/v1/sort.proto`.
//!
//! The proto is compiled by `protox`, a protobuf compiler written in Rust, into
//! a `FileDescriptorSet` that `tonic-prost-build` turns into Rust. No `protoc`
//! binary is needed, so a fresh machine builds with `cargo build` alone.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let proto = root.join("sort/v1/sort.proto");
    println!("cargo:rerun-if-changed={}", proto.display());
    let fds = protox::compile([&proto], [&root])?;
    // Server and client: the tests call the service with the generated client.
    // Both use the hand-written `List` codec (src/bubble/codec.rs says why).
    tonic_prost_build::configure().codec_path("crate::bubble::codec::ListCodec").compile_fds(fds)?;
    Ok(())
}
