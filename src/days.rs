//! The UTC calendar day of a time, for everything that prints dates (the report's days, the date
//! a plan was stored). A module of its own at the bottom of the crate, so that any layer can date
//! what it shows without depending on the one that happens to print most dates.

/// The UTC date of a time in ms since the epoch (`YYYY-MM-DD`).
pub fn of_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_utc_calendar_dates() {
        assert_eq!(of_ms(0), "1970-01-01");
        assert_eq!(of_ms(1_795_651_200_000), "2026-11-26");
        assert_eq!(of_ms(-1), "1969-12-31");
        assert_eq!(of_ms(951_782_400_000), "2000-02-29");
    }
}
