//! `refrain mask`: prints each task read from stdin (one per line) with its values masked, exactly
//! as plan lookup masks tasks, so a verifier trained on masked pairs sees what refrain shows it.

use clap::Args;
use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;

/// Arguments of `refrain mask`.
#[derive(Debug, Args)]
pub struct MaskArgs {
    /// Read JSON lines `{"text": "...", "values": ["regex", "1.10"]}` instead of plain text, and
    /// also mask the listed values wherever they occur as whole words (as the values a trace used
    /// are masked in a stored task).
    #[arg(long)]
    pub json: bool,
}

/// One JSON input line.
#[derive(Debug, serde::Deserialize)]
struct Line {
    text: String,
    #[serde(default)]
    values: Vec<String>,
}

/// Masks stdin to stdout, line by line, in order.
pub fn run(args: MaskArgs) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (n, line) in stdin.split(b'\n').enumerate() {
        let bytes = line?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        let masked = if args.json {
            if text.trim().is_empty() {
                String::new()
            } else {
                let l: Line = serde_json::from_str(text).map_err(|e| {
                    anyhow::anyhow!("line {}: {e}; each line must be {{\"text\": ..., \"values\": [...]}}", n + 1)
                })?;
                crate::plan::mask::mask_known(&l.text, &l.values).text
            }
        } else {
            crate::plan::mask::mask(text).text
        };
        // A masked text never spans lines: output line n is input line n.
        writeln!(out, "{}", masked.replace(['\n', '\r'], " "))?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
