//! `DATE`, `DATETIME`/`TIMESTAMP`, `TIME` and `YEAR`: parsing MySQL's
//! literal forms, formatting, calendar checks and the session clock.
//!
//! The value types are the protocol's [`Date`], [`DateTime`] and [`Time`]
//! (so results go to the wire without conversion). Accepted text forms, as
//! MySQL's:
//!
//! ```text
//!   DATE      YYYY-MM-DD   YY-MM-DD   YYYYMMDD   (any punctuation separates)
//!   DATETIME  DATE[ T]HH:MM:SS[.ffffff]   YYYYMMDDHHMMSS[.ffffff]
//!   TIME      [-][D ]HH:MM:SS[.ffffff]   [-]HHMMSS   MM:SS
//! ```
//!
//! Two-digit years map 70-99 to 19xx and 00-69 to 20xx. A month of 0 or a
//! day of 0 is accepted only for the all-zero date, and a day past the
//! month's end is rejected (MySQL's default `sql_mode`).

use basalt_protocol::{Date, DateTime, Time};
use chrono::{Datelike, FixedOffset, Local, Offset, TimeZone, Timelike, Utc};

/// Largest `TIME` magnitude in hours (838:59:59).
pub const TIME_MAX_HOURS: u32 = 838;

/// True in leap years of the proleptic Gregorian calendar.
pub fn is_leap(year: u16) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

/// Days in `month` of `year` (0 for month 0).
pub fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Whether the date exists (or is the zero date).
pub fn valid_date(d: &Date) -> bool {
    if d.year == 0 && d.month == 0 && d.day == 0 {
        return true;
    }
    d.year <= 9999
        && (1..=12).contains(&d.month)
        && d.day >= 1
        && d.day <= days_in_month(d.year, d.month)
}

fn split_numbers(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .collect()
}

fn full_year(text: &str, value: u32) -> u16 {
    if text.len() <= 2 {
        if value < 70 {
            (2000 + value) as u16
        } else {
            (1900 + value) as u16
        }
    } else {
        value as u16
    }
}

fn fraction_micros(frac: &str) -> u32 {
    let mut digits: String = frac.chars().take(7).collect();
    while digits.len() < 7 {
        digits.push('0');
    }
    let v: u32 = digits.parse().unwrap_or(0);
    // Round the seventh digit.
    (v + 5) / 10
}

/// Parses a `DATETIME` (a date alone gives midnight).
pub fn parse_datetime(text: &str) -> Option<DateTime> {
    let t = text.trim();
    if t.is_empty() || !t.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    // Fractional seconds: the part after the last '.' when a time is present.
    let (main, frac) = match t.rfind('.') {
        Some(i) if t[..i].contains([':', ' ', 'T']) || t[..i].len() >= 14 => (&t[..i], &t[i + 1..]),
        _ => (t, ""),
    };
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let parts = split_numbers(main);
    let (y, mo, d, h, mi, s, ytext) = if parts.len() == 1 {
        let p = parts[0];
        let n = |a: usize, b: usize| p.get(a..b).and_then(|x| x.parse::<u32>().ok());
        match p.len() {
            14 => (
                n(0, 4)?,
                n(4, 6)?,
                n(6, 8)?,
                n(8, 10)?,
                n(10, 12)?,
                n(12, 14)?,
                &p[0..4],
            ),
            12 => (
                n(0, 2)?,
                n(2, 4)?,
                n(4, 6)?,
                n(6, 8)?,
                n(8, 10)?,
                n(10, 12)?,
                &p[0..2],
            ),
            8 => (n(0, 4)?, n(4, 6)?, n(6, 8)?, 0, 0, 0, &p[0..4]),
            6 => (n(0, 2)?, n(2, 4)?, n(4, 6)?, 0, 0, 0, &p[0..2]),
            _ => return None,
        }
    } else {
        if parts.len() != 3 && parts.len() != 5 && parts.len() != 6 {
            return None;
        }
        let n = |i: usize| parts.get(i).map_or(Some(0), |x| x.parse::<u32>().ok());
        (n(0)?, n(1)?, n(2)?, n(3)?, n(4)?, n(5)?, parts[0])
    };
    if mo > 12 || d > 31 || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let date = Date {
        year: full_year(ytext, y),
        month: mo as u8,
        day: d as u8,
    };
    if !valid_date(&date) {
        return None;
    }
    Some(DateTime {
        date,
        hour: h as u8,
        minute: mi as u8,
        second: s as u8,
        micros: fraction_micros(frac).min(999_999),
    })
}

/// Parses a `DATE` (a time part, if any, must be well formed and is dropped).
pub fn parse_date(text: &str) -> Option<Date> {
    parse_datetime(text).map(|dt| dt.date)
}

