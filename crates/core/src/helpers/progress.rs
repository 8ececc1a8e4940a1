//! Progress coalescing for one call (CONTRACT §5), decided here once: the
//! platform relays at most one `notifications/progress` per 0.5 s per call
//! and drops the rest, but always relays `progress >= total`. A
//! [`Coalescer`] says, for each report, whether to send it now, hold it
//! (the latest held report goes out at the end of the interval), or drop
//! it; the front end owns the clock, the timer and the send.
//!
//! The rules:
//!
//! - `progress` must increase: a report not above the last one accepted is
//!   dropped ([`Dropped::NotIncreasing`]), and so is one whose `progress`
//!   or `total` is not a finite number ([`Dropped::NotFinite`]: JSON has no
//!   form for it).
//! - `progress >= total` is the final report: sent at once, whatever the
//!   interval; a held report is dropped with it and every later report is
//!   dropped ([`Dropped::Finished`]).
//! - Otherwise a report is sent at once when nothing was sent yet or the
//!   interval has passed since the last send; else it is held, replacing
//!   any held one, until `last send + interval` ([`Step::Hold`]).
//! - A timer that fires calls [`Coalescer::tick`]; [`Coalescer::flush`]
//!   sends the held report at once (the author asked); [`Coalescer::close`]
//!   ends the call (cancelled): nothing more is sent.
//!
//! Times are milliseconds on any clock that does not go back (a clock that
//! does only delays sends).
//!
//! ```
//! use toolctx_core::helpers::progress::{Coalescer, Step, INTERVAL_MS};
//!
//! let mut c = Coalescer::new(INTERVAL_MS);
//! assert!(matches!(c.report(0, 1.0, Some(10.0), None), Step::Send(_)));
//! assert_eq!(c.report(100, 2.0, Some(10.0), None), Step::Hold { flush_at: 500, arm: true });
//! assert!(matches!(c.report(200, 10.0, Some(10.0), None), Step::Send(_)));
//! assert_eq!(c.sent(), 2);
//! ```

use alloc::string::String;

use crate::settings::{Raw, SettingError, Value, PROGRESS_INTERVAL};

/// The least time between two sends: the platform's rate (the settings
/// table's `progress_interval_ms`, with its range).
pub use crate::settings::PROGRESS_INTERVAL_MS as INTERVAL_MS;

/// One progress report: what `notifications/progress` carries besides the
/// token.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Why a report is not sent, now or later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dropped {
    /// Not above the last report accepted.
    NotIncreasing,
    /// `progress` or `total` is NaN or infinite.
    NotFinite,
    /// After the final report, or after [`Coalescer::close`].
    Finished,
}

impl Dropped {
    /// The stable machine code.
    pub const fn as_str(self) -> &'static str {
        match self {
            Dropped::NotIncreasing => "not_increasing",
            Dropped::NotFinite => "not_finite",
            Dropped::Finished => "finished",
        }
    }
}

/// The answer to a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Send this report now; a timer waiting for a held report is no longer
    /// needed.
    Send(Report),
    /// Held until `flush_at` (unless a later report replaces it). `arm`:
    /// nothing was held before, so no timer waits yet; start one that calls
    /// [`Coalescer::tick`] at `flush_at`.
    Hold { flush_at: u64, arm: bool },
    /// Never sent.
    Drop(Dropped),
}

/// The answer to a timer that fired.
#[derive(Debug, Clone, PartialEq)]
pub enum Tick {
    /// Send the held report now.
    Send(Report),
    /// Too early (a timer may fire before its time): wait until then and
    /// tick again.
    Wait(u64),
    /// Nothing is held: the timer is done.
    Idle,
}

/// The coalescing state of one call.
#[derive(Debug, Clone)]
pub struct Coalescer {
    interval_ms: u64,
    last: Option<f64>,
    last_sent_at: Option<u64>,
    held: Option<Report>,
    finished: bool,
    sent: u64,
}

impl Coalescer {
    /// A coalescer for the user's interval as given: the settings table's
    /// `progress_interval_ms` reading (absent or 0 the default,
    /// [`INTERVAL_MS`]; 1 ms to a minute; anything else refused
    /// `limit_out_of_range` or `config_type`). Every front end builds its
    /// coalescer through this (or reads the row the same way first).
    pub fn with_setting(raw: Raw<'_>) -> Result<Coalescer, SettingError> {
        match PROGRESS_INTERVAL.read(raw)? {
            Value::Number(ms) => Ok(Coalescer::new(ms)),
            _ => Err(SettingError::Type(PROGRESS_INTERVAL.name)),
        }
    }

    /// Exactly `interval_ms` between sends, read already (0 sends every
    /// report at once: not a setting's value, see
    /// [`Coalescer::with_setting`]).
    pub fn new(interval_ms: u64) -> Coalescer {
        Coalescer {
            interval_ms,
            last: None,
            last_sent_at: None,
            held: None,
            finished: false,
            sent: 0,
        }
    }

