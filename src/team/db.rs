//! Reaching the team database: the connection settings from the user's config (the password from
//! the env var it names), TLS with rustls (the system's roots plus `team.ca_file`; `sslmode` in
//! the URL decides whether TLS is off, preferred or required), a small deadpool pool for the
//! queries, schema migrations with refinery, and one dedicated connection that LISTENs for
//! changes.
//!
//! Every connection has a connect timeout and a statement timeout, so a slow or silent server
//! costs the background sync a bounded wait and never a lookup anything.

use super::Error;
use crate::config::TeamConfig;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How long connecting, and any one statement, may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The channel the schema's trigger notifies with the project of each changed plan.
pub const CHANNEL: &str = "refrain_plans";

mod embedded {
    refinery::embed_migrations!("migrations/team");
}

/// The team database: connection settings, TLS and a pool.
#[derive(Clone)]
pub struct Db {
    cfg: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    pool: Pool,
    /// Where it is, for messages and for keying local sync state (no password).
    pub label: String,
}

impl Db {
    /// Settings, TLS and an (empty) pool from the user's `team` config; connects nothing yet.
    pub fn new(team: &TeamConfig) -> Result<Db, Error> {
        let url = team.connection_url().ok_or(Error::NotConfigured)?;
        let mut cfg: tokio_postgres::Config = url.parse().map_err(|e| Error::Url(format!("{e}")))?;
        if let Some(var) = &team.password_env {
            let password = std::env::var(var).map_err(|_| Error::Password(var.clone()))?;
            cfg.password(password);
        }
        let ms = TIMEOUT.as_millis();
        cfg.connect_timeout(TIMEOUT).application_name("refrain").options(format!("-c statement_timeout={ms}"));
        let label = format!(
            "{}@{}:{}/{}",
            cfg.get_user().unwrap_or("?"),
            cfg.get_hosts()
                .first()
                .map(|h| match h {
                    tokio_postgres::config::Host::Tcp(s) => s.clone(),
                    tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
                })
                .unwrap_or_default(),
            cfg.get_ports().first().copied().unwrap_or(5432),
            cfg.get_dbname().unwrap_or("")
        );
        let tls = MakeRustlsConnect::new(tls_config(team)?);
        let manager =
            Manager::from_config(cfg.clone(), tls.clone(), ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(4)
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(TIMEOUT))
            .wait_timeout(Some(TIMEOUT))
            .recycle_timeout(Some(TIMEOUT))
            .build()
            .map_err(|e| Error::Url(e.to_string()))?;
        Ok(Db { cfg, tls, pool, label })
    }

    /// A pooled connection.
    pub async fn client(&self) -> Result<deadpool_postgres::Object, Error> {
        self.pool.get().await.map_err(|e| Error::Unreachable(self.label.clone(), chain(&e)))
    }

    /// A connection of its own (not pooled), its driver running in a task; the task ends when
    /// the connection does. Notifications go to `wake`.
    async fn dedicated(
        &self,
        wake: Option<Arc<Notify>>,
    ) -> Result<(tokio_postgres::Client, tokio::task::JoinHandle<()>), Error> {
        let connect = self.cfg.connect(self.tls.clone());
        let (client, mut conn) = tokio::time::timeout(TIMEOUT, connect)
            .await
            .map_err(|_| Error::Unreachable(self.label.clone(), "timed out connecting".into()))?
            .map_err(|e| Error::Unreachable(self.label.clone(), chain(&e)))?;
        let driver = tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
            while let Some(m) = messages.next().await {
                match m {
                    Ok(tokio_postgres::AsyncMessage::Notification(_)) => {
                        if let Some(w) = &wake {
                            w.notify_one();
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::debug!(error = %e, "team database connection ended");
                        break;
                    }
                }
            }
            // A lost connection wakes the sync loop too, so it notices and reconnects.
            if let Some(w) = &wake {
                w.notify_one();
            }
        });
        Ok((client, driver))
    }

    /// Brings the schema up to date (refinery; an advisory lock keeps two members from running
    /// the same migration at once).
    pub async fn migrate(&self) -> Result<(), Error> {
        let (mut client, driver) = self.dedicated(None).await?;
        let sql = |e: tokio_postgres::Error| Error::Sql(e.to_string());
        client.execute("SELECT pg_advisory_lock(7365720717)", &[]).await.map_err(sql)?;
        let run = embedded::migrations::runner().run_async(&mut client).await;
        let _ = client.execute("SELECT pg_advisory_unlock(7365720717)", &[]).await;
        drop(client);
        driver.abort();
        run.map(|_| ()).map_err(|e| Error::Migration(e.to_string()))
    }

    /// A connection LISTENing on `CHANNEL`: each notification wakes `wake`, and so does the
    /// connection's end. Keep the client; the handle finishes when the connection is gone.
    pub async fn listen(
        &self,
        wake: Arc<Notify>,
    ) -> Result<(tokio_postgres::Client, tokio::task::JoinHandle<()>), Error> {
        let (client, driver) = self.dedicated(Some(wake)).await?;
        client.batch_execute(&format!("LISTEN {CHANNEL}")).await.map_err(|e| Error::Sql(e.to_string()))?;
        Ok((client, driver))
    }
}

/// An error and its causes in one line ("error performing TLS handshake: invalid peer
/// certificate: UnknownIssuer"), so the reason reaches the log and the user.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out = format!("{out}: {text}");
        }
        cause = c.source();
    }
    out
}

/// rustls with the system's roots and the user's extra CA file.
fn tls_config(team: &TeamConfig) -> Result<rustls::ClientConfig, Error> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = &team.ca_file {
        let pem =
            std::fs::read(path).map_err(|e| Error::Tls(format!("cannot read team.ca_file {}: {e}", path.display())))?;
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| Error::Tls(format!("team.ca_file {}: {e}", path.display())))?;
            roots.add(cert).map_err(|e| Error::Tls(format!("team.ca_file {}: {e}", path.display())))?;
            added += 1;
        }
        if added == 0 {
            return Err(Error::Tls(format!("team.ca_file {} holds no PEM certificate", path.display())));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}
