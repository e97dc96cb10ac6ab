//! The deployment files are checked by the tools made for them: the compose
//! file by docker-compose's own schema (`docker-compose config`), the
//! Kubernetes manifests by kubernetes-validate against the API's published
//! schemas, strictly. KEDA's resources have no schema there, so they are
//! checked for what the fleet needs of them: they scale deployments that
//! exist, on queues the fleet declares.
//!
//! What no schema says is checked here too: both deployments are secure by
//! default. In Kubernetes every container runs unprivileged (non-root, a
//! read-only root, no capabilities, RuntimeDefault seccomp) with probes
//! and resources, every pod is selected by a NetworkPolicy behind a default
//! deny, only the fleet's pods reach RabbitMQ and Redis, and the fleet
//! reads its URLs, keys and TLS material from Secret files. In compose no
//! service uses guest, every port is published on 127.0.0.1 only, Grafana
//! has no anonymous access, Redis has an ACL file, and every password is a
//! secret file that scripts/deploy-secrets makes, once, without printing it.

use autoeval_e2e::{run_ok, scratch};
use autoeval_proto::fleet::{translate_queue, VERIFY_QUEUE};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

/// A tool the test needs, which `scripts/setup --tests` installs.
fn tool(name: &str) -> PathBuf {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .expect("sh runs");
    assert!(
        found.status.success(),
        "{name} is missing: run `scripts/setup --tests`"
    );
    PathBuf::from(String::from_utf8_lossy(&found.stdout).trim())
}

/// Every document of a YAML file, as JSON (parsed by the YAML library kubernetes-validate brings).
fn yaml_documents(file: &Path) -> Vec<serde_json::Value> {
    let script = "import sys, json, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))";
    let out = run_ok(
        Path::new("python3"),
        &["-c", script, &file.to_string_lossy()],
    );
    serde_json::from_slice(&out.stdout).expect("JSON of the YAML")
}

/// Every document of every manifest in deploy/k8s (the kustomization aside).
fn manifests() -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(deploy().join("k8s"))
        .expect("deploy/k8s")
        .map(|e| e.expect("an entry of deploy/k8s").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter(|p| p.file_name().is_some_and(|n| n != "kustomization.yaml"))
        .collect();
    files.sort();
    files.iter().flat_map(|f| yaml_documents(f)).collect()
}

/// A workload's pods, as its template makes them.
struct Pod {
    /// `kind/name` of the workload, as kubernetes-validate names it.
    name: String,
    namespace: String,
    labels: Map<String, Value>,
    spec: Value,
}

/// The pod template of every workload among `docs`.
fn pods(docs: &[Value]) -> Vec<Pod> {
    docs.iter()
        .filter_map(|d| {
            let kind = d["kind"].as_str()?;
            let template = match kind {
                "Pod" => d,
                "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Job" => {
                    &d["spec"]["template"]
                }
                "CronJob" => &d["spec"]["jobTemplate"]["spec"]["template"],
                _ => return None,
            };
            Some(Pod {
                name: format!(
                    "{}/{}",
                    kind.to_lowercase(),
                    d["metadata"]["name"].as_str().unwrap_or_default()
                ),
                namespace: d["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or("default")
                    .to_string(),
                labels: template["metadata"]["labels"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                spec: template["spec"].clone(),
            })
        })
        .collect()
}

/// Whether a label selector (matchLabels and matchExpressions) selects
/// `labels`; an empty one selects everything.
fn selects(selector: &Value, labels: &Map<String, Value>) -> bool {
    let by_label = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let by_expression = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| {
            let value = labels.get(e["key"].as_str().unwrap_or_default());
            let listed = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|v| Some(v) == value);
            match e["operator"].as_str() {
                Some("In") => listed,
                Some("NotIn") => !listed,
                Some("Exists") => value.is_some(),
                Some("DoesNotExist") => value.is_none(),
                other => panic!("unknown selector operator {other:?}"),
            }
        });
    by_label && by_expression
}

