//! Every db-read driver against its real database: seed (twice: the second
//! changes nothing), connect, then the right two rows in id order for a spread
//! of id pairs, 404 for a missing row and 400 for a bad id. The PostgreSQL and
//! MariaDB tests use their own database (`stackbench_dbread`), Redis its own
//! database number, SQLite a temp file.

use std::sync::Arc;

use crate::db_read_common::{
    REDIS_DB, check_driver, get, mysql_database, mysql_database_named, postgres_database,
    postgres_database_named, with_path,
};
use stackbench_serve::{DbReadConfig as Config, SeedOutcome as Outcome, SeedStore as Store, connect, seed};
use stackbench_testkit::{MYSQL, POSTGRES, REDIS, database_url};

async fn seeded(store: Store) {
    let first = seed(&store).await.unwrap_or_else(|e| panic!("seeding {store}: {e}"));
    println!("{first}");
    let again = seed(&store).await.unwrap();
    assert_eq!(again.outcome, Outcome::Unchanged, "seeding twice changes nothing: {again}");
}

async fn served(config: Config, drivers: &[&str]) {
    let (served, notes) = connect(&config).await.unwrap_or_else(|e| panic!("{e}"));
    let served = Arc::new(served);
    assert_eq!(served.names(), drivers.join(", "));
    for d in drivers {
        assert!(notes.iter().any(|n| n.contains(&format!("/db/{d} "))), "{notes:?}");
    }
    let (status, _, body) = get(&served, "/db").await;
    assert_eq!(status, 200);
    let list: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let names: Vec<&str> =
        list["drivers"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, drivers);
    for d in drivers {
        check_driver(&served, d).await;
    }
}

#[tokio::test]
async fn postgres_drivers() {
    let Some(url) = database_url(POSTGRES) else {
        return;
    };
    let url = postgres_database(&url).await;
    seeded(Store::Postgres(url.clone())).await;
    let config = Config { postgres: Some(url), pool: Some(3), ..Config::new() };
    served(config, &["tokio-postgres", "sqlx-postgres", "sea-orm-postgres"]).await;
}

#[tokio::test]
async fn mysql_drivers() {
    let Some(url) = database_url(MYSQL) else {
        return;
    };
    let url = mysql_database(&url).await;
    seeded(Store::Mysql(url.clone())).await;
    let config = Config { mysql: Some(url), pool: Some(3), ..Config::new() };
    served(config, &["mysql-async", "sqlx-mysql", "sea-orm-mysql"]).await;
}

#[tokio::test]
async fn redis_driver() {
    let Some(url) = database_url(REDIS) else {
        return;
    };
    let url = with_path(&url, &REDIS_DB.to_string());
    seeded(Store::Redis(url.clone())).await;
    served(Config { redis: Some(url), ..Config::new() }, &["redis"]).await;
}

#[tokio::test]
async fn sqlite_driver() {
    let dir = tempfile::Builder::new().prefix("stackbench-dbread-drivers-").tempdir().unwrap();
    let path = dir.path().join("items.sqlite3");
    seeded(Store::Sqlite(path.clone())).await;
    served(Config { sqlite: Some(path), ..Config::new() }, &["sqlite"]).await;
}

/// Four seeders at once on an empty database: all succeed, one loads, the
/// others find the data set (they take turns on a lock).
async fn concurrent_seeders(store: Store) {
    let all = (0..4).map(|_| seed(&store));
    let reports = futures_util::future::join_all(all).await;
    let mut loaded = 0;
    for r in reports {
        let r = r.unwrap_or_else(|e| panic!("a concurrent seeder failed: {e}"));
        loaded += usize::from(matches!(r.outcome, Outcome::Loaded { .. }));
    }
    assert_eq!(loaded, 1, "exactly one seeder loads the data set");
}

#[tokio::test]
async fn postgres_concurrent_seeders() {
    let Some(url) = database_url(POSTGRES) else {
        return;
    };
    let url = postgres_database_named(&url, "stackbench_dbread_race").await;
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    client.batch_execute("DROP TABLE IF EXISTS items").await.unwrap();
    concurrent_seeders(Store::Postgres(url)).await;
}

#[tokio::test]
async fn mysql_concurrent_seeders() {
    use mysql_async::prelude::Queryable as _;
    let Some(url) = database_url(MYSQL) else {
        return;
    };
    let url = mysql_database_named(&url, "stackbench_dbread_race").await;
    let mut conn = mysql_async::Conn::from_url(url.as_str()).await.unwrap();
    conn.query_drop("DROP TABLE IF EXISTS items").await.unwrap();
    conn.disconnect().await.unwrap();
    concurrent_seeders(Store::Mysql(url)).await;
}

#[tokio::test]
async fn sqlite_concurrent_seeders() {
    let dir = tempfile::Builder::new().prefix("stackbench-dbread-race-").tempdir().unwrap();
    concurrent_seeders(Store::Sqlite(dir.path().join("items.sqlite3"))).await;
}
