//! TLS servers for tests: a certificate authority made at test time, a
//! RabbitMQ node and a Redis that listen only for TLS and ask every client
//! for a certificate.

use crate::fleet::{free_port, wait_for};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// PEM files of a test's certificate authority and of one server and one client it signed.
pub struct Pki {
    /// The authority's certificate.
    pub ca: PathBuf,
    /// The server's certificate, for `127.0.0.1` and `localhost`.
    pub server_cert: PathBuf,
    /// The server's key.
    pub server_key: PathBuf,
    /// The client's certificate.
    pub client_cert: PathBuf,
    /// The client's key.
    pub client_key: PathBuf,
}

impl Pki {
    /// A new authority, server and client, written into `dir`.
    pub fn new(dir: &Path) -> Pki {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "autoeval test authority");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().expect("a CA key"))
            .expect("the CA signs itself");
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).expect("a PEM file");
            path
        };
        let (server_pem, server_key) = leaf(
            &ca,
            &["127.0.0.1", "localhost"],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let (client_pem, client_key) = leaf(&ca, &[], ExtendedKeyUsagePurpose::ClientAuth);
        Pki {
            ca: write("ca.pem", ca.pem()),
            server_cert: write("server.pem", server_pem),
            server_key: write("server.key", server_key),
            client_cert: write("client.pem", client_pem),
            client_key: write("client.key", client_key),
        }
    }

    /// The variables that give a fleet process this authority and client certificate.
    pub fn client_env(&self) -> Vec<(String, String)> {
        [
            ("AUTOEVAL_TLS_CA", &self.ca),
            ("AUTOEVAL_TLS_CERT", &self.client_cert),
            ("AUTOEVAL_TLS_KEY", &self.client_key),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.display().to_string()))
        .collect()
    }
}

/// A certificate and key (PEM) for `names`, signed by `ca`, for `usage`.
fn leaf(
    ca: &Issuer<'_, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> (String, String) {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).expect("leaf params");
    params
        .distinguished_name
        .push(DnType::CommonName, "autoeval test");
    params.extended_key_usages = vec![usage];
    let key = KeyPair::generate().expect("a key");
    let cert = params.signed_by(&key, ca).expect("the CA signs");
    (cert.pem(), key.serialize_pem())
}

/// A Redis that listens only for TLS on its port, killed on drop.
pub struct TlsRedis {
    /// Its TLS port on 127.0.0.1.
    pub port: u16,
    child: Child,
}

