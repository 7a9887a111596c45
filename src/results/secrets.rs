//! Secret redaction: known credential formats, and the values of secret-named JSON keys, are
//! replaced before anything is stored.
//!
//! Each rule names the kind it redacts (`[REDACTED:github_token]`) so a reader of a cached result
//! knows something was there. Rules that match a `name = value` keep the name and redact the value.
//! The rules are a checked pattern table (`crate::patterns`): each compiles and catches its own
//! sample, or refrain does not start.

use super::secret_keys::is_secret_key;
use crate::patterns::Pattern;
use regex::Captures;
use serde_json::Value;

/// One redaction rule: the kind it redacts, its pattern, and which capture group holds the secret
/// (0 = all of the match).
pub struct Rule {
    kind: &'static str,
    group: usize,
    pattern: Pattern,
}

impl Rule {
    /// The rule's pattern (for the startup check).
    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    const fn new(
        kind: &'static str,
        name: &'static str,
        source: &'static str,
        group: usize,
        sample: &'static str,
    ) -> Rule {
        Rule { kind, group, pattern: Pattern::new("secrets", name, source, sample) }
    }
}

/// The rules, most specific first (an Anthropic key is also an `sk-` key). Samples are fake
/// secrets in each provider's published shape.
pub static RULES: [Rule; 22] = [
    // A private key block, to its END line, or to the end of the value when the END line is missing
    // (a truncated read or a cut-off paste must not keep the key).
    Rule::new(
        "private_key",
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\z)",
        0,
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n",
    ),
    Rule::new(
        "aws_access_key",
        "aws_access_key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b",
        0,
        concat!("AKIAQ3EGRH", "Z5T7XKM2PL"),
    ),
    Rule::new(
        "aws_secret_key",
        "aws_secret_key",
        r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})"#,
        1,
        concat!("aws_secret_access_key = wJalrXUt", "nFEMI/K7MDENG/bPxRfiCYzq9R3tLm8Q"),
    ),
    Rule::new(
        "github_token",
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        0,
        concat!("ghp_4fT9kQz2LmN8xWvB", "1cR7yH3jP0sD6aE5gU2i"),
    ),
    Rule::new(
        "slack_token",
        "slack_token",
        r"\b(?:xox[abposrce]|xapp)-[A-Za-z0-9-]{10,}",
        0,
        concat!("xoxb-2048163423-58203498712", "34-Zq8RkT2vLwN4mP9sXc1YhJ6d"),
    ),
    Rule::new(
        "slack_webhook",
        "slack_webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
        0,
        concat!("https://hooks.slack.com/services/T024BE", "7LD/B01J8K2QW3E/Xk29dLq0PzR8vT5nM1wY4cHs"),
    ),
    Rule::new(
        "anthropic_key",
        "anthropic_key",
        r"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{20,}",
        0,
        concat!("sk-ant-api03-Zx8Qw2Er4Ty6Ui8Op0As2Df", "4Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2-AbCdEfAA"),
    ),
    Rule::new(
        "openai_key",
        "openai_key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        0,
        concat!("sk-proj-Q2w3E4r5T6y7U8i9O0p1", "A2s3D4f5G6h7J8k9L0z1X2c3V4b5"),
    ),
    Rule::new(
        "google_api_key",
        "google_api_key",
        r"\bAIza[0-9A-Za-z_-]{35}\b",
        0,
        concat!("AIzaSyD4-8Xq2LmN7vB", "3cR9tY1uI5oP0aS6dF8g"),
    ),
    Rule::new(
        "stripe_key",
        "stripe_key",
        r"\b(?:[rs]k_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})\b",
        0,
        concat!("sk_live_51HxQ2eL", "mN8vB3cR9tY1uI5oP"),
    ),
    Rule::new(
        "gitlab_token",
        "gitlab_token",
        r"\bglpat-[A-Za-z0-9_-]{20,}",
        0,
        concat!("glpat-xR4mT8q", "L2vN6bC9wZ3kJ"),
    ),
    Rule::new(
        "npm_token",
        "npm_token",
        r"\bnpm_[A-Za-z0-9]{36}\b",
        0,
        concat!("npm_a1B2c3D4e5F6g7H8", "i9J0k1L2m3N4o5P6q7R8"),
    ),
    Rule::new(
        "pypi_token",
        "pypi_token",
        r"\bpypi-AgE[A-Za-z0-9_-]{50,}",
        0,
        concat!("pypi-AgEIcHlwaS5vcmcCJGE4ZjYxNzQ", "1LWQ2YzItNGI5My1iYzQxLTgzZDc0ZmE1"),
    ),
    Rule::new(
        "huggingface_token",
        "huggingface_token",
        r"\bhf_[A-Za-z0-9]{30,}\b",
        0,
        concat!("hf_kQ7wR2tY9uI4oP1", "aS6dF3gH8jK5lZ0xCvB"),
    ),
    Rule::new(
        "google_oauth_token",
        "google_oauth_token",
        r"\bya29\.[0-9A-Za-z_-]{20,}",
        0,
        concat!("ya29.a0AfH6SMBx7Qk2", "LmN8vB3cR9tY1uI5oP0"),
    ),
    Rule::new(
        "sendgrid_key",
        "sendgrid_key",
        r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
        0,
        concat!("SG.aB3dE6gH9jK2mN5p.qR", "8sT1uV4wX7yZ0aB3cD6eF9"),
    ),
    Rule::new(
        "jwt",
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        0,
        concat!(
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0N",
            "TY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
        ),
    ),
    Rule::new(
        "connection_password",
        "connection_password",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^:/\s@]+:([^@\s/]+)@",
        1,
        concat!("postgres://app:S3cr3tPa", "55@db.internal:5432/prod"),
    ),
    Rule::new(
        "bearer_token",
        "bearer_token",
        r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})",
        1,
        concat!("Authorization: Bearer 8fK2m", "Q9xL4vT7wR1zY3nB6cD0eH5jP2s"),
    ),
    // `.env` lines, also as tools show them: after `cat -n` / Read line numbers (`  3→`, `3\t`)
    // or a grep prefix (`path:3:`).
    Rule::new(
        "env_secret",
        "env_secret_line",
        r#"(?m)^(?:[ \t]*\d+(?:→|\t|:)|[^\s:]+:(?:\d+:)?)?[ \t]*(?:export[ \t]+)?[A-Za-z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|CREDENTIALS?)[A-Za-z0-9_]*[ \t]*[=:][ \t]*["']?([^\s"'#]{4,})"#,
        1,
        "     4\u{2192}API_TOKEN=abcd1234efgh",
    ),
    // An upper-case `*_TOKEN=value` inside a line: a command's environment, a quoted `.env` line.
    Rule::new(
        "env_secret",
        "env_secret_inline",
        r#"(?:^|[\s;&(:])[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)[A-Z0-9_]*=["']?([^\s"'#]{4,})"#,
        1,
        "run DEPLOY_TOKEN=tok_abc123 ./deploy.sh",
    ),
    // Quoted values of secret-named keys in JSON, YAML, TOML or code: `"password": "..."`.
    Rule::new(
        "config_secret",
        "config_secret",
        r#"(?i)["']?\b[a-z0-9_.-]*(?:password|passwd|secret|api_?key|access_?key|auth_?token|access_?token|refresh_?token|private_?key)["']?[ \t]*[:=][ \t]*["']([^"'\s]{4,})["']"#,
        1,
        "{\"db_password\": \"pa55word1\"}",
    ),
];

