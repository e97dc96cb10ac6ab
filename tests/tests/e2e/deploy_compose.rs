//! The compose deployment is secure by default: no service uses guest,
//! every port is published on 127.0.0.1 only, Grafana has no anonymous
//! access, Redis has an ACL file, and every password is a secret file that
//! scripts/deploy-secrets makes, once, without printing it.

use autoeval_e2e::deploy::{compose_environment, compose_secret_paths, deploy, yaml_documents};
use autoeval_e2e::scratch;
use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

#[test]
fn the_compose_file_is_secure_by_default() {
    let _turn = autoeval_e2e::turn(module_path!());
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
    let _turn = autoeval_e2e::turn(module_path!());
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
