//! The report as one self-contained HTML page: inline CSS, inline SVG charts, no script unless
//! served live (then a few lines that poll the dashboard and reload on new data), and a
//! Content-Security-Policy that forbids every other network access.
//!
//! Why minijinja: a small, well-kept template engine (no proc macros to compile, unlike askama,
//! which matters on a 2-core build), with HTML autoescaping by template name, so every path,
//! prompt and cause sentence from the history is escaped unless we mark it safe (only our SVG).

use super::Error;
use super::model::Report;
use super::svg::{self, Row, Series};
use super::text;
use minijinja::{Environment, Value, context};

const PAGE: &str = include_str!("page.html");

/// How the page is served.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// A file: no script at all.
    File,
    /// The live dashboard: poll for `generation` every `poll_ms`.
    Live {
        /// The data generation shown.
        generation: u64,
        /// Poll interval.
        poll_ms: u64,
    },
}

/// Renders the page.
pub fn render(report: &Report, mode: Mode) -> Result<String, Error> {
    let mut env = Environment::new();
    env.add_filter("num", |v: Value| -> String {
        match u64::try_from(v.clone()) {
            Ok(n) => thousands(n),
            Err(_) => v.to_string(),
        }
    });
    env.add_filter("usd", |v: f64| -> String { text::usd(v) });
    env.add_filter("bytes", |v: u64| -> String { format!("{:.1} MB", v as f64 / 1_048_576.0) });
    env.add_template("page.html", PAGE).map_err(|e| Error::Render(e.to_string()))?;
    let (live, generation, poll_ms) = match mode {
        Mode::File => (false, 0, 0),
        Mode::Live { generation, poll_ms } => (true, generation, poll_ms),
    };
    let charts = context! {
        tokens => Value::from_safe_string(tokens_chart(report)),
        waste => Value::from_safe_string(waste_chart(report)),
        causes => Value::from_safe_string(causes_chart(report)),
        files => Value::from_safe_string(files_chart(report)),
        hits => Value::from_safe_string(hits_chart(report)),
    };
    let tmpl = env.get_template("page.html").map_err(|e| Error::Render(e.to_string()))?;
    tmpl.render(context! { report => Value::from(minijinja::value::Serde(report)), charts, live, generation, poll_ms })
        .map_err(|e| Error::Render(e.to_string()))
}

fn tokens_chart(r: &Report) -> String {
    svg::daily_stacked(
        "chart-tokens",
        "Prompt tokens per day: cache reads, cache writes, misses",
        &r.days,
        &[
            Series { name: "cache reads", class: "read", value: &|d| d.tokens.cache_read as f64 },
            Series { name: "cache writes", class: "write", value: &|d| d.tokens.cache_write as f64 },
            Series { name: "misses", class: "miss", value: &|d| d.tokens.uncached as f64 },
        ],
        &|v| text::num(v as u64),
    )
}

fn waste_chart(r: &Report) -> String {
    svg::daily_stacked(
        "chart-waste",
        "Estimated dollars wasted per day: cache breaks and repeated reads",
        &r.days,
        &[
            Series { name: "cache breaks", class: "breaks", value: &|d| d.waste.break_usd },
            Series { name: "repeated reads", class: "reads", value: &|d| d.waste.repeated_read_usd },
        ],
        &text::usd,
    )
}

fn causes_chart(r: &Report) -> String {
    let rows: Vec<Row> = r
        .causes
        .iter()
        .map(|c| Row {
            label: c.label.clone(),
            value: c.usd.max(c.tokens as f64 * 1e-12),
            shown: format!("{}, {}", text::count(c.breaks, "break"), text::usd(c.usd)),
        })
        .collect();
    svg::hbars("chart-causes", "Causes of cache breaks by estimated cost", &rows)
}

fn files_chart(r: &Report) -> String {
    let rows: Vec<Row> = r
        .repeated_files
        .iter()
        .map(|f| Row {
            label: f.path.clone(),
            value: f.tokens as f64,
            shown: format!("{}x, {} tokens", f.rereads, text::num(f.tokens)),
        })
        .collect();
    svg::hbars("chart-files", "Files read again unchanged, by tokens", &rows)
}

fn hits_chart(r: &Report) -> String {
    let mut per_tool = std::collections::BTreeMap::<String, u64>::new();
    for s in &r.refrain {
        for (tool, n) in &s.hits_per_tool {
            *per_tool.entry(tool.clone()).or_default() += n;
        }
    }
    let mut rows: Vec<Row> =
        per_tool.into_iter().map(|(label, n)| Row { label, value: n as f64, shown: text::count(n, "hit") }).collect();
    rows.sort_by(|a, b| b.value.total_cmp(&a.value).then_with(|| a.label.cmp(&b.label)));
    svg::hbars("chart-hits", "What refrain served, per tool", &rows)
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{CauseRow, Day, FileRow};

    #[test]
    fn the_page_is_self_contained_escaped_and_has_every_chart() {
        let mut r = Report::default();
        r.days.push(Day { date: "2026-01-09".into(), ..Day::default() });
        r.days[0].tokens.cache_read = 10;
        r.causes.push(CauseRow {
            kind: "system_edited".into(),
            label: "the system prompt changed".into(),
            breaks: 41,
            tokens: 1000,
            usd: 12.4,
            fix: "move the timestamp".into(),
            example: "<img src=x onerror=alert(1)>".into(),
        });
        r.repeated_files.push(FileRow {
            path: "/p/a.rs".into(),
            project: "/p".into(),
            rereads: 2,
            tokens: 5,
            usd: 0.1,
        });
        let page = render(&r, Mode::File).unwrap();
        for id in ["chart-tokens", "chart-waste", "chart-causes", "chart-files", "chart-hits"] {
            assert!(page.contains(&format!("<svg id=\"{id}\"")), "{id}");
        }
        assert!(!page.contains("<img src=x"), "history text is escaped");
        assert!(!page.contains("<script"), "a file has no script");
        assert!(!page.contains("src=\"http") && !page.contains("href=\"http"), "nothing is loaded from the network");
        assert!(page.contains("data-metric=\"totals.waste.breaks\""));
        let live = render(&r, Mode::Live { generation: 3, poll_ms: 2000 }).unwrap();
        assert!(live.contains("/api/generation") && live.contains("var seen = 3;"));
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
