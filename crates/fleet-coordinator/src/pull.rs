//! Taking a fleet run's settings, judgements and rounds from Redis into a
//! run directory, for a report or an export on any machine.

use anyhow::{bail, Context, Result};
use autoeval_proto::meta;
use autoeval_proto::ResultRecord;
use autoeval_redis_store::RunStore;
use autoeval_run_dir::{run_name, JsonlStore, RunDir};

/// Where a fleet run's results are, for the commands that read a run.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct ReadArgs {
    /// Read the run from the fleet's Redis first, into its directory (made if
    /// missing): its settings when the directory has none, every recorded
    /// round, and every judgement made with `judge --fleet`.
    #[arg(long)]
    pub fleet: bool,
    /// Redis.
    #[command(flatten)]
    pub store: autoeval_service::RedisUrl,
    /// The run's name in Redis (`results-1a2b3c4d`), when the directory is
    /// not the coordinator's and more than one run was made from a
    /// directory of its name.
    #[arg(long, value_name = "NAME")]
    pub run_id: Option<String>,
}

/// Brings a run directory up to date from the fleet's Redis, as [`ReadArgs`]
/// says: its settings, the rounds Redis holds that the coordinator has not
/// yet taken into its directory, and the judgements. Every other round is
/// in the coordinator's run directory, never in Redis.
pub fn pull(dir: &RunDir, from: &ReadArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (run, meta, untaken, marked, judged) = runtime.block_on(async {
        let conn = autoeval_redis_store::connect(&from.store.redis).await?;
        let run = find_run(&conn, dir, from).await?;
        let store = RunStore::new(conn, &run);
        let meta = store.meta().await?;
        if meta.is_empty() {
            bail!(
                "the fleet's Redis at {} holds no run named {run}",
                autoeval_proto::fleet::redact_url(&from.store.redis)
            );
        }
        let untaken = stored_records(&store).await?;
        let marked = store.marked().await?;
        let mut judged = Vec::new();
        for judge in meta.keys().filter_map(|k| meta::judge_of(k)) {
            let judge = judge.context("the run's Redis names a judge wrongly")?;
            let fresh = store.judgements(&judge).await?;
            judged.push((judge, fresh));
        }
        anyhow::Ok((run, meta, untaken, marked, judged))
    })?;
    std::fs::create_dir_all(&dir.0)
        .with_context(|| format!("cannot create the run directory {}", dir.0.display()))?;
    // The directory finds its run again without asking Redis.
    if !dir.run_id_file().exists() {
        std::fs::write(dir.run_id_file(), format!("{run}\n"))
            .with_context(|| format!("cannot write {}", dir.run_id_file().display()))?;
    }
    if let (false, Some(config)) = (dir.config().exists(), meta.get(meta::CONFIG)) {
        std::fs::write(dir.config(), config)
            .with_context(|| format!("cannot write {}", dir.config().display()))?;
        // The fleet runs this build's layout: the directory is one of it.
        dir.mark_schema()?;
    }
    // A round the directory holds already stays as it is.
    let log = JsonlStore::open(&dir.results())?;
    let mut added = 0;
    for r in &untaken {
        if log.append(r)? {
            added += 1;
        }
    }
    let held = log.len();
    drop(log);
    let mut judgements = 0;
    for (judge, fresh) in judged {
        // The judges a Redis names are read here, where they come in.
        let model: autoeval_models::Model = judge
            .spec
            .parse()
            .with_context(|| format!("the run's Redis names a judge {:?}", judge.spec))?;
        let path = autoeval_run_dir::judge_file(dir, &model, &judge.style);
        let mut text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for j in &fresh {
            text.push_str(&serde_json::to_string(j)?);
            text.push('\n');
        }
        // What the file held first, then the fleet's: the first answer of a pair stands.
        let merged = autoeval_run_dir::latest_judgements(&text);
        judgements += merged.len();
        autoeval_run_dir::rewrite_judgements(&path, &merged)?;
    }
    eprintln!(
        "fleet: run {run}: {added} rounds not yet in a run directory and {judgements} judgements read from Redis into {}",
        dir.0.display()
    );
    if (held as u64) < marked {
        eprintln!(
            "fleet: run {run} has {marked} rounds recorded and {} holds {held}: the rest are in the run directory of the coordinator that followed the run (its results.jsonl)",
            dir.0.display()
        );
    }
    Ok(())
}

/// The run a directory reads from Redis: the one `--run-id` names, the
/// one its `run-id` file names, the one named as the directory is, or the
/// one run made from a directory of that name (`results-1a2b3c4d` for
/// `results`); several such runs are named, for `--run-id` to choose.
async fn find_run(
    conn: &autoeval_redis_store::Connection,
    dir: &RunDir,
    from: &ReadArgs,
) -> Result<String> {
    if let Some(run) = &from.run_id {
        return Ok(run.clone());
    }
    if dir.run_id_file().exists() {
        return Ok(run_name(dir)?);
    }
    let name = autoeval_run_dir::dir_name(dir)?;
    let registered = |run: &str| {
        let store = RunStore::new(conn.clone(), run);
        async move { store.meta().await.map(|m| m.contains_key(meta::PLAN)) }
    };
    if registered(&name).await? {
        return Ok(name);
    }
    let mut runs = autoeval_redis_store::runs_made_from(conn, &name).await?;
    match runs.len() {
        0 => bail!(
            "the fleet's Redis at {} holds no run named {name} or made from a directory of that name",
            autoeval_proto::fleet::redact_url(&from.store.redis)
        ),
        1 => Ok(runs.remove(0)),
        _ => bail!(
            "the fleet's Redis holds {} runs made from directories named {name}: {}; choose one with --run-id",
            runs.len(),
            runs.join(", ")
        ),
    }
}

/// The run's rounds whose records are still in Redis (not yet taken into
/// the coordinator's run directory), sorted by unit and round.
pub async fn stored_records(store: &RunStore) -> Result<Vec<ResultRecord>> {
    let mut all = Vec::new();
    store.scan_records(|r| all.push(r)).await?;
    all.sort_by_key(|a| (a.unit(), a.round));
    Ok(all)
}
