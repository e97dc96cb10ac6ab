//! `autoeval fleet …`: keeping the fleet's Redis and broker tidy.

use anyhow::Result;

/// Settings of `autoeval fleet`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Remove finished runs from Redis (and what is left of runs no longer
    /// registered), their dead letters, and the queues of models that no
    /// run still going uses and no worker serves.
    Gc(GcArgs),
}

/// Settings of `autoeval fleet gc`.
#[derive(clap::Args, Debug)]
struct GcArgs {
    /// Say what would be removed, and remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// The broker.
    #[command(flatten)]
    pub broker: autoeval_service::AmqpUrl,
    /// Redis.
    #[command(flatten)]
    pub store: autoeval_service::RedisUrl,
}

/// Runs `autoeval fleet`.
pub fn run(args: Args) -> Result<()> {
    match args.command {
        Command::Gc(gc) => collect(gc),
    }
}

fn collect(args: GcArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let done = runtime.block_on(async {
        let conn = autoeval_redis_store::connect(&args.store.redis).await?;
        let broker = args
            .broker
            .connect(&args.store.redis, "autoeval-gc")
            .await?;
        let done = autoeval_fleet_coordinator::gc::collect(&conn, &broker, args.dry_run).await;
        broker.close().await;
        done
    })?;
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    out!(
        "fleet gc: {verb} {} finished run{}, the keys left of {} unregistered run{}, {} queue{}; kept {} run{} still going and {} queue{} in use",
        done.runs.len(),
        plural(done.runs.len()),
        done.leftovers.len(),
        plural(done.leftovers.len()),
        done.queues.len(),
        plural(done.queues.len()),
        done.going.len(),
        plural(done.going.len()),
        done.queues_kept.len(),
        plural(done.queues_kept.len()),
    );
    if done.dead_letters > 0 {
        out!(
            "  and took {} dead letters of the finished runs out of the dead-letter queue",
            done.dead_letters
        );
    }
    for run in &done.runs {
        out!("  run {run} (finished)");
    }
    for run in &done.leftovers {
        out!("  run {run} (not registered)");
    }
    for q in &done.queues {
        out!("  queue {q}");
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
