//! The `db-read` contract on axum: `GET /db` lists the drivers, `GET
//! /db/{driver}?a=&b=` answers two rows; 405 with `Allow` on a wrong method,
//! 404 listing the routes on an unknown path. The rules are in [`super::answer`].
//!
//! The driver is read from the raw path rather than axum's `Path` extractor,
//! so that a malformed segment becomes a JSON 404 like any unknown driver, not
//! axum's plain-text 400.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::get;

use super::Drivers;
use super::answer::{ALLOW, not_found};
use crate::axum_stack::{json, reject};
use crate::events::Rejection;

/// The `db-read` service over these drivers.
pub fn router(drivers: Arc<Drivers>) -> Router {
    let wrong_method = |m: Method, u: Uri| async move {
        reject(&Rejection::method_not_allowed(m.as_str(), u.path(), ALLOW), Some(ALLOW))
    };
    Router::new()
        .route("/db", get(list).fallback(wrong_method))
        .route("/db/{driver}", get(read).fallback(wrong_method))
        .fallback(
            |req: Request| async move { reject(&not_found(req.method().as_str(), req.uri().path()), None) },
        )
        .with_state(drivers)
}

async fn list(State(drivers): State<Arc<Drivers>>) -> Response {
    json(StatusCode::OK, drivers.list_json())
}

async fn read(State(drivers): State<Arc<Drivers>>, uri: Uri) -> Response {
    let driver = uri.path().strip_prefix("/db/").unwrap_or_default();
    match drivers.answer(driver, uri.query()).await {
        Ok(body) => json(StatusCode::OK, body),
        Err(r) => reject(&r, None),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::body::Body;
    use axum::http::HeaderMap;
    use axum::http::header::{ALLOW as ALLOW_HEADER, CONTENT_TYPE};
    use http_body_util::BodyExt as _;
    use stackbench_contract::check::{Expect, ResponseView, check};
    use stackbench_contract::dbread;
    use tower::ServiceExt as _;

    use super::*;
    use crate::db_read::answer::Backend;
    use crate::db_read::{Driver, Fetch, FetchFuture};

    /// The data set in memory.
    struct DataSet;

    impl Fetch for DataSet {
        fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
            Box::pin(async move {
                Ok(ids.into_iter().filter(|&id| id <= dbread::ROWS).map(dbread::item).collect())
            })
        }
    }

    async fn call(method: &str, uri: &str) -> (u16, HeaderMap, Vec<u8>) {
        let mut d = Drivers::new(Duration::from_secs(1));
        d.insert(Backend {
            driver: Driver::Sqlite,
            location: "memory".into(),
            pool: "1 connection".into(),
            fetch: Box::new(DataSet),
        });
        let req = Request::builder().method(method).uri(uri).body(Body::empty()).unwrap();
        let resp = router(Arc::new(d)).oneshot(req).await.unwrap();
        let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
        let body = resp.into_body().collect().await.unwrap().to_bytes().to_vec();
        (status, headers, body)
    }

    fn expect(e: &Expect, (status, headers, body): &(u16, HeaderMap, Vec<u8>)) {
        let view = ResponseView {
            status: *status,
            content_type: headers.get(CONTENT_TYPE).map(axum::http::HeaderValue::as_bytes),
            body,
        };
        assert_eq!(check(e, &view), Ok(()), "{}", String::from_utf8_lossy(body));
    }

    #[tokio::test]
    async fn two_rows() {
        expect(&Expect::Rows { a: 1, b: 2 }, &call("GET", "/db/sqlite").await);
        expect(&Expect::Rows { a: 10000, b: 1 }, &call("GET", "/db/sqlite?a=10000&b=1").await);
        expect(&Expect::Rows { a: 3, b: 3 }, &call("GET", "/db/sqlite?a=3&b=3").await);
        let (status, _, body) = call("HEAD", "/db/sqlite").await;
        assert_eq!((status, body.len()), (200, 0));
    }

    #[tokio::test]
    async fn list() {
        let r = call("GET", "/db").await;
        assert_eq!(r.0, 200);
        assert_eq!(r.1[CONTENT_TYPE], "application/json");
        let v: serde_json::Value = serde_json::from_slice(&r.2).unwrap();
        assert_eq!(v["drivers"][0]["name"], "sqlite");
    }

    #[tokio::test]
    async fn errors_are_json_with_the_contract_status() {
        for (method, uri, status) in [
            ("GET", "/db/unknown", 404),
            ("GET", "/db/tokio-postgres", 404),
            ("GET", "/db/sqlite?a=abc", 400),
            ("GET", "/db/sqlite?a=2147483648", 400),
            ("GET", "/db/sqlite?b=0", 400),
            ("GET", "/db/sqlite?a=1&a=2", 400),
            ("GET", "/db/sqlite?a=10001", 404),
            ("GET", "/db/sqlite?a=2147483647&b=1", 404),
            ("GET", "/db/%FF", 404),
            ("GET", "/db/", 404),
            ("GET", "/db/sqlite/extra", 404),
            ("GET", "/nope", 404),
            ("POST", "/db/sqlite", 405),
            ("DELETE", "/db", 405),
        ] {
            let r = call(method, uri).await;
            expect(&Expect::Error { status }, &r);
            if status == 405 {
                assert_eq!(r.1[ALLOW_HEADER], ALLOW, "{method} {uri}");
            }
        }
        let (_, _, body) = call("GET", "/nope").await;
        assert!(String::from_utf8_lossy(&body).contains("GET /db/{driver}"));
    }
}
