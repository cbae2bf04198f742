//! Helpers shared by the db-read integration tests: databases of their own
//! (so no other test's tables or keys are touched), requests through the
//! real router, and the id pairs every driver is checked with.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use axum::http::header::CONTENT_TYPE;
use http_body_util::BodyExt as _;
use stackbench_contract::check::{CheckError, Expect, ResponseView, check};
use stackbench_contract::dbread::ROWS;
use stackbench_serve::{Drivers, db_read_router as router};
use tower::ServiceExt as _;

/// The database (PostgreSQL, MariaDB) the db-read tests seed.
pub const DATABASE: &str = "stackbench_dbread";
/// The Redis database number the db-read tests seed.
pub const REDIS_DB: u32 = 3;

/// `url` with its path (database name or number) replaced by `path`.
pub fn with_path(url: &str, path: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL with ://");
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    format!("{scheme}://{authority}/{path}")
}

/// Creates the test database on the PostgreSQL server of `url` if needed and
/// returns its URL.
pub async fn postgres_database(url: &str) -> String {
    postgres_database_named(url, DATABASE).await
}

/// Creates database `name` on the PostgreSQL server of `url` if needed and
/// returns its URL.
pub async fn postgres_database_named(url: &str, name: &str) -> String {
    let (client, conn) =
        tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect to PostgreSQL");
    tokio::spawn(conn);
    let exists =
        client.query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name]).await.unwrap().is_some();
    if !exists {
        // Another test binary may create it at the same moment.
        if let Err(e) = client.batch_execute(&format!("CREATE DATABASE {name}")).await {
            let e = e.as_db_error().map(ToString::to_string).unwrap_or(e.to_string());
            assert!(e.contains("already exists") || e.contains("duplicate key"), "{e}");
        }
    }
    with_path(url, name)
}

/// Creates the test database on the MariaDB server of `url` if needed and
/// returns its URL.
pub async fn mysql_database(url: &str) -> String {
    mysql_database_named(url, DATABASE).await
}

/// Creates database `name` on the MariaDB server of `url` if needed and
/// returns its URL.
pub async fn mysql_database_named(url: &str, name: &str) -> String {
    use mysql_async::prelude::Queryable as _;
    let mut conn = mysql_async::Conn::from_url(url).await.expect("connect to MariaDB");
    conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS {name}")).await.unwrap();
    conn.disconnect().await.unwrap();
    with_path(url, name)
}

/// Status, content type and body of `GET uri`.
pub async fn get(drivers: &Arc<Drivers>, uri: &str) -> (u16, Option<String>, Vec<u8>) {
    let req = Request::builder().uri(uri).body(Body::empty()).unwrap();
    let resp = router(drivers.clone()).oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let ct = resp.headers().get(CONTENT_TYPE).map(|v| v.to_str().unwrap().to_owned());
    let body = resp.into_body().collect().await.unwrap().to_bytes().to_vec();
    (status, ct, body)
}

/// Checks `GET uri` against `expect`.
pub async fn expect(drivers: &Arc<Drivers>, uri: &str, expect: &Expect) -> Result<(), (CheckError, String)> {
    let (status, ct, body) = get(drivers, uri).await;
    let view = ResponseView { status, content_type: ct.as_deref().map(str::as_bytes), body: &body };
    check(expect, &view).map_err(|e| (e, String::from_utf8_lossy(&body).into_owned()))
}

/// The id pairs every driver must answer: first, last, equal, reversed, and
/// 24 pseudo-random pairs (SplitMix64, fixed seed).
pub fn id_pairs() -> Vec<(u32, u32)> {
    let mut pairs = vec![(1, 2), (2, 1), (1, ROWS), (ROWS, 1), (ROWS, ROWS), (1, 1), (4999, 5000), (7, 7)];
    let mut rng = stackbench_contract::rng::SplitMix64(0x5eed_0002);
    let mut next = || rng.below(u64::from(ROWS)) as u32 + 1;
    for _ in 0..24 {
        pairs.push((next(), next()));
    }
    pairs
}

/// Every pair right, and the missing-row and bad-id cases, through `driver`.
pub async fn check_driver(drivers: &Arc<Drivers>, driver: &str) {
    for (a, b) in id_pairs() {
        let uri = format!("/db/{driver}?a={a}&b={b}");
        if let Err((e, body)) = expect(drivers, &uri, &Expect::Rows { a, b }).await {
            panic!("{uri}: {e}; body {body}");
        }
    }
    expect(drivers, &format!("/db/{driver}"), &Expect::Rows { a: 1, b: 2 }).await.unwrap();
    for (query, status) in [
        ("a=10001&b=1", 404),
        ("a=1&b=2147483647", 404),
        ("a=0", 400),
        ("a=1&b=x", 400),
        ("a=2147483648", 400),
    ] {
        let uri = format!("/db/{driver}?{query}");
        if let Err((e, body)) = expect(drivers, &uri, &Expect::Error { status }).await {
            panic!("{uri}: {e}; body {body}");
        }
    }
}
