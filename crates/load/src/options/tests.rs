use super::*;
use crate::spec::{Bound, ModelSpec, RequestSource, Transport};

fn opts() -> LoadOptions {
    LoadOptions::default()
}

fn err(o: &LoadOptions, url: &str) -> String {
    o.to_spec(url).unwrap_err().to_string()
}

#[test]
fn defaults() {
    let s = opts().to_spec("http://127.0.0.1:8080").unwrap();
    assert_eq!(s.target.path, "/");
    assert_eq!(s.target.authority, "127.0.0.1:8080");
    assert_eq!(s.transport, Transport::Http1);
    assert_eq!(s.bound, Bound::Duration(DEFAULT_DURATION));
    assert!(matches!(s.model, ModelSpec::Closed { connections: 10, streams: 1, .. }));
    assert!(s.keepalive() && s.stages.is_empty());
    assert_eq!(s.check_every, CheckEvery::Every(0));
    let s = opts().to_spec("http://localhost/x?y=1").unwrap();
    assert_eq!(
        (s.target.port, s.target.path.as_str(), s.target.authority.as_str()),
        (80, "/x?y=1", "localhost:80")
    );
}

#[test]
fn bad_urls_say_what_is_wrong() {
    assert!(err(&opts(), "127.0.0.1:8080").contains("no scheme"));
    assert!(err(&opts(), "ftp://x/").contains("unsupported scheme \"ftp\""));
    assert!(err(&opts(), "http://").contains("malformed URL"));
    assert!(err(&opts(), "http://a b/").contains("malformed URL"));
    assert!(err(&opts(), "http://127.0.0.1:0/").contains("port 0"));
}

#[test]
fn nonsense_numbers_are_refused() {
    let o = LoadOptions { rate: Some(0.0), ..opts() };
    assert!(err(&o, "http://h/").contains("--rate: 0 is not a rate"));
    let o = LoadOptions { rate: Some(f64::NAN), ..opts() };
    assert!(err(&o, "http://h/").contains("--rate"));
    let o = LoadOptions { duration: Some(Dur(Duration::ZERO)), ..opts() };
    assert!(err(&o, "http://h/").contains("-d/--duration: must be longer"));
    let o = LoadOptions { requests: Some(0), ..opts() };
    assert!(err(&o, "http://h/").contains("-n/--requests"));
    let o = LoadOptions { connections: Some(0), ..opts() };
    assert!(err(&o, "http://h/").contains("-c/--connections"));
    let o = LoadOptions { timeout: Some(Dur(Duration::ZERO)), ..opts() };
    assert!(err(&o, "http://h/").contains("--timeout"));
    let o = LoadOptions { threads: Some(0), ..opts() };
    assert!(err(&o, "http://h/").contains("--threads"));
}

/// Regression: `-c 4294967295` was accepted and ran until the OOM killer.
/// Every count and size has an upper bound, refused before anything starts.
#[test]
fn huge_values_are_refused_with_the_bound() {
    let secs = |s| Some(Dur(Duration::from_secs(s)));
    let cases: Vec<(LoadOptions, &str)> = vec![
        (LoadOptions { connections: Some(4_294_967_295), ..opts() }, "-c/--connections: at most 100000"),
        (LoadOptions { http2: true, streams: Some(5_000), ..opts() }, "--streams: at most 1000"),
        (
            LoadOptions { http2: true, connections: Some(1_000), streams: Some(1_000), ..opts() },
            "at most 100000 virtual users",
        ),
        (LoadOptions { rate: Some(1e12), ..opts() }, "--rate: at most"),
        (
            LoadOptions { rate: Some(10.0), max_in_flight: Some(usize::MAX), ..opts() },
            "--max-in-flight: at most",
        ),
        (LoadOptions { requests: Some(u64::MAX), ..opts() }, "-n/--requests: at most"),
        (LoadOptions { threads: Some(1 << 20), ..opts() }, "--threads: at most 1024"),
        (LoadOptions { duration: secs(100 * 86_400), ..opts() }, "-d/--duration: at most 24h"),
        (LoadOptions { warmup: secs(100 * 86_400).map(WarmupArg::Fixed), ..opts() }, "--warmup: at most"),
        (
            LoadOptions { warmup: Some(WarmupArg::Auto), max_warmup: secs(100 * 86_400), ..opts() },
            "--warmup: at most",
        ),
        (LoadOptions { timeout: secs(7_200), ..opts() }, "--timeout: at most 1h"),
        (LoadOptions { think: secs(7_200), ..opts() }, "--think: at most 1h"),
        (
            LoadOptions { stages: Some("1s:4000000000".parse().unwrap()), ..opts() },
            "--stages: a stage's target",
        ),
        (LoadOptions { header: vec!["X: y".into(); 101], ..opts() }, "-H/--header: at most 100"),
    ];
    for (o, says) in cases {
        let e = err(&o, "http://h/");
        assert!(e.contains(says), "{says:?} in {e:?}");
    }
    // At the bounds themselves, accepted.
    assert!(LoadOptions { connections: Some(100_000), ..opts() }.to_spec("http://h/").is_ok());
    assert!(LoadOptions { duration: secs(86_400), ..opts() }.to_spec("http://h/").is_ok());
}

