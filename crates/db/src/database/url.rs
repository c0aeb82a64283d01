//! `--url`: a PostgreSQL server of the user's, parsed once by the driver's own parser
//! (`postgres::Config: FromStr`, which reads both a `postgres://` URL and a key=value conninfo string), and
//! shown only as [`ServerUrl::shown`]: hosts, ports, user and database rendered back from the parsed
//! configuration, never the password, whichever way it was spelled (URL userinfo, `?password=`,
//! percent-encoded, a quoted conninfo value). The text as typed is dropped once parsed; every message,
//! document and catalog row names the server by [`ServerUrl::shown`], and a connection error is scrubbed
//! of the password too ([`ServerUrl::scrub`]).
//!
//! Every wait on the server is bounded: a connection attempt (the TCP connect and the start-up exchange,
//! which the driver's own `connect_timeout` does not cover) by [`ServerUrl::connect_timeout`] (the URL's
//! `connect_timeout`, else [`DEFAULT_CONNECT_TIMEOUT`]), and a statement by the server's
//! `statement_timeout`, set for iolab's sessions to [`STATEMENT_TIMEOUT`] unless the URL's `options` set it.

use crate::WorkloadError;
use postgres::config::Host;
use std::fmt;
use std::time::Duration;

/// How long a connection attempt may take when the URL does not say (`connect_timeout`).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The `statement_timeout` of iolab's sessions on a server of the user's, unless the URL's `options` set
/// one: a statement that runs longer fails the run instead of waiting for ever.
pub const STATEMENT_TIMEOUT: &str = "1h";

/// A PostgreSQL server of the user's (`--url`), parsed; shown without its password.
#[derive(Clone)]
pub struct ServerUrl {
    config: postgres::Config,
    shown: String,
}

/// Why a `--url` is refused, without quoting it (it may hold a password).
fn refused(why: impl fmt::Display) -> WorkloadError {
    WorkloadError::Setup(format!(
        "invalid value for '--url' (not shown: it may hold a password): {why}\n  \
         hint: a postgres://user@host:port/dbname URL or a key=value string (host=... user=... dbname=...); \
         an '@' in a password is written %40"
    ))
}

impl ServerUrl {
    /// Parses `text` with the driver's parser; refuses (not quoting it) what the driver refuses, and a URL
    /// whose parts the driver would read other than as typed (an '@' beyond the one that ends the
    /// user and password).
    pub fn parse(text: &str) -> Result<ServerUrl, WorkloadError> {
        if let Some((_, rest)) = text.split_once("://") {
            // The driver reads everything up to the first '@' as user and password.
            let at = rest.find('@');
            if rest.matches('@').count() > 1
                || at.is_some_and(|a| rest.find(['/', '?']).is_some_and(|e| e < a))
            {
                return Err(refused("an '@' beyond the one that ends the user and password"));
            }
        }
        let mut config: postgres::Config = text.parse().map_err(refused)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        let has_timeout = config.get_options().is_some_and(|o| o.contains("statement_timeout"));
        if !has_timeout {
            let options = match config.get_options() {
                Some(o) => format!("{o} -c statement_timeout={STATEMENT_TIMEOUT}"),
                None => format!("-c statement_timeout={STATEMENT_TIMEOUT}"),
            };
            config.options(&options);
        }
        let shown = render(&config);
        let url = ServerUrl { config, shown };
        if url.leaks(&url.shown) {
            return Err(refused("the driver reads part of the password as another field"));
        }
        Ok(url)
    }

    /// The server as iolab shows it: `postgres://user@host:port/dbname`, no password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The driver's configuration (password included: for the connect call alone).
    pub(crate) fn config(&self) -> &postgres::Config {
        &self.config
    }

    /// How long one connection attempt may take, start-up exchange included.
    pub fn connect_timeout(&self) -> Duration {
        self.config.get_connect_timeout().copied().unwrap_or(DEFAULT_CONNECT_TIMEOUT)
    }

    /// The password, as text, when it has one of three characters or more (shorter ones would match
    /// by chance).
    fn password(&self) -> Option<String> {
        let p = String::from_utf8_lossy(self.config.get_password()?).into_owned();
        (p.chars().count() >= 3).then_some(p)
    }

    /// `text` holds the password.
    fn leaks(&self, text: &str) -> bool {
        self.password().is_some_and(|p| text.contains(&p))
    }

    /// `message` (an error of the driver's) with the password, if it quotes it, replaced by `***`.
    pub fn scrub(&self, message: &str) -> String {
        match self.password() {
            Some(p) => message.replace(&p, "***"),
            None => message.to_string(),
        }
    }
}

impl fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerUrl({})", self.shown)
    }
}

impl fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

