//! A fleet on this machine for end-to-end tests: the mock model server,
//! LLM workers and verifier workers as separate processes of the built
//! binaries, against the real RabbitMQ and Redis. Everything a test starts
//! is killed, and its run's keys and queue deleted, when the fleet drops.
//!
//! The binaries must be built first, in the profile the tests run in:
//! `scripts/test` does it (`cargo build --release --workspace --bins`).

use autoeval_amqp::Broker;
use autoeval_proto::fleet::Topology;
use autoeval_proto::ResultRecord;
use autoeval_redis_store::RunStore;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The broker the tests use.
pub const AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
/// The Redis the tests use.
pub const REDIS: &str = "redis://127.0.0.1:6379";

/// Fleet tests share the verify queue and the cores: one at a time.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A built binary of the workspace, beside this test's executable.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("tests run from target/<profile>/deps");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built: run `cargo build --workspace --bins` in this profile first (scripts/test does)",
        path.display()
    );
    path
}

/// A free port on the loopback.
pub fn free_port() -> u16 {
    autoeval_local_servers::free_port().unwrap_or_else(|e| panic!("{e}"))
}

/// Polls `ready` every 20 ms until it holds; panics after `limit` saying `what`.
pub fn wait_for(what: &str, limit: Duration, ready: impl FnMut() -> bool) {
    autoeval_local_servers::wait_for(what, limit, ready).unwrap_or_else(|e| panic!("{e}"));
}

/// A JSON document over HTTP.
pub fn get_json(url: &str) -> serde_json::Value {
    reqwest::blocking::get(url)
        .and_then(|r| r.json())
        .unwrap_or_else(|e| panic!("GET {url}: {e}"))
}

