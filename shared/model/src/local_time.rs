//! Called-party local time (D15) as pure functions: a contact's time zones, whether its window
//! (the task's daily window and the tenant's calling hours) is open now in every one of them,
//! and, when it is not, which one is closed and when both next open, or that they never do for a
//! number whose zones share no open minute (D24).

use crate::call::Skip;
use crate::numbers::zones_of;
use crate::task::{DialSettings, WindowZone};
use crate::time_of_day::DailyWindow;
use crate::Timestamp;
use chrono::{Datelike, Duration, NaiveDate, TimeZone, Timelike};
use chrono_tz::Tz;

/// The zones a contact's window is read in (D15): its `timeZone` field, else the zones of its
/// number, else `fallback` (the task's zone, else the service zone).
pub fn contact_zones(time_zone: Option<&str>, e164: Option<&str>, fallback: Tz) -> Vec<Tz> {
    if let Some(zone) = own_zone(time_zone) {
        return vec![zone];
    }
    let zones = e164.map(zones_of).unwrap_or_default();
    if zones.is_empty() {
        vec![fallback]
    } else {
        zones
    }
}

/// The zone a contact's own `timeZone` field names (D15), when it names one: its zone is then
/// known, not guessed from its number.
pub fn own_zone(time_zone: Option<&str>) -> Option<Tz> {
    time_zone.and_then(|name| name.parse::<Tz>().ok())
}

/// The windows one task's calls must be inside (D15): its daily window, read in each contact
/// zone or in the task zone, and the tenant's calling hours, read in each contact zone.
#[derive(Clone, Copy, Debug)]
pub struct Windows {
    pub task: Option<DailyWindow>,
    pub read_in: WindowZone,
    pub task_zone: Tz,
    pub calling_hours: Option<DailyWindow>,
}

impl Windows {
    pub fn of(
        settings: &DialSettings,
        calling_hours: Option<DailyWindow>,
        service_zone: Tz,
    ) -> Self {
        Windows {
            task: settings.window,
            read_in: settings.window_zone,
            task_zone: settings
                .time_zone
                .as_ref()
                .and_then(|name| name.as_str().parse().ok())
                .unwrap_or(service_zone),
            calling_hours,
        }
    }

    /// The tenant's calling hours alone: what a callback keeps to (D31), the person having
    /// asked for its time whatever the task's daily window says.
    pub fn calling_hours_only(&self) -> Self {
        Windows {
            task: None,
            ..*self
        }
    }

    /// Whether no window applies at all: every contact may be called at any hour.
    pub fn always_open(&self) -> bool {
        self.task.is_none() && self.calling_hours.is_none()
    }

    fn task_open(&self, zones: &[Tz], at: Timestamp) -> bool {
        let Some(window) = self.task else {
            return true;
        };
        match self.read_in {
            WindowZone::Task => inside(window, self.task_zone, at),
            WindowZone::CalledParty => zones.iter().all(|zone| inside(window, *zone, at)),
        }
    }

    fn hours_open(&self, zones: &[Tz], at: Timestamp) -> bool {
        self.calling_hours
            .is_none_or(|hours| zones.iter().all(|zone| inside_hours(hours, *zone, at)))
    }

    /// `Ok` when a contact in `zones` may be called at `at`; else the skip that says which
    /// window is closed (the task's first) and when both are next open, if within 8 days.
    pub fn check(&self, zones: &[Tz], at: Timestamp) -> Result<(), (Skip, Option<Timestamp>)> {
        let task_open = self.task_open(zones, at);
        if task_open && self.hours_open(zones, at) {
            return Ok(());
        }
        let skip = if task_open {
            Skip::CallingHours
        } else {
            Skip::OutsideWindow
        };
        Err((skip, self.next_open(zones, at)))
    }

    /// [`Windows::check`] for a contact about to be called: a contact without a zone of its own
    /// (`own_zone` false: its zones are guessed from its number) whose zones never share an open
    /// minute of both windows, over the days [`Windows::next_open`] looks at, daylight-saving
    /// changes included, is skipped as `NO_COMMON_WINDOW`, final (D24), instead of waiting for
    /// an opening that never comes.
    pub fn admit(
        &self,
        zones: &[Tz],
        own_zone: bool,
        at: Timestamp,
    ) -> Result<(), (Skip, Option<Timestamp>)> {
        match self.check(zones, at) {
            Err((_, None)) if !own_zone => Err((Skip::NoCommonWindow, None)),
            checked => checked,
        }
    }

