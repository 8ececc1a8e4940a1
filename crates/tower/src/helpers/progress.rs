//! Progress for one call (CONTRACT §5): `notifications/progress` with the
//! call's `progressToken`. The platform relays at most one per 0.5 s per
//! call and always relays `progress >= total`; the core's coalescing rule
//! (`toolctx_core::helpers::progress`) says which report goes out when, and
//! this file keeps the clock, the timer and the send.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{RequestContext, RoleServer};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use toolctx_core::helpers::progress::{Coalescer, Report, Step, Tick, INTERVAL_MS};
use toolctx_core::settings::{SettingError, PROGRESS_INTERVAL};

use crate::settings;

type Send = Arc<
    dyn Fn(ProgressNotificationParam) -> Pin<Box<dyn Future<Output = ()> + std::marker::Send>>
        + std::marker::Send
        + Sync,
>;

struct State {
    coalescer: Coalescer,
    /// The timer task waiting to send the held report.
    timer: Option<AbortHandle>,
}

impl State {
    fn cancel_timer(&mut self) {
        if let Some(timer) = self.timer.take() {
            timer.abort();
        }
    }
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
    /// The clock's zero: the core takes milliseconds since then.
    start: Instant,
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
            start: Instant::now(),
            cancel,
            state: Arc::new(Mutex::new(State {
                coalescer: Coalescer::new(INTERVAL_MS),
                timer: None,
            })),
        }
    }

    /// The least time between two sends, read by the core's settings
    /// table (`progress_interval_ms`: zero is its default, the platform's
    /// rate; past a minute refused `limit_out_of_range`).
    pub fn interval(self, interval: Duration) -> Result<Progress, SettingError> {
        let ms = settings::duration(&PROGRESS_INTERVAL, interval)?;
        let coalescer = Coalescer::new(u64::try_from(ms.as_millis()).unwrap_or(u64::MAX));
        if let Ok(mut s) = self.state.lock() {
            s.coalescer = coalescer;
        }
        Ok(self)
    }

    /// Notifications sent so far.
    pub fn sent(&self) -> usize {
        self.state.lock().map_or(0, |s| {
            usize::try_from(s.coalescer.sent()).unwrap_or(usize::MAX)
        })
    }

    /// Reports `done` (of `total`): a value not above the last one is
    /// ignored (progress must increase); `done >= total` is the final
    /// report, sent at once, after which reports are ignored. Returns when
    /// this report's notification, if it was sent now, is written.
    pub async fn report(&self, done: f64, total: Option<f64>, message: Option<String>) {
        if self.token.is_none() {
            return;
        }
        let now = self.now();
        let send = {
            let Ok(mut s) = self.state.lock() else { return };
            if self.cancel.is_cancelled() {
                s.coalescer.close();
                s.cancel_timer();
                return;
            }
            match s.coalescer.report(now, done, total, message) {
                Step::Send(r) => {
                    s.cancel_timer();
                    Some(r)
                }
                Step::Hold { flush_at, arm } => {
                    if arm {
                        s.cancel_timer();
                        s.timer = Some(self.spawn_timer(flush_at));
                    }
                    None
                }
                Step::Drop(_) => None,
            }
        };
        if let Some(report) = send {
            self.send(report).await;
        }
    }

    /// Sends a report held back by the rate limit now.
    pub async fn flush(&self) {
        let now = self.now();
        let held = {
            let Ok(mut s) = self.state.lock() else { return };
            s.cancel_timer();
            s.coalescer.flush(now)
        };
        if let Some(report) = held {
            self.send(report).await;
        }
    }

    /// Milliseconds since this reporter was made.
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A task that asks the core at `flush_at` (and again while it says
    /// wait) and sends the held report; it ends with the call.
    fn spawn_timer(&self, flush_at: u64) -> AbortHandle {
        let me = self.clone();
        tokio::spawn(async move {
            let mut at = flush_at;
            loop {
                let deadline = me.start + Duration::from_millis(at);
                tokio::select! {
                    _ = tokio::time::sleep_until(deadline) => {}
                    _ = me.cancel.cancelled() => return,
                }
                let now = me.now();
                let tick = match me.state.lock() {
                    Ok(mut s) => s.coalescer.tick(now),
                    Err(_) => return,
                };
                match tick {
                    Tick::Send(report) => return me.send(report).await,
                    Tick::Wait(next) => at = next,
                    Tick::Idle => return,
                }
            }
        })
        .abort_handle()
    }

    async fn send(&self, report: Report) {
        let Some(token) = self.token.clone() else {
            return;
        };
        let mut param = ProgressNotificationParam::new(token, report.progress);
        param.total = report.total;
        param.message = report.message;
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