/// A process the fleet started, with its health address when it has one.
pub struct Process {
    /// The child.
    pub child: Child,
    /// `http://ADDR` of `/healthz` and `/readyz`.
    pub health: Option<String>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Process {
    /// Sends SIGKILL and waits for the process to end.
    pub fn kill9(&mut self) {
        self.child.kill().expect("the process can be killed");
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and returns the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(ok.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        self.child.wait().expect("the process ends")
    }
}

/// The mock model server on `port`, started with `mock_args`, once it listens.
pub fn mock_server(port: u16, mock_args: &[&str]) -> Process {
    let port_text = port.to_string();
    let mut args = vec!["mock-llm", "--port", &port_text];
    args.extend_from_slice(mock_args);
    let child = Command::new(binary("autoeval"))
        .args(&args)
        .stderr(Stdio::null())
        .spawn()
        .expect("the mock server starts");
    wait_for("the mock server listens", Duration::from_secs(30), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    Process {
        child,
        health: None,
    }
}

/// Starts a service that prints `health: http://ADDR` first, and waits until it is ready.
fn service(program: &Path, args: &[&str], env: &[(String, String)], log: &Path) -> Process {
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).expect("a log file"))
        .spawn()
        .unwrap_or_else(|e| panic!("{} starts: {e}", program.display()));
    let mut line = String::new();
    let stdout = child.stdout.take().expect("piped stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the service prints its health address");
    let health = line
        .trim()
        .strip_prefix("health: ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    let readyz = format!("{health}/readyz");
    wait_for(
        &format!("{} ready", program.display()),
        Duration::from_secs(60),
        || reqwest::blocking::get(&readyz).is_ok_and(|r| r.status().is_success()),
    );
    Process {
        child,
        health: Some(health),
    }
}

/// A fleet for one test: its own mock server (so its own model queue) and run.
pub struct Fleet {
    /// Scratch directory of the test.
    pub dir: PathBuf,
    /// The run's directory; its `run-id` names the run.
    pub out: PathBuf,
    /// The model spec served by the mock server.
    pub model: String,
    /// The mock server's port.
    pub port: u16,
    /// LLM workers.
    pub workers: Vec<Process>,
    /// Verifier workers.
    pub verifiers: Vec<Process>,
    /// The Redis its processes use: the shared one unless a test starts its own.
    pub redis: String,
    /// The broker its processes use: the shared one unless a test starts its own.
    pub amqp: String,
    /// Variables every process of the fleet is started with, beside the
    /// broker's and Redis's URLs (which go there too, never in argv).
    pub env: Vec<(String, String)>,
    mock: Option<Process>,
    runtime: tokio::runtime::Runtime,
}

impl Fleet {
    /// A mock server started with `mock_args`, and nothing else yet.
    pub fn new(name: &str, mock_args: &[&str]) -> Fleet {
        let dir = crate::scratch(name);
        let port = free_port();
        let mock = mock_server(port, mock_args);
        let unique = format!(
            "{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis())
        );
        // The run is named before any coordinator claims it, so that a test
        // can name it first; a coordinator takes the name it finds.
        let out = dir.join(&unique);
        std::fs::create_dir_all(&out).expect("the run's directory");
        std::fs::write(out.join("run-id"), &unique).expect("the run's name");
        Fleet {
            out,
            dir,
            model: format!("openai-compatible:reference@http://127.0.0.1:{port}/v1"),
            port,
            workers: Vec::new(),
            verifiers: Vec::new(),
            redis: REDIS.to_string(),
            amqp: AMQP.to_string(),
            env: Vec::new(),
            mock: Some(mock),
            runtime: tokio::runtime::Runtime::new().expect("a runtime"),
        }
    }

    /// Stops the mock model server: its port is closed until [`Fleet::start_mock`].
    pub fn stop_mock(&mut self) {
        self.mock.take();
        wait_for(
            "the mock server's port closes",
            Duration::from_secs(30),
            || std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err(),
        );
    }

    /// Starts the mock model server again on its port, with `mock_args`.
    pub fn start_mock(&mut self, mock_args: &[&str]) {
        self.mock = Some(mock_server(self.port, mock_args));
    }

    /// The run's name in Redis, as its directory's `run-id` holds it.
    pub fn run(&self) -> String {
        run_of(&self.out)
    }

    /// Starts an LLM worker for the fleet's model and waits until it is ready.
    pub fn start_worker(&mut self, concurrency: u16) {
        self.start_worker_with(concurrency, &[]);
    }

    /// The log file of worker `n`.
    pub fn worker_log(&self, n: usize) -> PathBuf {
        self.dir.join(format!("worker-{n}.log"))
    }

    /// Starts an LLM worker with more flags and waits until it is ready.
    pub fn start_worker_with(&mut self, concurrency: u16, extra: &[&str]) {
        let n = self.workers.len();
        let c = concurrency.to_string();
        let mut args = vec!["--model", &self.model, "--concurrency", &c];
        args.extend_from_slice(extra);
        let log = self.worker_log(n);
        let env = self.service_env();
        self.workers
            .push(service(&binary("autoeval-worker"), &args, &env, &log));
    }

    /// Starts a verifier worker and waits until it is ready.
    pub fn start_verifier(&mut self, jobs: usize) {
        let n = self.verifiers.len();
        let j = jobs.to_string();
        let log = self.dir.join(format!("verifier-{n}.log"));
        let env = self.service_env();
        self.verifiers.push(service(
            &binary("autoeval-verifier"),
            &["--jobs", &j],
            &env,
            &log,
        ));
    }

    /// The environment of the fleet's services: its variables, its broker and its Redis.
    pub fn service_env(&self) -> Vec<(String, String)> {
        let mut env = self.env.clone();
        env.push(("AUTOEVAL_AMQP".into(), self.amqp.clone()));
        env.push(("AUTOEVAL_REDIS".into(), self.redis.clone()));
        env
    }

    /// `run` of `model` on `dataset` into `out`, small: one batch, one
    /// item per complexity value, zero-shot. Flags may be added after.
    pub fn small_run<'a>(&self, model: &'a str, dataset: &'a str, out: &'a str) -> Vec<&'a str> {
        vec![
            "run",
            "--model",
            model,
            "--dataset",
            dataset,
            "--per-bucket",
            "1",
            "--batches",
            "1",
            "--prompt",
            "zero-shot",
            "--out",
            out,
        ]
    }

    /// The flags that send a command to this fleet: its broker and its Redis
    /// (which [`Fleet::autoeval`] also puts in the environment, where
    /// `--fleet` alone finds them).
    pub fn on_fleet(&self) -> [&str; 5] {
        ["--fleet", "--amqp", &self.amqp, "--redis", &self.redis]
    }

    /// `autoeval ARGS` as a child, its output kept.
    pub fn autoeval(&self, args: &[&str]) -> Child {
        Command::new(binary("autoeval"))
            .args(args)
            .envs(self.service_env())
            .current_dir(&self.dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("autoeval starts")
    }

    /// `autoeval ARGS` to the end.
    pub fn autoeval_output(&self, args: &[&str]) -> Output {
        self.autoeval(args)
            .wait_with_output()
            .expect("autoeval ends")
    }

    /// The mock server's count of each prompt (by digest).
    pub fn prompt_counts(&self) -> HashMap<String, u64> {
        serde_json::from_value(get_json(&format!("http://127.0.0.1:{}/prompts", self.port)))
            .expect("prompt counts")
    }

    /// The mock server's request statistics.
    pub fn mock_stats(&self) -> serde_json::Value {
        get_json(&format!("http://127.0.0.1:{}/stats", self.port))
    }

    /// The run's store in Redis.
    pub fn store(&self) -> RunStore {
        let run = self.run();
        self.runtime.block_on(async {
            RunStore::new(
                autoeval_redis_store::connect(&self.redis)
                    .await
                    .expect("redis"),
                &run,
            )
        })
    }

    /// Runs a future on the fleet's runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.runtime.block_on(f)
    }

