//! The page's charts as inline SVG, drawn by hand: stacked daily bars and horizontal bar lists.
//!
//! Why not plotters' SVG backend: its text layout needs a font backend (more crates, more build
//! time on a 2-core machine) for what are four simple charts, and hand-written SVG is small,
//! deterministic, styleable from the page's CSS and readable in a test. Every label is escaped.

use super::model::Day;
use super::text::clip_left;
use std::fmt::Write;

const W: f64 = 760.0;
const H: f64 = 220.0;
const LEFT: f64 = 64.0;
const BOTTOM: f64 = 24.0;
const TOP: f64 = 10.0;

/// One series of a stacked bar chart.
pub struct Series<'a> {
    /// Legend name.
    pub name: &'a str,
    /// CSS class (colour).
    pub class: &'a str,
    /// Value per day.
    pub value: &'a dyn Fn(&Day) -> f64,
}

/// Stacked bars, one per day, with a legend and a y-axis maximum formatted by `fmt`.
pub fn daily_stacked(
    id: &str,
    title: &str,
    days: &[Day],
    series: &[Series<'_>],
    fmt: &dyn Fn(f64) -> String,
) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg id="{id}" class="chart" viewBox="0 0 {W} {H}" role="img" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#,
        esc(title)
    );
    let totals: Vec<f64> = days.iter().map(|d| series.iter().map(|s| (s.value)(d)).sum()).collect();
    let max = totals.iter().copied().fold(0.0, f64::max);
    let plot_h = H - BOTTOM - TOP;
    let _ = write!(o, r#"<line class="axis" x1="{LEFT}" y1="{}" x2="{W}" y2="{}"/>"#, H - BOTTOM, H - BOTTOM);
    let _ = write!(
        o,
        r#"<text class="tick" x="{}" y="{}" text-anchor="end">{}</text>"#,
        LEFT - 6.0,
        TOP + 10.0,
        esc(&fmt(max))
    );
    let _ = write!(o, r#"<text class="tick" x="{}" y="{}" text-anchor="end">0</text>"#, LEFT - 6.0, H - BOTTOM);
    if days.is_empty() || max <= 0.0 {
        let _ = write!(
            o,
            r#"<text class="empty" x="{}" y="{}" text-anchor="middle">no data</text></svg>"#,
            W / 2.0,
            H / 2.0
        );
        return o;
    }
    let step = (W - LEFT) / days.len() as f64;
    let bar = (step * 0.8).max(1.0);
    for (i, d) in days.iter().enumerate() {
        let x = LEFT + i as f64 * step + (step - bar) / 2.0;
        let mut y = H - BOTTOM;
        for s in series {
            let v = (s.value)(d);
            if v <= 0.0 {
                continue;
            }
            let h = v / max * plot_h;
            y -= h;
            let _ = write!(
                o,
                r#"<rect class="bar {}" x="{x:.1}" y="{y:.1}" width="{bar:.1}" height="{h:.1}"><title>{} {}: {}</title></rect>"#,
                s.class,
                esc(&d.date),
                esc(s.name),
                esc(&fmt(v))
            );
        }
    }
    let ticks = days.len().min(6);
    for k in 0..ticks {
        let i = if ticks <= 1 { 0 } else { k * (days.len() - 1) / (ticks - 1) };
        let x = LEFT + i as f64 * step + step / 2.0;
        let _ = write!(
            o,
            r#"<text class="tick" x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            H - 6.0,
            esc(&days[i].date)
        );
    }
    let mut lx = LEFT + 8.0;
    for s in series {
        let _ = write!(o, r#"<rect class="bar {}" x="{lx:.1}" y="{}" width="10" height="10"/>"#, s.class, TOP);
        let _ = write!(o, r#"<text class="legend" x="{:.1}" y="{}">{}</text>"#, lx + 14.0, TOP + 9.0, esc(s.name));
        lx += 24.0 + 7.0 * s.name.len() as f64;
    }
    o.push_str("</svg>");
    o
}

/// One row of a horizontal bar list.
pub struct Row {
    /// What the bar is.
    pub label: String,
    /// Its length.
    pub value: f64,
    /// The figure printed after it.
    pub shown: String,
}

/// Horizontal bars, longest first as given.
pub fn hbars(id: &str, title: &str, rows: &[Row]) -> String {
    let row_h = 24.0;
    let h = (rows.len().max(1) as f64) * row_h + 8.0;
    let label_w = 300.0;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg id="{id}" class="chart" viewBox="0 0 {W} {h}" role="img" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#,
        esc(title)
    );
    if rows.is_empty() {
        let _ = write!(o, r#"<text class="empty" x="{}" y="20" text-anchor="middle">none found</text></svg>"#, W / 2.0);
        return o;
    }
    let max = rows.iter().map(|r| r.value).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let span = W - label_w - 110.0;
    for (i, r) in rows.iter().enumerate() {
        let y = 4.0 + i as f64 * row_h;
        let len = (r.value / max * span).max(1.0);
        let _ = write!(
            o,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            label_w - 8.0,
            y + 15.0,
            esc(&clip_left(&r.label, 44))
        );
        let _ = write!(
            o,
            r#"<rect class="bar hbar" x="{label_w}" y="{y:.1}" width="{len:.1}" height="{:.1}"><title>{}: {}</title></rect>"#,
            row_h - 6.0,
            esc(&r.label),
            esc(&r.shown)
        );
        let _ = write!(
            o,
            r#"<text class="value" x="{:.1}" y="{:.1}">{}</text>"#,
            label_w + len + 6.0,
            y + 15.0,
            esc(&r.shown)
        );
    }
    o.push_str("</svg>");
    o
}

/// Escapes text for SVG/HTML content and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_bars_drawn() {
        let rows = vec![
            Row { label: "<script>alert(1)</script>".into(), value: 2.0, shown: "$2".into() },
            Row { label: "b".into(), value: 1.0, shown: "$1".into() },
        ];
        let svg = hbars("x", "t", &rows);
        assert!(!svg.contains("<script>"));
        assert_eq!(svg.matches("<rect class=\"bar hbar\"").count(), 2);
        let days = vec![Day { date: "2026-01-01".into(), ..Day::default() }];
        let empty =
            daily_stacked("d", "t", &days, &[Series { name: "n", class: "c", value: &|_| 0.0 }], &|v| v.to_string());
        assert!(empty.contains("no data"));
    }
}
