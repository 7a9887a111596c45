use super::*;
use crate::config::trust::TrustDb;

/// A project with `refrain.toml` holding `text`, and a home (for trust records) given by flag.
fn project(text: &str) -> (tempfile::TempDir, tempfile::TempDir, Overrides) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("refrain.toml"), text).unwrap();
    let home = tempfile::tempdir().unwrap();
    let flags = Overrides { home: Some(home.path().to_path_buf()), ..Overrides::default() };
    (dir, home, flags)
}

#[test]
fn env_keys_map_to_dotted_paths() {
    assert_eq!(env_key("REFRAIN_HOME").as_deref(), Some("store.home"));
    assert_eq!(env_key("REFRAIN__RESULTS__DEFAULT_TTL_SECS").as_deref(), Some("results.default_ttl_secs"));
    assert_eq!(env_key("HOME"), None);
}

#[test]
fn env_scalars_parse_as_toml_when_they_can() {
    assert_eq!(parse_scalar("42"), Value::Integer(42));
    assert_eq!(parse_scalar("true"), Value::Boolean(true));
    assert_eq!(parse_scalar("/tmp/x"), Value::String("/tmp/x".into()));
}

#[test]
fn project_file_overrides_default_and_is_reported() {
    let (dir, _home, flags) = project("[results]\ndefault_ttl_secs = 60\n");
    let s = resolve(Some(dir.path()), &flags).unwrap();
    assert_eq!(s.config.results.default_ttl_secs, 60);
    let (value, src) = &s.sources["results.default_ttl_secs"];
    assert_eq!(value, "60");
    assert_eq!(src, &Source::Project(dir.path().join("refrain.toml"), false));
    assert_eq!(s.sources["store.home"].1, Source::Flag("--home".into()));
    assert_eq!(s.sources["results.max_entry_bytes"].1, Source::Default);
    assert!(s.config.refused.is_empty());
}

#[test]
fn unknown_keys_are_rejected_with_the_file_named() {
    let (dir, _home, flags) = project("[results]\nbogus = 1\n");
    let err = resolve(Some(dir.path()), &flags).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("bogus") && err.contains("refrain.toml"), "{err}");
}

#[test]
fn a_bad_value_names_the_key_and_the_file() {
    for text in ["[hooks]\ntimeout_ms = \"soon\"\n", "[results]\ndefault_ttl_secs = \"soon\"\n"] {
        let (dir, _home, flags) = project(text);
        let err = resolve(Some(dir.path()), &flags).err().map(|e| e.to_string()).unwrap_or_default();
        let key = if text.contains("hooks") { "timeout_ms" } else { "default_ttl_secs" };
        assert!(err.contains(key) && err.contains("refrain.toml"), "{err}");
    }
}

const HOSTILE: &str =
    "[model]\nruntime = \"evil.so\"\n[store]\nhome = \"/tmp/elsewhere\"\n[results]\ndefault_ttl_secs = 61\n";

#[test]
fn refused_keys_keep_the_users_values_and_are_listed() {
    let (dir, home, flags) = project(HOSTILE);
    let s = resolve(Some(dir.path()), &flags).unwrap();
    assert_eq!(s.config.model.runtime, None);
    assert_eq!(s.config.home(), home.path());
    assert_eq!(s.config.results.default_ttl_secs, 61, "safe keys from the same file still apply");
    let keys: Vec<&str> = s.config.refused.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["model.runtime", "store.home"]);
    assert!(!s.project_files[0].trusted);
}

#[test]
fn trust_lifts_the_refusal_for_that_content_only() {
    let (dir, home, flags) = project(HOSTILE);
    let file = dir.path().join("refrain.toml");
    let mut db = TrustDb::load(home.path()).unwrap();
    db.trust(&file, &digest(HOSTILE.as_bytes())).unwrap();
    let s = resolve(Some(dir.path()), &flags).unwrap();
    assert!(s.config.refused.is_empty(), "{:?}", s.config.refused);
    assert_eq!(s.config.model.runtime.as_deref(), Some(Path::new("evil.so")));
    assert_eq!(s.sources["model.runtime"].1, Source::Project(file.clone(), true));
    // A flag still wins over a trusted project file.
    assert_eq!(s.config.home(), home.path());
    std::fs::write(&file, format!("{HOSTILE}# edited\n")).unwrap();
    let s = resolve(Some(dir.path()), &flags).unwrap();
    assert_eq!(s.config.model.runtime, None, "an edited file is untrusted again");
    assert_eq!(s.config.refused.len(), 2);
}

#[test]
fn a_project_may_lower_the_hook_timeout_below_the_users_value_only() {
    let (dir, _home, flags) = project("[hooks]\ntimeout_ms = 1000\n");
    assert_eq!(resolve(Some(dir.path()), &flags).unwrap().config.hooks.timeout_ms, 1000);
    std::fs::write(dir.path().join("refrain.toml"), "[hooks]\ntimeout_ms = 60000\n").unwrap();
    let s = resolve(Some(dir.path()), &flags).unwrap();
    assert_eq!(s.config.hooks.timeout_ms, 2000);
    assert_eq!(s.config.refused[0].key, "hooks.timeout_ms");
}

#[test]
fn a_password_in_the_team_url_is_never_shown() {
    assert_eq!(
        hide_password("\"postgres://alice:s3cret@db.internal:5432/refrain\""),
        "\"postgres://alice:<redacted>@db.internal:5432/refrain\""
    );
    assert_eq!(hide_password("\"postgres://alice@db/refrain\""), "\"postgres://alice@db/refrain\"");
    assert_eq!(hide_password("\"postgres://db/refrain\""), "\"postgres://db/refrain\"");
}

#[test]
fn a_project_file_cannot_choose_whose_team_plans_are_served_even_when_trusted() {
    use crate::config::Accept;
    let text = "[team]\naccept = [\"mallory\"]\n";
    let (dir, home, flags) = project(text);
    let s = resolve(Some(dir.path()), &flags).unwrap();
    assert_eq!(s.config.team.accept, Accept::Everyone, "the user's value (the default) stays");
    assert_eq!(s.config.refused.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(), ["team.accept"]);
    assert!(s.config.refused[0].reason.contains("even in a trusted project"), "{}", s.config.refused[0].reason);
    let mut db = TrustDb::load(home.path()).unwrap();
    db.trust(&dir.path().join("refrain.toml"), &digest(text.as_bytes())).unwrap();
    let s = resolve(Some(dir.path()), &flags).unwrap();
    assert_eq!(s.config.team.accept, Accept::Everyone, "trust does not lift it");
    assert_eq!(s.config.refused.len(), 1);
}

#[test]
fn a_wrong_team_accept_says_what_to_write() {
    // Given by the environment (the user's own layer), a bad value is an error naming the choices.
    let bad = figment::Figment::from(figment::providers::Serialized::defaults(crate::config::Config::default()))
        .merge(figment::providers::Serialized::default("team.accept", "alice"));
    let err = extract(&bad).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        err.contains("team.accept") && err.contains("\"reviewed\"") && err.contains("[\"alice\", \"bob\"]"),
        "{err}"
    );
}