impl TlsRedis {
    /// Starts one with `pki`'s server certificate, asking clients for theirs.
    pub fn start(pki: &Pki, dir: &Path) -> TlsRedis {
        let port = free_port();
        let path = |p: &PathBuf| p.display().to_string();
        let args = [
            "--port".to_string(),
            "0".into(),
            "--tls-port".into(),
            port.to_string(),
            "--bind".into(),
            "127.0.0.1".into(),
            "--tls-cert-file".into(),
            path(&pki.server_cert),
            "--tls-key-file".into(),
            path(&pki.server_key),
            "--tls-ca-cert-file".into(),
            path(&pki.ca),
            "--tls-auth-clients".into(),
            "yes".into(),
            "--save".into(),
            String::new(),
            "--appendonly".into(),
            "no".into(),
            "--dir".into(),
            dir.display().to_string(),
        ];
        let child = Command::new("redis-server")
            .args(&args)
            .stdout(std::fs::File::create(dir.join("redis-tls.log")).expect("a log"))
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts (it is Debian's redis-server package)");
        // Made before the wait, so that a Redis that never listens is still killed.
        let redis = TlsRedis { port, child };
        wait_for("the TLS Redis listens", Duration::from_secs(30), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        redis
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}", self.port)
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A RabbitMQ node of its own that listens only for TLS, stopped on drop.
///
/// It runs beside the machine's broker: its own node name, Erlang
/// distribution port, directories and cookie, and no plugins (the
/// management plugin would want the other node's port).
pub struct TlsRabbit {
    /// Its TLS port on 127.0.0.1.
    pub port: u16,
    node: String,
    env: Vec<(String, String)>,
    child: Child,
}

/// A RabbitMQ program, from where Debian keeps it (whose wrappers in
/// `/usr/sbin` would switch to the `rabbitmq` user) or else from `PATH`.
fn rabbit_program(name: &str) -> PathBuf {
    let debian = Path::new("/usr/lib/rabbitmq/bin").join(name);
    if debian.exists() {
        debian
    } else {
        PathBuf::from(name)
    }
}

impl TlsRabbit {
    /// Starts one with `pki`'s server certificate, asking clients for theirs, and waits until it is up.
    pub fn start(pki: &Pki, dir: &Path) -> TlsRabbit {
        let port = free_port();
        let node = format!("autoeval-tls-{}@localhost", std::process::id());
        let home = dir.join("rabbit");
        std::fs::create_dir_all(&home).expect("the node's directory");
        let file = |name: &str, text: String| {
            let path = home.join(name);
            std::fs::write(&path, text).expect("a node file");
            path.display().to_string()
        };
        let config = file(
            "rabbitmq.conf",
            format!(
                "listeners.tcp = none\n\
                 listeners.ssl.default = 127.0.0.1:{port}\n\
                 ssl_options.cacertfile = {}\n\
                 ssl_options.certfile = {}\n\
                 ssl_options.keyfile = {}\n\
                 ssl_options.verify = verify_peer\n\
                 ssl_options.fail_if_no_peer_cert = true\n",
                pki.ca.display(),
                pki.server_cert.display(),
                pki.server_key.display()
            ),
        );
        let env = vec![
            ("HOME".to_string(), home.display().to_string()),
            (
                "RABBITMQ_CONF_ENV_FILE".into(),
                file(
                    "rabbitmq-env.conf",
                    "ERL_EPMD_ADDRESS=127.0.0.1\n\
                     export ERL_FLAGS=\"-kernel inet_dist_use_interface {127,0,0,1}\"\n"
                        .into(),
                ),
            ),
            ("RABBITMQ_NODENAME".into(), node.clone()),
            ("RABBITMQ_CONFIG_FILE".into(), config),
            (
                "RABBITMQ_ENABLED_PLUGINS_FILE".into(),
                file("enabled_plugins", "[].\n".into()),
            ),
            (
                "RABBITMQ_MNESIA_BASE".into(),
                home.join("mnesia").display().to_string(),
            ),
            (
                "RABBITMQ_LOG_BASE".into(),
                home.join("log").display().to_string(),
            ),
            ("RABBITMQ_DIST_PORT".into(), free_port().to_string()),
        ];
        let child = Command::new(rabbit_program("rabbitmq-server"))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(std::fs::File::create(home.join("server.out")).expect("a log"))
            .stderr(Stdio::null())
            .spawn()
            .expect("rabbitmq-server starts (it is Debian's rabbitmq-server package)");
        let rabbit = TlsRabbit {
            port,
            node,
            env,
            child,
        };
        // Its listeners open once the node has booted.
        wait_for("the TLS RabbitMQ listens", Duration::from_secs(120), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        rabbit
    }

    /// `rabbitmqctl` for this node.
    fn ctl(&self, args: &[&str]) -> Command {
        let mut command = Command::new(rabbit_program("rabbitmqctl"));
        command
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .args(["-n", &self.node])
            .args(args)
            .stdout(Stdio::null());
        command
    }

    /// Its URL, as the guest user (allowed on the loopback).
    pub fn url(&self) -> String {
        format!("amqps://guest:guest@127.0.0.1:{}/%2f", self.port)
    }
}

impl Drop for TlsRabbit {
    fn drop(&mut self) {
        let _ = self.ctl(&["stop"]).stderr(Stdio::null()).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
