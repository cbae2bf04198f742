//! Property tests of the event contract: every valid event is accepted and
//! round-trips; every single-field violation is rejected with a message that
//! names that field.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use stackbench_contract::event::{Event, Field, parse_event};

const CHARSET: &str = "[A-Za-z0-9_.:-]";

fn name() -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("{CHARSET}{{1,64}}")).unwrap()
}

fn valid_event() -> impl Strategy<Value = Event<'static>> {
    (
        name(),
        name(),
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
        proptest::option::of(0u64..(1 << 53)),
    )
        .prop_map(|(kind, source, value, timestamp_ms)| Event {
            kind: kind.into(),
            source: source.into(),
            value,
            timestamp_ms,
        })
}

/// A JSON value that breaks `field`'s rule, and nothing else.
fn violation(field: Field) -> BoxedStrategy<Value> {
    let not_a_string = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
    ];
    let bad_name = prop_oneof![
        Just(Value::from("")),
        proptest::string::string_regex(&format!("{CHARSET}{{65,100}}")).unwrap().prop_map(Value::from),
        (name(), "[ ,=/\"\\\\é€\u{0}\t]", name()).prop_map(|(a, bad, b)| Value::from(format!("{a}{bad}{b}"))),
    ];
    match field {
        // null is "absent" for optional fields, but never a valid `type`.
        Field::Type => prop_oneof![not_a_string, bad_name].boxed(),
        Field::Source => prop_oneof![bad_name, any::<bool>().prop_map(Value::Bool), Just(json!([1]))].boxed(),
        Field::Value => prop_oneof![
            Just(Value::from("1.5")),
            any::<bool>().prop_map(Value::Bool),
            Just(json!({"v": 1})),
            Just(json!([1.0])),
        ]
        .boxed(),
        Field::Timestamp => prop_oneof![
            (1i64..i64::MAX).prop_map(|t| Value::from(-t)),
            ((1u64 << 53)..u64::MAX).prop_map(Value::from),
            (0.5f64..1e15).prop_filter("not integral", |v| v.fract() != 0.0).prop_map(Value::from),
            Just(Value::from("1764460800000")),
            any::<bool>().prop_map(Value::Bool),
        ]
        .boxed(),
    }
}

fn field() -> impl Strategy<Value = Field> {
    prop_oneof![Just(Field::Type), Just(Field::Source), Just(Field::Value), Just(Field::Timestamp)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_valid_event_is_accepted_and_round_trips(event in valid_event()) {
        let body = event.to_json();
        let parsed = parse_event(body.as_bytes()).map_err(|e| TestCaseError::fail(format!("{body}: {e}")))?;
        prop_assert_eq!(parsed.into_owned(), event);
    }

    #[test]
    fn unknown_keys_never_change_the_event(event in valid_event(), key in "[a-z]{1,8}", extra in any::<i32>()) {
        prop_assume!(!["type", "source", "value", "timestamp"].contains(&key.as_str()));
        let mut obj: Map<String, Value> = serde_json::from_str(&event.to_json()).unwrap();
        obj.insert(key, json!({ "nested": [extra, "x"] }));
        let body = Value::Object(obj).to_string();
        prop_assert_eq!(parse_event(body.as_bytes()).unwrap().into_owned(), event);
    }

    #[test]
    fn every_single_field_violation_names_its_field(
        event in valid_event(),
        (field, bad) in field().prop_flat_map(|f| (Just(f), violation(f))),
    ) {
        let mut obj: Map<String, Value> = serde_json::from_str(&event.to_json()).unwrap();
        obj.insert(field.name().to_owned(), bad);
        let body = Value::Object(obj).to_string();
        let err = parse_event(body.as_bytes()).expect_err(&body);
        prop_assert_eq!(err.field(), Some(field), "{}: {}", body, err);
        let message = err.to_string();
        let named = format!("`{}`", field.name());
        prop_assert!(message.contains(&named), "{}: {}", body, message);
    }
}
