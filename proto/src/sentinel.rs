//! The Redis address that names Sentinels rather than one server:
//!
//! ```text
//! redis-sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]…][/DB]#PRIMARY
//! rediss-sentinel://…   (the same over TLS, to the Sentinels and the servers)
//! ```
//!
//! Lettuce's form: the Sentinels' addresses (port 26379 unless given), the
//! database, and after `#` the name the Sentinels know the primary by. The
//! user and password are the servers' and the Sentinels' alike (one
//! password for every node of the deployment).

use thiserror::Error;

/// The port a Sentinel listens on unless told otherwise.
pub const SENTINEL_PORT: u16 = 26379;

/// A parsed `redis-sentinel://` address.
#[derive(Clone, PartialEq, Eq)]
pub struct SentinelUrl {
    /// Whether every connection is made over TLS (`rediss-sentinel://`).
    pub tls: bool,
    /// The user, when one is named.
    pub username: Option<String>,
    /// The password, when one is given.
    pub password: Option<String>,
    /// Each Sentinel's host and port.
    pub sentinels: Vec<(String, u16)>,
    /// The database selected on the primary.
    pub db: i64,
    /// The name the Sentinels know the primary by.
    pub primary: String,
}

impl std::fmt::Debug for SentinelUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Why a `redis-sentinel://` address cannot be read.
#[derive(Debug, Error, PartialEq, Eq)]
#[error(
    "{0} (the form is redis-sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]…][/DB]#PRIMARY)"
)]
pub struct BadSentinelUrl(String);

/// Whether `url` names Sentinels (`redis-sentinel://` or `rediss-sentinel://`).
pub fn is_sentinel_url(url: &str) -> bool {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    matches!(
        scheme.as_deref(),
        Some("redis-sentinel") | Some("rediss-sentinel")
    )
}

/// Decodes `%XX` escapes of a user or password.
fn percent_decoded(text: &str) -> Result<String, BadSentinelUrl> {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .ok_or_else(|| BadSentinelUrl("the user or password does not decode".into()))
}

fn host_and_port(text: &str) -> Result<(String, u16), BadSentinelUrl> {
    let bad = || BadSentinelUrl(format!("{text:?} is no HOST[:PORT]"));
    // An IPv6 address comes in brackets: [::1]:26379.
    let (host, port) = match text.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']').ok_or_else(bad)?;
            (host, after.strip_prefix(':'))
        }
        None => match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        },
    };
    if host.is_empty() {
        return Err(bad());
    }
    let port = match port {
        Some(p) => p.parse().map_err(|_| bad())?,
        None => SENTINEL_PORT,
    };
    Ok((host.to_string(), port))
}

impl SentinelUrl {
    /// Reads a `redis-sentinel://` or `rediss-sentinel://` address.
    pub fn parse(url: &str) -> Result<SentinelUrl, BadSentinelUrl> {
        let (scheme, rest) = url
            .split_once("://")
            .filter(|_| is_sentinel_url(url))
            .ok_or_else(|| BadSentinelUrl("the scheme is not redis-sentinel://".into()))?;
        let (rest, primary) = rest
            .split_once('#')
            .ok_or_else(|| BadSentinelUrl("no #PRIMARY: name the Sentinels' primary".into()))?;
        if primary.is_empty() {
            return Err(BadSentinelUrl("the primary's name after # is empty".into()));
        }
        let (credentials, rest) = match rest.rsplit_once('@') {
            Some((c, r)) => (Some(c), r),
            None => (None, rest),
        };
        let (username, password) = match credentials.map(|c| c.split_once(':')) {
            None => (None, None),
            Some(None) => (
                None,
                Some(percent_decoded(credentials.unwrap_or_default())?),
            ),
            Some(Some((user, pass))) => (
                Some(percent_decoded(user)?).filter(|u| !u.is_empty()),
                Some(percent_decoded(pass)?),
            ),
        };
        let (hosts, db) = match rest.split_once('/') {
            Some((hosts, "")) => (hosts, 0),
            Some((hosts, db)) => (
                hosts,
                db.parse()
                    .map_err(|_| BadSentinelUrl(format!("the database {db:?} is no number")))?,
            ),
            None => (rest, 0),
        };
        let sentinels = hosts
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(host_and_port)
            .collect::<Result<Vec<_>, _>>()?;
        if sentinels.is_empty() {
            return Err(BadSentinelUrl("no Sentinel is named".into()));
        }
        Ok(SentinelUrl {
            tls: scheme.eq_ignore_ascii_case("rediss-sentinel"),
            username,
            password,
            sentinels,
            db,
            primary: primary.to_string(),
        })
    }

    /// The address fit to print: its password is `***`.
    pub fn redacted(&self) -> String {
        let scheme = if self.tls {
            "rediss-sentinel"
        } else {
            "redis-sentinel"
        };
        let credentials = match (&self.username, &self.password) {
            (None, None) => String::new(),
            (Some(u), None) => format!("{u}@"),
            (u, Some(_)) => format!("{}:***@", u.as_deref().unwrap_or_default()),
        };
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|(h, p)| match h.contains(':') {
                true => format!("[{h}]:{p}"),
                false => format!("{h}:{p}"),
            })
            .collect();
        format!(
            "{scheme}://{credentials}{}/{}#{}",
            hosts.join(","),
            self.db,
            self.primary
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentinels_the_database_and_the_primary_are_read() {
        let u = SentinelUrl::parse("redis-sentinel://:s3cret@h1:26380,h2,[::1]:5/13#main").unwrap();
        assert!(!u.tls);
        assert_eq!(u.username, None);
        assert_eq!(u.password.as_deref(), Some("s3cret"));
        assert_eq!(
            u.sentinels,
            [
                ("h1".to_string(), 26380),
                ("h2".to_string(), SENTINEL_PORT),
                ("::1".to_string(), 5)
            ]
        );
        assert_eq!((u.db, u.primary.as_str()), (13, "main"));
        assert_eq!(
            u.redacted(),
            "redis-sentinel://:***@h1:26380,h2:26379,[::1]:5/13#main"
        );
        assert!(!format!("{u:?}").contains("s3cret"));

        let u = SentinelUrl::parse("rediss-sentinel://app:p%40ss@s:1#m").unwrap();
        assert!(u.tls);
        assert_eq!(u.username.as_deref(), Some("app"));
        assert_eq!(u.password.as_deref(), Some("p@ss"));
        assert_eq!(u.db, 0);
        let u = SentinelUrl::parse("redis-sentinel://pw@s/#m").unwrap();
        assert_eq!((u.username, u.password.as_deref()), (None, Some("pw")));
    }

    #[test]
    fn what_cannot_be_read_is_told_with_the_form() {
        for (url, says) in [
            ("redis-sentinel://h:26379", "no #PRIMARY"),
            ("redis-sentinel://h:26379#", "empty"),
            ("redis-sentinel://#m", "no Sentinel"),
            ("redis-sentinel://h:x#m", "no HOST[:PORT]"),
            ("redis-sentinel://h/x#m", "no number"),
            ("redis://h#m", "scheme"),
        ] {
            let e = SentinelUrl::parse(url).unwrap_err().to_string();
            assert!(e.contains(says), "{url}: {e}");
            assert!(e.contains("redis-sentinel://[[USER]:PASSWORD@]"), "{e}");
        }
        assert!(is_sentinel_url("REDIS-SENTINEL://h#m"));
        assert!(!is_sentinel_url("redis://h"));
    }
}