/// Whether a label selector is empty: it selects every pod.
fn selects_all(selector: &Value) -> bool {
    selector["matchLabels"]
        .as_object()
        .is_none_or(Map::is_empty)
        && selector["matchExpressions"]
            .as_array()
            .is_none_or(Vec::is_empty)
}

/// The secret volume behind `path` in `container` of `pod`, if a Secret is mounted there.
fn secret_behind<'a>(pod: &'a Pod, container: &Value, path: &str) -> Option<&'a Value> {
    let mount = container["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| {
            let at = m["mountPath"].as_str().unwrap_or_default();
            path.strip_prefix(at)
                .is_some_and(|rest| rest.starts_with('/'))
        })?;
    pod.spec["volumes"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == mount["name"])
        .map(|v| &v["secret"])
        .filter(|s| s.is_object())
}

/// What `container` of `pod` lacks of the security settings, probes and
/// resources every container must have (pod-level runAsNonRoot, runAsUser
/// and seccompProfile count, as containers inherit them).
fn container_faults(pod: &Pod, container: &Value, probes: bool) -> Vec<&'static str> {
    let own = &container["securityContext"];
    let either = |field: &str| {
        if own[field].is_null() {
            pod.spec["securityContext"][field].clone()
        } else {
            own[field].clone()
        }
    };
    let volumes = pod.spec["volumes"].as_array().cloned().unwrap_or_default();
    let tmp = container["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["mountPath"] == "/tmp");
    let resources = &container["resources"];
    [
        (either("runAsNonRoot") == true, "runAsNonRoot: true"),
        (
            either("runAsUser").as_u64().is_some_and(|u| u > 0),
            "a runAsUser other than 0",
        ),
        (
            either("seccompProfile")["type"] == "RuntimeDefault",
            "seccompProfile RuntimeDefault",
        ),
        (
            own["allowPrivilegeEscalation"] == false,
            "allowPrivilegeEscalation: false",
        ),
        (
            own["readOnlyRootFilesystem"] == true,
            "readOnlyRootFilesystem: true",
        ),
        (own["privileged"] != true, "not privileged"),
        (
            own["capabilities"]["drop"]
                .as_array()
                .is_some_and(|d| d.iter().any(|c| c == "ALL")),
            "capabilities dropped: ALL",
        ),
        (
            own["capabilities"]["add"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "no capability added",
        ),
        // With a read-only root, the scratch space is a volume of its own.
        (
            tmp.is_some_and(|m| {
                volumes
                    .iter()
                    .any(|v| v["name"] == m["name"] && v["emptyDir"].is_object())
            }),
            "an emptyDir at /tmp",
        ),
        (!resources["requests"]["cpu"].is_null(), "a CPU request"),
        (
            !resources["requests"]["memory"].is_null(),
            "a memory request",
        ),
        // CPU limits are left to each workload: a throttled broker misses heartbeats.
        (!resources["limits"]["memory"].is_null(), "a memory limit"),
        (
            !probes || container["livenessProbe"].is_object(),
            "a liveness probe",
        ),
        (
            !probes || container["readinessProbe"].is_object(),
            "a readiness probe",
        ),
    ]
    .into_iter()
    .filter(|(ok, _)| !ok)
    .map(|(_, what)| what)
    .collect()
}

/// Whether an ingress or egress rule covers TCP `port` (no ports: every port).
fn covers(rule: &Value, port: u64) -> bool {
    let Some(ports) = rule["ports"].as_array().filter(|p| !p.is_empty()) else {
        return true;
    };
    ports
        .iter()
        .any(|p| match (&p["port"], p["endPort"].as_u64()) {
            (Value::Number(n), Some(end)) => (n.as_u64().unwrap_or(0)..=end).contains(&port),
            (Value::Number(n), None) => n.as_u64() == Some(port),
            // A named port or none at all: it may be this one.
            _ => true,
        })
}

/// A service's environment in compose, as a map (it may be written as a list of NAME=VALUE).
fn compose_environment(service: &Value) -> BTreeMap<String, String> {
    match &service["environment"] {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                let value = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                (k.clone(), value)
            })
            .collect(),
        Value::Array(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(|e| {
                let (k, v) = e.split_once('=').unwrap_or((e, ""));
                (k.to_string(), v.to_string())
            })
            .collect(),
        _ => BTreeMap::new(),
    }
}

