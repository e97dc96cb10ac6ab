//! Reading the deployment files for the tests that check them: YAML as
//! JSON, the Kubernetes manifests' pods, selectors and policy rules, and
//! the compose services' variables and secrets.

use crate::run_ok;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's deploy/ folder.
pub fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

/// A tool the test needs, which `scripts/setup --tests` installs.
pub fn tool(name: &str) -> PathBuf {
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
pub fn yaml_documents(file: &Path) -> Vec<serde_json::Value> {
    let script = "import sys, json, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))";
    let out = run_ok(
        Path::new("python3"),
        &["-c", script, &file.to_string_lossy()],
    );
    serde_json::from_slice(&out.stdout).expect("JSON of the YAML")
}

/// Every document of every manifest in deploy/k8s (the kustomization aside).
pub fn manifests() -> Vec<Value> {
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
pub struct Pod {
    /// `kind/name` of the workload, as kubernetes-validate names it.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// The template's labels.
    pub labels: Map<String, Value>,
    /// The template's pod spec.
    pub spec: Value,
}

/// The pod template of every workload among `docs`.
pub fn pods(docs: &[Value]) -> Vec<Pod> {
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
pub fn selects(selector: &Value, labels: &Map<String, Value>) -> bool {
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
pub fn selects_all(selector: &Value) -> bool {
    selector["matchLabels"]
        .as_object()
        .is_none_or(Map::is_empty)
        && selector["matchExpressions"]
            .as_array()
            .is_none_or(Vec::is_empty)
}

/// The secret volume behind `path` in `container` of `pod`, if a Secret is mounted there.
pub fn secret_behind<'a>(pod: &'a Pod, container: &Value, path: &str) -> Option<&'a Value> {
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
pub fn container_faults(pod: &Pod, container: &Value, probes: bool) -> Vec<&'static str> {
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
pub fn covers(rule: &Value, port: u64) -> bool {
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
pub fn compose_environment(service: &Value) -> BTreeMap<String, String> {
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
pub fn compose_secret_paths(service: &Value) -> BTreeMap<String, String> {
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
