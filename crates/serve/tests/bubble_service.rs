//! The `bubble-sort` contestant in-process on real sockets: gRPC through
//! tonic's generated client (HTTP/2), Connect JSON through the testkit's
//! HTTP/1.1 client, both on the same port. The rules are those of
//! `docs/scenarios.md` (`bubble-sort`).

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::body::Body;
use http_body_util::BodyExt as _;
use proptest::prelude::*;
use stackbench_contract::bubble::{GRPC_PATH, MAX_LEN, SEED, SEED_SORTED};
use stackbench_contract::check::{Expect, ResponseView, check};
use stackbench_serve::proto::List;
use stackbench_serve::proto::sort_service_client::SortServiceClient;
use stackbench_serve::{BubbleOptions as Options, bind, bubble_router, serve_bubble_sort};
use stackbench_testkit::http;
use tonic::Code;
use tonic::transport::Channel;
use tower::ServiceExt as _;

/// One runtime for every test, serving a gRPC-only and a `--rest` contestant.
struct Servers {
    runtime: tokio::runtime::Runtime,
    grpc_only: SocketAddr,
    rest: SocketAddr,
}

static SERVERS: LazyLock<Servers> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let start = |opts| {
        runtime.block_on(async {
            let listener = bind(IpAddr::from([127, 0, 0, 1]), 0).await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(serve_bubble_sort(listener, opts));
            addr
        })
    };
    let grpc_only = start(Options { rest: false, ..Options::default() });
    let rest = start(Options { rest: true, ..Options::default() });
    Servers { runtime, grpc_only, rest }
});

fn block_on<F: Future>(f: F) -> F::Output {
    SERVERS.runtime.block_on(f)
}

async fn client(addr: SocketAddr) -> SortServiceClient<Channel> {
    SortServiceClient::connect(format!("http://{addr}")).await.expect("the server accepts h2c")
}

async fn sort(addr: SocketAddr, data: Vec<i32>) -> Result<Vec<i32>, tonic::Status> {
    client(addr).await.bubble_sort(List { data }).await.map(|r| r.into_inner().data)
}

#[test]
fn sorts_the_seed_list_over_grpc_with_and_without_rest() {
    for addr in [SERVERS.grpc_only, SERVERS.rest] {
        assert_eq!(block_on(sort(addr, SEED.clone())).unwrap(), *SEED_SORTED);
    }
}

#[test]
fn an_empty_list_is_valid() {
    assert_eq!(block_on(sort(SERVERS.grpc_only, Vec::new())).unwrap(), Vec::<i32>::new());
}

#[test]
fn more_than_max_len_numbers_is_invalid_argument() {
    // 10,000 numbers are accepted (nearly sorted, so that a debug build is quick) ...
    let mut max: Vec<i32> = (0..MAX_LEN as i32).collect();
    max.swap(10, 9_990);
    let sorted = block_on(sort(SERVERS.grpc_only, max)).unwrap();
    assert!(sorted.len() == MAX_LEN && sorted.windows(2).all(|w| w[0] < w[1]));
    // ... one more is refused with a message saying what to do.
    let status = block_on(sort(SERVERS.grpc_only, vec![5; MAX_LEN + 1])).unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("10001") && status.message().contains("at most 10000"), "{status:?}");
}

#[test]
fn messages_over_4_mib_are_refused_by_the_transport() {
    // 1.3 million numbers of 4 bytes each: a 5.2 MB message.
    let huge = vec![1 << 27; 1_300_000];
    let status = block_on(sort(SERVERS.grpc_only, huge)).unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("4194304"), "{status:?}");
}

