//! Secret redaction: known credential formats are replaced before anything is stored.
//!
//! Each rule names the kind it redacts (`[REDACTED:github_token]`) so a reader of a cached result
//! knows something was there. Rules that match a `name = value` keep the name and redact the value.
//! The patterns are compiled once per `Redactor`; callers keep one and reuse it.

use regex::{Captures, Regex};
use serde_json::Value;

/// One redaction rule: a kind, a pattern, and which capture group holds the secret (0 = all).
struct Rule {
    kind: &'static str,
    re: Regex,
    group: usize,
}

/// The rules, most specific first (an Anthropic key is also an `sk-` key).
const RULES: &[(&str, &str, usize)] = &[
    (
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----",
        0,
    ),
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b", 0),
    ("aws_secret_key", r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})"#, 1),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", 0),
    ("slack_token", r"\b(?:xox[abposrce]|xapp)-[A-Za-z0-9-]{10,}", 0),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}", 0),
    ("anthropic_key", r"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{20,}", 0),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", 0),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}\b", 0),
    ("stripe_key", r"\b(?:[rs]k_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})\b", 0),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,}", 0),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", 0),
    ("pypi_token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", 0),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b", 0),
    ("google_oauth_token", r"\bya29\.[0-9A-Za-z_-]{20,}", 0),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", 0),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0),
    ("connection_password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^:/\s@]+:([^@\s/]+)@", 1),
    ("bearer_token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})", 1),
    // `.env` lines, also as tools show them: after `cat -n` / Read line numbers (`  3→`, `3\t`)
    // or a grep prefix (`path:3:`).
    (
        "env_secret",
        r#"(?m)^(?:[ \t]*\d+(?:→|\t|:)|[^\s:]+:(?:\d+:)?)?[ \t]*(?:export[ \t]+)?[A-Za-z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|CREDENTIALS?)[A-Za-z0-9_]*[ \t]*[=:][ \t]*["']?([^\s"'#]{4,})"#,
        1,
    ),
    // An upper-case `*_TOKEN=value` inside a line: a command's environment, a quoted `.env` line.
    (
        "env_secret",
        r#"(?:^|[\s;&(:])[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)[A-Z0-9_]*=["']?([^\s"'#]{4,})"#,
        1,
    ),
    // Quoted values of secret-named keys in JSON, YAML, TOML or code: `"password": "..."`.
    (
        "config_secret",
        r#"(?i)["']?\b[a-z0-9_.-]*(?:password|passwd|secret|api_?key|access_?key|auth_?token|access_?token|refresh_?token|private_?key)["']?[ \t]*[:=][ \t]*["']([^"'\s]{4,})["']"#,
        1,
    ),
];

/// A compiled set of redaction rules.
pub struct Redactor {
    rules: Vec<Rule>,
}

/// The marker that replaces a secret.
fn marker(kind: &str) -> String {
    format!("[REDACTED:{kind}]")
}

impl Redactor {
    /// Compiles the rules (a fixed list, tested below, so compilation cannot fail in practice;
    /// a rule that did fail would be skipped and logged).
    pub fn new() -> Redactor {
        let rules = RULES
            .iter()
            .filter_map(|(kind, pat, group)| match Regex::new(pat) {
                Ok(re) => Some(Rule { kind, re, group: *group }),
                Err(e) => {
                    tracing::error!(kind, error = %e, "secret rule does not compile");
                    None
                }
            })
            .collect();
        Redactor { rules }
    }

    /// Redacts a text; returns the new text and how many secrets were replaced.
    pub fn redact_str(&self, text: &str) -> (String, u32) {
        let mut out = text.to_string();
        let mut count = 0u32;
        for rule in &self.rules {
            if !rule.re.is_match(&out) {
                continue;
            }
            let replaced = rule.re.replace_all(&out, |c: &Captures| {
                let whole = c.get(0).map(|m| m.as_str()).unwrap_or("");
                let Some(secret) = c.get(rule.group) else { return whole.to_string() };
                if secret.as_str().starts_with("[REDACTED:") {
                    return whole.to_string();
                }
                count += 1;
                let start = secret.start() - c.get(0).map(|m| m.start()).unwrap_or(0);
                let end = start + secret.len();
                format!("{}{}{}", &whole[..start], marker(rule.kind), &whole[end..])
            });
            out = replaced.into_owned();
        }
        (out, count)
    }

