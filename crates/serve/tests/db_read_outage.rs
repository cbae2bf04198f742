//! Database down, then back: every network driver answers 503 (JSON, within
//! the request timeout) while its database is stopped, and 200 with the right
//! rows again once it is started, without restarting the contestant.
//!
//! Each test starts a private database ([`stackbench_testkit::instances`]) and
//! stops and starts that; the shared databases of the other tests are never
//! stopped. The contestants in other languages have the same test in
//! `crates/cli/tests/db_read_outage_contestants.rs`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::db_read_common::{check_driver, get};
use stackbench_contract::check::Expect;
use stackbench_serve::{DbReadConfig as Config, Drivers, SeedStore as Store, connect, seed};
use stackbench_testkit::instances::{Instance, Mariadb, Postgres, Redis};

/// The per-request timeout of the contestant under test.
const TIMEOUT: Duration = Duration::from_secs(2);

async fn status_of(drivers: &Arc<Drivers>, driver: &str) -> (u16, Duration, String) {
    let start = Instant::now();
    let (status, _, body) = get(drivers, &format!("/db/{driver}?a=3&b=9")).await;
    (status, start.elapsed(), String::from_utf8_lossy(&body).into_owned())
}

/// Everything right, database stopped: 503s; started again: right answers.
async fn outage_and_recovery(db: &mut dyn Instance, config: Config, names: &[&str], store: Store) {
    seed(&store).await.unwrap();
    let (drivers, _) =
        connect(&Config { timeout: TIMEOUT, ..config }).await.unwrap_or_else(|e| panic!("{e}"));
    let drivers = Arc::new(drivers);
    for name in names {
        // Concurrent requests, so that each pool holds several connections.
        let all = (0..8).map(|_| status_of(&drivers, name));
        for (status, _, body) in futures_util::future::join_all(all).await {
            assert_eq!(status, 200, "{name}: {body}");
        }
    }

    db.stop();
    for name in names {
        for _ in 0..3 {
            let (status, took, body) = status_of(&drivers, name).await;
            assert_eq!(status, 503, "{name} with its database stopped: {body}");
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert!(v["error"].as_str().unwrap().contains(name), "{body}");
            assert!(took < TIMEOUT + Duration::from_secs(2), "{name}: a 503 took {took:?}");
            println!("{name}: database down: 503 in {took:?}: {body}");
        }
    }

    db.start();
    for name in names {
        let back = Instant::now();
        let deadline = back + Duration::from_secs(30);
        loop {
            let (status, _, body) = status_of(&drivers, name).await;
            if status == 200 {
                println!("{name}: answers again {:?} after its database is back", back.elapsed());
                break;
            }
            assert!(Instant::now() < deadline, "{name} did not recover within 30 s: {status} {body}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        check_driver(&drivers, name).await;
        let (status, _, body) = get(&drivers, &format!("/db/{name}?a=10000&b=10000")).await;
        let view = stackbench_contract::check::ResponseView {
            status,
            content_type: Some(b"application/json"),
            body: body.as_slice(),
        };
        stackbench_contract::check::check(&Expect::Rows { a: 10000, b: 10000 }, &view).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_down_then_back() {
    let Some(mut pg) = Postgres::new() else {
        return;
    };
    let url = pg.url();
    let config = Config { postgres: Some(url.clone()), pool: Some(3), ..Config::new() };
    let names = ["tokio-postgres", "sqlx-postgres", "sea-orm-postgres"];
    outage_and_recovery(&mut pg, config, &names, Store::Postgres(url)).await;
}

/// MariaDB's count of connections ever opened.
async fn connections_opened(url: &str) -> u64 {
    use mysql_async::prelude::Queryable as _;
    let mut conn = mysql_async::Conn::from_url(url).await.unwrap();
    let row: Option<(String, u64)> = conn.query_first("SHOW GLOBAL STATUS LIKE 'Connections'").await.unwrap();
    conn.disconnect().await.unwrap();
    row.unwrap().1
}

/// Regression: with mysql_async's pool at `min = 0` every request opened a new
/// connection (its pool keeps only `min` idle connections by default). Each
/// MySQL driver must reuse its pool's connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mysql_pools_reuse_their_connections() {
    let Some(db) = Mariadb::new() else {
        return;
    };
    let url = db.url();
    seed(&Store::Mysql(url.clone())).await.unwrap();
    let config = Config { mysql: Some(url.clone()), pool: Some(3), ..Config::new() };
    let (drivers, _) = connect(&config).await.unwrap();
    let drivers = Arc::new(drivers);
    for name in ["mysql-async", "sqlx-mysql", "sea-orm-mysql"] {
        let before = connections_opened(&url).await;
        for i in 1..=60 {
            let (status, _, body) = get(&drivers, &format!("/db/{name}?a={i}&b=1")).await;
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        }
        // At most the pool's 3, plus the one that read the counter.
        let opened = connections_opened(&url).await - before;
        assert!(opened <= 4, "{name} opened {opened} connections for 60 requests on a pool of 3");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_down_then_back() {
    let Some(mut db) = Mariadb::new() else {
        return;
    };
    let url = db.url();
    let config = Config { mysql: Some(url.clone()), pool: Some(3), ..Config::new() };
    let names = ["mysql-async", "sqlx-mysql", "sea-orm-mysql"];
    outage_and_recovery(&mut db, config, &names, Store::Mysql(url)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_then_back() {
    let Some(mut r) = Redis::new() else {
        return;
    };
    let url = r.url();
    let config = Config { redis: Some(url.clone()), pool: Some(2), ..Config::new() };
    outage_and_recovery(&mut r, config, &["redis"], Store::Redis(url)).await;
}
