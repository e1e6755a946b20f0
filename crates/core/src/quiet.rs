//! Quiet hours: a daily window, in the subscriber's own time zone, during which jobs are held
//! back and delivered when the window ends.
//!
//! The window is a half-open interval of *wall-clock* time `[start, end)` in the subscriber's
//! zone. When `end < start` it wraps over midnight (`23:00-08:00`); when `start == end` it is
//! empty (never quiet). Nothing here reads a clock: the current instant is always passed in.
//!
//! ## Daylight-saving days
//!
//! Whether an instant is quiet is decided by the local wall-clock time at that instant, so the
//! answer never depends on the date. [`QuietHours::release_at`] returns the *first instant
//! after `now` at which the wall clock leaves the window*, which resolves the two awkward cases
//! as follows:
//!
//! * **The end time does not exist** (spring forward, e.g. `02:30` in Berlin on the last
//!   Sunday of March, when clocks jump from 02:00 to 03:00): the window ends at the jump
//!   itself (03:00 local), the first moment the clock shows a time at or past the end.
//! * **The end time happens twice** (fall back, e.g. `02:30` in Berlin on the last Sunday of
//!   October): the window ends at the *first* occurrence. If `now` lies in the repeated hour
//!   after the first occurrence (the clock reads, say, 02:10 for the second time), the wall
//!   clock is inside the window again and it ends at the second occurrence.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, NaiveTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;

/// Why a quiet-hours setting could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuietHoursError {
    /// The range is not of the form `HH:MM-HH:MM`.
    #[error("invalid quiet hours {0:?}: expected HH:MM-HH:MM, e.g. 23:00-08:00")]
    Range(String),
    /// One of the two times is not a valid `HH:MM` time of day.
    #[error("invalid time {0:?}: expected HH:MM between 00:00 and 23:59")]
    Time(String),
    /// The time zone is not an IANA zone name.
    #[error("unknown time zone {0:?}: use an IANA name such as Europe/Moscow")]
    TimeZone(String),
}

/// A daily quiet window in a time zone. See the [module docs](self) for the exact semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietHours {
    /// Local time the window starts (inclusive).
    pub start: NaiveTime,
    /// Local time the window ends (exclusive). Before `start`: the window wraps over midnight.
    pub end: NaiveTime,
    /// The subscriber's time zone.
    pub tz: Tz,
}

impl QuietHours {
    /// Builds a window from its parts.
    pub fn new(start: NaiveTime, end: NaiveTime, tz: Tz) -> Self {
        Self { start, end, tz }
    }

    /// Parses a range such as `"23:00-08:00"` (spaces around the parts are allowed) and an
    /// IANA zone name such as `"Europe/Moscow"`.
    pub fn parse(range: &str, tz: &str) -> Result<Self, QuietHoursError> {
        let (start, end) = range
            .split_once('-')
            .ok_or_else(|| QuietHoursError::Range(range.to_owned()))?;
        let start = parse_time(start)?;
        let end = parse_time(end)?;
        let tz = Tz::from_str(tz.trim()).map_err(|_| QuietHoursError::TimeZone(tz.to_owned()))?;
        Ok(Self { start, end, tz })
    }

    /// Whether the window is empty (`start == end`): such quiet hours never hold anything.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Whether `now` falls inside the quiet window.
    pub fn is_quiet(&self, now: DateTime<Utc>) -> bool {
        self.contains(now.with_timezone(&self.tz).time())
    }

    /// `None` when `now` is outside the quiet window (deliver now); otherwise the UTC instant
    /// the window ends, at which held jobs should be delivered. The returned instant is always
    /// after `now`. DST days are handled as described in the [module docs](self).
    pub fn release_at(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = now.with_timezone(&self.tz);
        let time = local.time();
        if !self.contains(time) {
            return None;
        }
        let mut date = local.date_naive();
        if self.start > self.end && time >= self.start {
            // Wrapping window entered before midnight: it ends tomorrow.
            date = date.succ_opt()?;
        }
        let end = date.and_time(self.end);
        Some(self.first_instant_at_or_after(end, now))
    }