    /// The first moment after `at` when every window is open for `zones`: the intersection of
    /// daily windows opens where one of them opens, so only their openings over the next days
    /// are tried, in time order.
    pub fn next_open(&self, zones: &[Tz], at: Timestamp) -> Option<Timestamp> {
        let mut starts: Vec<(DailyWindow, Tz)> = Vec::new();
        if let Some(window) = self.task {
            match self.read_in {
                WindowZone::Task => starts.push((window, self.task_zone)),
                WindowZone::CalledParty => starts.extend(zones.iter().map(|z| (window, *z))),
            }
        }
        if let Some(hours) = self.calling_hours {
            starts.extend(zones.iter().map(|z| (hours, *z)));
        }
        let today = chrono::DateTime::from_timestamp_millis(at.0)?.date_naive();
        let mut candidates: Vec<Timestamp> = starts
            .iter()
            .flat_map(|(window, zone)| {
                (-1..=8).filter_map(move |day| opening(*window, *zone, today + Duration::days(day)))
            })
            .filter(|candidate| candidate.0 > at.0)
            .collect();
        candidates.sort();
        candidates.into_iter().find(|candidate| {
            self.task_open(zones, *candidate) && self.hours_open(zones, *candidate)
        })
    }
}

/// Whether `at` is inside `window` read in `zone`, both minutes included (D9): a task's window.
pub fn inside(window: DailyWindow, zone: Tz, at: Timestamp) -> bool {
    local_minute(zone, at)
        .is_some_and(|minute| (window.start.minutes()..=window.end.minutes()).contains(&minute))
}

/// Whether `at` is inside the tenant's calling `hours` read in `zone`: from `start` to before
/// `end`, the first minute not allowed ("before 21:00", D24).
fn inside_hours(hours: DailyWindow, zone: Tz, at: Timestamp) -> bool {
    local_minute(zone, at)
        .is_some_and(|minute| (hours.start.minutes()..hours.end.minutes()).contains(&minute))
}

/// The minute of the day `at` is in `zone`.
fn local_minute(zone: Tz, at: Timestamp) -> Option<u16> {
    let local = zone.timestamp_millis_opt(at.0).single()?;
    Some((local.hour() * 60 + local.minute()) as u16)
}