    /// What to do with the report `(progress, total, message)` made at
    /// `now`.
    pub fn report(
        &mut self,
        now: u64,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Step {
        if self.finished {
            return Step::Drop(Dropped::Finished);
        }
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Step::Drop(Dropped::NotFinite);
        }
        if self.last.is_some_and(|last| progress <= last) {
            return Step::Drop(Dropped::NotIncreasing);
        }
        self.last = Some(progress);
        let report = Report {
            progress,
            total,
            message,
        };
        if total.is_some_and(|t| progress >= t) {
            self.finished = true;
            return Step::Send(self.sent_at(now, report));
        }
        match self.due_at() {
            Some(flush_at) if now < flush_at => {
                let arm = self.held.is_none();
                self.held = Some(report);
                Step::Hold { flush_at, arm }
            }
            _ => Step::Send(self.sent_at(now, report)),
        }
    }

    /// A timer fired at `now`: the held report goes out if its time has
    /// come.
    pub fn tick(&mut self, now: u64) -> Tick {
        if self.held.is_none() || self.finished {
            self.held = None;
            return Tick::Idle;
        }
        match self.due_at() {
            Some(flush_at) if now < flush_at => Tick::Wait(flush_at),
            _ => match self.held.take() {
                Some(report) => Tick::Send(self.sent_at(now, report)),
                None => Tick::Idle,
            },
        }
    }

    /// The held report, to send now whatever the interval (the author
    /// asked, say before a long step); `None` when nothing is held.
    pub fn flush(&mut self, now: u64) -> Option<Report> {
        if self.finished {
            self.held = None;
        }
        let report = self.held.take()?;
        Some(self.sent_at(now, report))
    }

    /// The call ended (cancelled): the held report and every later one are
    /// dropped.
    pub fn close(&mut self) {
        self.finished = true;
        self.held = None;
    }

    /// Reports answered [`Step::Send`], [`Tick::Send`] or flushed so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Whether the final report was sent or the call closed.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// When the next report may go out; `None` before the first send.
    fn due_at(&self) -> Option<u64> {
        self.last_sent_at
            .map(|at| at.saturating_add(self.interval_ms))
    }

    fn sent_at(&mut self, now: u64, report: Report) -> Report {
        self.last_sent_at = Some(now);
        self.held = None;
        self.sent += 1;
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(step: Step) -> f64 {
        match step {
            Step::Send(r) => r.progress,
            other => panic!("expected a send, got {other:?}"),
        }
    }

    #[test]
    fn coalesces_to_the_interval_and_always_sends_the_final_report() {
        let mut c = Coalescer::new(INTERVAL_MS);
        assert_eq!(sent(c.report(0, 1.0, Some(10.0), None)), 1.0);
        assert_eq!(
            c.report(100, 2.0, Some(10.0), None),
            Step::Hold {
                flush_at: 500,
                arm: true
            }
        );
        assert_eq!(
            c.report(200, 3.0, Some(10.0), Some("three".into())),
            Step::Hold {
                flush_at: 500,
                arm: false
            }
        );
        assert_eq!(
            c.report(250, 3.0, Some(10.0), None),
            Step::Drop(Dropped::NotIncreasing)
        );
        assert_eq!(c.tick(499), Tick::Wait(500));
        let Tick::Send(r) = c.tick(501) else {
            panic!("the held report")
        };
        assert_eq!((r.progress, r.message.as_deref()), (3.0, Some("three")));
        assert_eq!(c.tick(502), Tick::Idle);
        assert!(matches!(
            c.report(600, 4.0, Some(10.0), None),
            Step::Hold {
                flush_at: 1001,
                arm: true
            }
        ));
        assert_eq!(sent(c.report(700, 10.0, Some(10.0), None)), 10.0);
        assert_eq!(
            c.tick(1001),
            Tick::Idle,
            "the final send dropped the held 4"
        );
        assert_eq!(
            c.report(2000, 11.0, Some(10.0), None),
            Step::Drop(Dropped::Finished)
        );
        assert_eq!(c.sent(), 3);
    }

    #[test]
    fn flush_close_and_values_json_cannot_carry() {
        let mut c = Coalescer::new(INTERVAL_MS);
        assert_eq!(c.flush(0), None);
        sent(c.report(0, 1.0, None, None));
        assert!(matches!(c.report(10, 2.0, None, None), Step::Hold { .. }));
        assert_eq!(c.flush(20).map(|r| r.progress), Some(2.0));
        // The interval restarts at the flush.
        assert_eq!(
            c.report(30, 3.0, None, None),
            Step::Hold {
                flush_at: 520,
                arm: true
            }
        );
        assert_eq!(
            c.report(40, f64::NAN, None, None),
            Step::Drop(Dropped::NotFinite)
        );
        assert_eq!(
            c.report(40, 5.0, Some(f64::INFINITY), None),
            Step::Drop(Dropped::NotFinite)
        );
        c.close();
        assert_eq!(c.tick(600), Tick::Idle);
        assert_eq!(
            c.report(700, 9.0, None, None),
            Step::Drop(Dropped::Finished)
        );
        assert_eq!(c.sent(), 2);
    }

    #[test]
    fn after_a_quiet_interval_a_report_goes_at_once() {
        let mut c = Coalescer::new(INTERVAL_MS);
        sent(c.report(0, 1.0, None, None));
        assert_eq!(sent(c.report(500, 2.0, None, None)), 2.0);
        assert_eq!(sent(c.report(5000, 2.5, None, None)), 2.5);
        // A clock that went back holds until the interval from the last send.
        assert!(matches!(
            c.report(10, 3.0, None, None),
            Step::Hold { flush_at: 5500, .. }
        ));
    }
}
