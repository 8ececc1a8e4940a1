//! Progress for one call (CONTRACT §5), the npm package's rules
//! (`npm/src/progress.ts`): `notifications/progress` with the call's
//! `progressToken`. The platform relays at most one per 0.5 s per call and
//! always relays `progress >= total`; this sends at that rate (the latest
//! value at the end of each interval) and always sends the final report at
//! once.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{RequestContext, RoleServer};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

type Send = Arc<
    dyn Fn(ProgressNotificationParam) -> Pin<Box<dyn Future<Output = ()> + std::marker::Send>>
        + std::marker::Send
        + Sync,
>;

#[derive(Default)]
struct State {
    /// The last value accepted.
    last: Option<f64>,
    last_sent_at: Option<Instant>,
    pending: Option<ProgressNotificationParam>,
    /// A timer task is waiting to send `pending`.
    timer: bool,
    finished: bool,
    sent: usize,
}

/// The progress reporter of one call.
///
/// ```ignore
/// let progress = Progress::new(&ctx); // ctx: RequestContext<RoleServer>
/// for page in 1..=pages {
///     export(page).await;
///     progress.report(page as f64, Some(pages as f64), Some(format!("page {page}"))).await;
/// }
/// ```
#[derive(Clone)]
pub struct Progress {
    token: Option<ProgressToken>,
    send: Send,
    interval: Duration,
    cancel: CancellationToken,
    state: Arc<Mutex<State>>,
}

impl Progress {
    /// Reports for the call `ctx` belongs to, through its peer. Without a
    /// `progressToken` (the client asked for none) every report is a no-op.
    pub fn new(ctx: &RequestContext<RoleServer>) -> Progress {
        let peer = ctx.peer.clone();
        Progress::with_sender(
            ctx.meta.get_progress_token(),
            ctx.ct.clone(),
            move |param| {
                let peer = peer.clone();
                // A send that fails (the call ended, the stream closed) is dropped.
                Box::pin(async move {
                    let _ = peer.notify_progress(param).await;
                })
            },
        )
    }

    /// Reports through `send` (tests, or a transport of one's own).
    pub fn with_sender(
        token: Option<ProgressToken>,
        cancel: CancellationToken,
        send: impl Fn(ProgressNotificationParam) -> Pin<Box<dyn Future<Output = ()> + std::marker::Send>>
            + std::marker::Send
            + Sync
            + 'static,
    ) -> Progress {
        Progress {
            token,
            send: Arc::new(send),
            interval: Duration::from_millis(500),
            cancel,
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// The least time between two sends. Default 500 ms (the platform's rate).
    pub fn interval(mut self, interval: Duration) -> Progress {
        self.interval = interval;
        self
    }

    /// Notifications sent so far.
    pub fn sent(&self) -> usize {
        self.state.lock().map_or(0, |s| s.sent)
    }

    /// Reports `done` (of `total`): a value not above the last one is
    /// ignored (progress must increase); `done >= total` is the final
    /// report, sent at once, after which reports are ignored. Returns when
    /// this report's notification, if it was sent now, is written.
    pub async fn report(&self, done: f64, total: Option<f64>, message: Option<String>) {
        let Some(token) = self.token.clone() else {
            return;
        };
        if self.cancel.is_cancelled() {
            return;
        }
        let mut param = ProgressNotificationParam::new(token, done);
        param.total = total;
        param.message = message;
        let now = Instant::now();
        let send_now = {
            let Ok(mut s) = self.state.lock() else { return };
            if s.finished || s.last.is_some_and(|last| done <= last) || done.is_nan() {
                return;
            }
            s.last = Some(done);
            if total.is_some_and(|t| done >= t) {
                s.finished = true;
                true
            } else if s
                .last_sent_at
                .is_none_or(|at| now.duration_since(at) >= self.interval)
            {
                true
            } else {
                let wait = s.last_sent_at.map_or(Duration::ZERO, |at| {
                    (at + self.interval).saturating_duration_since(now)
                });
                s.pending = Some(param.clone());
                if !s.timer {
                    s.timer = true;
                    let me = self.clone();
                    tokio::spawn(async move {
                        tokio::select! {
                            _ = tokio::time::sleep(wait) => me.send_pending(true).await,
                            _ = me.cancel.cancelled() => {}
                        }
                    });
                }
                false
            }
        };
        if send_now {
            self.send(param).await;
        }
    }

    /// Sends a report held back by the rate limit now.
    pub async fn flush(&self) {
        self.send_pending(false).await;
    }

    async fn send_pending(&self, from_timer: bool) {
        let pending = {
            let Ok(mut s) = self.state.lock() else { return };
            if from_timer {
                s.timer = false;
            }
            if s.finished {
                s.pending = None;
            }
            s.pending.take()
        };
        if let Some(param) = pending {
            self.send(param).await;
        }
    }

    async fn send(&self, param: ProgressNotificationParam) {
        if let Ok(mut s) = self.state.lock() {
            s.last_sent_at = Some(Instant::now());
            s.pending = None;
            s.sent += 1;
        }
        (self.send)(param).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    type Sent = Arc<Mutex<Vec<(f64, Option<f64>)>>>;

    fn recorder() -> (Progress, Sent) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let p = Progress::with_sender(
            Some(ProgressToken(NumberOrString::Number(7))),
            CancellationToken::new(),
            move |param| {
                log.lock().unwrap().push((param.progress, param.total));
                Box::pin(async {})
            },
        );
        (p, seen)
    }

    #[tokio::test(start_paused = true)]
    async fn coalesces_to_the_interval_and_always_sends_the_final_report() {
        let (p, seen) = recorder();
        p.report(1.0, Some(10.0), None).await; // sent at once
        p.report(2.0, Some(10.0), None).await; // held
        p.report(3.0, Some(10.0), None).await; // replaces 2
        p.report(3.0, Some(10.0), None).await; // not above the last: ignored
        assert_eq!(seen.lock().unwrap().len(), 1);
        tokio::time::sleep(Duration::from_millis(501)).await;
        assert_eq!(
            *seen.lock().unwrap(),
            vec![(1.0, Some(10.0)), (3.0, Some(10.0))]
        );
        p.report(4.0, Some(10.0), None).await; // held
        p.report(10.0, Some(10.0), None).await; // final: at once, 4 dropped
        tokio::time::sleep(Duration::from_secs(1)).await;
        p.report(11.0, Some(10.0), None).await; // after the final: ignored
        assert_eq!(
            *seen.lock().unwrap(),
            vec![(1.0, Some(10.0)), (3.0, Some(10.0)), (10.0, Some(10.0))]
        );
        assert_eq!(p.sent(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_token_nothing_is_sent() {
        let p = Progress::with_sender(None, CancellationToken::new(), |_| panic!("sent"));
        p.report(1.0, Some(1.0), None).await;
        assert_eq!(p.sent(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn flush_sends_what_is_held() {
        let (p, seen) = recorder();
        p.report(1.0, None, None).await;
        p.report(2.0, None, None).await;
        p.flush().await;
        assert_eq!(*seen.lock().unwrap(), vec![(1.0, None), (2.0, None)]);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(p.sent(), 2, "the timer finds nothing left to send");
    }
}