    /// Redacts every string inside a JSON value in place; returns how many secrets were replaced.
    pub fn redact_value(&self, v: &mut Value) -> u32 {
        match v {
            Value::String(s) => {
                let (new, n) = self.redact_str(s);
                if n > 0 {
                    *s = new;
                }
                n
            }
            Value::Array(items) => items.iter_mut().map(|i| self.redact_value(i)).sum(),
            Value::Object(map) => map.values_mut().map(|i| self.redact_value(i)).sum(),
            _ => 0,
        }
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    // Real-format fake secrets (random characters in each provider's published shape).
    #[rstest]
    #[case("aws_access_key", "key id AKIAQ3EGRHZ5T7XKM2PL in use", "AKIAQ3EGRHZ5T7XKM2PL")]
    #[case(
        "aws_secret_key",
        "aws_secret_access_key = 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",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9R3tLm8Q"
    )]
    #[case(
        "github_token",
        "token ghp_4fT9kQz2LmN8xWvB1cR7yH3jP0sD6aE5gU2i ok",
        "ghp_4fT9kQz2LmN8xWvB1cR7yH3jP0sD6aE5gU2i"
    )]
    #[case(
        "github_token",
        "github_pat_11ABCDEFG0abcdefghijkl_MNOPqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV",
        "github_pat_11ABCDEFG0"
    )]
    #[case("slack_token", "SLACK=xoxb-2048163423-5820349871234-Zq8RkT2vLwN4mP9sXc1YhJ6d", "xoxb-2048163423")]
    #[case(
        "slack_webhook",
        "post to https://hooks.slack.com/services/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",
        "Xk29dLq0PzR8vT5nM1wY4cHs"
    )]
    #[case(
        "anthropic_key",
        "ANTHROPIC: sk-ant-api03-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2-AbCdEfAA",
        "sk-ant-api03-Zx8Q"
    )]
    #[case("openai_key", "use sk-proj-Q2w3E4r5T6y7U8i9O0p1A2s3D4f5G6h7J8k9L0z1X2c3V4b5 now", "sk-proj-Q2w3E4r5")]
    #[case("google_api_key", "key=AIzaSyD4-8Xq2LmN7vB3cR9tY1uI5oP0aS6dF8g", "AIzaSyD4-8Xq2LmN7vB3cR9tY1uI5oP0aS6dF8g")]
    #[case(
        "jwt",
        "Cookie: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N"
    )]
    #[case("connection_password", "DATABASE_URL=postgres://app:S3cr3tPa55@db.internal:5432/prod", "S3cr3tPa55")]
    #[case(
        "connection_password",
        "mongodb+srv://admin:hunter2hunter2@cluster0.ab1cd.mongodb.net/test",
        "hunter2hunter2"
    )]
    #[case(
        "bearer_token",
        "Authorization: Bearer 8fK2mQ9xL4vT7wR1zY3nB6cD0eH5jP2s",
        "8fK2mQ9xL4vT7wR1zY3nB6cD0eH5jP2s"
    )]
    #[case("env_secret", "PORT=8080\nSTRIPE_SECRET=whsec_9x8y7z6w5v4u\n", "whsec_9x8y7z6w5v4u")]
    #[case("env_secret", "export MY_API_TOKEN=\"abc123def456\"", "abc123def456")]
    #[case("stripe_key", "sk_live_51HxQ2eLmN8vB3cR9tY1uI5oP", "sk_live_51HxQ2eLmN8vB3cR9tY1uI5oP")]
    fn known_formats_are_redacted(#[case] kind: &str, #[case] text: &str, #[case] secret_part: &str) {
        let (out, n) = Redactor::new().redact_str(text);
        assert!(n >= 1, "{kind} not found in {text}");
        assert!(!out.contains(secret_part), "{kind} left {secret_part} in {out}");
        assert!(out.contains("[REDACTED:"), "{out}");
    }

    #[test]
    fn private_key_blocks_go_whole() {
        let pem = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\nafter";
        let (out, n) = Redactor::new().redact_str(pem);
        assert_eq!(n, 1);
        assert_eq!(out, "before\n[REDACTED:private_key]\nafter");
    }

    #[test]
    fn env_names_are_kept_and_plain_text_is_untouched() {
        let r = Redactor::new();
        let (out, _) = r.redact_str("AWS_SESSION_TOKEN=FwoGZXIvYXdzEBYaDH7kx");
        assert!(out.starts_with("AWS_SESSION_TOKEN=[REDACTED:"), "{out}");
        let code = "fn key_order(map: &Map) -> Vec<String> { map.keys().collect() }\nlet token = next();";
        assert_eq!(r.redact_str(code), (code.to_string(), 0));
    }

    /// The fake-secret corpus the integration tests send through the server: every entry is
    /// redacted here already, with the secret bytes gone.
    #[test]
    fn the_fake_secret_corpus_is_redacted() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/secrets/corpus.jsonl");
        let r = Redactor::new();
        let text = std::fs::read_to_string(path).unwrap();
        let mut seen = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).unwrap();
            let secret: String = v["parts"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
            let leak = v.get("must_not_leak").and_then(Value::as_str).unwrap_or(&secret).to_string();
            let input = v["context"].as_str().unwrap().replace("{secret}", &secret);
            let (out, n) = r.redact_str(&input);
            assert!(n >= 1 && !out.contains(&leak), "{} leaked: {out}", v["kind"]);
            seen += 1;
        }
        assert!(seen >= 30, "corpus too small: {seen}");
    }

    #[rstest]
    #[case::read_line_numbers("     4\u{2192}API_TOKEN=abcd1234efgh", "abcd1234efgh")]
    #[case::grep_prefix("src/.env:3:CLIENT_SECRET=zz99yy88", "zz99yy88")]
    #[case::mid_line_env("run DEPLOY_TOKEN=tok_abc123 ./deploy.sh", "tok_abc123")]
    #[case::quoted_json("{\"db_password\": \"pa55word1\"}", "pa55word1")]
    fn secrets_shown_by_tools_are_redacted(#[case] text: &str, #[case] secret: &str) {
        let (out, n) = Redactor::new().redact_str(text);
        assert!(n == 1 && !out.contains(secret), "{out}");
    }

    #[rstest]
    #[case::rust_field("struct C { api_key: String, token: Option<String> }")]
    #[case::time_key("let password_len = input.len();\nlet key = map.get(\"a\");")]
    #[case::url_without_password("see https://user@example.com/path and postgres://localhost/db")]
    fn code_without_secrets_is_untouched(#[case] text: &str) {
        assert_eq!(Redactor::new().redact_str(text), (text.to_string(), 0));
    }

    #[test]
    fn json_values_are_redacted_everywhere_and_counted() {
        let mut v = serde_json::json!({"a": ["ghp_4fT9kQz2LmN8xWvB1cR7yH3jP0sD6aE5gU2i"], "b": {"c": "AKIAQ3EGRHZ5T7XKM2PL"}, "n": 3});
        assert_eq!(Redactor::new().redact_value(&mut v), 2);
        assert!(!v.to_string().contains("ghp_4fT9"));
    }
}
