//! The report over real transcripts and rollouts (tests/fixtures/transcripts), with the expected
//! figures worked out by hand from the files' usage lines and the built-in rules' prices.

use super::model::AgentKind;
use super::*;
use std::path::Path;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts").join(rel)
}

/// A history home: Claude Code files under `claude/projects/<dir>/`, Codex under `codex/sessions/`.
fn home(claude: &[&str], codex: &[&str]) -> (tempfile::TempDir, Options) {
    let d = tempfile::tempdir().unwrap();
    let cdir = d.path().join("claude/projects/-tmp-proj");
    let xdir = d.path().join("codex/sessions/2026/05/13");
    std::fs::create_dir_all(&cdir).unwrap();
    std::fs::create_dir_all(&xdir).unwrap();
    for (i, f) in claude.iter().enumerate() {
        std::fs::copy(fixture(f), cdir.join(format!("session-{i}.jsonl"))).unwrap();
    }
    for (i, f) in codex.iter().enumerate() {
        std::fs::copy(fixture(f), xdir.join(format!("rollout-{i}.jsonl"))).unwrap();
    }
    let roots = Roots { claude: Some(d.path().join("claude/projects")), codex: Some(d.path().join("codex/sessions")) };
    (d, Options { roots, threads: 2, ..Options::default() })
}

/// The report of one hand-written Claude Code session of `lines`, on one thread.
fn report_of(lines: &[String]) -> Report {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("claude/projects/-p");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("s.jsonl"), lines.join("\n")).unwrap();
    let roots = Roots { claude: Some(d.path().join("claude/projects")), codex: None };
    run(&Options { roots, threads: 1, ..Options::default() }).0
}

/// The one file's summary of a Claude Code session written from `lines`.
fn lines_summary(lines: &[String]) -> FileSummary {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("claude/projects/-p");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("s.jsonl"), lines.join("\n")).unwrap();
    let roots = Roots { claude: Some(d.path().join("claude/projects")), codex: None };
    let (_, files) = run(&Options { roots, threads: 1, ..Options::default() });
    assert_eq!(files.len(), 1);
    FileSummary::clone(&files[0])
}

