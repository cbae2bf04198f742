//! One real round trip per database the reference contestants use, proving
//! the CI path from day one: each test reads its URL from
//! `STACKBENCH_TEST_<DB>`, skips visibly without it, and fails under `CI=true`.

use stackbench_testkit::{INFLUXDB, MYSQL, POSTGRES, REDIS, database_url, http};

#[tokio::test]
async fn postgres_round_trip() {
    let Some(url) = database_url(POSTGRES) else {
        return;
    };
    let (client, conn) =
        tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connect to PostgreSQL");
    tokio::spawn(conn);
    client
        .batch_execute("CREATE TEMP TABLE roundtrip (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        .await
        .unwrap();
    client.execute("INSERT INTO roundtrip VALUES ($1, $2)", &[&7i32, &"seven"]).await.unwrap();
    let row = client.query_one("SELECT name FROM roundtrip WHERE id = $1", &[&7i32]).await.unwrap();
    assert_eq!(row.get::<_, String>(0), "seven");
}

#[tokio::test]
async fn mysql_round_trip() {
    use mysql_async::prelude::Queryable as _;
    let Some(url) = database_url(MYSQL) else {
        return;
    };
    let pool = mysql_async::Pool::new(url.as_str());
    let mut conn = pool.get_conn().await.expect("connect to MySQL/MariaDB");
    conn.query_drop("CREATE TEMPORARY TABLE roundtrip (id INTEGER PRIMARY KEY, name VARCHAR(16) NOT NULL)")
        .await
        .unwrap();
    conn.exec_drop("INSERT INTO roundtrip VALUES (?, ?)", (7, "seven")).await.unwrap();
    let name: Option<String> =
        conn.exec_first("SELECT name FROM roundtrip WHERE id = ?", (7,)).await.unwrap();
    assert_eq!(name.as_deref(), Some("seven"));
    drop(conn);
    pool.disconnect().await.unwrap();
}

#[tokio::test]
async fn redis_round_trip() {
    let Some(url) = database_url(REDIS) else {
        return;
    };
    let client = redis::Client::open(url.as_str()).expect("a valid Redis URL");
    let mut conn = client.get_multiplexed_async_connection().await.expect("connect to Redis");
    let key = format!("stackbench:test:roundtrip:{}", std::process::id());
    let () = redis::cmd("SET").arg(&key).arg("seven").arg("EX").arg(60).query_async(&mut conn).await.unwrap();
    let got: String = redis::cmd("GET").arg(&key).query_async(&mut conn).await.unwrap();
    assert_eq!(got, "seven");
    let _: i64 = redis::cmd("DEL").arg(&key).query_async(&mut conn).await.unwrap();
}

#[test]
fn influxdb_round_trip() {
    let Some(url) = database_url(INFLUXDB) else {
        return;
    };
    // influxdb://host:port/db
    let rest =
        url.strip_prefix("influxdb://").expect("STACKBENCH_TEST_INFLUXDB looks like influxdb://host:8086/db");
    let (host, db) = rest.split_once('/').expect("the URL names a database");
    let addr = std::net::ToSocketAddrs::to_socket_addrs(host).unwrap().next().unwrap();
    let ping = http::get(addr, "/ping").expect("InfluxDB answers");
    assert_eq!(ping.status, 204);
    let q = |query: &str| {
        let enc = percent_encoding::utf8_percent_encode(query, percent_encoding::NON_ALPHANUMERIC);
        http::request(addr, "POST", &format!("/query?db={db}&q={enc}"), &[], b"").unwrap()
    };
    assert_eq!(q(&format!("CREATE DATABASE \"{db}\"")).status, 200);
    let measurement = format!("roundtrip_{}", std::process::id());
    let write = http::request(
        addr,
        "POST",
        &format!("/write?db={db}&precision=ms"),
        &[],
        format!("{measurement},source=test value=7 1764460800000").as_bytes(),
    )
    .unwrap();
    assert_eq!(write.status, 204, "{}", write.text());
    let count = q(&format!("SELECT COUNT(value) FROM \"{measurement}\""));
    assert!(count.text().contains("[\"1970-01-01T00:00:00Z\",1]"), "{}", count.text());
    assert_eq!(q(&format!("DROP MEASUREMENT \"{measurement}\"")).status, 200);
}