    /// Whether a local wall-clock time is inside `[start, end)`.
    fn contains(&self, t: NaiveTime) -> bool {
        match self.start.cmp(&self.end) {
            std::cmp::Ordering::Equal => false,
            std::cmp::Ordering::Less => self.start <= t && t < self.end,
            std::cmp::Ordering::Greater => t >= self.start || t < self.end,
        }
    }

    /// The first instant after `now` whose local wall time is `local` or, when `local` falls
    /// into a DST gap, the instant the gap ends.
    fn first_instant_at_or_after(&self, local: NaiveDateTime, now: DateTime<Utc>) -> DateTime<Utc> {
        match self.tz.from_local_datetime(&local) {
            LocalResult::Single(t) => t.with_timezone(&Utc),
            LocalResult::Ambiguous(first, second) => {
                let first = first.with_timezone(&Utc);
                if first > now {
                    first
                } else {
                    second.with_timezone(&Utc)
                }
            }
            LocalResult::None => self.gap_end(local),
        }
    }

    /// For a local time inside a DST gap, the UTC instant at which the gap ends (the first
    /// instant whose local time is at or after `local`).
    fn gap_end(&self, local: NaiveDateTime) -> DateTime<Utc> {
        // Gaps are at most a day long (Samoa, 2011). Find the first valid local minute after
        // `local`, then step back second by second to the exact transition (zones with
        // sub-minute historical offsets have transitions off the minute).
        let mut probe = local.with_second(0).unwrap_or(local);
        let mut found = None;
        for _ in 0..(48 * 60) {
            probe += Duration::minutes(1);
            if let Some(t) = self.tz.from_local_datetime(&probe).earliest() {
                found = Some(t.with_timezone(&Utc));
                break;
            }
        }
        // Unreachable for real zones; fall back to interpreting `local` as UTC.
        let Some(mut instant) = found else {
            return local.and_utc();
        };
        for _ in 0..60 {
            let before = instant - Duration::seconds(1);
            if before.with_timezone(&self.tz).naive_local() >= local {
                instant = before;
            } else {
                break;
            }
        }
        instant
    }
}

impl fmt::Display for QuietHours {
    /// Formats as `23:00-08:00 Europe/Moscow`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02}:{:02}-{:02}:{:02} {}",
            self.start.hour(),
            self.start.minute(),
            self.end.hour(),
            self.end.minute(),
            self.tz.name()
        )
    }
}

