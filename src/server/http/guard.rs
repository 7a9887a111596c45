//! The checks every HTTP endpoint runs before any MCP code sees a request: Host and Origin
//! (DNS-rebinding protection, as the MCP spec requires), the bearer token, and the declared body
//! size.
//!
//! It holds only settings and never reads the body: the transports enforce the size limit on the
//! streamed body themselves (a chunked request has no Content-Length to check here).

use crate::config::ServerConfig;
use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::IncomingStream;
use http::{HeaderMap, StatusCode, header};
use sha2::{Digest, Sha256};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpListener;

/// The local address a connection was accepted on: the Host a direct client names.
#[derive(Debug, Clone, Copy)]
pub struct Local(pub Option<SocketAddr>);

impl Connected<IncomingStream<'_, TcpListener>> for Local {
    fn connect_info(stream: IncomingStream<'_, TcpListener>) -> Self {
        Local(stream.io().local_addr().ok())
    }
}

/// Why a request was turned away; each variant says how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The Host header names something other than loopback, this server's address or an allowed host.
    #[error(
        "forbidden: Host {0:?} is not a loopback name or an address this server listens on \
         (DNS-rebinding protection); add it to server.allowed_hosts to accept it"
    )]
    Host(String),
    /// The Origin header names a site that may not call this server.
    #[error(
        "forbidden: Origin {0:?} may not call refrain (DNS-rebinding protection); only loopback \
         origins and those in server.allowed_origins are accepted"
    )]
    Origin(String),
    /// The bearer token is missing or wrong.
    #[error(
        "unauthorized: send the header `Authorization: Bearer <token>` with the token refrain \
         was started with (--token or REFRAIN_TOKEN)"
    )]
    Token,
    /// The body is larger than `server.max_message_bytes`.
    #[error(
        "payload too large: the request body{} exceeds the limit of {max} bytes \
         (server.max_message_bytes); send smaller arguments or raise the limit",
        .len.map(|n| format!(" of {n} bytes")).unwrap_or_default()
    )]
    TooLarge {
        /// The declared length, when known.
        len: Option<u64>,
        /// The limit.
        max: usize,
    },
}

impl Refusal {
    fn status(&self) -> StatusCode {
        match self {
            Refusal::Host(_) | Refusal::Origin(_) => StatusCode::FORBIDDEN,
            Refusal::Token => StatusCode::UNAUTHORIZED,
            Refusal::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut response = (status, self.to_string()).into_response();
        if matches!(self, Refusal::Token) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// The request checks and their settings.
#[derive(Debug, Clone)]
pub struct Guard {
    token: Option<[u8; 32]>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    bound: SocketAddr,
    max_body: usize,
}

impl Guard {
    /// Checks for a server bound to `bound` with these settings.
    pub fn new(config: &ServerConfig, bound: SocketAddr) -> Guard {
        Guard {
            token: token_of(config).map(digest),
            allowed_hosts: config.allowed_hosts.iter().map(|h| normalize_host(h)).collect(),
            allowed_origins: config.allowed_origins.iter().map(|o| normalize_origin(o)).collect(),
            bound,
            max_body: config.max_message_bytes,
        }
    }

    /// Admits a request or says why not: Host, then Origin, then token, then declared size.
    pub fn admit(&self, headers: &HeaderMap, local: Option<SocketAddr>) -> Result<(), Refusal> {
        self.check_host(headers.get(header::HOST).and_then(|h| h.to_str().ok()), local)?;
        self.check_origin(headers.get(header::ORIGIN).map(|o| o.to_str().unwrap_or("<not UTF-8>")))?;
        self.check_token(headers.get(header::AUTHORIZATION).and_then(|a| a.to_str().ok()))?;
        let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        match declared {
            Some(len) if len > self.max_body as u64 => Err(Refusal::TooLarge { len: Some(len), max: self.max_body }),
            _ => Ok(()),
        }
    }

    fn check_host(&self, host: Option<&str>, local: Option<SocketAddr>) -> Result<(), Refusal> {
        let Some(raw) = host else { return Err(Refusal::Host(String::new())) };
        let Ok(authority) = raw.parse::<http::uri::Authority>() else { return Err(Refusal::Host(raw.to_string())) };
        let name = normalize_host(authority.host());
        let ok = match name.parse::<IpAddr>() {
            Ok(ip) => {
                ip.is_loopback()
                    || (!self.bound.ip().is_unspecified() && ip == self.bound.ip())
                    || local.is_some_and(|l| l.ip() == ip)
                    || self.allowed_hosts.contains(&name)
            }
            Err(_) => name == "localhost" || self.allowed_hosts.contains(&name),
        };
        if ok { Ok(()) } else { Err(Refusal::Host(raw.to_string())) }
    }

    fn check_origin(&self, origin: Option<&str>) -> Result<(), Refusal> {
        let Some(raw) = origin else { return Ok(()) };
        let origin = normalize_origin(raw);
        if self.allowed_origins.contains(&origin) || is_loopback_origin(&origin) {
            Ok(())
        } else {
            Err(Refusal::Origin(raw.to_string()))
        }
    }

    fn check_token(&self, authorization: Option<&str>) -> Result<(), Refusal> {
        let Some(expected) = &self.token else { return Ok(()) };
        let presented = authorization
            .and_then(|a| a.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| digest(token.trim()));
        match presented {
            Some(p) if constant_time_eq(&p, expected) => Ok(()),
            _ => Err(Refusal::Token),
        }
    }
}

/// Middleware: runs [`Guard::admit`] on every request and answers refusals itself.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let local = request.extensions().get::<ConnectInfo<Local>>().and_then(|c| c.0.0);
    match guard.admit(request.headers(), local) {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            tracing::warn!(path = %request.uri().path(), status = refusal.status().as_u16(), reason = %refusal, "refused HTTP request");
            refusal.into_response()
        }
    }
}

/// The configured token, if any (blank counts as none).
pub fn token_of(config: &ServerConfig) -> Option<&str> {
    config.token.as_deref().map(str::trim).filter(|t| !t.is_empty())
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Compares two digests in time independent of where they differ.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn normalize_host(host: &str) -> String {
    host.trim().trim_start_matches('[').trim_end_matches(']').trim_end_matches('.').to_ascii_lowercase()
}

fn normalize_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

fn is_loopback_origin(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else { return false };
    if scheme != "http" && scheme != "https" {
        return false;
    }
    let Ok(authority) = rest.parse::<http::uri::Authority>() else { return false };
    let host = normalize_host(authority.host());
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn guard(bound: &str, token: Option<&str>) -> Guard {
        let config = ServerConfig {
            token: token.map(String::from),
            allowed_origins: vec!["https://app.example.com".into()],
            allowed_hosts: vec!["refrain.internal".into()],
            max_message_bytes: 100,
            ..ServerConfig::default()
        };
        Guard::new(&config, bound.parse().unwrap())
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, v.parse().unwrap());
        }
        map
    }