/// The instant `window` opens on local date `date` in `zone`. A start that a daylight-saving
/// change skips opens at the first minute after the gap.
fn opening(window: DailyWindow, zone: Tz, date: NaiveDate) -> Option<Timestamp> {
    let minutes = u32::from(window.start.minutes());
    let local = NaiveDate::from_ymd_opt(date.year(), date.month(), date.day())?.and_hms_opt(
        minutes / 60,
        minutes % 60,
        0,
    )?;
    (0..=2)
        .find_map(|hours| {
            zone.from_local_datetime(&(local + Duration::hours(hours)))
                .earliest()
        })
        .map(|instant| Timestamp(instant.timestamp_millis()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time_of_day::ClockTime;
    use chrono_tz::America::{Los_Angeles, New_York};
    use chrono_tz::Asia::Shanghai;
    use chrono_tz::Europe::London;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> Timestamp {
        Timestamp(
            chrono::Utc
                .with_ymd_and_hms(y, mo, d, h, mi, 0)
                .unwrap()
                .timestamp_millis(),
        )
    }

    fn window(start: &str, end: &str) -> DailyWindow {
        DailyWindow {
            start: ClockTime::parse("s", start).unwrap(),
            end: ClockTime::parse("e", end).unwrap(),
        }
    }

    fn called_party(task: Option<DailyWindow>, hours: Option<DailyWindow>) -> Windows {
        Windows {
            task,
            read_in: WindowZone::CalledParty,
            task_zone: Tz::UTC,
            calling_hours: hours,
        }
    }

    #[test]
    fn the_time_zone_field_wins_over_the_number_and_the_fallback_comes_last() {
        let la = "+12135550123";
        assert_eq!(contact_zones(None, Some(la), Shanghai), vec![Los_Angeles]);
        assert_eq!(
            contact_zones(Some("America/New_York"), Some(la), Shanghai),
            vec![New_York]
        );
        assert_eq!(contact_zones(None, None, Shanghai), vec![Shanghai]);
        assert_eq!(
            contact_zones(None, Some("+8821234567"), Shanghai),
            vec![Shanghai]
        );
        assert_eq!(
            contact_zones(Some("Not/AZone"), None, Tz::UTC),
            vec![Tz::UTC]
        );
    }

    #[test]
    fn a_window_is_read_in_each_contact_zone() {
        // 14:00 UTC in January: 09:00 in New York, 06:00 in Los Angeles.
        let at = utc(2026, 1, 15, 14, 0);
        let windows = called_party(Some(window("09:00", "17:00")), None);
        assert_eq!(windows.check(&[New_York], at), Ok(()));
        let la = windows.check(&[Los_Angeles], at);
        // Los Angeles opens at 09:00 PST, 17:00 UTC.
        assert_eq!(
            la,
            Err((Skip::OutsideWindow, Some(utc(2026, 1, 15, 17, 0))))
        );
        let task_zone = Windows {
            read_in: WindowZone::Task,
            task_zone: New_York,
            ..windows
        };
        assert_eq!(
            task_zone.check(&[Los_Angeles], at),
            Ok(()),
            "read in the task zone"
        );
    }

    #[test]
    fn calling_hours_narrower_than_the_window_win() {
        // 13:30 UTC: 08:30 in New York. The task opens at 08:00, the calling hours at 09:00.
        let at = utc(2026, 1, 15, 13, 30);
        let windows = called_party(
            Some(window("08:00", "20:00")),
            Some(window("09:00", "17:00")),
        );
        assert_eq!(
            windows.check(&[New_York], at),
            Err((Skip::CallingHours, Some(utc(2026, 1, 15, 14, 0))))
        );
        let task_zone = Windows {
            read_in: WindowZone::Task,
            ..windows
        };
        // The task's window read in UTC is open (13:30), the calling hours are still read in
        // the called party's zone.
        assert_eq!(
            task_zone.check(&[New_York], at).unwrap_err().0,
            Skip::CallingHours
        );
    }

    #[test]
    fn several_zones_are_open_only_where_all_overlap() {
        // 09:00-17:00 in both New York and Los Angeles: 17:00-22:00 UTC in January.
        let windows = called_party(Some(window("09:00", "17:00")), None);
        let both = [Los_Angeles, New_York];
        assert!(windows.check(&both, utc(2026, 1, 15, 16, 0)).is_err());
        assert_eq!(windows.check(&both, utc(2026, 1, 15, 17, 0)), Ok(()));
        assert_eq!(windows.check(&both, utc(2026, 1, 15, 22, 0)), Ok(()));
        assert_eq!(
            windows.check(&both, utc(2026, 1, 15, 22, 1)),
            Err((Skip::OutsideWindow, Some(utc(2026, 1, 16, 17, 0))))
        );
    }

    #[test]
    fn the_overlap_follows_a_daylight_saving_change_in_one_zone_only() {
        // 09:00-17:00 in New York and in London. Until 2026-03-08 New York is UTC-5 and London
        // UTC+0: the overlap is 14:00-17:00 UTC. From 03-08 to 03-29 New York is UTC-4 while
        // London is not yet on summer time: the overlap is 13:00-17:00 UTC.
        let windows = called_party(Some(window("09:00", "17:00")), None);
        let both = [London, New_York];
        assert!(windows.check(&both, utc(2026, 3, 6, 13, 30)).is_err());
        assert_eq!(windows.check(&both, utc(2026, 3, 6, 14, 0)), Ok(()));
        assert_eq!(windows.check(&both, utc(2026, 3, 9, 13, 30)), Ok(()));
        assert_eq!(
            windows.check(&both, utc(2026, 3, 7, 17, 1)),
            Err((Skip::OutsideWindow, Some(utc(2026, 3, 8, 13, 0)))),
            "the first opening after the change is an hour earlier in UTC"
        );
    }

    #[test]
    fn calling_hours_end_before_their_end_minute_and_a_task_window_at_it() {
        // 02:00 UTC in January: 21:00 in New York, 20:59 a minute before.
        let (at_end, before) = (utc(2026, 1, 16, 2, 0), utc(2026, 1, 16, 1, 59));
        let hours = called_party(None, Some(window("09:00", "21:00")));
        assert_eq!(hours.check(&[New_York], before), Ok(()));
        assert_eq!(
            hours.check(&[New_York], at_end),
            Err((Skip::CallingHours, Some(utc(2026, 1, 16, 14, 0))))
        );
        let task = called_party(Some(window("09:00", "21:00")), None);
        assert_eq!(task.check(&[New_York], at_end), Ok(()), "D9: both minutes");
        // A task window that ends where the calling hours end: its last minute is not called.
        let both = called_party(
            Some(window("09:00", "21:00")),
            Some(window("08:00", "21:00")),
        );
        assert_eq!(both.check(&[New_York], before), Ok(()));
        assert!(both.check(&[New_York], at_end).is_err());
    }

    #[test]
    fn zones_that_never_share_an_open_minute_are_final_unless_the_contact_names_its_own() {
        // A toll-free number rings from Guam to Newfoundland: 09:00-17:00 is never open in all.
        let toll_free = contact_zones(None, Some("+18005550100"), Tz::UTC);
        assert!(toll_free.len() > 30, "{toll_free:?}");
        let windows = called_party(Some(window("09:00", "17:00")), None);
        let at = utc(2026, 1, 15, 16, 0);
        assert_eq!(
            windows.admit(&toll_free, false, at),
            Err((Skip::NoCommonWindow, None))
        );
        assert_eq!(
            windows.admit(&toll_free, true, at),
            Err((Skip::OutsideWindow, None)),
            "a zone of its own waits"
        );
        assert!(Skip::NoCommonWindow.is_final());
        // The same from the calling hours alone, and across the zones' daylight-saving changes.
        let hours = called_party(None, Some(window("09:00", "17:00")));
        for day in [(3, 7), (3, 8), (3, 9), (10, 31), (11, 1), (11, 2), (7, 1)] {
            let at = utc(2026, day.0, day.1, 12, 0);
            assert_eq!(
                hours.admit(&toll_free, false, at),
                Err((Skip::NoCommonWindow, None)),
                "{day:?}"
            );
        }
        // Zones that overlap for a moment only wait for it: New York and Los Angeles share
        // 12:00-17:00 New York time (17:00-22:00 UTC in January).
        let coasts = [Los_Angeles, New_York];
        assert_eq!(
            windows.admit(&coasts, false, at),
            Err((Skip::OutsideWindow, Some(utc(2026, 1, 15, 17, 0))))
        );
        assert_eq!(
            windows.admit(&coasts, false, utc(2026, 1, 15, 17, 0)),
            Ok(())
        );
        // Guam (UTC+10) and Newfoundland (UTC-3:30) alone: 09:00-17:00 is 23:00-07:00 and
        // 12:30-20:30 UTC in January. With 09:00-19:00 they still share none; 06:00-21:00
        // they do (Guam's 06:00 is 20:00 UTC, 16:30 in St John's).
        let ends = [
            "Pacific/Guam".parse::<Tz>().unwrap(),
            "America/St_Johns".parse::<Tz>().unwrap(),
        ];
        let narrow = called_party(Some(window("09:00", "19:00")), None);
        assert_eq!(
            narrow.admit(&ends, false, at),
            Err((Skip::NoCommonWindow, None))
        );
        let wide = called_party(Some(window("06:00", "21:00")), None);
        assert_eq!(
            wide.admit(&ends, false, at),
            Err((Skip::OutsideWindow, Some(utc(2026, 1, 15, 20, 0))))
        );
    }

    #[test]
    fn no_window_is_always_open() {
        let windows = called_party(None, None);
        assert!(windows.always_open());
        assert_eq!(windows.check(&[New_York], utc(2026, 1, 15, 3, 0)), Ok(()));
    }
}