/// Where a compose service finds each secret it mounts: secret name to path.
fn compose_secret_paths(service: &Value) -> BTreeMap<String, String> {
    let at = |target: &str| {
        if target.starts_with('/') {
            target.to_string()
        } else {
            format!("/run/secrets/{target}")
        }
    };
    service["secrets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| match s {
            Value::String(name) => (name.clone(), at(name)),
            long => {
                let source = long["source"].as_str().unwrap_or_default().to_string();
                let target = long["target"].as_str().unwrap_or(&source).to_string();
                (source, at(&target))
            }
        })
        .collect()
}

#[test]
fn the_compose_file_passes_docker_composes_schema_and_a_broken_one_does_not() {
    let compose = tool("docker-compose");
    let file = deploy().join("compose.yaml");
    // No secret file is needed for the check: a fresh clone passes it.
    let checked = run_ok(&compose, &["-f", &file.to_string_lossy(), "config"]);
    let config = String::from_utf8_lossy(&checked.stdout);
    for service in [
        "rabbitmq",
        "redis",
        "prometheus",
        "grafana",
        "coordinator",
        "worker",
        "verifier",
    ] {
        assert!(
            config.contains(&format!("\n  {service}:\n")),
            "no {service} in {config}"
        );
    }
    // The check is a real one: an unknown setting is refused.
    let broken = std::env::temp_dir().join(format!("autoeval-compose-{}.yaml", std::process::id()));
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("stop_grace_period: 2m", "stop_grace_perod: 2m");
    std::fs::write(&broken, text).unwrap();
    let refused = Command::new(&compose)
        .args(["-f", &broken.to_string_lossy(), "config", "-q"])
        .current_dir(deploy())
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&broken);
    assert!(!refused.status.success(), "a misspelt setting passed");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("stop_grace_perod"),
        "refused for another reason: {said}"
    );
}