/// Redacts secrets in text and JSON with [`RULES`] and secret-named keys.
#[derive(Debug, Default, Clone, Copy)]
pub struct Redactor;

/// The marker that replaces a secret.
fn marker(kind: &str) -> String {
    format!("[REDACTED:{kind}]")
}

/// The kind named in the marker for a value redacted because of its key.
const KEY_KIND: &str = "secret_field";

impl Redactor {
    /// The redactor over the built-in rules (checked at startup by `crate::patterns`).
    pub fn new() -> Redactor {
        Redactor
    }

    /// Redacts a text; returns the new text and how many secrets were replaced.
    pub fn redact_str(&self, text: &str) -> (String, u32) {
        let mut out = text.to_string();
        let mut count = 0u32;
        for rule in &RULES {
            let re = &*rule.pattern;
            if !re.is_match(&out) {
                continue;
            }
            let replaced = re.replace_all(&out, |c: &Captures| {
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

    /// Redacts a JSON value in place: every string by the rules, and every value under a
    /// secret-named key (`password`, `db_password`, `apiKey`...) whatever it looks like.
    /// Returns how many secrets were replaced.
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
            Value::Object(map) => {
                map.iter_mut().map(|(k, i)| if is_secret_key(k) { redact_all(i) } else { self.redact_value(i) }).sum()
            }
            _ => 0,
        }
    }
}

/// Replaces every string and number under a secret-named key (booleans and nulls say nothing).
fn redact_all(v: &mut Value) -> u32 {
    match v {
        Value::String(s) if s.is_empty() || s.starts_with("[REDACTED:") => 0,
        Value::String(_) | Value::Number(_) => {
            *v = Value::String(marker(KEY_KIND));
            1
        }
        Value::Array(items) => items.iter_mut().map(redact_all).sum(),
        Value::Object(map) => map.values_mut().map(redact_all).sum(),
        _ => 0,
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
    fn every_rule_compiles_and_catches_its_own_sample() {
        assert_eq!(crate::patterns::check_all(RULES.iter().map(|r| &r.pattern)).unwrap(), RULES.len());
        for rule in &RULES {
            let (out, n) = Redactor::new().redact_str(rule.pattern.sample());
            assert!(n >= 1 && out.contains("[REDACTED:"), "{} left its sample whole: {out}", rule.pattern.name());
        }
    }

    #[rstest]
    #[case::no_end_line(
        "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq2Lz\nQ8vT5nM1wY4cHs",
        "x\n[REDACTED:private_key]"
    )]
    #[case::pgp_cut_off("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGXk2", "[REDACTED:private_key]")]
    #[case::whole_block_then_text(
        "-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----\nmore",
        "[REDACTED:private_key]\nmore"
    )]
    fn private_key_blocks_go_to_their_end_or_the_end_of_the_value(#[case] text: &str, #[case] want: &str) {
        assert_eq!(Redactor::new().redact_str(text), (want.to_string(), 1));
    }

    #[test]
    fn secret_named_keys_are_redacted_whatever_the_value_looks_like() {
        let mut v = serde_json::json!({
            "config": {"password": "hunter2", "db_password": "x", "apiKey": 123456, "auth": {"user": "u", "pass": "p"}},
            "headers": [{"Authorization": "Basic dXNlcjpwYXNz"}],
            "usage": {"max_tokens": 100, "input_tokens": 12, "token_type": "bearer"},
            "token": "",
            "enabled": true
        });
        assert_eq!(Redactor::new().redact_value(&mut v), 6, "{v}");
        let text = v.to_string();
        for secret in ["hunter2", "\"x\"", "123456", "\"u\"", "\"p\"", "dXNlcjpwYXNz"] {
            assert!(!text.contains(secret), "{secret} left in {text}");
        }
        assert_eq!(v["usage"], serde_json::json!({"max_tokens": 100, "input_tokens": 12, "token_type": "bearer"}));
        assert_eq!(v["config"]["password"], "[REDACTED:secret_field]");
        assert_eq!(Redactor::new().redact_value(&mut v), 0, "a second pass finds nothing new");
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
            let context = v["context"].as_str().unwrap();
            let (out, n) = if v.get("as").and_then(Value::as_str) == Some("json") {
                let escaped = serde_json::to_string(&secret).unwrap();
                let mut doc: Value =
                    serde_json::from_str(&context.replace("{secret}", escaped.trim_matches('"'))).unwrap();
                let n = r.redact_value(&mut doc);
                (doc.to_string(), n)
            } else {
                r.redact_str(&context.replace("{secret}", &secret))
            };
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
