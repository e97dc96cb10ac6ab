//! The TLS material a fleet process uses for `amqps://` and `rediss://`.
//!
//! Three environment variables, each either a PEM file's path or the PEM
//! text itself (what a `NAME_FILE` secret leaves in `NAME`):
//! `AUTOEVAL_TLS_CA` (certificate authorities to trust: the broker's client
//! adds them to the system's, Redis's trusts them instead of the system's), `AUTOEVAL_TLS_CERT` and `AUTOEVAL_TLS_KEY` (a client
//! certificate and its key, for servers that ask for one). Broker and Redis
//! share them: one fleet, one authority.

/// The variable naming the certificate authorities to trust.
pub const CA_VAR: &str = "AUTOEVAL_TLS_CA";
/// The variable naming the client certificate.
pub const CERT_VAR: &str = "AUTOEVAL_TLS_CERT";
/// The variable naming the client certificate's private key.
pub const KEY_VAR: &str = "AUTOEVAL_TLS_KEY";

/// Why the TLS material could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A variable names a file that cannot be read.
    #[error("cannot read {var} ({path}: {detail}); point it at a PEM file, or put the PEM text itself in it")]
    Unreadable {
        /// The variable.
        var: &'static str,
        /// The path it holds.
        path: String,
        /// Why.
        detail: String,
    },
    /// A client certificate without its key, or a key without its certificate.
    #[error("{given} is set but {missing} is not; a client certificate needs both")]
    HalfIdentity {
        /// The one set.
        given: &'static str,
        /// The one missing.
        missing: &'static str,
    },
}

/// PEM bytes for a TLS connection; empty parts fall back to the system's trust and no client certificate.
#[derive(Clone, Default)]
pub struct TlsMaterial {
    /// Certificate authorities to trust (PEM).
    pub ca: Option<Vec<u8>>,
    /// Client certificate chain and private key (PEM), both or neither.
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for TlsMaterial {
    // The key is a secret: a debug print names only what is there.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsMaterial")
            .field("ca", &self.ca.is_some())
            .field("identity", &self.identity.is_some())
            .finish()
    }
}

impl TlsMaterial {
    /// The material `lookup` names, by variable (a blank value is none),
    /// with `read_file` reading a PEM file a variable names. The process's
    /// environment and files are the I/O crates' to hand in: proto does no I/O.
    pub fn from_lookup(
        lookup: impl Fn(&'static str) -> Option<String>,
        read_file: impl Fn(&str) -> std::io::Result<Vec<u8>>,
    ) -> Result<TlsMaterial, TlsError> {
        let read = |var: &'static str| {
            lookup(var)
                .filter(|v| !v.trim().is_empty())
                .map(|value| pem_of(var, value, &read_file))
                .transpose()
        };
        let ca = read(CA_VAR)?;
        let identity = match (read(CERT_VAR)?, read(KEY_VAR)?) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            (Some(_), None) => {
                return Err(TlsError::HalfIdentity {
                    given: CERT_VAR,
                    missing: KEY_VAR,
                })
            }
            (None, Some(_)) => {
                return Err(TlsError::HalfIdentity {
                    given: KEY_VAR,
                    missing: CERT_VAR,
                })
            }
        };
        Ok(TlsMaterial { ca, identity })
    }

    /// The CA as text, for clients that take a PEM string.
    pub fn ca_text(&self) -> Option<String> {
        self.ca
            .as_ref()
            .map(|pem| String::from_utf8_lossy(pem).into_owned())
    }
}

/// The PEM a variable's value stands for: the value itself, or the file it names.
fn pem_of(
    var: &'static str,
    value: String,
    read_file: impl Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Result<Vec<u8>, TlsError> {
    if value.trim_start().starts_with("-----BEGIN") {
        return Ok(value.into_bytes());
    }
    let path = value.trim().to_string();
    read_file(&path).map_err(|e| TlsError::Unreadable {
        var,
        path,
        detail: e.to_string(),
    })
}

/// True when `url` asks for TLS (`amqps://` or `rediss://`).
pub fn wants_tls(url: &str) -> bool {
    let scheme = url.split("://").next().unwrap_or_default();
    scheme.eq_ignore_ascii_case("amqps") || scheme.eq_ignore_ascii_case("rediss")
}

/// `cause` of a failed connection to `url`, saying what to check when a TLS
/// handshake met a port that does not speak TLS.
pub fn explain_failure(url: &str, cause: &str) -> String {
    // A plaintext Redis waits for a line end that a TLS greeting never sends: a time-out.
    let handshake_failed = [
        "timed out",
        "corrupt message",
        "InvalidContentType",
        "handshake",
        "HandshakeFailure",
    ]
    .iter()
    .any(|sign| cause.contains(sign));
    if !(wants_tls(url) && handshake_failed) {
        return cause.to_string();
    }
    let scheme = url.split("://").next().unwrap_or_default();
    let plain = &scheme[..scheme.len() - 1];
    format!("TLS failed: {cause}; is that port a TLS listener? {scheme}:// needs one, a plaintext port takes {plain}://")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEM: &str = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";

    #[test]
    fn a_value_is_pem_text_or_a_path_to_it() {
        let dir = std::env::temp_dir().join(format!("autoeval-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ca.pem");
        std::fs::write(&file, "from the file").unwrap();
        let path = file.display().to_string();
        let m = TlsMaterial::from_lookup(
            |v| match v {
                CA_VAR => Some(path.clone()),
                CERT_VAR => Some(PEM.to_string()),
                KEY_VAR => Some(PEM.to_string()),
                _ => None,
            },
            |p| std::fs::read(p),
        )
        .unwrap();
        assert_eq!(m.ca.as_deref(), Some(&b"from the file"[..]));
        assert_eq!(m.identity.unwrap().0, PEM.as_bytes());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_certificate_without_its_key_is_refused_naming_both() {
        let e = TlsMaterial::from_lookup(
            |v| (v == CERT_VAR).then(|| PEM.to_string()),
            |p| std::fs::read(p),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "AUTOEVAL_TLS_CERT is set but AUTOEVAL_TLS_KEY is not; a client certificate needs both"
        );
    }

    #[test]
    fn a_missing_file_is_refused_with_what_to_do() {
        let e = TlsMaterial::from_lookup(
            |v| (v == CA_VAR).then(|| "/nonexistent/ca.pem".into()),
            |p| std::fs::read(p),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("cannot read AUTOEVAL_TLS_CA (/nonexistent/ca.pem: "),
            "{e}"
        );
        assert!(
            e.ends_with("point it at a PEM file, or put the PEM text itself in it"),
            "{e}"
        );
    }

    #[test]
    fn a_handshake_against_plaintext_names_the_likely_cause() {
        let said = explain_failure(
            "rediss://h:6379",
            "received corrupt message of type InvalidContentType",
        );
        assert!(
            said.ends_with("rediss:// needs one, a plaintext port takes redis://"),
            "{said}"
        );
        assert_eq!(
            explain_failure("redis://h", "Connection refused"),
            "Connection refused"
        );
    }

    #[test]
    fn only_the_tls_schemes_want_tls() {
        assert!(wants_tls("amqps://u:p@h/%2f"));
        assert!(wants_tls("rediss://h:6380"));
        assert!(!wants_tls("amqp://h"));
        assert!(!wants_tls("redis://h"));
    }
}