/// Parses a `TIME`.
pub fn parse_time(text: &str) -> Option<Time> {
    let t = text.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, t),
    };
    if body.is_empty() || !body.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    // A full datetime is accepted and keeps its time of day.
    if body.len() >= 12 && (body.contains('-') || !body.contains(':')) && body.len() != 6 {
        if let Some(dt) = parse_datetime(body) {
            return Some(Time {
                negative: false,
                days: 0,
                hours: dt.hour,
                minutes: dt.minute,
                seconds: dt.second,
                micros: dt.micros,
            });
        }
    }
    let (main, frac) = match body.find('.') {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, ""),
    };
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (days, clock) = match main.split_once(' ') {
        Some((d, rest)) => (d.parse::<u32>().ok()?, rest.trim()),
        None => (0, main),
    };
    let (h, m, s) = if clock.contains(':') {
        let p: Vec<&str> = clock.split(':').collect();
        let n = |x: &str| x.parse::<u32>().ok();
        match p.len() {
            2 if days == 0 => (n(p[0])?, n(p[1])?, 0),
            2 => (n(p[0])?, n(p[1])?, 0),
            3 => (n(p[0])?, n(p[1])?, n(p[2])?),
            _ => return None,
        }
    } else {
        if !clock.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let v: u64 = clock.parse().ok()?;
        (
            (v / 10_000) as u32,
            ((v / 100) % 100) as u32,
            (v % 100) as u32,
        )
    };
    if m > 59 || s > 59 {
        return None;
    }
    let total_hours = u64::from(days) * 24 + u64::from(h);
    if total_hours > u64::from(TIME_MAX_HOURS) {
        return None;
    }
    Some(Time {
        negative,
        days: (total_hours / 24) as u32,
        hours: (total_hours % 24) as u8,
        minutes: m as u8,
        seconds: s as u8,
        micros: fraction_micros(frac).min(999_999),
    })
    .map(|mut tm| {
        if tm.days == 0 && tm.hours == 0 && tm.minutes == 0 && tm.seconds == 0 && tm.micros == 0 {
            tm.negative = false;
        }
        tm
    })
}

fn push_fraction(out: &mut String, micros: u32, decimals: u8) {
    if decimals > 0 {
        let digits = format!("{micros:06}");
        out.push('.');
        out.push_str(&digits[..usize::from(decimals.min(6))]);
    }
}

/// `YYYY-MM-DD`.
pub fn format_date(d: &Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year, d.month, d.day)
}

/// `YYYY-MM-DD HH:MM:SS[.f]` with `decimals` fractional digits.
pub fn format_datetime(dt: &DateTime, decimals: u8) -> String {
    let mut s = format!(
        "{} {:02}:{:02}:{:02}",
        format_date(&dt.date),
        dt.hour,
        dt.minute,
        dt.second
    );
    push_fraction(&mut s, dt.micros, decimals);
    s
}

/// `[-]HH:MM:SS[.f]`.
pub fn format_time(t: &Time, decimals: u8) -> String {
    let hours = u64::from(t.days) * 24 + u64::from(t.hours);
    let mut s = format!(
        "{}{:02}:{:02}:{:02}",
        if t.negative { "-" } else { "" },
        hours,
        t.minutes,
        t.seconds
    );
    push_fraction(&mut s, t.micros, decimals);
    s
}

/// Signed microseconds of a `TIME`.
pub fn time_micros(t: &Time) -> i64 {
    let secs = (i64::from(t.days) * 24 + i64::from(t.hours)) * 3600
        + i64::from(t.minutes) * 60
        + i64::from(t.seconds);
    let v = secs * 1_000_000 + i64::from(t.micros);
    if t.negative {
        -v
    } else {
        v
    }
}

/// Days since 0000-00-00 in MySQL's `TO_DAYS` numbering (proleptic
/// Gregorian, day 1 = 0000-01-01).
pub fn to_days(d: &Date) -> i64 {
    let (y, m, day) = (i64::from(d.year), i64::from(d.month), i64::from(d.day));
    if y == 0 && m == 0 && day == 0 {
        return 0;
    }
    let mut days = 365 * y + day + 31 * (m - 1);
    let mut year = y;
    if m <= 2 {
        year -= 1;
    } else {
        days -= (m * 4 + 23) / 10;
    }
    days + year / 4 - ((year / 100 + 1) * 3) / 4
}

/// The session clock: "now" in the session's `time_zone`.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// UTC microseconds since the Unix epoch at statement start.
    pub utc_micros: i64,
    /// Offset of the session time zone at that instant, in seconds.
    pub offset_secs: i32,
}

impl Clock {
    /// The current instant in `time_zone` (`SYSTEM`, `UTC`, `+hh:mm`).
    pub fn now(time_zone: &str) -> Clock {
        let now = Utc::now();
        let offset_secs = zone_offset(time_zone, now.timestamp());
        Clock {
            utc_micros: now.timestamp_micros(),
            offset_secs,
        }
    }

    /// Local date and time of the clock (with microseconds).
    pub fn local(&self) -> DateTime {
        micros_to_datetime(self.utc_micros + i64::from(self.offset_secs) * 1_000_000)
    }

    /// UTC date and time of the clock.
    pub fn utc(&self) -> DateTime {
        micros_to_datetime(self.utc_micros)
    }

    /// Seconds since the Unix epoch.
    pub fn unix_seconds(&self) -> i64 {
        self.utc_micros.div_euclid(1_000_000)
    }

