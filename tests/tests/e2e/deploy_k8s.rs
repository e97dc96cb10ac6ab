//! The Kubernetes deployment is secure by default: every container runs
//! unprivileged (non-root, a read-only root, no capabilities, RuntimeDefault
//! seccomp) with probes and resources, every pod is selected by a
//! NetworkPolicy behind a default deny, only the fleet's pods reach RabbitMQ
//! and Redis, and the fleet reads its URLs, keys and TLS material from
//! Secret files.

use autoeval_e2e::deploy::{
    container_faults, covers, manifests, pods, secret_behind, selects, selects_all, Pod,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn every_container_runs_unprivileged_with_probes_and_resources() {
    let _turn = autoeval_e2e::turn(module_path!());
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
    let _turn = autoeval_e2e::turn(module_path!());
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
    let _turn = autoeval_e2e::turn(module_path!());
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