#[test]
fn the_compose_file_is_secure_by_default() {
    let compose = &yaml_documents(&deploy().join("compose.yaml"))[0];
    assert!(
        !compose.to_string().to_lowercase().contains("guest"),
        "the compose file uses RabbitMQ's guest user"
    );
    let services = compose["services"].as_object().expect("services");

    // Every secret is a file scripts/deploy-secrets makes (checked below), none committed.
    let secrets = compose["secrets"].as_object().expect("top-level secrets");
    for (name, secret) in secrets {
        let path = secret["file"].as_str().unwrap_or_default();
        assert!(
            path.starts_with("./secrets/"),
            "secret {name} is not a file in deploy/secrets/: {secret}"
        );
    }

    for (name, s) in services {
        for port in s["ports"].as_array().into_iter().flatten() {
            let local = match port {
                Value::String(p) => p.starts_with("127.0.0.1:"),
                long => long["host_ip"] == "127.0.0.1",
            };
            assert!(local, "{name} publishes {port} beyond 127.0.0.1");
        }
        for (var, value) in compose_environment(s) {
            assert!(
                !(value.contains("://") && value.contains('@')),
                "{name}: {var} holds a URL with credentials"
            );
            let secretive = ["PASS", "KEY", "SECRET", "TOKEN"]
                .iter()
                .any(|w| var.contains(w));
            assert!(
                !secretive || var.ends_with("_FILE"),
                "{name}: {var} is set in the compose file; give it as {var}_FILE, a secret"
            );
        }
        for var in ["RABBITMQ_DEFAULT_USER", "RABBITMQ_DEFAULT_PASS"] {
            assert!(!compose_environment(s).contains_key(var), "{name}: {var}");
        }
    }

    // Grafana: no anonymous access, the admin's password from a secret.
    let grafana = &services["grafana"];
    let env = compose_environment(grafana);
    assert_eq!(
        env.get("GF_AUTH_ANONYMOUS_ENABLED").map(String::as_str),
        Some("false"),
        "Grafana lets anonymous users in"
    );
    let mounted = compose_secret_paths(grafana);
    let password = env
        .get("GF_SECURITY_ADMIN_PASSWORD__FILE")
        .expect("Grafana's admin password from a file");
    assert!(
        mounted.values().any(|p| p == password),
        "{password} is no secret Grafana mounts: {mounted:?}"
    );

    // Redis: a password in an ACL file from a secret, none on its command
    // line, and a health check that reads it from the secret.
    let redis = &services["redis"];
    let command: Vec<String> = match &redis["command"] {
        Value::Array(a) => a
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect(),
        Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        other => panic!("Redis's command: {other}"),
    };
    assert!(
        !command.iter().any(|a| a.contains("requirepass")),
        "{command:?}"
    );
    let mounted = compose_secret_paths(redis);
    let acl = command
        .iter()
        .position(|a| a == "--aclfile")
        .and_then(|i| command.get(i + 1))
        .expect("redis-server --aclfile");
    assert!(
        mounted.values().any(|p| p == acl),
        "{acl} is no secret Redis mounts"
    );
    for persisted in ["--appendonly", "--appendfsync"] {
        assert!(command.iter().any(|a| a == persisted), "{command:?}");
    }
    let check = redis["healthcheck"]["test"].to_string();
    assert!(
        mounted.values().any(|p| check.contains(p.as_str())) && check.contains("PONG"),
        "Redis's health check does not authenticate from a secret: {check}"
    );

    // RabbitMQ: its user from a conf.d snippet mounted as a secret.
    let rabbitmq = compose_secret_paths(&services["rabbitmq"]);
    assert!(
        rabbitmq
            .values()
            .any(|p| p.starts_with("/etc/rabbitmq/conf.d/")),
        "RabbitMQ's user is not from a secret in conf.d: {rabbitmq:?}"
    );

    // The fleet: URLs from secret files only; its own containers hardened.
    for name in ["worker", "verifier", "coordinator"] {
        let s = &services[name];
        let env = compose_environment(s);
        let mounted = compose_secret_paths(s);
        for var in ["AUTOEVAL_AMQP", "AUTOEVAL_REDIS"] {
            assert!(
                !env.contains_key(var),
                "{name} has {var} in its environment"
            );
            let path = env
                .get(&format!("{var}_FILE"))
                .unwrap_or_else(|| panic!("{name} has no {var}_FILE"));
            assert!(
                mounted.values().any(|p| p == path),
                "{name}: {var}_FILE {path} is no secret it mounts: {mounted:?}"
            );
        }
        assert_eq!(s["read_only"], true, "{name}: read_only");
        assert!(
            s["cap_drop"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c == "ALL")),
            "{name}: cap_drop ALL"
        );
    }
}

