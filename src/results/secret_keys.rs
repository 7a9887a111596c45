//! Secret-named keys: a JSON field called `password`, `db_password`, `apiKey`, `client_secret`,
//! `Authorization`... holds a secret whatever its value looks like, so its value is redacted by
//! name, not by shape.
//!
//! A key is split into words (`_`, `-`, `.`, spaces and camelCase) and is secret when its last
//! word, or its last two words, name a credential. Only the end counts, so `max_tokens`,
//! `token_count`, `auth_method` and `password_len` stay readable.

/// Last words that make a key secret.
const LAST_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "passphrase",
    "secret",
    "secrets",
    "token",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "creds",
    "apikey",
    "cookie",
];

/// Last two words that make a key secret (`api_key`, `X-Api-Key`, `privateKey`...).
const LAST_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("access", "key"),
    ("secret", "key"),
    ("private", "key"),
    ("signing", "key"),
    ("encryption", "key"),
    ("master", "key"),
    ("session", "key"),
    ("client", "secret"),
];

/// Whether a field with this name holds a secret.
pub fn is_secret_key(key: &str) -> bool {
    let words = words(key);
    let Some(last) = words.last() else { return false };
    if LAST_WORDS.contains(&last.as_str()) {
        return true;
    }
    let [.., before, last] = words.as_slice() else { return false };
    LAST_PAIRS.iter().any(|(a, b)| a == before && b == last)
}

/// Lower-case words of a key: split on non-alphanumerics and camelCase (`APIKey` -> api, key).
fn words(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut words = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
        let next = chars.get(i + 1).copied();
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            });
        if boundary && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("password")]
    #[case("PASSWORD")]
    #[case("db_password")]
    #[case("dbPassword")]
    #[case("passwd")]
    #[case("token")]
    #[case("access_token")]
    #[case("refreshToken")]
    #[case("secret")]
    #[case("client_secret")]
    #[case("clientSecret")]
    #[case("api_key")]
    #[case("apikey")]
    #[case("apiKey")]
    #[case("X-Api-Key")]
    #[case("APIKey")]
    #[case("access_key")]
    #[case("AWS_SECRET_ACCESS_KEY")]
    #[case("private_key")]
    #[case("privateKey")]
    #[case("auth")]
    #[case("Authorization")]
    #[case("credentials")]
    #[case("github.token")]
    fn secret_names_are_recognised(#[case] key: &str) {
        assert!(is_secret_key(key), "{key}");
    }

    #[rstest]
    #[case("max_tokens")]
    #[case("input_tokens")]
    #[case("token_count")]
    #[case("tokenizer")]
    #[case("auth_method")]
    #[case("author")]
    #[case("password_len")]
    #[case("key")]
    #[case("public_key")]
    #[case("keys")]
    #[case("path")]
    #[case("secretary")]
    #[case("")]
    fn ordinary_names_are_left_alone(#[case] key: &str) {
        assert!(!is_secret_key(key), "{key}");
    }

    #[test]
    fn keys_split_into_words() {
        assert_eq!(words("XApiKey_v2"), ["x", "api", "key", "v2"]);
        assert_eq!(words("dbPassword"), ["db", "password"]);
        assert_eq!(words("AWS_SECRET"), ["aws", "secret"]);
    }
}