#[test]
fn conflicts_are_named() {
    let both = LoadOptions { duration: Some(Dur(Duration::from_secs(1))), requests: Some(5), ..opts() };
    assert!(err(&both, "http://h/").contains("-d/--duration and -n/--requests cannot be used together"));
    let o = LoadOptions { rate: Some(10.0), think: Some(Dur(Duration::from_millis(5))), ..opts() };
    assert!(err(&o, "http://h/").contains("--think and --rate"));
    let o = LoadOptions { streams: Some(4), ..opts() };
    assert!(err(&o, "http://h/").contains("needs --http2"));
    let o = LoadOptions { max_in_flight: Some(4), ..opts() };
    assert!(err(&o, "http://h/").contains("open model"));
    let o = LoadOptions { scenario: Some("dummy".into()), body: Some("x".into()), ..opts() };
    assert!(err(&o, "http://h/").contains("--scenario and -b/--body"));
    let o = LoadOptions { grpc: true, ..opts() };
    assert!(err(&o, "http://h/").contains("--grpc: needs --scenario bubble-sort"));
    let o = LoadOptions { scenario: Some("bubble".into()), ..opts() };
    assert!(err(&o, "http://h/").contains("unknown scenario"));
    let o = LoadOptions { scenario: Some("db-read".into()), ..opts() };
    assert!(err(&o, "http://h/").contains("driver"));
    let o = LoadOptions { header: vec!["nocolon".into()], ..opts() };
    assert!(err(&o, "http://h/").contains("Name: value"));
    let o = LoadOptions { header: vec!["Content-Length: 3".into()], ..opts() };
    assert!(err(&o, "http://h/").contains("set by the engine"));
    let o = LoadOptions { body: Some("@/nonexistent/body.json".into()), ..opts() };
    assert!(err(&o, "http://h/").contains("cannot read /nonexistent/body.json"));
}

#[test]
fn models_and_stages() {
    let o = LoadOptions { connections: Some(100), ramp_up: Some(Dur(Duration::from_secs(1))), ..opts() };
    let s = o.to_spec("http://h/").unwrap();
    assert_eq!(s.stages.len(), 1);
    assert!((s.stages[0].target - 100.0).abs() < f64::EPSILON);
    let o = LoadOptions {
        stages: Some("10s:50,20s:50".parse().unwrap()),
        http2: true,
        streams: Some(8),
        ..opts()
    };
    let s = o.to_spec("http://h/").unwrap();
    assert_eq!(s.bound, Bound::Duration(Duration::from_secs(30)));
    assert!(matches!(s.model, ModelSpec::Closed { connections: 7, streams: 8, .. }));
    let o = LoadOptions { rate: Some(0.0), stages: Some("10s:100".parse().unwrap()), ..opts() };
    assert!(matches!(o.to_spec("http://h/").unwrap().model, ModelSpec::Open { .. }));
    let o = LoadOptions {
        stages: Some("5s:10".parse().unwrap()),
        warmup: Some(WarmupArg::Fixed(Dur(Duration::from_secs(5)))),
        ..opts()
    };
    assert!(err(&o, "http://h/").contains("nothing would be measured"));
}

