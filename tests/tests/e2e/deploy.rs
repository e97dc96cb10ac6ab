//! The deployment files are checked by the tools made for them: the compose
//! file by docker-compose's own schema (`docker-compose config`), the
//! Kubernetes manifests by kubernetes-validate against the API's published
//! schemas, strictly. KEDA's resources have no schema there, so they are
//! checked for what the fleet needs of them: they scale deployments that
//! exist, on queues the fleet declares. What no schema says, that both are
//! secure by default, is checked by `deploy_compose.rs` and `deploy_k8s.rs`.

use autoeval_e2e::deploy::{deploy, tool, yaml_documents};
use autoeval_e2e::run_ok;
use autoeval_proto::fleet::Topology;
use std::path::Path;
use std::process::Command;

#[test]
fn the_compose_file_passes_docker_composes_schema_and_a_broken_one_does_not() {
    let _turn = autoeval_e2e::turn(module_path!());
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
fn the_kubernetes_manifests_pass_strict_schema_validation() {
    let _turn = autoeval_e2e::turn(module_path!());
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
fn keda_scales_the_worker_deployments_on_the_fleets_own_queues() {
    let _turn = autoeval_e2e::turn(module_path!());
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
    // The deployment's Redis is database 0: the unnamed fleet.
    let names = Topology::default();
    let mut expected = vec![names.translate_queue(&model), names.verify_queue()];
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