    /// Starts a future on the fleet's runtime, to go on while the test does other things.
    pub fn spawn<F>(&self, f: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.runtime.spawn(f)
    }

    /// Every round the run recorded: taken into its directory by the
    /// coordinator, or still in Redis; each round once.
    pub fn stored(&self) -> Vec<ResultRecord> {
        let store = self.store();
        let mut all = Vec::new();
        let results = self.out.join("results.jsonl");
        if autoeval_run_dir::results_exist(&results) {
            autoeval_run_dir::for_each_record(&results, |r| all.push(r)).expect("the results");
        }
        let mut seen: std::collections::HashSet<_> = all.iter().map(|r| r.round_key()).collect();
        self.block_on(async {
            store
                .scan_records(|r| {
                    if seen.insert(r.round_key()) {
                        all.push(r)
                    }
                })
                .await
                .expect("scan");
        });
        all
    }

    /// A broker connection, for the fleet of its Redis database.
    pub fn broker(&self) -> Broker {
        self.block_on(Broker::connect(
            &self.amqp,
            &self.topology(),
            "autoeval-test",
        ))
        .expect("the broker")
    }

    /// The names of the fleet's queues: the fleet of its Redis database.
    pub fn topology(&self) -> Topology {
        let db = autoeval_redis_store::database_of(&self.redis).expect("a Redis URL");
        Topology::of_redis_database(db)
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.workers.clear();
        self.verifiers.clear();
        self.mock.take();
        let topology = self.topology();
        let run = self.run();
        // A worker declares its model's translate and judge queues.
        let queues = [
            topology.translate_queue(&self.model),
            topology.judge_queue(&self.model),
        ];
        let (redis, amqp) = (self.redis.clone(), self.amqp.clone());
        self.runtime.block_on(async {
            if let Ok(conn) = autoeval_redis_store::connect(&redis).await {
                let _ = RunStore::new(conn, &run).delete().await;
            }
            if let Ok(b) = Broker::connect(&amqp, &topology, "autoeval-test-cleanup").await {
                let _ = b.take_dead_letters(&run).await;
                for queue in &queues {
                    let _ = b.delete_queue(queue).await;
                }
                b.close().await;
            }
        });
    }
}

/// Digests of the two prompts of a recorded round, as the mock server
/// counts them; `None` when the round has no English (its first call failed).
pub fn prompt_digests(r: &ResultRecord) -> Option<[String; 2]> {
    use autoeval_prompts::{Family, Shots, Templates};
    let t = Templates::builtin();
    let family = Family::of_dataset(&r.dataset)?;
    let alphabet = ['0', '1'];
    let i = t
        .informalize(family, r.input(), Shots::ZeroShot, &alphabet)
        .ok()?;
    let a = t
        .autoformalize(
            family,
            r.input(),
            r.english.as_deref()?,
            Shots::ZeroShot,
            &alphabet,
        )
        .ok()?;
    Some([
        autoeval_mock_llm::prompt_digest(&i.text),
        autoeval_mock_llm::prompt_digest(&a.text),
    ])
}

/// Counters recomputed from the stored rounds, as the store keys them.
pub fn recount(records: &[ResultRecord]) -> std::collections::BTreeMap<String, i64> {
    let mut out = std::collections::BTreeMap::new();
    for r in records {
        let field = format!(
            "{}|{}|{}|{}|{}|{}",
            r.dataset,
            r.model,
            r.prompt,
            r.round,
            r.complexity,
            r.verdict.name()
        );
        *out.entry(field).or_insert(0) += 1;
    }
    out
}

/// The name of the fleet run in `dir`, once its coordinator has claimed it
/// (it writes `run-id` before it registers the run).
pub fn run_of(dir: &Path) -> String {
    autoeval_run_dir::run_name(&autoeval_run_dir::RunDir(dir.to_path_buf()))
        .expect("the run's name")
}

/// A Redis of the test's own, which it can stop without saving and start empty.
pub struct OwnRedis {
    /// Its port.
    pub port: u16,
    server: Option<Process>,
}

impl OwnRedis {
    /// Starts an empty server on a free port.
    pub fn start() -> OwnRedis {
        let mut redis = OwnRedis {
            port: free_port(),
            server: None,
        };
        redis.restart();
        redis
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills the server (nothing is saved) and starts an empty one on the same port.
    pub fn restart(&mut self) {
        if let Some(mut old) = self.server.take() {
            old.kill9();
        }
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"])
            .args(["--enable-debug-command", "local"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.server = Some(Process {
            child,
            health: None,
        });
        let port = self.port;
        wait_for("the test's Redis answers", Duration::from_secs(30), || {
            Command::new("redis-cli")
                .args(["-p", &port.to_string(), "ping"])
                .output()
                .is_ok_and(|o| o.stdout.starts_with(b"PONG"))
        });
    }
}