#[test]
fn an_automatic_warmup_has_a_maximum_and_no_stages() {
    let s = opts().to_spec("http://h/").unwrap();
    assert_eq!((s.warmup, s.auto_warmup), (Duration::ZERO, false));
    let o: LoadOptions = toml::from_str("warmup = \"auto\"").unwrap();
    let s = o.to_spec("http://h/").unwrap();
    assert_eq!((s.warmup, s.auto_warmup), (DEFAULT_MAX_WARMUP, true));
    let o: LoadOptions = toml::from_str("warmup = \"auto\"\nmax-warmup = \"1m\"").unwrap();
    assert_eq!(o.to_spec("http://h/").unwrap().warmup, Duration::from_mins(1));
    let o: LoadOptions = toml::from_str("warmup = \"3s\"").unwrap();
    let s = o.to_spec("http://h/").unwrap();
    assert_eq!((s.warmup, s.auto_warmup), (Duration::from_secs(3), false));
    let cases: [(&str, &str); 5] = [
        ("warmup = \"3s\"\nmax-warmup = \"1m\"", "--max-warmup: belongs to --warmup auto"),
        ("max-warmup = \"1m\"", "--max-warmup: belongs to --warmup auto"),
        ("warmup = \"auto\"\nmax-warmup = \"9s\"", "--max-warmup: must be at least 10s"),
        ("warmup = \"auto\"\nstages = \"10s:5\"", "--warmup auto and --stages"),
        ("warmup = \"auto\"\nshard = \"1/2\"", "--warmup auto and --shard"),
    ];
    for (table, says) in cases {
        let o: LoadOptions = toml::from_str(table).unwrap();
        let e = err(&o, "http://h/");
        assert!(e.contains(says), "{says:?} in {e:?}");
    }
    let o = LoadOptions {
        find_max: true,
        slo: vec!["p99<10ms".parse().unwrap()],
        warmup: Some(WarmupArg::Auto),
        ..opts()
    };
    assert!(err(&o, "http://h/").contains("--warmup auto"), "{}", err(&o, "http://h/"));
    assert!(
        toml::from_str::<LoadOptions>("warmup = \"later\"").unwrap_err().to_string().contains("or `auto`")
    );
}

#[test]
fn timer_slack_belongs_to_the_open_model_and_is_bounded() {
    assert_eq!(opts().to_spec("http://h/").unwrap().timer_slack, Duration::ZERO);
    let slack = |d: Duration| LoadOptions { timer_slack: Some(Dur(d)), ..opts() };
    let o = slack(Duration::from_micros(200));
    assert!(err(&o, "http://h/").contains("--timer-slack: applies to the open model; add --rate"));
    let o = LoadOptions { rate: Some(1000.0), ..slack(Duration::from_micros(200)) };
    assert_eq!(o.to_spec("http://h/").unwrap().timer_slack, Duration::from_micros(200));
    let o = LoadOptions { rate: Some(1000.0), ..slack(Duration::from_secs(1)) };
    assert!(err(&o, "http://h/").contains("at most 100ms"));
    let o: LoadOptions = toml::from_str("rate = 500\ntimer-slack = \"1ms\"").unwrap();
    assert_eq!(o.to_spec("http://h/").unwrap().timer_slack, Duration::from_millis(1));
}

#[test]
fn scenarios_pick_their_transport() {
    let o = LoadOptions { scenario: Some("bubble-sort".into()), ..opts() };
    let s = o.to_spec("http://h:50051").unwrap();
    assert_eq!(s.transport, Transport::Grpc);
    assert_eq!(s.check_every, CheckEvery::Auto);
    let o = LoadOptions { scenario: Some("dummy".into()), http2: true, ..opts() };
    assert_eq!(o.to_spec("http://h/").unwrap().transport, Transport::H2c);
}