fn parse_time(raw: &str) -> Result<NaiveTime, QuietHoursError> {
    let trimmed = raw.trim();
    let bad = || QuietHoursError::Time(trimmed.to_owned());
    let (h, m) = trimmed.split_once(':').ok_or_else(bad)?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(h) || m.len() != 2 || !digits(m) {
        return Err(bad());
    }
    let h: u32 = h.parse().map_err(|_| bad())?;
    let m: u32 = m.parse().map_err(|_| bad())?;
    NaiveTime::from_hms_opt(h, m, 0).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .expect("valid test instant")
            .with_timezone(&Utc)
    }

    fn qh(range: &str, tz: &str) -> QuietHours {
        QuietHours::parse(range, tz).expect("valid quiet hours")
    }

    #[test]
    fn parses_and_rejects() {
        let q = qh("23:00-08:00", "Europe/Moscow");
        assert_eq!(q.start, NaiveTime::from_hms_opt(23, 0, 0).expect("time"));
        assert_eq!(q.end, NaiveTime::from_hms_opt(8, 0, 0).expect("time"));
        assert_eq!(q.tz, chrono_tz::Europe::Moscow);
        assert_eq!(q.to_string(), "23:00-08:00 Europe/Moscow");
        assert_eq!(qh(" 9:05 - 17:30 ", "UTC").to_string(), "09:05-17:30 UTC");

        for bad in [
            "",
            "23:00",
            "23-08",
            "24:00-08:00",
            "23:60-08:00",
            "23:0-08:00",
            "a:bc-08:00",
        ] {
            assert!(QuietHours::parse(bad, "UTC").is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            QuietHours::parse("23:00-08:00", "Mars/Olympus"),
            Err(QuietHoursError::TimeZone("Mars/Olympus".into()))
        );
    }

    #[test]
    fn window_over_midnight_in_moscow() {
        // Moscow is UTC+3 all year.
        let q = qh("23:00-08:00", "Europe/Moscow");
        // 22:59 local: not quiet yet.
        assert_eq!(q.release_at(utc("2026-01-10T19:59:00Z")), None);
        // 23:00 local: quiet until 08:00 local next day = 05:00Z.
        assert_eq!(
            q.release_at(utc("2026-01-10T20:00:00Z")),
            Some(utc("2026-01-11T05:00:00Z"))
        );
        // 02:00 local (23:00Z the previous UTC day): same release.
        assert_eq!(
            q.release_at(utc("2026-01-10T23:00:00Z")),
            Some(utc("2026-01-11T05:00:00Z"))
        );
        // 07:59 local: one minute left.
        assert_eq!(
            q.release_at(utc("2026-01-11T04:59:00Z")),
            Some(utc("2026-01-11T05:00:00Z"))
        );
        // 08:00 local: the end is exclusive.
        assert_eq!(q.release_at(utc("2026-01-11T05:00:00Z")), None);
        assert!(!q.is_quiet(utc("2026-01-11T12:00:00Z")));
        assert!(q.is_quiet(utc("2026-01-11T21:00:00Z")));
    }

    #[test]
    fn daytime_window_and_empty_window() {
        let q = qh("13:00-15:00", "UTC");
        assert_eq!(q.release_at(utc("2026-05-01T12:59:59Z")), None);
        assert_eq!(
            q.release_at(utc("2026-05-01T14:00:00Z")),
            Some(utc("2026-05-01T15:00:00Z"))
        );
        assert_eq!(q.release_at(utc("2026-05-01T15:00:00Z")), None);

        let never = qh("10:00-10:00", "Europe/Berlin");
        assert!(never.is_empty());
        for h in 0..24 {
            let now = utc(&format!("2026-05-01T{h:02}:00:00Z"));
            assert_eq!(never.release_at(now), None);
        }
    }

    #[test]
    fn berlin_spring_forward_end_in_the_gap() {
        // 2026-03-29: Berlin jumps from 02:00 CET (01:00Z) to 03:00 CEST.
        let q = qh("23:00-02:30", "Europe/Berlin");
        // 01:30 CET = 00:30Z: quiet; 02:30 does not exist that night, so the window ends at
        // the jump (03:00 CEST = 01:00Z).
        assert_eq!(
            q.release_at(utc("2026-03-29T00:30:00Z")),
            Some(utc("2026-03-29T01:00:00Z"))
        );
        // Just after the jump the clock reads 03:00: outside the window.
        assert_eq!(q.release_at(utc("2026-03-29T01:00:00Z")), None);
        // A window that ends at 08:00 is simply one hour shorter in UTC that night.
        let q = qh("22:00-08:00", "Europe/Berlin");
        assert_eq!(
            q.release_at(utc("2026-03-28T22:00:00Z")),
            Some(utc("2026-03-29T06:00:00Z"))
        );
        // And on a normal winter night 08:00 CET is 07:00Z.
        assert_eq!(
            q.release_at(utc("2026-03-21T22:00:00Z")),
            Some(utc("2026-03-22T07:00:00Z"))
        );
    }

    #[test]
    fn berlin_fall_back_end_in_the_repeated_hour() {
        // 2026-10-25: Berlin falls back from 03:00 CEST (01:00Z) to 02:00 CET; 02:00-03:00
        // happens twice (00:00Z-01:00Z as CEST, 01:00Z-02:00Z as CET).
        let q = qh("23:00-02:30", "Europe/Berlin");
        // 01:00 CEST = 23:00Z on the 24th: the first 02:30 (CEST, 00:30Z) ends the window.
        assert_eq!(
            q.release_at(utc("2026-10-24T23:00:00Z")),
            Some(utc("2026-10-25T00:30:00Z"))
        );
        // 02:40 CEST (00:40Z): past the end.
        assert_eq!(q.release_at(utc("2026-10-25T00:40:00Z")), None);
        // 02:10 CET (01:10Z): the clock reads 02:10 again, inside the window; it ends at the
        // second 02:30 (01:30Z), which is after now.
        assert_eq!(
            q.release_at(utc("2026-10-25T01:10:00Z")),
            Some(utc("2026-10-25T01:30:00Z"))
        );
        // An 08:00 end is one hour later in UTC than the night before.
        let q = qh("22:00-08:00", "Europe/Berlin");
        assert_eq!(
            q.release_at(utc("2026-10-24T21:00:00Z")),
            Some(utc("2026-10-25T07:00:00Z"))
        );
    }

    #[test]
    fn new_york_dst_both_ways() {
        // 2026-03-08: New York jumps 02:00 EST (07:00Z) -> 03:00 EDT.
        let q = qh("22:00-07:00", "America/New_York");
        // 23:00 EST on the 7th = 04:00Z on the 8th; 07:00 EDT = 11:00Z.
        assert_eq!(
            q.release_at(utc("2026-03-08T04:00:00Z")),
            Some(utc("2026-03-08T11:00:00Z"))
        );
        // End inside the gap: 02:15 does not exist; released at 03:00 EDT = 07:00Z.
        let q = qh("21:00-02:15", "America/New_York");
        assert_eq!(
            q.release_at(utc("2026-03-08T06:30:00Z")),
            Some(utc("2026-03-08T07:00:00Z"))
        );

        // 2026-11-01: falls back 02:00 EDT (06:00Z) -> 01:00 EST; 01:00-02:00 happens twice.
        let q = qh("22:00-01:30", "America/New_York");
        // 23:00 EDT on Oct 31 = 03:00Z: ends at the first 01:30 (EDT) = 05:30Z.
        assert_eq!(
            q.release_at(utc("2026-11-01T03:00:00Z")),
            Some(utc("2026-11-01T05:30:00Z"))
        );
        // 01:10 EST (06:10Z), the second pass: ends at 01:30 EST = 06:30Z.
        assert_eq!(
            q.release_at(utc("2026-11-01T06:10:00Z")),
            Some(utc("2026-11-01T06:30:00Z"))
        );
        // 07:00 EST end after the change: 12:00Z.
        let q = qh("22:00-07:00", "America/New_York");
        assert_eq!(
            q.release_at(utc("2026-11-01T03:00:00Z")),
            Some(utc("2026-11-01T12:00:00Z"))
        );
    }

    #[test]
    fn release_is_always_after_now_and_outside_the_window() {
        let zones = [
            "Europe/Berlin",
            "America/New_York",
            "Australia/Lord_Howe",
            "Asia/Kolkata",
        ];
        let ranges = [
            "23:00-08:00",
            "01:30-02:30",
            "02:00-03:00",
            "00:00-23:59",
            "12:00-11:00",
        ];
        for tz in zones {
            for range in ranges {
                let q = qh(range, tz);
                // Every 10 minutes over the March and October/November DST weeks.
                for start in [
                    "2026-03-07T00:00:00Z",
                    "2026-10-24T00:00:00Z",
                    "2026-04-04T00:00:00Z",
                ] {
                    let mut now = utc(start);
                    for _ in 0..(9 * 24 * 6) {
                        if let Some(at) = q.release_at(now) {
                            assert!(at > now, "{q} at {now}: release {at} not after now");
                            assert!(!q.is_quiet(at), "{q} at {now}: release {at} still quiet");
                            assert!(
                                q.is_quiet(at - Duration::seconds(1)),
                                "{q}: {at} not the end"
                            );
                        } else {
                            assert!(!q.is_quiet(now));
                        }
                        now += Duration::minutes(10);
                    }
                }
            }
        }
    }
}
