//! `autoeval bench-llm`: round trips per second through the real HTTP path
//! against the in-process mock server, beside Little's law's bound.

use anyhow::{Context, Result};
use autoeval_generate::{generate_batch, DatasetConfig, DatasetKind};
use autoeval_mock_llm::{router, MockConfig};
use autoeval_models::{Model, ModelSettings, PriceTable};
use autoeval_prompts::{Family, Shots, Templates};
use autoeval_translate::{build_backend, round_trip, Local, Request};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Settings of `autoeval bench-llm`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Round trips (two calls each) per latency setting.
    #[arg(long, default_value_t = 5000)]
    round_trips: usize,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 256)]
    concurrency: usize,
    /// Server latencies to measure, in milliseconds.
    #[arg(long, value_delimiter = ',', default_value = "0,200")]
    latency_ms: Vec<u64>,
}

/// Runs `autoeval bench-llm`.
pub fn run(args: Args) -> Result<()> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let cfg = DatasetConfig {
        per_bucket: 10,
        ..DatasetConfig::table1(DatasetKind::Plogic)
    };
    let items: Arc<Vec<String>> = Arc::new(
        generate_batch(&cfg, 0)?
            .items
            .into_iter()
            .map(|i| i.fs)
            .collect(),
    );
    println!(
        "== round trips through HTTP: the mock server, concurrency {}, {} round trips each",
        args.concurrency, args.round_trips
    );
    println!(
        "{:>10} {:>14} {:>16} {:>9}",
        "latency", "round trips/s", "Little's bound", "of bound"
    );
    for latency in &args.latency_ms {
        let rate = runtime.block_on(measure(&args, *latency, items.clone()))?;
        // Each round trip is two calls of `latency` each.
        let bound = args.concurrency as f64 / (2.0 * *latency as f64 / 1000.0);
        if *latency == 0 {
            println!("{:>8}ms {:>14.0} {:>16} {:>9}", latency, rate, "-", "-");
        } else {
            println!(
                "{:>8}ms {:>14.0} {:>16.0} {:>8.1}%",
                latency,
                rate,
                bound,
                100.0 * rate / bound
            );
        }
    }
    Ok(())
}

async fn measure(args: &Args, latency_ms: u64, items: Arc<Vec<String>>) -> Result<f64> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let config = MockConfig {
        latency: Duration::from_millis(latency_ms),
        ..MockConfig::default()
    };
    let server = tokio::spawn(async move { axum::serve(listener, router(config)).await });
    let model = Model::on_server("reference", &format!("http://{addr}/v1"))?;
    let settings = ModelSettings {
        concurrency: Some(args.concurrency),
        ..ModelSettings::default()
    };
    let backend = Arc::new(build_backend(
        &model,
        &settings,
        &PriceTable::builtin(),
        &Local::default(),
    )?);
    let templates = Arc::new(Templates::builtin());
    let next = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..args.concurrency)
        .map(|_| {
            let (backend, templates, items, next, failures) = (
                backend.clone(),
                templates.clone(),
                items.clone(),
                next.clone(),
                failures.clone(),
            );
            let total = args.round_trips;
            tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= total {
                        break;
                    }
                    let phi0 = &items[n % items.len()];
                    // Distinct samples keep every call a real request.
                    let req = Request {
                        family: Family::Propositional,
                        phi0,
                        shots: Shots::ZeroShot,
                        alphabet: &[],
                        unit: format!("bench-{n}"),
                        round: 1,
                    };
                    let rt = round_trip(&backend, &templates, &req).await;
                    if rt.strict.phi1.is_none() {
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.await?;
    }
    let secs = started.elapsed().as_secs_f64();
    server.abort();
    let failed = failures.load(Ordering::Relaxed);
    anyhow::ensure!(failed == 0, "{failed} round trips failed");
    Ok(args.round_trips as f64 / secs)
}