#[test]
fn a_plan_table_uses_the_flag_names() {
    let o: LoadOptions = toml::from_str(
        r#"
        connections = 100
        duration = "5m"
        think = "100ms"
        ramp-up = "1s"
        no-keepalive = true
        header = ["X-A: 1"]
        threshold = ["p99<50ms"]
        check-every = 4
        cpus = "1"
        "#,
    )
    .unwrap();
    assert_eq!(o.connections, Some(100));
    assert_eq!(o.duration, Some(Dur(Duration::from_mins(5))));
    assert!(o.no_keepalive);
    assert_eq!(o.check_every, Some(CheckEvery::Every(4)));
    assert_eq!(o.cpus, Some(CpuList(vec![1])));
    let typo = toml::from_str::<LoadOptions>("conections = 3").unwrap_err().to_string();
    assert!(typo.contains("unknown field `conections`"), "{typo}");
    let bad = toml::from_str::<LoadOptions>("duration = \"soon\"").unwrap_err().to_string();
    assert!(bad.contains("not a duration"), "{bad}");
}

#[test]
fn proto_call_and_data_go_together() {
    let proto =
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../proto/sort/v1/sort.proto"));
    let call = Some("sort.v1.SortService/BubbleSort".to_owned());
    let url = "http://127.0.0.1:50051";
    let o = LoadOptions { proto: Some(proto.clone()), call: call.clone(), ..opts() };
    let s = o.to_spec(url).unwrap();
    assert_eq!((s.transport, s.target.path.as_str()), (Transport::Grpc, "/sort.v1.SortService/BubbleSort"));
    let RequestSource::Fixed { method, headers, body } = &s.requests else { panic!("{:?}", s.requests) };
    assert_eq!((method, body.len()), (&http::Method::POST, 0), "no --data: the empty message");
    assert!(headers.iter().any(|(k, v)| k == http::header::CONTENT_TYPE && v == "application/grpc"));

    assert!(err(&LoadOptions { call: call.clone(), ..opts() }, url).starts_with("--call: needs --proto"));
    assert!(
        err(&LoadOptions { data: Some("{}".into()), ..opts() }, url).starts_with("--data: needs --proto")
    );
    assert!(
        err(&LoadOptions { proto: Some(proto.clone()), ..opts() }, url).starts_with("--proto: needs --call")
    );
    let with =
        |o: LoadOptions| err(&LoadOptions { proto: Some(proto.clone()), call: call.clone(), ..o }, url);
    assert!(with(LoadOptions { scenario: Some("bubble-sort".into()), ..opts() }).contains("--scenario"));
    assert!(with(LoadOptions { body: Some("x".into()), ..opts() }).contains("-m/-b"));
    assert!(with(LoadOptions { http2: true, ..opts() }).contains("--http2"));
    assert!(err(&LoadOptions { grpc: true, ..opts() }, url).contains("--proto FILE --call"));
}

#[test]
fn io_auto_is_resolved_before_the_run() {
    use crate::spec::Io;
    let io = |mode: &str| LoadOptions { io: Some(mode.parse().unwrap()), ..opts() }.to_spec("http://h/");
    assert_eq!(io("epoll").unwrap().io, Io::Epoll);
    assert_eq!(opts().to_spec("http://h/").unwrap().io, Io::Epoll, "epoll is the default");
    if crate::uring::available().is_ok() {
        assert_eq!(io("auto").unwrap().io, Io::Uring);
        assert_eq!(io("io_uring").unwrap().io, Io::Uring);
    } else {
        assert_eq!(io("auto").unwrap().io, Io::Epoll, "auto falls back where io_uring is refused");
        let e = io("io_uring").unwrap_err().to_string();
        assert!(e.contains("use --io epoll or --io auto"), "{e}");
    }
    let bad = "ring".parse::<Io>().unwrap_err();
    assert!(bad.contains("write epoll, io_uring or auto"), "{bad}");
}

