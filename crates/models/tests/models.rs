//! Specs, cache keys, prices and the retry policy.

use autoeval_models::*;
use std::time::{Duration, SystemTime};

#[test]
fn specs_parse_print_and_explain_mistakes() {
    for text in [
        "reference",
        "reference-noisy:0.2",
        "openai:gpt-4o",
        "anthropic:claude-3-5-haiku-latest",
        "openai-compatible:llama3@http://127.0.0.1:8000/v1",
    ] {
        let spec: ModelSpec = text.parse().unwrap();
        assert_eq!(spec.to_string(), text);
    }
    let model: autoeval_models::Model = "openai-compatible:llama3:8b@home@http://h:1/v1?top_p=0.5"
        .parse()
        .unwrap();
    assert_eq!(model.spec().model(), "llama3:8b@home");
    assert_eq!(model.own_settings().extra["top_p"], serde_json::json!(0.5));
    let s: ModelSpec = "openai-compatible:m@http://h:1/v1/".parse().unwrap();
    assert_eq!(s.model(), "m");
    assert_eq!(s.base_url(), Some("http://h:1/v1"));
    assert_eq!(s, ModelSpec::on_server("m", "http://h:1/v1").unwrap());
    assert_ne!(s, ModelSpec::on_server("m", "http://h:2/v1").unwrap());
    for (bad, why) in [
        ("gpt-4o", "unknown backend"),
        ("openai:", "model name is missing"),
        ("reference-noisy:2", "between 0 and 1"),
        ("reference-noisy:x", "not a number"),
        ("openai-compatible:llama3", "MODEL@URL"),
        ("openai-compatible:m@localhost:8000", "http://"),
    ] {
        let err = bad.parse::<ModelSpec>().unwrap_err().to_string();
        assert!(
            err.contains(why) && err.contains("expected reference"),
            "{bad}: {err}"
        );
    }
    assert_eq!(
        "openai:gpt-4o".parse::<ModelSpec>().unwrap().key_variable(),
        Some("OPENAI_API_KEY")
    );
    let reference: ModelSpec = "reference".parse().unwrap();
    assert_eq!(reference.key_variable(), None);
    assert!(reference.is_builtin());
    assert_eq!(
        "reference-noisy:0.20"
            .parse::<ModelSpec>()
            .unwrap()
            .builtin(),
        Some(provider::Builtin::Noisy(0.2))
    );
}

#[test]
fn a_url_with_a_user_or_password_is_refused_naming_where_the_key_goes() {
    for spec in [
        "openai-compatible:m@http://user:pw@127.0.0.1:8000/v1",
        "openai-compatible:m@https://token@example.test/v1",
    ] {
        let e = spec
            .parse::<ModelSpec>()
            .expect_err("a credential in the URL");
        let said = e.to_string();
        assert!(said.contains("OPENAI_COMPATIBLE_API_KEY"), "{said}");
    }
    // An `@` in the model name or the path is no credential.
    let ok: ModelSpec = "openai-compatible:org@team/m@http://127.0.0.1:8000/v1/a@b"
        .parse()
        .expect("a model name with @");
    assert_eq!(ok.model(), "org@team/m");
}

#[test]
fn cache_keys_change_with_everything_that_changes_the_reply() {
    let spec: ModelSpec = "openai:gpt-4o".parse().unwrap();
    let p = GenerationParams::default();
    let s = Sample {
        unit: "plogic-0-0-1|openai:gpt-4o|zero-shot|0".into(),
        round: 1,
        stage: Stage::Informalize,
    };
    let base = cache_key(&spec, "prompt", &p, &s);
    assert_eq!(base, cache_key(&spec, "prompt", &p, &s.clone()));
    assert_eq!(base.len(), 64);
    let other: ModelSpec = "openai:gpt-4o-mini".parse().unwrap();
    assert_ne!(base, cache_key(&other, "prompt", &p, &s));
    assert_ne!(base, cache_key(&spec, "prompt ", &p, &s));
    let temperature = GenerationParams {
        temperature: 1.0,
        ..p.clone()
    };
    assert_ne!(base, cache_key(&spec, "prompt", &temperature, &s));
    let seeded = GenerationParams {
        seed: Some(1),
        ..p.clone()
    };
    assert_ne!(base, cache_key(&spec, "prompt", &seeded, &s));
    let reasoning = GenerationParams {
        reasoning: true,
        ..p.clone()
    };
    assert_ne!(base, cache_key(&spec, "prompt", &reasoning, &s));
    let system = GenerationParams {
        system: Some("Be brief.".into()),
        ..p.clone()
    };
    assert_ne!(base, cache_key(&spec, "prompt", &system, &s));
    let mut extra = p.clone();
    extra.extra.insert("top_p".into(), serde_json::json!(0.9));
    assert_ne!(base, cache_key(&spec, "prompt", &extra, &s));
}