fn run(opts: &Options) -> (Report, Vec<Arc<FileSummary>>) {
    let files = sources::discover(&opts.roots, opts.since_ms, opts.agent);
    analyze(opts, &files, &Rules::builtin(), None, &|_| {})
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn claude_usage_lines_give_hand_worked_tokens_breaks_and_dollars() {
    // ccusage/claude-project-alpha-chat.jsonl: three requests (uncached, cache read, cache write):
    //   r0 sonnet-4 (100, 10, 25)   r1 opus-4 (200, 20, 50)   r2 sonnet-4 (300, 40, 0)
    // Prices (rules.toml): claude-sonnet $3/Mtok, claude-opus-4 $15/Mtok; write 1.25x, read 0.1x.
    //   r0 = (100 + 10*0.1 + 25*1.25) * 3e-6  = 132.25 * 3e-6  = 0.00039675
    //   r1 = (200 + 20*0.1 + 50*1.25) * 15e-6 = 264.5 * 15e-6  = 0.0039675
    //   r2 = (300 + 40*0.1 + 0) * 3e-6        = 304 * 3e-6     = 0.000912
    //   input total = 0.00527625
    // Breaks (reported: the previous request left read+write cached, this one read less):
    //   r0->r1: 10 + 25 = 35 cached, 20 read -> 15 lost, at opus-4: 15 * 15e-6 * (1.25 - 0.1) = 0.00025875
    //   r1->r2: 20 + 50 = 70 cached, 40 read -> 30 lost, at sonnet: 30 * 3e-6 * 1.15          = 0.0001035
    // Both pairs switch models, which is the cause explain_cache_break names first.
    let (_d, opts) = home(&["ccusage/claude-project-alpha-chat.jsonl"], &[]);
    let (r, _) = run(&opts);
    let t = &r.totals.tokens;
    assert_eq!((t.requests, t.uncached, t.cache_read, t.cache_write), (3, 600, 70, 75));
    assert!(close(t.input_usd, 0.00527625), "{}", t.input_usd);
    let w = &r.totals.waste;
    assert_eq!((w.breaks, w.break_tokens), (2, 45));
    assert!(close(w.break_usd, 0.00025875 + 0.0001035), "{}", w.break_usd);
    assert_eq!(r.causes.len(), 1);
    assert_eq!(r.causes[0].kind, "model_changed");
    assert_eq!(r.causes[0].breaks, 2);
    let dates: Vec<&str> = r.days.iter().map(|d| d.date.as_str()).collect();
    assert_eq!(dates, ["2026-01-09", "2026-01-10"]);
    assert_eq!((r.days[0].tokens.requests, r.days[0].waste.breaks), (2, 1));
    assert_eq!((r.days[1].tokens.requests, r.days[1].waste.breaks), (1, 1));
}

#[test]
fn codex_rollout_gives_hand_worked_tokens_and_prompt() {
    // captured/codex-rollout-with-compaction.jsonl (Codex 0.169.0, model "mock-model", priced as
    // the table's catch-all "gpt" family: $1.25/Mtok, cached reads 0.5x):
    //   three requests report input 5000 of which 4096 cached -> uncached 904, read 4096 each
    //   (the token_count after the compaction repeats the running total, so it is no request).
    //   input USD = 3 * (904 + 4096*0.5) * 1.25e-6 = 3 * 2952 * 1.25e-6 = 0.01107
    //   cached reads hold at 4096: no break.
    //   The one prompt ("echo please"; the environment context is injected, not typed) is answered
    //   by the three requests: 3 * 5000 = 15000 prompt tokens.
    let (_d, opts) = home(&[], &["captured/codex-rollout-with-compaction.jsonl"]);
    let (r, files) = run(&opts);
    let t = &r.totals.tokens;
    assert_eq!((t.requests, t.uncached, t.cache_read, t.cache_write), (3, 2712, 12288, 0));
    assert!(close(t.input_usd, 0.01107), "{}", t.input_usd);
    assert_eq!(r.totals.waste.breaks, 0);
    assert_eq!(files[0].prompts.len(), 1);
    assert_eq!((files[0].prompts[0].text.as_str(), files[0].prompts[0].tokens), ("echo please", 15000));
    assert_eq!(r.projects[0].root, "/tmp/mcpclients/proj");
    assert_eq!(r.projects[0].agents, [AgentKind::Codex]);
}

#[test]
fn a_compaction_between_requests_is_named_as_the_cause() {
    // Two requests, the second reading the 6000 tokens the first left cached; a compaction; a
    // third request reads nothing: 6000 + 200 written before, 0 read -> 6200 lost at Sonnet's
    // $3/Mtok re-written at 1.25x instead of read at 0.1x: 6200 * 3e-6 * 1.15 = 0.02139.
    let turn = |id: &str, t: &str, read: u64, write: u64| {
        format!(
            r#"{{"type":"assistant","timestamp":"2026-02-01T10:00:{t}Z","cwd":"/p","message":{{"id":"{id}","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":5,"cache_read_input_tokens":{read},"cache_creation_input_tokens":{write}}}}}}}"#
        )
    };
    let user =
        r#"{"type":"user","timestamp":"2026-02-01T10:00:00Z","cwd":"/p","message":{"role":"user","content":"go on"}}"#;
    let compact = r#"{"type":"system","subtype":"compact_boundary","timestamp":"2026-02-01T10:00:30Z"}"#;
    let lines = [
        user.to_string(),
        turn("a", "10", 0, 6000),
        user.to_string(),
        turn("b", "20", 6000, 200),
        compact.to_string(),
        user.to_string(),
        turn("c", "40", 0, 3000),
    ];
    let r = report_of(&lines);
    assert_eq!((r.totals.waste.breaks, r.totals.waste.break_tokens), (1, 6200), "{:#?}", r.causes);
    assert_eq!(r.causes[0].kind, "compacted");
    assert!(close(r.totals.waste.break_usd, 6200.0 * 3e-6 * 1.15));
}

#[test]
fn codex_usage_only_rollout_has_no_break_when_the_cache_grows() {
    // ccusage/codex-session-alpha.jsonl: gpt-5.2-codex ($1.25/Mtok, reads 0.1x):
    //   r0 input 1000, cached 250 -> (750 + 25) * 1.25e-6;  r1 input 2500, cached 500 -> (2000 + 50) * 1.25e-6
    //   total = 2825 * 1.25e-6 = 0.00353125; cached reads grew (250 -> 500): no break.
    let (_d, opts) = home(&[], &["ccusage/codex-session-alpha.jsonl"]);
    let (r, _) = run(&opts);
    assert_eq!((r.totals.tokens.requests, r.totals.tokens.uncached, r.totals.tokens.cache_read), (2, 2750, 750));
    assert!(close(r.totals.tokens.input_usd, 0.00353125));
    assert_eq!(r.totals.waste.breaks, 0);
}

#[test]
fn claude_code_transcripts_with_compaction_give_prompts_and_the_logged_break() {
    // captured/claude-transcript-mcp-call-then-compact.jsonl (Claude Code 2.1.330, requests logged):
    //   two requests, each reporting 12 uncached, 9000 read, 3000 written: the first left
    //   9000 + 3000 = 12000 cached, the second read 9000 -> 3000 lost. claude-opus-5-5 is priced
    //   as "claude-opus (newer)": $5/Mtok -> 3000 * 5e-6 * 1.15 = 0.01725.
    //   One typed prompt; the compaction summary and the /compact command lines are not prompts.
    let (_d, opts) = home(&["captured/claude-transcript-mcp-call-then-compact.jsonl"], &[]);
    let (r, files) = run(&opts);
    assert_eq!(r.totals.tokens.requests, 2);
    assert_eq!((r.totals.waste.breaks, r.totals.waste.break_tokens), (1, 3000));
    assert!(close(r.totals.waste.break_usd, 0.01725), "{}", r.totals.waste.break_usd);
    let prompts: Vec<&str> = files[0].prompts.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(prompts, ["Please echo hello using the MCP tool"]);
}

#[test]
fn every_fixture_reads_without_unreadable_files_and_filters_apply() {
    let claude = [
        "captured/claude-transcript-mcp-call.jsonl",
        "claude-code-log/representative_messages.jsonl",
        "claude-code-log/edge_cases.jsonl",
        "claude-code-log/dag_compact_after_rewind.jsonl",
        "claude-code-log/todowrite_examples.jsonl",
        "ccusage/claude-project-beta-chat.jsonl",
    ];
    let codex = ["captured/codex-rollout-mcp-call.jsonl", "ccusage/codex-session-alpha.jsonl"];
    let (_d, mut opts) = home(&claude, &codex);
    let (all, _) = run(&opts);
    assert!(all.history.unreadable.is_empty(), "{:?}", all.history.unreadable);
    assert_eq!(all.history.files, 8);
    assert!(all.totals.tokens.requests > 10);
    opts.agent = Some(AgentKind::Codex);
    let (codex_only, _) = run(&opts);
    assert_eq!(codex_only.history.files, 2);
    opts.agent = None;
    opts.since_ms = Some(parse_since("2026-05-01", 0).unwrap());
    let (recent, _) = run(&opts);
    assert!(recent.days.iter().all(|d| d.date.as_str() >= "2026-05-01"), "{:?}", recent.days);
    assert!(recent.totals.tokens.requests < all.totals.tokens.requests);
    opts.since_ms = None;
    opts.project = Some("/tmp/mcpclients/proj".into());
    let (one, _) = run(&opts);
    assert!(one.projects.iter().all(|p| p.root == "/tmp/mcpclients/proj") && !one.projects.is_empty());
}

#[test]
fn repeated_reads_count_once_per_unchanged_reread_and_reset_on_compaction() {
    // A hand-made session: a.rs read three times (the third after an Edit), b.rs twice with a
    // compaction in between. Only the second read of a.rs repeats: 800 bytes -> 200 tokens.
    let body = "y".repeat(800);
    let read = |id: &str, p: &str| {
        format!(
            r#"{{"type":"assistant","timestamp":"2026-02-01T10:00:00Z","cwd":"/p","message":{{"id":"m{id}","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"tool_use","id":"{id}","name":"Read","input":{{"file_path":"{p}"}}}}],"usage":{{"input_tokens":10,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}}}}"#
        )
    };
    let result_of = |id: &str, body: &str| {
        format!(
            r#"{{"type":"user","timestamp":"2026-02-01T10:00:01Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{body}"}}]}}}}"#
        )
    };
    let result = |id: &str| result_of(id, &body);
    let edited = "z".repeat(800);
    let edit = r#"{"type":"assistant","timestamp":"2026-02-01T10:00:02Z","message":{"id":"me","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"e1","name":"Edit","input":{"file_path":"/p/a.rs","old_string":"a","new_string":"b"}}]}}"#;
    let compact = r#"{"type":"system","subtype":"compact_boundary","timestamp":"2026-02-01T10:00:03Z"}"#;
    let lines = [
        read("1", "/p/a.rs"),
        result("1"),
        read("2", "/p/a.rs"),
        result("2"),
        edit.to_string(),
        read("3", "/p/a.rs"),
        result_of("3", &edited),
        read("4", "/p/b.rs"),
        result("4"),
        compact.to_string(),
        read("5", "/p/b.rs"),
        result("5"),
    ];
    let r = report_of(&lines);
    assert_eq!((r.totals.waste.repeated_reads, r.totals.waste.repeated_read_tokens), (1, 200));
    assert_eq!(r.repeated_files.len(), 1);
    assert_eq!(r.repeated_files[0].path, "/p/a.rs");
    // 200 tokens added to the context once, at sonnet's $3/Mtok written at 1.25x.
    assert!(close(r.totals.waste.repeated_read_usd, 200.0 * 3e-6 * 1.25));
}

/// A repeated read would have been sent again with every request after it, up to the next
/// compaction: that is what removing it saves, as the tool list costs every request.
#[test]
fn a_repeated_read_is_carried_by_the_requests_after_it_until_a_compaction() {
    let body = "y".repeat(800);
    let turn = |id: &str, p: Option<&str>| {
        let content = match p {
            Some(p) => format!(r#"[{{"type":"tool_use","id":"{id}","name":"Read","input":{{"file_path":"{p}"}}}}]"#),
            None => r#"[{"type":"text","text":"ok"}]"#.to_string(),
        };
        format!(
            r#"{{"type":"assistant","timestamp":"2026-02-01T10:00:00Z","cwd":"/p","message":{{"id":"m{id}","role":"assistant","model":"claude-sonnet-4-5","content":{content},"usage":{{"input_tokens":10,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}}}}"#
        )
    };
    let result = |id: &str| {
        format!(
            r#"{{"type":"user","timestamp":"2026-02-01T10:00:01Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{body}"}}]}}}}"#
        )
    };
    let compact = r#"{"type":"system","subtype":"compact_boundary","timestamp":"2026-02-01T10:00:03Z"}"#;
    // Requests: 1 (reads), 2 (reads again), 3, 4, then a compaction, then 5 and 6.
    let mut lines = vec![turn("1", Some("/p/a.rs")), result("1"), turn("2", Some("/p/a.rs")), result("2")];
    lines.extend([turn("3", None), turn("4", None), compact.to_string(), turn("5", None), turn("6", None)]);
    let files = lines_summary(&lines);
    // The repeat's result is sent by requests 3 and 4; the compaction drops it.
    assert_eq!((files.carried_reads, files.carried_read_tokens), (2, 400));
    lines.remove(6);
    let files = lines_summary(&lines);
    assert_eq!((files.carried_reads, files.carried_read_tokens), (4, 800), "no compaction: up to request 6");
}

#[test]
fn a_cache_reuses_unchanged_files_and_rereads_changed_ones() {
    let (d, opts) = home(&["ccusage/claude-project-alpha-chat.jsonl"], &[]);
    let files = sources::discover(&opts.roots, None, None);
    let mut cache = Cache::default();
    let read = std::sync::atomic::AtomicU64::new(0);
    let count = |n: u64| {
        read.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    };
    let (a, _) = analyze(&opts, &files, &Rules::builtin(), Some(&mut cache), &count);
    let (b, _) = analyze(&opts, &files, &Rules::builtin(), Some(&mut cache), &count);
    assert_eq!(a.totals.tokens, b.totals.tokens);
    let extra = std::fs::read_to_string(fixture("ccusage/claude-project-beta-chat.jsonl")).unwrap();
    let path = d.path().join("claude/projects/-tmp-proj/session-0.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&extra);
    std::fs::write(&path, text).unwrap();
    let files = sources::discover(&opts.roots, None, None);
    let (c, _) = analyze(&opts, &files, &Rules::builtin(), Some(&mut cache), &count);
    assert_eq!(c.totals.tokens.requests, a.totals.tokens.requests + 2, "the appended session is read");
}

#[test]
fn since_accepts_dates_and_ages_and_explains_bad_values() {
    assert_eq!(parse_since("1970-01-02", 0).unwrap(), 86_400_000);
    assert_eq!(parse_since("2d", 3 * 86_400_000).unwrap(), 86_400_000);
    assert_eq!(parse_since("12h", 86_400_000).unwrap(), 43_200_000);
    let e = parse_since("last week", 0).unwrap_err().to_string();
    assert!(e.contains("30d"), "{e}");
}

#[test]
fn sessions_without_a_working_directory_are_named_from_what_the_files_say() {
    // The ccusage files carry usage and no `cwd`: the Claude Code one is named from its project
    // folder (`-tmp-proj` is /tmp/proj), the Codex one (filed under a date folder) as unknown.
    let (_d, opts) = home(&["ccusage/claude-project-beta-chat.jsonl"], &["ccusage/codex-session-alpha.jsonl"]);
    let (r, _) = run(&opts);
    let mut names: Vec<&str> = r.projects.iter().map(|p| p.root.as_str()).collect();
    names.sort();
    assert_eq!(names, ["(unknown: Codex sessions without a working directory)", "/tmp/proj (from folder name)"]);
}

#[test]
fn every_cause_label_fits_a_chart_label_uncut() {
    let kinds = [
        "model_changed",
        "tool_added",
        "tool_removed",
        "tools_reordered",
        "tool_schema_edited",
        "system_edited",
        "message_mutated",
        "messages_removed",
        "thinking_changed",
        "tool_choice_changed",
        "param_changed",
        "unknown_field_changed",
        "images_changed",
        "breakpoints_moved",
        "ttl_changed",
        "idle_gap_exceeded",
        "prefix_below_minimum",
        "compacted",
        "unexplained",
    ];
    for k in kinds {
        let l = breaks::label(k);
        assert!(l.chars().count() <= 44, "{k}: {l:?} would be cut in the causes chart");
    }
}