#[test]
fn deploy_secrets_makes_every_secret_file_once_and_prints_no_password() {
    let script = deploy().join("../scripts/deploy-secrets");
    let dir = scratch("deploy-secrets");
    let run = |kind: &str| {
        let out = Command::new("bash")
            .arg(&script)
            .arg(kind)
            .arg(dir.join(kind))
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_COMPATIBLE_API_KEY")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "deploy-secrets {kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let read = |kind: &str, name: &str| {
        std::fs::read_to_string(dir.join(kind).join(name))
            .unwrap_or_else(|e| panic!("{kind}/{name}: {e}"))
    };
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;

    // The files compose mounts and kustomize reads, by name.
    let compose = &yaml_documents(&deploy().join("compose.yaml"))[0];
    let compose_files: Vec<String> = compose["secrets"]
        .as_object()
        .unwrap()
        .values()
        .map(|s| {
            s["file"]
                .as_str()
                .unwrap()
                .trim_start_matches("./secrets/")
                .to_string()
        })
        .collect();
    let kustomization = &yaml_documents(&deploy().join("k8s/kustomization.yaml"))[0];
    let generated = kustomization["secretGenerator"]
        .as_array()
        .expect("secretGenerator");
    assert!(
        generated
            .iter()
            .all(|g| g["literals"].is_null() && g["envs"].is_null()),
        "a generated Secret takes values written in the kustomization"
    );
    let k8s_files: Vec<String> = generated
        .iter()
        .flat_map(|g| g["files"].as_array().unwrap())
        .map(|f| {
            let f = f.as_str().unwrap();
            let path = f.split_once('=').map_or(f, |(_, p)| p);
            path.strip_prefix("secrets/")
                .unwrap_or_else(|| panic!("{path} is not under deploy/k8s/secrets/"))
                .to_string()
        })
        .collect();

    let mut said = String::new();
    for (kind, files, file_mode) in [
        // Compose mounts a file with its host owner and mode into containers
        // whose servers run as other users: readable, in a folder only its
        // owner can enter.
        ("compose", &compose_files, 0o644),
        ("k8s", &k8s_files, 0o600),
    ] {
        said += &run(kind);
        assert_eq!(
            mode(&dir.join(kind)),
            0o700,
            "{kind}: the folder is private"
        );
        for name in files.iter() {
            let path = dir.join(kind).join(name);
            assert!(path.is_file(), "deploy-secrets {kind} makes no {name}");
            assert_eq!(mode(&path), file_mode, "{kind}/{name}");
        }
    }

    // One password per server, the same in every file that carries it, and
    // none printed.
    let mut passwords = Vec::new();
    for kind in ["compose", "k8s"] {
        let amqp = read(kind, "rabbitmq.conf")
            .lines()
            .find_map(|l| l.strip_prefix("default_pass = "))
            .expect("default_pass")
            .to_string();
        assert!(read(kind, "rabbitmq.conf").contains("default_user = autoeval"));
        assert!(
            read(kind, "amqp-url")
                .trim()
                .starts_with(&format!("amqp://autoeval:{amqp}@")),
            "{kind}: the broker's URL holds another password"
        );
        let redis = read(kind, "redis-password").trim().to_string();
        assert_eq!(
            read(kind, "redis-users.acl").trim(),
            format!("user default on >{redis} ~* &* +@all")
        );
        assert!(read(kind, "redis-url")
            .trim()
            .starts_with(&format!("redis://:{redis}@")));
        assert!(read(kind, "openai-api-key").is_empty(), "a key made up");
        passwords.extend([amqp, redis]);
    }
    if let Ok(admin) = std::fs::read_to_string(dir.join("compose/grafana-admin-password")) {
        passwords.push(admin.trim().to_string());
    }
    for p in &passwords {
        assert!(p.len() >= 32, "a short password");
        assert!(
            !said.contains(p.as_str()),
            "deploy-secrets printed a password: {said}"
        );
    }
    let distinct: BTreeSet<&String> = passwords.iter().collect();
    assert_eq!(distinct.len(), passwords.len(), "a password used twice");

    // Again: nothing is made, nothing changes.
    let before: Vec<String> = compose_files.iter().map(|f| read("compose", f)).collect();
    let again = run("compose") + &run("k8s");
    assert!(!again.contains("made"), "made again: {again}");
    let after: Vec<String> = compose_files.iter().map(|f| read("compose", f)).collect();
    assert_eq!(before, after);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_kubernetes_manifests_pass_strict_schema_validation() {
    let validate = tool("kubernetes-validate");
    let dir = deploy().join("k8s");
    let files: Vec<String> = [
        "namespace",
        "config",
        "network-policy",
        "redis",
        "rabbitmq",
        "worker",
        "verifier",
        "coordinator",
    ]
    .iter()
    .map(|f| dir.join(format!("{f}.yaml")).to_string_lossy().into_owned())
    .collect();
    let mut args = vec!["--strict"];
    args.extend(files.iter().map(String::as_str));
    let out = run_ok(&validate, &args);
    let said = String::from_utf8_lossy(&out.stdout);
    let passed = said.matches(" passed for resource ").count();
    let documents: usize = files
        .iter()
        .map(|f| yaml_documents(Path::new(f)).len())
        .sum();
    assert_eq!(passed, documents, "every resource validated: {said}");
    for kind in [
        "deployment/worker",
        "deployment/verifier",
        "statefulset/redis",
        "statefulset/rabbitmq",
        "job/coordinator",
        "networkpolicy/default-deny",
    ] {
        assert!(said.contains(kind), "{kind} not validated: {said}");
    }
}

#[test]
fn every_container_runs_unprivileged_with_probes_and_resources() {
    let docs = manifests();
    let pods = pods(&docs);
    let names: BTreeSet<&str> = pods.iter().map(|p| p.name.as_str()).collect();
    for expected in [
        "deployment/worker",
        "deployment/verifier",
        "statefulset/redis",
        "statefulset/rabbitmq",
        "job/coordinator",
    ] {
        assert!(names.contains(expected), "no {expected} among {names:?}");
    }
    let mut faults = Vec::new();
    for pod in &pods {
        // None of them talks to the Kubernetes API.
        if pod.spec["automountServiceAccountToken"] != false {
            faults.push(format!("{}: automountServiceAccountToken: false", pod.name));
        }
        for list in ["containers", "initContainers"] {
            for c in pod.spec[list].as_array().into_iter().flatten() {
                // An init container runs to its end before the others and
                // takes no probes, unless it is a sidecar that runs beside them.
                let probes = list == "containers" || c["restartPolicy"] == "Always";
                for fault in container_faults(pod, c, probes) {
                    faults.push(format!("{} {list} {}: {fault}", pod.name, c["name"]));
                }
            }
        }
    }
    assert!(faults.is_empty(), "missing:\n{}", faults.join("\n"));
    // The namespace refuses any pod that would break the restricted profile.
    let namespace = docs
        .iter()
        .find(|d| d["kind"] == "Namespace")
        .expect("the namespace");
    assert_eq!(
        namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
        "restricted"
    );
}

#[test]
fn the_fleets_pods_read_urls_keys_and_tls_from_secret_files() {
    let docs = manifests();
    let fleet: Vec<Pod> = pods(&docs)
        .into_iter()
        .filter(|p| {
            ["coordinator", "worker", "verifier"]
                .iter()
                .any(|c| p.labels.get("app.kubernetes.io/component") == Some(&Value::from(*c)))
        })
        .collect();
    assert_eq!(fleet.len(), 3);
    for pod in &fleet {
        for c in pod.spec["containers"].as_array().unwrap() {
            let name = format!("{} {}", pod.name, c["name"]);
            assert!(
                c["envFrom"].is_null(),
                "{name}: a Secret in its environment"
            );
            let env: BTreeMap<&str, &Value> = c["env"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| (e["name"].as_str().unwrap(), e))
                .collect();
            for (var, e) in &env {
                assert!(
                    e["valueFrom"]["secretKeyRef"].is_null(),
                    "{name}: {var} from a Secret into its environment, not a file"
                );
            }
            let mut files = vec!["AUTOEVAL_AMQP", "AUTOEVAL_REDIS"];
            if pod.name == "deployment/worker" {
                files.extend([
                    "OPENAI_API_KEY",
                    "ANTHROPIC_API_KEY",
                    "OPENAI_COMPATIBLE_API_KEY",
                ]);
            }
            for var in files {
                assert!(!env.contains_key(var), "{name}: {var} in its environment");
                let path = env
                    .get(format!("{var}_FILE").as_str())
                    .and_then(|e| e["value"].as_str())
                    .unwrap_or_else(|| panic!("{name}: no {var}_FILE"));
                let secret = secret_behind(pod, c, path)
                    .unwrap_or_else(|| panic!("{name}: {var}_FILE {path} is no Secret's file"));
                assert_eq!(secret["secretName"], "autoeval-keys", "{name}: {var}_FILE");
            }
            // TLS: paths into the optional Secret autoeval-tls, read only
            // for amqps:// and rediss:// URLs, so the pod starts without it.
            for var in ["AUTOEVAL_TLS_CA", "AUTOEVAL_TLS_CERT", "AUTOEVAL_TLS_KEY"] {
                let path = env
                    .get(var)
                    .and_then(|e| e["value"].as_str())
                    .unwrap_or_else(|| panic!("{name}: no {var}"));
                let secret = secret_behind(pod, c, path)
                    .unwrap_or_else(|| panic!("{name}: {var} {path} is no Secret's file"));
                assert_eq!(secret["secretName"], "autoeval-tls", "{name}: {var}");
                assert_eq!(secret["optional"], true, "{name}: autoeval-tls is required");
            }
        }
    }
    // No password is committed: the Secrets are generated from files that
    // are not, and nothing names guest.
    for d in &docs {
        if d["kind"] == "Secret" {
            assert!(
                d["data"].is_null() && d["stringData"].is_null(),
                "Secret {} carries values",
                d["metadata"]["name"]
            );
        }
        assert!(
            !d.to_string().to_lowercase().contains("guest"),
            "guest in {d}"
        );
    }
}

#[test]
fn network_policies_deny_by_default_select_every_pod_and_allow_only_the_fleets_flows() {
    let docs = manifests();
    let pods = pods(&docs);
    let policies: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == "NetworkPolicy")
        .collect();
    let name = |p: &Value| {
        p["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let types = |p: &Value| -> BTreeSet<String> {
        p["spec"]["policyTypes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect()
    };

    // A default deny: every pod, both ways, nothing allowed.
    assert!(
        policies.iter().any(|p| {
            selects_all(&p["spec"]["podSelector"])
                && types(p).contains("Ingress")
                && types(p).contains("Egress")
                && p["spec"]["ingress"].as_array().is_none_or(Vec::is_empty)
                && p["spec"]["egress"].as_array().is_none_or(Vec::is_empty)
        }),
        "no default-deny NetworkPolicy"
    );

    // Every workload's pods have a policy of their own (beyond those for every pod).
    let of = |pod: &Pod| -> Vec<&Value> {
        policies
            .iter()
            .copied()
            .filter(|p| p["metadata"]["namespace"] == pod.namespace.as_str())
            .filter(|p| selects(&p["spec"]["podSelector"], &pod.labels))
            .collect()
    };
    for pod in &pods {
        let own: Vec<String> = of(pod)
            .into_iter()
            .filter(|p| !selects_all(&p["spec"]["podSelector"]))
            .map(name)
            .collect();
        assert!(
            !own.is_empty(),
            "no NetworkPolicy selects {}'s pods",
            pod.name
        );
    }

    // Who may connect to a workload's pods on a port: the workloads of the
    // namespace an ingress rule lets in, and "namespace N" for other namespaces'.
    let senders = |target: &str, port: u64| -> BTreeSet<String> {
        let target = pods.iter().find(|p| p.name == target).unwrap();
        let mut from = BTreeSet::new();
        for policy in of(target) {
            for rule in policy["spec"]["ingress"].as_array().into_iter().flatten() {
                if !covers(rule, port) {
                    continue;
                }
                let peers = rule["from"].as_array().filter(|f| !f.is_empty());
                let peers = peers.unwrap_or_else(|| {
                    panic!(
                        "{} lets anyone reach {} on {port}",
                        name(policy),
                        target.name
                    )
                });
                for peer in peers {
                    assert!(
                        peer["ipBlock"].is_null(),
                        "{} lets addresses reach {} on {port}",
                        name(policy),
                        target.name
                    );
                    match &peer["namespaceSelector"] {
                        Value::Null => from.extend(
                            pods.iter()
                                .filter(|p| selects(&peer["podSelector"], &p.labels))
                                .map(|p| p.name.clone()),
                        ),
                        namespaces => {
                            let named = &namespaces["matchLabels"]["kubernetes.io/metadata.name"];
                            from.insert(format!("namespace {}", named.as_str().unwrap_or("*")));
                        }
                    }
                }
            }
        }
        from
    };
    let fleet: BTreeSet<String> = [
        "deployment/verifier",
        "deployment/worker",
        "job/coordinator",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(senders("statefulset/redis", 6379), fleet, "Redis's clients");
    for port in [5672, 5671] {
        let local: BTreeSet<String> = senders("statefulset/rabbitmq", port)
            .into_iter()
            .filter(|s| !s.starts_with("namespace "))
            .collect();
        assert_eq!(local, fleet, "RabbitMQ's clients on {port}");
    }
    // Metrics: only from another namespace's Prometheus, none from the fleet's own pods.
    for pod in &fleet {
        let scrapers = senders(pod, 9100);
        assert!(
            !scrapers.is_empty() && scrapers.iter().all(|s| s.starts_with("namespace ")),
            "{pod} on 9100: {scrapers:?}"
        );
    }
    // Addresses outside the cluster: only the workers, only HTTPS.
    for policy in &policies {
        for rule in policy["spec"]["egress"].as_array().into_iter().flatten() {
            let addresses = rule["to"]
                .as_array()
                .is_none_or(|to| to.is_empty() || to.iter().any(|p| !p["ipBlock"].is_null()));
            if !addresses {
                continue;
            }
            let selected: Vec<&str> = pods
                .iter()
                .filter(|p| selects(&policy["spec"]["podSelector"], &p.labels))
                .map(|p| p.name.as_str())
                .collect();
            assert_eq!(
                selected,
                ["deployment/worker"],
                "{} lets {selected:?} out",
                name(policy)
            );
            let ports: Vec<&Value> = rule["ports"].as_array().into_iter().flatten().collect();
            assert!(
                !ports.is_empty() && ports.iter().all(|p| p["port"] == 443),
                "{} lets the workers out on {ports:?}",
                name(policy)
            );
        }
    }
}

#[test]
fn keda_scales_the_worker_deployments_on_the_fleets_own_queues() {
    let dir = deploy().join("k8s");
    let deployments: Vec<String> = ["worker", "verifier"]
        .iter()
        .flat_map(|f| yaml_documents(&dir.join(format!("{f}.yaml"))))
        .filter(|d| d["kind"] == "Deployment")
        .map(|d| d["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    let config = yaml_documents(&dir.join("config.yaml"));
    let model = config
        .iter()
        .find(|d| d["kind"] == "ConfigMap")
        .and_then(|d| d["data"]["MODEL"].as_str())
        .expect("the model in the ConfigMap")
        .to_string();
    let keda = yaml_documents(&dir.join("keda.yaml"));
    let scaled: Vec<&serde_json::Value> = keda
        .iter()
        .filter(|d| d["kind"] == "ScaledObject")
        .collect();
    assert_eq!(scaled.len(), 2);
    let mut queues = Vec::new();
    for s in scaled {
        assert_eq!(s["apiVersion"], "keda.sh/v1alpha1");
        let target = s["spec"]["scaleTargetRef"]["name"].as_str().unwrap();
        assert!(
            deployments.iter().any(|d| d == target),
            "{target} is no Deployment"
        );
        let trigger = &s["spec"]["triggers"][0];
        assert_eq!(trigger["type"], "rabbitmq");
        assert_eq!(trigger["metadata"]["mode"], "QueueLength");
        assert!(
            trigger["metadata"]["value"]
                .as_str()
                .unwrap()
                .parse::<u32>()
                .unwrap()
                > 0
        );
        let auth = trigger["authenticationRef"]["name"].as_str().unwrap();
        assert!(keda
            .iter()
            .any(|d| d["kind"] == "TriggerAuthentication" && d["metadata"]["name"] == auth));
        queues.push(
            trigger["metadata"]["queueName"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    queues.sort();
    let mut expected = vec![translate_queue(&model), VERIFY_QUEUE.to_string()];
    expected.sort();
    assert_eq!(
        queues, expected,
        "the queues the fleet declares for {model}"
    );
    // The broker's URL KEDA reads is a key of a Secret the kustomization makes.
    let kustomization = &yaml_documents(&dir.join("kustomization.yaml"))[0];
    for auth in keda.iter().filter(|d| d["kind"] == "TriggerAuthentication") {
        for r in auth["spec"]["secretTargetRef"].as_array().unwrap() {
            let made = kustomization["secretGenerator"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|g| g["name"] == r["name"])
                .flat_map(|g| g["files"].as_array().into_iter().flatten())
                .any(|f| f.as_str().unwrap_or_default().split('=').next() == r["key"].as_str());
            assert!(made, "KEDA reads {r}, which no generated Secret holds");
        }
    }
}