#[test]
fn distinct_samples_never_share_a_key_even_with_one_prompt() {
    let spec: ModelSpec = "openai:gpt-4o".parse().unwrap();
    let p = GenerationParams::default();
    let s = Sample {
        unit: "plogic-0-0-1|openai:gpt-4o|zero-shot|0".into(),
        round: 1,
        stage: Stage::Informalize,
    };
    let variants = [
        Sample {
            unit: "plogic-0-1-1|openai:gpt-4o|zero-shot|0".into(),
            ..s.clone()
        },
        Sample {
            unit: "plogic-0-0-1|openai:gpt-4o|few-shot|0".into(),
            ..s.clone()
        },
        Sample {
            unit: "plogic-0-0-1|openai:gpt-4o|zero-shot|1".into(),
            ..s.clone()
        },
        Sample {
            round: 2,
            ..s.clone()
        },
        Sample {
            stage: Stage::Autoformalize,
            ..s.clone()
        },
        Sample {
            stage: Stage::Judge,
            ..s.clone()
        },
    ];
    let mut keys = std::collections::HashSet::new();
    keys.insert(cache_key(&spec, "prompt", &p, &s));
    for v in &variants {
        assert!(
            keys.insert(cache_key(&spec, "prompt", &p, v)),
            "{v:?} shares a key"
        );
    }
}

#[test]
fn prices_are_extensible() {
    let usage = Usage::new(1_000_000, 500_000);
    let table = PriceTable::builtin();
    assert_eq!(table.cost("gpt-4o", usage), Some(2.5 + 5.0));
    assert_eq!(table.cost("my-model", usage), None);
    let table = table
        .extended_with(r#"{"my-model": {"input": 1.0, "output": 2.0}}"#)
        .unwrap();
    assert_eq!(table.cost("my-model", usage), Some(2.0));
    assert!(PriceTable::builtin().extended_with("{").is_err());
}

#[test]
fn a_price_matches_by_spec_as_written_or_by_model_name_and_a_stray_entry_is_named() {
    let usage = Usage::new(2_000_000, 1_000_000);
    let local: ModelSpec = "openai-compatible:qwen@http://127.0.0.1:8080/v1"
        .parse()
        .unwrap();
    let file = r#"{"openai-compatible:qwen@http://127.0.0.1:8080/v1": {"input": 1.0, "output": 3.0},
                   "gpt-4o-mini": {"input": 0.15, "output": 0.6},
                   "qwen-typo": {"input": 9.0, "output": 9.0}}"#;
    let table = PriceTable::builtin().extended_with(file).unwrap();
    let near = |got: Option<f64>, want: f64| got.is_some_and(|g| (g - want).abs() < 1e-9);
    // 2 Mtok in at $1 and 1 Mtok out at $3.
    assert!(near(table.cost_of(&local, usage), 2.0 + 3.0));
    let mini: ModelSpec = "openai:gpt-4o-mini".parse().unwrap();
    assert!(near(table.cost_of(&mini, usage), 2.0 * 0.15 + 0.6));
    let other: ModelSpec = "openai-compatible:qwen@http://10.0.0.1/v1".parse().unwrap();
    assert_eq!(
        table.cost_of(&other, usage),
        None,
        "another server's qwen is not priced"
    );
    assert_eq!(
        PriceTable::unmatched(file, &[local, mini]),
        vec!["qwen-typo".to_string()]
    );
}

#[test]
fn backoff_grows_is_jittered_capped_and_yields_to_retry_after() {
    let p = RetryPolicy {
        max_attempts: 5,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_secs(1),
    };
    assert_eq!(
        p.delay(1, None, 0.999),
        Duration::from_millis(100).mul_f64(0.999)
    );
    assert_eq!(p.delay(3, None, 0.5), Duration::from_millis(200));
    assert_eq!(p.delay(10, None, 1.0), Duration::from_secs(1));
    assert_eq!(p.delay(2, None, 0.0), Duration::ZERO);
    assert_eq!(
        p.delay(1, Some(Duration::from_millis(750)), 0.1),
        Duration::from_millis(750)
    );
    assert_eq!(
        p.delay(1, Some(Duration::from_secs(30)), 0.1),
        Duration::from_secs(1)
    );
    assert!(retryable_status(429) && retryable_status(503) && retryable_status(408));
    assert!(!retryable_status(400) && !retryable_status(401) && !retryable_status(200));
}

#[test]
fn retry_after_in_seconds_or_as_a_date() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
    assert_eq!(
        parse_retry_after(" 0.5 ", now),
        Some(Duration::from_millis(500))
    );
    let later = httpdate::fmt_http_date(now + Duration::from_secs(7));
    assert_eq!(parse_retry_after(&later, now), Some(Duration::from_secs(7)));
    assert_eq!(parse_retry_after("soon", now), None);
    assert_eq!(parse_retry_after("-1", now), None);
    assert_eq!(parse_retry_after("NaN", now), None);
    for huge in ["1e20", "inf", "99999999999999999999"] {
        assert_eq!(
            parse_retry_after(huge, now),
            Some(autoeval_models::LONGEST_RETRY_AFTER),
            "{huge}"
        );
    }
}