#[test]
fn an_unknown_method_is_unimplemented() {
    let status = block_on(async {
        let mut grpc = tonic::client::Grpc::new(
            Channel::from_shared(format!("http://{}", SERVERS.rest)).unwrap().connect().await.unwrap(),
        );
        grpc.ready().await.unwrap();
        let path = axum::http::uri::PathAndQuery::from_static("/sort.v1.SortService/QuickSort");
        grpc.unary::<List, List, _>(
            tonic::Request::new(List { data: vec![2, 1] }),
            path,
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap_err()
    });
    assert_eq!(status.code(), Code::Unimplemented, "{status:?}");
    assert!(status.message().contains(GRPC_PATH), "{status:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any list comes back as its sorted permutation.
    #[test]
    fn any_list_comes_back_sorted(data in proptest::collection::vec(any::<i32>(), 0..400)) {
        let mut expected = data.clone();
        expected.sort_unstable();
        prop_assert_eq!(block_on(sort(SERVERS.grpc_only, data)).unwrap(), expected);
    }
}

// ---- Connect JSON (`--rest`) over HTTP/1.1 ----

fn error_of(r: &http::Response) -> String {
    assert_eq!(r.header("content-type"), Some("application/json"), "{}", r.text());
    let v: serde_json::Value =
        serde_json::from_slice(&r.body).unwrap_or_else(|_| panic!("not JSON: {}", r.text()));
    v["error"].as_str().unwrap_or_else(|| panic!("no error in {}", r.text())).to_owned()
}

#[test]
fn connect_json_sorts_the_seed_list() {
    let body = serde_json::json!({ "data": &*SEED }).to_string();
    let r = http::post_json(SERVERS.rest, GRPC_PATH, &body).unwrap();
    let view = ResponseView {
        status: r.status,
        content_type: r.header("content-type").map(str::as_bytes),
        body: &r.body,
    };
    let sorted: Arc<[i32]> = SEED_SORTED.clone().into();
    assert_eq!(check(&Expect::SortedJson(sorted), &view), Ok(()), "{}", r.text());

    let r = http::post_json(SERVERS.rest, GRPC_PATH, r#"{"data":[]}"#).unwrap();
    assert_eq!((r.status, r.text().as_str()), (200, r#"{"data":[]}"#));
    let r = http::post_json(SERVERS.rest, GRPC_PATH, r#"{"data":[3,"-1",2]}"#).unwrap();
    assert_eq!((r.status, r.text().as_str()), (200, r#"{"data":[-1,2,3]}"#));
}

#[test]
fn connect_json_refusals_are_json_errors() {
    let rest = SERVERS.rest;
    let too_many = format!("{{\"data\":[{}0]}}", "7,".repeat(MAX_LEN));
    let r = http::post_json(rest, GRPC_PATH, &too_many).unwrap();
    assert_eq!(r.status, 400);
    assert!(error_of(&r).contains("at most 10000"), "{}", r.text());

    for bad in [r#"{"data":[1.5]}"#, r#"{"data":"1,2"}"#, "[1,2]", "{"] {
        let r = http::post_json(rest, GRPC_PATH, bad).unwrap();
        assert_eq!(r.status, 400, "{bad}");
        assert!(error_of(&r).contains("{\"data\": [int32, ...]}"), "{bad}: {}", r.text());
    }

    let r = http::request(rest, "POST", GRPC_PATH, &[("Content-Type", "text/plain")], b"[1]").unwrap();
    assert_eq!(r.status, 415);
    assert!(error_of(&r).contains("application/json"), "{}", r.text());

    let r = http::get(rest, GRPC_PATH).unwrap();
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    error_of(&r);

    let r = http::post_json(rest, "/sort.v1.SortService/QuickSort", "{}").unwrap();
    assert_eq!(r.status, 404);
    assert!(error_of(&r).contains(GRPC_PATH), "{}", r.text());
}

#[test]
fn connect_json_over_4_mib_is_413_before_the_body_is_read() {
    // Declared length: refused at once, the client never sends the body.
    let mut s = TcpStream::connect(SERVERS.rest).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST {GRPC_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n"
    )
    .unwrap();
    let mut status = String::new();
    BufReader::new(&s).read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");

    // Undeclared length (streamed): cut at the limit.
    let body = Body::from(vec![b' '; 4 * 1024 * 1024 + 1]);
    let req =
        axum::http::Request::post(GRPC_PATH).header("content-type", "application/json").body(body).unwrap();
    let resp = block_on(bubble_router(Options { rest: true, ..Options::default() }).oneshot(req)).unwrap();
    assert_eq!(resp.status(), 413);
    let body = block_on(resp.into_body().collect()).unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("4 MiB"));
}

#[test]
fn without_rest_json_is_415_and_says_how_to_enable_it() {
    let r = http::post_json(SERVERS.grpc_only, GRPC_PATH, r#"{"data":[2,1]}"#).unwrap();
    assert_eq!(r.status, 415);
    assert!(error_of(&r).contains("--rest"), "{}", r.text());
}