#[test]
fn a_scenario_file_is_checked_against_the_other_options() {
    let todo =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/todo.toml");
    let file = |o: LoadOptions| LoadOptions { scenario_file: Some(todo.clone()), ..o };
    let url = "http://127.0.0.1:8080";
    let s = file(opts()).to_spec(url).unwrap();
    assert_eq!(s.transport, Transport::Http1);
    assert_eq!(s.check_every, CheckEvery::Auto, "a file's answers are checked as a built-in's");
    let f = s.requests.file().unwrap();
    assert_eq!(f.names, ["create", "read back", "empty title", "GET /todos?owner={{owner}}&limit={{limit}}"]);
    assert_eq!(f.slots, [vec![0, 1, 2], vec![3]]);
    for (o, flag) in [
        (LoadOptions { method: Some("GET".into()), ..opts() }, "-m/--method"),
        (LoadOptions { header: vec!["A: b".into()], ..opts() }, "-H/--header"),
        (LoadOptions { http2: true, ..opts() }, "--http2"),
        (LoadOptions { scenario: Some("dummy".into()), ..opts() }, "--scenario"),
    ] {
        let e = err(&file(o), url);
        assert!(e.starts_with(&format!("--scenario-file and {flag} cannot be used together")), "{e}");
    }
    let e = err(&LoadOptions { variable: vec!["a=b".into()], ..opts() }, url);
    assert!(e.starts_with("--variable: needs --scenario-file"), "{e}");
    let e = err(&file(LoadOptions { variable: vec!["nope".into()], ..opts() }), url);
    assert!(e.contains("--variable \"nope\": write NAME=VALUE"), "{e}");
    let named = |t: &str| vec![t.parse::<crate::Threshold>().unwrap()];
    assert!(file(LoadOptions { threshold: named("p99{read back}<5ms"), ..opts() }).to_spec(url).is_ok());
    let e = err(&file(LoadOptions { threshold: named("p99{GET /nope}<5ms"), ..opts() }), url);
    assert!(e.contains("no request named \"GET /nope\"; its names are \"create\""), "{e}");
    let e = err(&LoadOptions { threshold: named("p99{create}<5ms"), ..opts() }, url);
    assert!(e.contains("names a request, which needs --scenario or --scenario-file"), "{e}");
    let e = err(&LoadOptions { scenario_file: Some("/no/such.hurl".into()), ..opts() }, url);
    assert!(e.starts_with("--scenario-file: /no/such.hurl:1:1: cannot read it"), "{e}");
}

#[test]
fn a_builtin_is_sent_from_its_file_at_the_servers_root() {
    let builtin = |name: &str, o: LoadOptions, url: &str| {
        let s = LoadOptions { scenario: Some(name.into()), ..o }.to_spec(url).map_err(|e| e.to_string());
        s.map(|s| (s.transport, s.requests.file().cloned().expect("a built-in is a file")))
    };
    let (transport, f) = builtin("dummy", opts(), "http://h:8080/events").unwrap();
    assert_eq!((transport, f.builtin, f.scenario.name.as_str()), (Transport::Http1, true, "dummy"));
    assert_eq!(f.names, ["POST /events"]);
    assert_eq!(
        f.base,
        Some(("base_url".to_owned(), "http://h:8080".to_owned())),
        "the URL's /events is the root's"
    );
    let (_, f) = builtin("db-read", opts(), "http://h:8080/db/redis/").unwrap();
    assert_eq!(f.defined, [("driver".to_owned(), "redis".to_owned())]);
    let e = builtin("db-read", opts(), "http://h:8080/").unwrap_err();
    assert!(e.contains("db-read goes through one driver") && e.contains("/db/sqlite"), "{e}");
    let e = builtin("event-log", opts(), "http://h:8080/api/events").unwrap_err();
    assert!(e.contains("event-log is sent to the server's root"), "{e}");
    // --http2 carries an HTTP/1.1 built-in over h2c; bubble-sort is gRPC by its file.
    assert_eq!(
        builtin("dummy", LoadOptions { http2: true, ..opts() }, "http://h/").unwrap().0,
        Transport::H2c
    );
    assert_eq!(builtin("bubble-sort", opts(), "http://h/").unwrap().0, Transport::Grpc);
    let e = builtin("dummy", LoadOptions { header: vec!["A: b".into()], ..opts() }, "http://h/").unwrap_err();
    assert!(e.starts_with("--scenario and -H/--header cannot be used together"), "{e}");
    // A threshold may name one of its requests, as a file's may.
    let named = |t: &str| vec![t.parse::<crate::Threshold>().unwrap()];
    assert!(
        builtin("dummy", LoadOptions { threshold: named("p99{POST /events}<5ms"), ..opts() }, "http://h/")
            .is_ok()
    );
    let e = builtin("dummy", LoadOptions { threshold: named("p99{GET /x}<5ms"), ..opts() }, "http://h/")
        .unwrap_err();
    assert!(e.contains("no request named \"GET /x\"; its names are \"POST /events\""), "{e}");
}