/// `s` percent-encoded but for the characters a URL keeps as they are.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The configuration as a `postgres://` URL without its password: hosts (a socket directory
/// percent-encoded) with their ports, user, database.
fn render(c: &postgres::Config) -> String {
    let ports = c.get_ports();
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let name = match h {
                Host::Tcp(name) if name.contains(':') => format!("[{name}]"),
                Host::Tcp(name) => encode(name),
                Host::Unix(path) => encode(&path.to_string_lossy()),
            };
            match ports.get(i).or(if ports.len() == 1 { ports.first() } else { None }) {
                Some(p) => format!("{name}:{p}"),
                None => name,
            }
        })
        .collect();
    let user = c.get_user().map(|u| format!("{}@", encode(u))).unwrap_or_default();
    let db = c.get_dbname().map(|d| format!("/{}", encode(d))).unwrap_or_default();
    format!("postgres://{user}{}{db}", hosts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each spelling of a password the driver accepts: the URL shown has none of it, and the driver
    /// still has it for the connect call.
    #[test]
    fn a_password_is_never_shown_however_it_is_spelled() {
        for (text, password, shown) in [
            ("postgres://bob:s3cretpw@db.example/tpcc", "s3cretpw", "postgres://bob@db.example:5432/tpcc"),
            (
                "postgresql://bob:s3cretpw@db.example:6543/tpcc",
                "s3cretpw",
                "postgres://bob@db.example:6543/tpcc",
            ),
            (
                "postgres://bob@db.example/tpcc?password=s3cretpw",
                "s3cretpw",
                "postgres://bob@db.example:5432/tpcc",
            ),
            (
                "postgres://db.example/tpcc?user=bob&password=s3cretpw",
                "s3cretpw",
                "postgres://bob@db.example:5432/tpcc",
            ),
            (
                "postgres://bob:s3c%40ret%20pw@db.example/tpcc",
                "s3c@ret pw",
                "postgres://bob@db.example:5432/tpcc",
            ),
            (
                "postgres://bob@db.example/tpcc?password=s3c%40ret",
                "s3c@ret",
                "postgres://bob@db.example:5432/tpcc",
            ),
            (
                "host=db.example user=bob password=s3cretpw dbname=tpcc",
                "s3cretpw",
                "postgres://bob@db.example/tpcc",
            ),
            (
                "host=db.example user=bob password='s3cret pw' dbname=tpcc",
                "s3cret pw",
                "postgres://bob@db.example/tpcc",
            ),
            (
                r"host=db.example user=bob password='it\'s s3cret' dbname=tpcc",
                "it's s3cret",
                "postgres://bob@db.example/tpcc",
            ),
            (
                "host=db.example user=bob password=s3c@ret dbname=tpcc",
                "s3c@ret",
                "postgres://bob@db.example/tpcc",
            ),
            (
                "host=/run/postgresql port=5433 user=bob password=s3cretpw",
                "s3cretpw",
                "postgres://bob@%2Frun%2Fpostgresql:5433",
            ),
        ] {
            let url = ServerUrl::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(url.shown(), shown, "{text}");
            assert_eq!(url.config().get_password(), Some(password.as_bytes()), "{text}");
            assert!(!format!("{url:?} {url}").contains(password), "{text}");
        }
    }

    #[test]
    fn an_unencoded_at_in_a_url_password_is_refused_without_quoting_it() {
        for text in ["postgres://bob:s3c@ret@db.example/tpcc", "postgres://db.example/tpcc?password=s3c@ret"]
        {
            let e = ServerUrl::parse(text).unwrap_err().to_string();
            assert!(!e.contains("s3c") && !e.contains("ret"), "{e}");
            assert!(e.contains("'--url'") && e.contains("%40"), "{e}");
        }
    }

    #[test]
    fn a_url_the_driver_refuses_is_not_quoted() {
        let e = ServerUrl::parse("host=h password='s3cretpw").unwrap_err().to_string();
        assert!(!e.contains("s3cretpw") && e.contains("'--url'"), "{e}");
    }

    #[test]
    fn waits_are_bounded_unless_the_url_says_otherwise() {
        let url = ServerUrl::parse("postgres://bob@h/db").unwrap();
        assert_eq!(url.connect_timeout(), DEFAULT_CONNECT_TIMEOUT);
        assert_eq!(url.config().get_options(), Some("-c statement_timeout=1h"));
        let url =
            ServerUrl::parse("postgres://bob@h/db?connect_timeout=1&options=-c%20statement_timeout%3D5s")
                .unwrap();
        assert_eq!(url.connect_timeout(), Duration::from_secs(1));
        assert_eq!(url.config().get_options(), Some("-c statement_timeout=5s"));
    }

    #[test]
    fn a_driver_error_quoting_the_password_is_scrubbed() {
        let url = ServerUrl::parse("postgres://bob:s3cretpw@h/db").unwrap();
        assert_eq!(url.scrub("bad password s3cretpw here"), "bad password *** here");
    }
}
