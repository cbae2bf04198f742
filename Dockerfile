# The stackbench image, what `stackbench k8s load` and `swarm load` run (image/build.sh makes the
# same image without pulling anything: docs/beyond-one-machine.md):
#   docker build -t stackbench:0.1 .
#   docker run --rm --network host stackbench:0.1 load http://127.0.0.1:8080/ -d 10s
# Two stages: the build (Rust toolchain, the whole workspace) and a slim
# runtime holding the one binary (it needs only the C library) and a shell
# for the Job's `sh -c` command line.
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin stackbench \
 && cp target/release/stackbench /stackbench

FROM debian:bookworm-slim
COPY --from=build /stackbench /usr/local/bin/stackbench
# No root needed: the load engine opens sockets, reads /proc and its clock.
USER 65534:65534
ENTRYPOINT ["stackbench"]
CMD ["--help"]
