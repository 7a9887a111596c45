//! RFC 3339 timestamps (as transcripts write them) to milliseconds since the epoch, without a
//! date-time dependency. Only the forms agents write are needed: `2026-11-22T01:33:25.117Z` and
//! offsets like `+02:00`.

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` to ms since the Unix epoch.
pub fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &s[19..];
    let mut ms = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits: String = frac.chars().take_while(char::is_ascii_digit).collect();
        let padded = format!("{:0<3}", &digits[..digits.len().min(3)]);
        ms = padded.parse().ok()?;
        rest = &frac[digits.len()..];
    }
    let offset_min = match rest {
        "" | "Z" | "z" => 0,
        o if o.len() == 6 => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            sign * (o.get(1..3)?.parse::<i64>().ok()? * 60 + o.get(4..6)?.parse::<i64>().ok()?)
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    Some(((days * 86_400 + h * 3600 + mi * 60 + se - offset_min * 60) * 1000) + ms)
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("1970-01-01T00:00:00Z", 0)]
    #[case("2026-11-22T01:33:25.117Z", 1_795_311_205_117)]
    #[case("2025-06-14T10:00:00Z", 1_749_895_200_000)]
    #[case("2025-06-14T12:00:00+02:00", 1_749_895_200_000)]
    fn timestamps_parse(#[case] s: &str, #[case] ms: i64) {
        assert_eq!(parse_rfc3339_ms(s), Some(ms));
    }

    #[test]
    fn garbage_is_none() {
        assert_eq!(parse_rfc3339_ms("yesterday"), None);
    }
}