    #[rstest]
    #[case("127.0.0.1:8765", true)]
    #[case("localhost:8765", true)]
    #[case("LOCALHOST", true)]
    #[case("[::1]:8765", true)]
    #[case("refrain.internal:80", true)]
    #[case("evil.example.com:8765", false)]
    #[case("192.168.1.9:8765", false)]
    #[case("not a host", false)]
    fn host_is_checked_against_loopback_and_allowed_names(#[case] host: &str, #[case] ok: bool) {
        let g = guard("127.0.0.1:8765", None);
        assert_eq!(g.admit(&headers(&[("host", host)]), None).is_ok(), ok, "{host}");
    }

    #[test]
    fn host_may_name_the_bound_or_accepting_address() {
        let bound = guard("10.0.0.5:8765", Some("t"));
        let auth = ("authorization", "Bearer t");
        assert!(bound.admit(&headers(&[("host", "10.0.0.5:8765"), auth]), None).is_ok());
        let any = guard("0.0.0.0:8765", Some("t"));
        assert!(any.admit(&headers(&[("host", "10.0.0.5:8765"), auth]), None).is_err());
        assert!(
            any.admit(&headers(&[("host", "10.0.0.5:8765"), auth]), Some("10.0.0.5:8765".parse().unwrap())).is_ok()
        );
    }

    #[test]
    fn missing_host_is_refused() {
        assert!(matches!(guard("127.0.0.1:1", None).admit(&HeaderMap::new(), None), Err(Refusal::Host(_))));
    }

    #[rstest]
    #[case("http://localhost:3000", true)]
    #[case("http://127.0.0.1", true)]
    #[case("https://[::1]:8443/", true)]
    #[case("https://app.example.com/", true)]
    #[case("https://evil.example.com", false)]
    #[case("http://localhost.evil.com", false)]
    #[case("null", false)]
    #[case("file://localhost", false)]
    fn origin_is_checked(#[case] origin: &str, #[case] ok: bool) {
        let g = guard("127.0.0.1:8765", None);
        let r = g.admit(&headers(&[("host", "localhost"), ("origin", origin)]), None);
        assert_eq!(r.is_ok(), ok, "{origin}: {r:?}");
        if !ok {
            assert_eq!(r.unwrap_err().status(), StatusCode::FORBIDDEN);
        }
    }

    #[rstest]
    #[case(None, false)]
    #[case(Some("Bearer secret"), true)]
    #[case(Some("bearer secret"), true)]
    #[case(Some("Bearer wrong"), false)]
    #[case(Some("Basic secret"), false)]
    #[case(Some("secret"), false)]
    fn token_is_required_when_set(#[case] authorization: Option<&str>, #[case] ok: bool) {
        let g = guard("127.0.0.1:8765", Some("secret"));
        let mut h = headers(&[("host", "localhost")]);
        if let Some(a) = authorization {
            h.insert(header::AUTHORIZATION, a.parse().unwrap());
        }
        let r = g.admit(&h, None);
        assert_eq!(r.is_ok(), ok, "{authorization:?}");
        if !ok {
            let response = r.unwrap_err().into_response();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(response.headers()[header::WWW_AUTHENTICATE], "Bearer");
        }
    }

    #[test]
    fn declared_oversized_body_is_refused_with_the_limit() {
        let g = guard("127.0.0.1:8765", None);
        let r = g.admit(&headers(&[("host", "localhost"), ("content-length", "101")]), None);
        let refusal = r.unwrap_err();
        assert_eq!(refusal.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert!(refusal.to_string().contains("101 bytes exceeds the limit of 100 bytes"), "{refusal}");
        assert!(g.admit(&headers(&[("host", "localhost"), ("content-length", "100")]), None).is_ok());
    }
}
