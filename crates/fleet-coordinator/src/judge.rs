//! `autoeval judge DIR --judge SPEC --fleet`: the A4 questions asked by the
//! fleet's LLM workers. The judge's settings are registered with the run in
//! Redis, each pair is published to the judge model's queue, the workers
//! record each judgement once in Redis, and the judgements are written to
//! the same `judge-<model>-<style>.jsonl` as a one-machine judge run.

use crate::publish::{publish, wait_for_workers, WorkerWait};
use crate::FleetArgs;
use anyhow::{bail, Context, Result};
use autoeval_amqp::Meta;
use autoeval_models::{Model, ModelSettings, ModelSpec, PriceTable, RetryPolicy};
use autoeval_progress::Display;
use autoeval_proto::fleet::{judge_key, judged_pair};
use autoeval_proto::wire::{encode, Header, MessageKind};
use autoeval_proto::{JudgeKey, JudgeRecord, JudgeTask, RoundKey};
use autoeval_redis_store::RunStore;
use autoeval_run_dir::run_name;
use autoeval_run_dir::RunDir;
use autoeval_run_settings::{PromptSettings, StageSettings, TranslateSettings, VerifySettings};
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

/// Quiet time, with the judge's queue empty, before dead letters end the wait.
const SETTLE: Duration = Duration::from_secs(3);

/// What a fleet judge run is asked to do.
pub struct Ask<'a> {
    /// The run directory.
    pub dir: &'a RunDir,
    /// The judge.
    pub judge: &'a Model,
    /// Its settings: the run's protocol's for this model, then the spec's.
    pub settings: ModelSettings,
    /// The prompt set whose judge prompt is asked: the run's.
    pub prompt_set: autoeval_translate::PromptSet,
    /// `cot` or `yesno`.
    pub style: &'a str,
    /// The pairs with no judgement in the judge file.
    pub todo: Vec<JudgeRecord>,
    /// Where the fleet is.
    pub fleet: &'a FleetArgs,
    /// Whether to show progress.
    pub display: Display,
}

/// Refuses a built-in judge, which the fleet's LLM workers cannot run, saying what to do instead.
fn refuse_builtin(spec: &ModelSpec) -> Result<()> {
    if spec.is_builtin() {
        let served = autoeval_models::provider::served_form("reference");
        bail!("the built-in models judge with this machine's prover, which LLM workers do not have; \
             judge on this machine without --fleet, or serve the model with `autoeval mock-llm --model …` \
             and judge with {served}");
    }
    Ok(())
}

/// Asks the fleet the pairs of `ask.todo` and returns every judgement the
/// run's Redis holds for this judge (failed calls included).
pub fn ask_all(ask: Ask<'_>) -> Result<Vec<JudgeRecord>> {
    refuse_builtin(ask.judge.spec())?;
    let run = run_name(ask.dir)?;
    let judge = JudgeKey {
        spec: ask.judge.to_string(),
        style: ask.style.to_string(),
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let store = RunStore::new(autoeval_redis_store::connect(&ask.fleet.store.redis).await?, &run);
        // A judge asks a model, as the translate stage does; it verifies nothing.
        let stages = StageSettings {
            prompts: PromptSettings {
                set: ask.prompt_set,
                overrides: Vec::new(),
            },
            translate: TranslateSettings {
                max_attempts: RetryPolicy::default().max_attempts,
                models: BTreeMap::from([(ask.judge.clone(), ask.settings.clone())]),
                prices: PriceTable::default(),
            },
            verify: VerifySettings::default(),
        };
        store
            .set_meta(&[(
                &autoeval_proto::meta::judge_settings(&judge),
                serde_json::to_string(&stages)?,
            )])
            .await?;
        // Judged on the fleet before but not yet in the file (a stopped command).
        let judged: HashSet<RoundKey> = store
            .judgements(&judge)
            .await?
            .iter()
            .filter(|j| j.api_failure.is_none())
            .map(judged_pair)
            .collect();
        let todo: Vec<JudgeRecord> = ask
            .todo
            .into_iter()
            .filter(|j| !judged.contains(&judged_pair(j)))
            .collect();
        // Every pair to ask is asked again: earlier failures are replaced.
        store.forget_failed_judgements(&judge).await?;
        let broker = (ask.fleet.broker)
            .connect(&ask.fleet.store.redis, "autoeval-coordinator")
            .await?;
        let queue = broker.topology().judge_queue(ask.judge.as_str());
        let wait = WorkerWait {
            wait_s: ask.fleet.worker_wait_s,
            then: "run this command again",
            display: ask.display,
        };
        wait_for_workers(&broker, &store, &[(ask.judge.to_string(), queue.clone())], &wait)
            .await?;
        if ask.display != Display::Quiet {
            eprintln!(
                "judge: {} pairs judged on the fleet before, {} to ask {}",
                judged.len(),
                todo.len(),
                ask.judge
            );
        }
        let header = Header {
            kind: MessageKind::Judge,
            run: run.clone(),
        };
        let key = judge_key(ask.judge.as_str());
        let target = judged.len() as u64 + todo.len() as u64;
        let messages = todo.iter().map(|j| {
            let meta = Meta::one(&run, judged_pair(j).to_string());
            // A bundle of one: the judge loop takes bundles, as every loop does.
            Ok((key.clone(), encode(&header, &vec![JudgeTask::from(j)])?, meta))
        });
        publish(&broker, messages).await?;
        let bar = if ask.display == Display::Quiet {
            indicatif::ProgressBar::hidden()
        } else {
            indicatif::ProgressBar::new(target)
        };
        let (mut last, mut since) = (u64::MAX, Instant::now());
        loop {
            let (ok, failed) = match store.judgement_counts(&judge).await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot count the judgements; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            bar.set_position(ok + failed);
            if ok + failed >= target {
                break;
            }
            if ok + failed != last {
                (last, since) = (ok + failed, Instant::now());
            } else if since.elapsed() >= SETTLE {
                let waiting = broker.depth(&queue).await?.map_or(0, |(ready, _)| ready);
                let dead = broker
                    .dead_letters(usize::MAX)
                    .await?
                    .into_iter()
                    .any(|d| d.run == run && d.routing_key == key);
                if waiting == 0 && dead {
                    bar.finish_and_clear();
                    bail!(
                        "judge questions of run {run} are in the dead-letter queue; see why with `autoeval status {}`, and once the cause is fixed run the same command again",
                        ask.dir.0.display()
                    );
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bar.finish_and_clear();
        broker.close().await;
        Ok(store.judgements(&judge).await?)
    })
}
