//! The terminal summary: one screen (under 40 lines) saying what was wasted, why, and what
//! refrain saved. Everything else is in `--json` and the page. Every text from history or a
//! store (paths, causes, notes) is printed through `term::field`.

use super::model::Report;
use crate::term::field;
use std::fmt::Write;

/// Rows shown per ranked list.
const ROWS: usize = 5;

/// Renders the one-screen summary.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let t = &r.totals;
    let span = match (r.days.first(), r.days.last()) {
        (Some(a), Some(b)) => format!("{} .. {}", a.date, b.date),
        _ => "no activity".into(),
    };
    let _ = writeln!(
        o,
        "refrain report: {} history files, {} projects, {span} ({} read)",
        r.history.files,
        r.projects.len(),
        bytes(r.history.bytes)
    );
    let tk = &t.tokens;
    let share = if tk.prompt() > 0 { 100.0 * tk.cache_read as f64 / tk.prompt() as f64 } else { 0.0 };
    let _ = writeln!(
        o,
        "prompt tokens {} in {} requests: cache reads {} ({share:.0}%), writes {}, misses {}; input ~${:.2}",
        num(tk.prompt()),
        num(tk.requests),
        num(tk.cache_read),
        num(tk.cache_write),
        num(tk.uncached),
        tk.input_usd
    );
    let w = &t.waste;
    let _ = writeln!(o, "\nWASTED                                              tokens     ~USD");
    let _ = writeln!(
        o,
        "  cache breaks     {:<30} {:>9} {:>9}",
        count(w.breaks, "break"),
        num(w.break_tokens),
        usd(w.break_usd)
    );
    let _ = writeln!(
        o,
        "  repeated reads   {:<30} {:>9} {:>9}",
        format!("{} unchanged", count(w.repeated_reads, "re-read")),
        num(w.repeated_read_tokens),
        usd(w.repeated_read_usd)
    );
    let _ = writeln!(
        o,
        "  repeated tasks   {:<30} {:>9}   (spent by those sessions)",
        format!("{} had a stored plan", count(t.repeated_tasks, "prompt")),
        num(t.repeated_task_tokens)
    );
    if !r.causes.is_empty() {
        let _ = writeln!(o, "\nWHY THE CACHE BROKE");
        for c in r.causes.iter().take(ROWS) {
            let _ = writeln!(
                o,
                "  {:<52} {:>6} {:>9} {:>9}",
                clip(&field(&c.label), 52),
                num(c.breaks),
                num(c.tokens),
                usd(c.usd)
            );
        }
        if let Some(c) = r.causes.first() {
            let _ = writeln!(o, "  fix the top one: {}", clip(&field(&c.fix), 110));
        }
    }
    if !r.repeated_files.is_empty() {
        let _ = writeln!(o, "\nFILES READ AGAIN UNCHANGED");
        for f in r.repeated_files.iter().take(ROWS) {
            let _ = writeln!(
                o,
                "  {:<52} {:>5}x {:>9} {:>9}",
                clip_left(&field(&f.path), 52),
                f.rereads,
                num(f.tokens),
                usd(f.usd)
            );
        }
    }
    if !r.projects.is_empty() {
        let _ = writeln!(o, "\nPROJECTS (most waste first)");
        for p in r.projects.iter().take(ROWS) {
            let agents: Vec<&str> = p.agents.iter().map(|a| a.short()).collect();
            let _ = writeln!(
                o,
                "  {:<44} {:<12} {:>4} {:<8}  breaks {:>8}  reads {:>8}",
                clip_left(&field(&p.root), 44),
                agents.join(","),
                p.sessions,
                if p.sessions == 1 { "session" } else { "sessions" },
                usd(p.waste.break_usd),
                usd(p.waste.repeated_read_usd)
            );
        }
    }
    let _ = writeln!(o, "\nREFRAIN SAVED, NET");
    let _ = writeln!(
        o,
        "  {} tokens (~{}) = {} removed - {} added - {} for its tool list over {} requests",
        signed(t.tokens_net),
        usd(t.usd_net),
        num(t.tokens_removed),
        num(t.tokens_added),
        num(t.tokens_fixed),
        num(t.requests_seen)
    );
    let _ = writeln!(
        o,
        "  plans served {} · results served {} · wrong-hit reports {} · every line: refrain report --ledger",
        num(t.plan_hits),
        num(t.result_hits),
        num(t.wrong_hit_reports)
    );
    let w = &t.would_net;
    if w.sessions > 0 {
        let _ = writeln!(
            o,
            "  on this history refrain's defaults would net {} tokens: {} of repeated reads removed - {} for its tool list; {} of {} sessions net negative",
            signed(w.net),
            num(w.removed),
            num(w.fixed),
            num(w.sessions_negative),
            num(w.sessions)
        );
        let _ = writeln!(
            o,
            "  counted as sent (a removed read is not sent again with each later request, the tool list is sent with every one): {} tokens; {} of {} sessions net negative",
            signed(w.carried_net),
            num(w.sessions_negative_carried),
            num(w.sessions)
        );
    }
    for s in r.refrain.iter().filter(|s| !s.ledger_lines.is_empty()) {
        let _ =
            writeln!(o, "\nLEDGER {} (newest first; tokens removed, added, net)", field(&clip_left(&s.project, 60)));
        for l in &s.ledger_lines {
            let _ = writeln!(
                o,
                "  {} {:<12} {:<13} {:>8} {:>7} {:>8}  {}",
                day_time(l.at_ms),
                field(&clip(&l.agent, 12)),
                l.kind.name(),
                l.removed,
                l.added,
                l.net(),
                field(&clip(
                    &format!(
                        "{}{}",
                        l.subject,
                        l.session.as_deref().map(|s| format!(" (session {s})")).unwrap_or_default()
                    ),
                    60
                ))
            );
        }
    }
    for n in r.notes.iter().take(3) {
        let _ = writeln!(o, "  note: {}", clip(&field(n), 120));
    }
    if r.notes.len() > 3 {
        let _ = writeln!(o, "  ... {} more notes in --json", r.notes.len() - 3);
    }
    let _ = writeln!(
        o,
        "\nDollars are estimates (provider rules as of {}). --json for every figure; --html FILE or `refrain dashboard` for charts.",
        field(&r.rules_as_of)
    );
    o
}

