//! Settings for the team plan library: a PostgreSQL database the team already runs, where plans
//! that worked are shared between members (see `crate::team`).
//!
//! Every key here is the user's alone: the URL says where task text goes, the password's env var
//! names a secret, the CA file is read from any path, the publish count decides how soon plans
//! leave the machine, and `accept` decides whose plans reach this user's agents. A project's
//! config file may set none of them (`keys`).

use rmcp::schemars::{self, JsonSchema};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// The team plan library.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TeamConfig {
    /// PostgreSQL connection URL (`postgres://user@host:5432/db?sslmode=require`); unset, plans
    /// stay on this machine. Put the password in the env var `password_env` names, not here.
    pub url: Option<String>,
    /// Name of the environment variable holding the database password (never the password).
    pub password_env: Option<String>,
    /// A PEM file of extra certificate authorities to trust for the database's TLS certificate
    /// (a team's private CA), besides the system's roots.
    pub ca_file: Option<PathBuf>,
    /// Local successes after which a plan is published to the team (`refrain plans publish`
    /// publishes at once).
    pub publish_after: u32,
    /// Whose team plans your agents are handed: `"everyone"`, `"reviewed"` (only those you
    /// approved with `refrain plans review`), or a list of publishers as the team database knows
    /// them (their database roles), e.g. `["alice", "bob"]`. Your own plans are always served.
    #[schemars(with = "AcceptShape")]
    pub accept: Accept,
}

impl Default for TeamConfig {
    fn default() -> Self {
        Self { url: None, password_env: None, ca_file: None, publish_after: 2, accept: Accept::Everyone }
    }
}

impl TeamConfig {
    /// `url` as tokio-postgres reads it: libpq's `verify-full` and `verify-ca` ask for what rustls
    /// always does with TLS (check the chain and the host name), which tokio-postgres calls
    /// `require`.
    pub fn connection_url(&self) -> Option<String> {
        let url = self.url.as_deref()?;
        Some(url.replace("sslmode=verify-full", "sslmode=require").replace("sslmode=verify-ca", "sslmode=require"))
    }

    /// The database role this user connects as: what the team library records as the publisher
    /// of this user's plans (`published_by`). None without a usable `url`.
    pub fn role(&self) -> Option<String> {
        let cfg: tokio_postgres::Config = self.connection_url()?.parse().ok()?;
        cfg.get_user().map(str::to_string)
    }
}

/// Whose team plans are served (`team.accept`). A plan this user stored or published is always
/// served; a plan rejected in `refrain plans review` never is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Accept {
    /// Every member's (as before the setting existed).
    #[default]
    Everyone,
    /// Only plans this user approved with `refrain plans review --approve`.
    Reviewed,
    /// Only plans these publishers (database roles) published.
    Publishers(Vec<String>),
}

impl Accept {
    /// How the setting reads in messages.
    pub fn describe(&self) -> String {
        match self {
            Accept::Everyone => "everyone".into(),
            Accept::Reviewed => "reviewed".into(),
            Accept::Publishers(names) => format!("[{}]", names.join(", ")),
        }
    }
}

/// What to write instead of a value `team.accept` cannot take.
const ACCEPT_HINT: &str = "write team.accept = \"everyone\", team.accept = \"reviewed\" (only plans you approved \
     with `refrain plans review --approve ID`), or a list of publishers' database roles such as \
     team.accept = [\"alice\", \"bob\"]";

impl Serialize for Accept {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Accept::Everyone => s.serialize_str("everyone"),
            Accept::Reviewed => s.serialize_str("reviewed"),
            Accept::Publishers(names) => names.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Accept {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AcceptVisitor)
    }
}

struct AcceptVisitor;

impl<'de> Visitor<'de> for AcceptVisitor {
    type Value = Accept;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"everyone\", \"reviewed\" or a list of publishers ({ACCEPT_HINT})")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Accept, E> {
        match v.trim().to_ascii_lowercase().as_str() {
            "everyone" => Ok(Accept::Everyone),
            "reviewed" => Ok(Accept::Reviewed),
            _ => Err(E::custom(format!("team.accept = \"{v}\" is not a choice: {ACCEPT_HINT}"))),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Accept, A::Error> {
        let mut names = Vec::new();
        loop {
            let next = seq.next_element::<String>().map_err(|_| {
                de::Error::custom(format!("team.accept's list may hold publishers' names only: {ACCEPT_HINT}"))
            })?;
            let Some(name) = next else { break };
            let name = name.trim();
            if name.is_empty() {
                return Err(de::Error::custom(format!("team.accept's list holds an empty name: {ACCEPT_HINT}")));
            }
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        Ok(Accept::Publishers(names))
    }
}

/// `team.accept`'s shape, for the JSON schema (`refrain config --schema`).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum AcceptShape {
    /// `everyone` or `reviewed`.
    Word(AcceptWord),
    /// Publishers' database roles.
    Publishers(Vec<String>),
}

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum AcceptWord {
    Everyone,
    Reviewed,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Accept, String> {
        #[derive(Deserialize)]
        struct T {
            accept: Accept,
        }
        toml::from_str::<T>(text).map(|t| t.accept).map_err(|e| e.to_string())
    }

    #[test]
    fn accept_takes_a_word_or_a_list_of_publishers_and_says_what_to_write_otherwise() {
        assert_eq!(parse("accept = \"everyone\""), Ok(Accept::Everyone));
        assert_eq!(parse("accept = \"Reviewed\""), Ok(Accept::Reviewed));
        assert_eq!(
            parse("accept = [\"alice\", \"bob\", \"alice\"]"),
            Ok(Accept::Publishers(vec!["alice".into(), "bob".into()]))
        );
        assert_eq!(parse("accept = []"), Ok(Accept::Publishers(vec![])));
        for bad in ["accept = \"alice\"", "accept = true", "accept = [1]", "accept = [\"\"]"] {
            let err = parse(bad).err().unwrap_or_default();
            assert!(err.contains("team.accept") && err.contains("\"reviewed\""), "{bad}: {err}");
        }
        for a in [Accept::Everyone, Accept::Reviewed, Accept::Publishers(vec!["alice".into()])] {
            let v = toml::Value::try_from(&a).unwrap();
            assert_eq!(parse(&format!("accept = {v}")), Ok(a));
        }
    }

    #[test]
    fn the_role_is_the_urls_user() {
        let mut t =
            TeamConfig { url: Some("postgres://alice@db:5432/x?sslmode=verify-full".into()), ..Default::default() };
        assert_eq!(t.role().as_deref(), Some("alice"));
        t.url = None;
        assert_eq!(t.role(), None);
    }
}