#[test]
fn https_targets_take_tls_and_port_443() {
    let s = LoadOptions { insecure: true, ..opts() }.to_spec("https://localhost/x").unwrap();
    assert!(s.target.tls);
    assert_eq!((s.target.port, s.target.authority.as_str()), (443, "localhost:443"));
    let tls = s.tls.expect("an https target has TLS");
    assert_eq!(tls.alpn, crate::tls::Alpn::Http1);
    assert!(tls.resume);
    let s = LoadOptions { http2: true, no_resume: true, insecure: true, ..opts() }
        .to_spec("https://127.0.0.1:8443/")
        .unwrap();
    let tls = s.tls.unwrap();
    assert_eq!(tls.alpn, crate::tls::Alpn::H2);
    assert!(!tls.resume);
    assert!(opts().to_spec("http://127.0.0.1/").unwrap().tls.is_none());
}

#[test]
fn tls_flags_are_checked_before_anything_starts() {
    let o = LoadOptions { insecure: true, ..opts() };
    assert!(
        err(&o, "http://h/").contains("--insecure: applies to https:// URLs"),
        "{}",
        err(&o, "http://h/")
    );
    let o = LoadOptions { tls_groups: vec!["X448".into()], insecure: true, ..opts() };
    let e = err(&o, "https://h/");
    assert!(e.contains("--tls-groups") && e.contains("X25519MLKEM768"), "{e}");
    let o = LoadOptions { tls_version: Some("1.1".into()), insecure: true, ..opts() };
    assert!(err(&o, "https://h/").contains("--tls-version"));
    let o = LoadOptions { cacert: Some("/nonexistent/ca.pem".into()), ..opts() };
    assert!(err(&o, "https://h/").contains("--cacert: cannot read /nonexistent/ca.pem"));
    let o = LoadOptions { cacert: Some("/nonexistent/ca.pem".into()), insecure: true, ..opts() };
    assert!(err(&o, "https://h/").contains("--insecure and --cacert"));
    let o = LoadOptions { cert: Some("/nonexistent/c.pem".into()), insecure: true, ..opts() };
    assert!(err(&o, "https://h/").contains("--cert: needs --key"));
    let o = LoadOptions { io: Some(crate::spec::Io::Auto), insecure: true, ..opts() };
    assert_eq!(o.to_spec("https://h/").unwrap().io, crate::spec::Io::Epoll, "auto picks epoll for TLS");
    let o = LoadOptions { resolve: vec!["h:443".into()], ..opts() };
    assert!(err(&o, "http://h/").contains("--resolve"));
}

#[test]
fn a_new_connection_per_request_or_per_iteration() {
    use crate::spec::NewConnection::{Iteration, Request};
    let url = "http://h/";
    let s = LoadOptions { new_connection: Some(Request), ..opts() }.to_spec(url).unwrap();
    assert!(!s.keepalive() && !s.per_iteration());
    let s = LoadOptions { no_keepalive: true, new_connection: Some(Request), ..opts() }.to_spec(url).unwrap();
    assert!(!s.keepalive());
    // An iteration is a scenario's: a built-in is one.
    let dummy = LoadOptions { scenario: Some("dummy".into()), new_connection: Some(Iteration), ..opts() };
    let s = dummy.to_spec(url).unwrap();
    assert!(s.keepalive() && s.per_iteration());
    let e = err(&LoadOptions { new_connection: Some(Iteration), ..opts() }, url);
    assert!(e.contains("--new-connection") && e.contains("needs a scenario"), "{e}");
    let e = err(&LoadOptions { no_keepalive: true, ..dummy }, url);
    assert!(e.contains("--no-keepalive") && e.contains("--new-connection iteration"), "{e}");
    // A plan's table spells it as the flag.
    let o: LoadOptions = toml::from_str("new-connection = \"iteration\"").unwrap();
    assert_eq!(o.new_connection, Some(Iteration));
    let bad = toml::from_str::<LoadOptions>("new-connection = \"never\"").unwrap_err().to_string();
    assert!(bad.contains("write request or iteration"), "{bad}");
}