    /// Seconds since the epoch of a local datetime in this clock's zone.
    pub fn unix_of_local(&self, dt: &DateTime) -> Option<i64> {
        let naive = chrono::NaiveDate::from_ymd_opt(
            i32::from(dt.date.year),
            u32::from(dt.date.month),
            u32::from(dt.date.day),
        )?
        .and_hms_opt(
            u32::from(dt.hour),
            u32::from(dt.minute),
            u32::from(dt.second),
        )?;
        Some(naive.and_utc().timestamp() - i64::from(self.offset_secs))
    }
}

/// Offset in seconds of `time_zone` at the Unix time `at`.
pub fn zone_offset(time_zone: &str, at: i64) -> i32 {
    let tz = time_zone.trim();
    if tz.eq_ignore_ascii_case("SYSTEM") {
        return match Local.timestamp_opt(at, 0) {
            chrono::LocalResult::Single(t) => t.offset().fix().local_minus_utc(),
            chrono::LocalResult::Ambiguous(t, _) => t.offset().fix().local_minus_utc(),
            chrono::LocalResult::None => 0,
        };
    }
    if tz.eq_ignore_ascii_case("UTC") {
        return 0;
    }
    let (sign, rest) = match tz.as_bytes().first() {
        Some(b'-') => (-1, &tz[1..]),
        Some(b'+') => (1, &tz[1..]),
        _ => return 0,
    };
    let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
    let secs = h.parse::<i32>().unwrap_or(0) * 3600 + m.parse::<i32>().unwrap_or(0) * 60;
    let _ = FixedOffset::east_opt(sign * secs);
    sign * secs
}

/// Date and time of Unix microseconds.
pub fn micros_to_datetime(micros: i64) -> DateTime {
    let secs = micros.div_euclid(1_000_000);
    let sub = micros.rem_euclid(1_000_000) as u32;
    match chrono::DateTime::from_timestamp(secs, sub * 1000) {
        Some(t) => DateTime {
            date: Date {
                year: t.year().clamp(0, 9999) as u16,
                month: t.month() as u8,
                day: t.day() as u8,
            },
            hour: t.hour() as u8,
            minute: t.minute() as u8,
            second: t.second() as u8,
            micros: sub,
        },
        None => DateTime::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetime_forms() {
        let dt = parse_datetime("2024-02-29 13:04:05.123456").unwrap();
        assert_eq!(format_datetime(&dt, 6), "2024-02-29 13:04:05.123456");
        assert_eq!(
            format_datetime(&parse_datetime("20240102030405").unwrap(), 0),
            "2024-01-02 03:04:05"
        );
        assert_eq!(format_date(&parse_date("99-12-31").unwrap()), "1999-12-31");
        assert_eq!(format_date(&parse_date("20240102").unwrap()), "2024-01-02");
        assert_eq!(format_date(&parse_date("2024/1/2").unwrap()), "2024-01-02");
        assert!(parse_date("2023-02-29").is_none());
        assert!(parse_date("2024-13-01").is_none());
        assert!(parse_date("abc").is_none());
        assert!(parse_date("").is_none());
        assert_eq!(
            format_date(&parse_date("0000-00-00").unwrap()),
            "0000-00-00"
        );
        assert_eq!(
            format_datetime(&parse_datetime("2024-01-02T03:04:05").unwrap(), 0),
            "2024-01-02 03:04:05"
        );
    }

    #[test]
    fn time_forms() {
        assert_eq!(format_time(&parse_time("10:11:12").unwrap(), 0), "10:11:12");
        assert_eq!(
            format_time(&parse_time("-838:59:59").unwrap(), 0),
            "-838:59:59"
        );
        assert_eq!(
            format_time(&parse_time("1 02:00:00").unwrap(), 0),
            "26:00:00"
        );
        assert_eq!(format_time(&parse_time("101112").unwrap(), 0), "10:11:12");
        assert_eq!(format_time(&parse_time("10:11").unwrap(), 0), "10:11:00");
        assert_eq!(
            format_time(&parse_time("00:00:01.5").unwrap(), 1),
            "00:00:01.5"
        );
        assert!(parse_time("839:00:00").is_none());
        assert!(parse_time("10:61:00").is_none());
        assert_eq!(time_micros(&parse_time("-00:00:01").unwrap()), -1_000_000);
    }

    #[test]
    fn to_days_matches_mysql() {
        let d = |s: &str| to_days(&parse_date(s).unwrap());
        assert_eq!(d("2007-10-07"), 733321);
        assert_eq!(d("1970-01-01"), 719528);
        assert_eq!(d("0000-01-01"), 1);
    }

    #[test]
    fn clock_offsets() {
        assert_eq!(zone_offset("+02:00", 0), 7200);
        assert_eq!(zone_offset("-05:30", 0), -19800);
        assert_eq!(zone_offset("UTC", 0), 0);
        let c = Clock {
            utc_micros: 0,
            offset_secs: 3600,
        };
        assert_eq!(format_datetime(&c.local(), 0), "1970-01-01 01:00:00");
        assert_eq!(format_datetime(&c.utc(), 0), "1970-01-01 00:00:00");
        assert_eq!(c.unix_of_local(&c.local()), Some(0));
    }
}