/// A signed count with a K/M/B suffix.
fn signed(n: i64) -> String {
    if n < 0 { format!("-{}", num(n.unsigned_abs())) } else { num(n as u64) }
}

/// A time as `YYYY-MM-DD HH:MM` (UTC).
fn day_time(ms: u64) -> String {
    let rest = ms / 1000 % 86_400;
    format!("{} {:02}:{:02}", super::file::day_of(ms as i64), rest / 3600, rest % 3600 / 60)
}

/// A count with a K/M/B suffix.
pub fn num(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}K", n as f64 / 1e3),
        1_000_000..=999_999_999 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.2}B", n as f64 / 1e9),
    }
}

/// A count and its noun, singular for one (`1 break`, `3 breaks`).
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 { format!("{} {noun}", num(n)) } else { format!("{} {noun}s", num(n)) }
}

/// Dollars with cents (four places under a cent).
pub fn usd(x: f64) -> String {
    if x < 0.0 {
        return format!("-{}", usd(-x));
    }
    if x > 0.0 && x < 0.01 { format!("${x:.4}") } else { format!("${x:.2}") }
}

fn bytes(n: u64) -> String {
    match n {
        0..=1_048_575 => format!("{:.1} KB", n as f64 / 1024.0),
        1_048_576..=1_073_741_823 => format!("{:.1} MB", n as f64 / 1_048_576.0),
        _ => format!("{:.2} GB", n as f64 / 1_073_741_824.0),
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() > n { format!("{}…", s.chars().take(n - 1).collect::<String>()) } else { s.to_string() }
}

/// Keeps the end of a path, which says most (also the charts' labels).
pub(super) fn clip_left(s: &str, n: usize) -> String {
    let c = s.chars().count();
    if c > n { format!("…{}", s.chars().skip(c - n + 1).collect::<String>()) } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_at_a_glance() {
        assert_eq!(num(950), "950");
        assert_eq!(num(12_345), "12.3K");
        assert_eq!(num(31_200_000), "31.2M");
        assert_eq!(usd(0.00025875), "$0.0003");
        assert_eq!(usd(12.4), "$12.40");
        assert_eq!(clip_left("/a/very/long/path/file.rs", 10), "…h/file.rs");
    }

    #[test]
    fn history_text_reaches_the_terminal_escaped() {
        let hostile = "/p/\u{1b}[2J\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[31mx.rs";
        let r = Report {
            repeated_files: vec![super::super::model::FileRow {
                path: hostile.into(),
                project: String::new(),
                rereads: 2,
                tokens: 9,
                usd: 0.0,
            }],
            projects: vec![super::super::model::ProjectRow { root: hostile.into(), ..Default::default() }],
            notes: vec![format!("store not read: {hostile}")],
            ..Report::default()
        };
        let out = render(&r);
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out}");
        assert!(out.contains("\\x1b[2J"), "{out}");
    }

    #[test]
    fn an_empty_report_still_fits_and_says_so() {
        let out = render(&Report::default());
        assert!(out.contains("no activity"));
        assert!(out.lines().count() < 40);
    }
}
